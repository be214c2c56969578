// The machine a process runs on, as far as a measurement depends on it: the
// host name, the CPU model and the number of CPUs the OS offers.
//
// `distir calibrate` writes it into the profile it fits (calibrated_on, see
// sim/hardware_profile.h) and `distir run` into /measured, so that `distir
// validate` can say when a profile is judged on a machine other than the one
// it describes (docs/calibration.md §4).

#pragma once

#include <cstdint>
#include <string>

namespace distir {

/// Where something was measured. Plain data; compare with ==.
struct HostInfo {
  std::string host;       ///< gethostname(); "" when unknown
  std::string cpu_model;  ///< /proc/cpuinfo "model name" of the first CPU; "" when unknown
  int64_t cpus = 0;       ///< CPUs online (sysconf); 0 when unknown

  bool operator==(const HostInfo&) const = default;
};

/// The host this process runs on. Never fails: what cannot be read is left
/// empty (or 0).
HostInfo CurrentHost();

/// "host 'h1' (AMD EPYC 7B13, 2 CPUs)"; unknown parts are left out.
std::string DescribeHost(const HostInfo& h);

}  // namespace distir
