#include "support/byte_size.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <utility>

namespace distir {
namespace {

constexpr std::pair<const char*, double> kUnits[] = {{"", 1},
                                                     {"B", 1},
                                                     {"kB", 1e3},
                                                     {"KB", 1e3},
                                                     {"MB", 1e6},
                                                     {"GB", 1e9},
                                                     {"TB", 1e12},
                                                     {"KiB", 1024.0},
                                                     {"MiB", 1048576.0},
                                                     {"GiB", 1073741824.0},
                                                     {"TiB", 1099511627776.0}};

// cgroup v2's limit of this process's group; "max" (no limit) and a missing
// file give nullopt.
std::optional<int64_t> CgroupLimit() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  int64_t bytes = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (ec != std::errc() || end != text.data() + text.size() || bytes <= 0) return std::nullopt;
  return bytes;
}

}  // namespace

const char* ByteSizeUnits() { return "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB"; }

std::optional<double> ByteUnitScale(std::string_view unit) {
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) return scale;
  }
  return std::nullopt;
}

std::optional<double> ParseByteSize(std::string_view text) {
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || !std::isfinite(number) || !(number > 0)) return std::nullopt;
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  std::optional<double> scale = ByteUnitScale(unit);
  if (!scale) return std::nullopt;
  return number * *scale;
}

std::string FormatByteSize(double bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) bytes /= 1024, ++unit;
  std::ostringstream os;
  if (unit == 0) {
    os << std::llround(bytes) << " B";
  } else {
    os << std::fixed << std::setprecision(2) << bytes << " " << kNames[unit];
  }
  return os.str();
}

std::optional<int64_t> MachineMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  std::optional<int64_t> physical;
  if (pages > 0 && page_size > 0) physical = static_cast<int64_t>(pages) * page_size;
  const std::optional<int64_t> cgroup = CgroupLimit();
  if (physical && cgroup) return std::min(*physical, *cgroup);
  return physical ? physical : cgroup;
}

}  // namespace distir
