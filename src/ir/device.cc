#include "ir/device.h"

#include <charconv>

namespace distir {

std::string DeviceId::ToString() const {
  return has_value() ? "d" + std::to_string(id_) : std::string("none");
}

std::optional<DeviceId> ParseDeviceId(std::string_view text) {
  if (text.size() < 2 || text[0] != 'd') return std::nullopt;
  int32_t id = 0;
  const char* begin = text.data() + 1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, id);
  if (ec != std::errc() || ptr != end || id < 0) return std::nullopt;
  // Leading zeros would break the canonical round trip ("d01" prints as "d1").
  if (text.size() > 2 && text[1] == '0') return std::nullopt;
  return DeviceId(id);
}

std::ostream& operator<<(std::ostream& os, const DeviceId& device) {
  return os << device.ToString();
}

}  // namespace distir
