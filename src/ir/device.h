// Device identifiers.
//
// A device is a small non-negative integer written "d<N>" in the IR text
// (d0, d1, ...). What a device is (a V100, an H100, which node it sits in) is
// the hardware profile's business (src/sim), not the IR's. A type may also have
// no device: functions whose types are all device-less are device-generic and
// run on the device of the call that invokes them (see docs/ir.md).

#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace distir {

/// A device id, or "no device" (the default-constructed value).
class DeviceId {
 public:
  constexpr DeviceId() = default;
  /// REQUIRES: id >= 0.
  constexpr explicit DeviceId(int32_t id) : id_(id) {}

  constexpr bool has_value() const { return id_ >= 0; }
  /// REQUIRES: has_value().
  constexpr int32_t value() const { return id_; }

  /// "d3", or "none" for no device.
  std::string ToString() const;

  constexpr bool operator==(const DeviceId& other) const = default;
  constexpr auto operator<=>(const DeviceId& other) const = default;

 private:
  int32_t id_ = -1;
};

/// Parses "d<N>" (N a decimal integer without sign); nullopt otherwise.
std::optional<DeviceId> ParseDeviceId(std::string_view text);

std::ostream& operator<<(std::ostream& os, const DeviceId& device);

}  // namespace distir

template <>
struct std::hash<distir::DeviceId> {
  size_t operator()(const distir::DeviceId& d) const noexcept {
    return std::hash<int32_t>()(d.has_value() ? d.value() : -1);
  }
};
