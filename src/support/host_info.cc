#include "support/host_info.h"

#include <unistd.h>

#include <climits>
#include <fstream>
#include <sstream>

namespace distir {
namespace {

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

// The first "model name" line; ARM kernels have none, and then the model is unknown.
std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace

HostInfo CurrentHost() {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return HostInfo{HostName(), CpuModel(), cpus > 0 ? static_cast<int64_t>(cpus) : 0};
}

std::string DescribeHost(const HostInfo& h) {
  std::ostringstream os;
  os << "host '" << (h.host.empty() ? "unknown" : h.host) << "'";
  std::string details = h.cpu_model;
  if (h.cpus > 0) details += (details.empty() ? "" : ", ") + std::to_string(h.cpus) + " CPUs";
  if (!details.empty()) os << " (" << details << ")";
  return os.str();
}

}  // namespace distir
