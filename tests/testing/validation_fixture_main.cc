// distir-validation-fixture CASE FILE: writes a results file with /configs and
// /measured (spread and host included) whose `distir validate` printout the lit
// tests check (tests/lit/cli/issue_19_validate.test). Exit 0 on success, 2 for
// a usage error, 1 when writing fails. Cases:
//   noisy       5 configurations; configs 0 and 1 swap within noise (their
//               interquartile ranges overlap), 3 and 4 swap beyond it; the profile
//               was calibrated on host lab-0, the runs measured on lab-1
//   tied        the same measurements, but every configuration simulates the same
//               throughput (a profile that cannot tell them apart); same host
//   unrecorded  as noisy, with a profile that does not say where it was calibrated

#include <iostream>
#include <string>

#include "io/measurements.h"
#include "io/results_file.h"

namespace distir::testing {
namespace {

constexpr char kProfile[] = R"(name: lab-cpu
device:
  name: Test CPU
  peak_flops: {f16: 100 GFLOP/s, f32: 100 GFLOP/s}
  vector_flops: 1 GFLOP/s
  dram_bandwidth: 100 GB/s
  memory_capacity: 8 GiB
  kernel_launch_overhead: 5 ns
nodes: {devices_per_node: 2, num_nodes: 1}
intra_node: {name: shm, bandwidth: 10 GB/s, latency: 5 us}
collectives: {allreduce: ring, launch_overhead: 0 s}
)";

// Batch 100 everywhere: throughput = 100 / time.
io::ResultsFile Simulated(bool tied, const std::string& calibrated_on) {
  const double times[] = {1.0, 1.0 / 0.9, 1.25, 1.0 / 0.7, 1.0 / 0.6};
  io::ResultsFile f;
  f.experiment_name = "validate-fixture";
  f.hardware = "lab-cpu";
  f.hardware_yaml = kProfile;
  if (!calibrated_on.empty()) {
    f.hardware_yaml +=
        "calibrated_on: {host: " + calibrated_on + ", cpu_model: Test CPU, cpus: 2}\n";
  }
  for (int64_t i = 0; i < 5; ++i) {
    io::ResultRow r;
    r.index = i;
    r.batch = 100;
    r.schedule = std::string("gpipe");
    // Not the literal itself: GCC 12 at -O3 warns (-Wmaybe-uninitialized) about
    // the short-string copy of a literal into a fresh row (as in broken_results_file.cc).
    r.status = std::string("ok");
    r.iteration_time_s = tied ? 1.25 : times[i];
    r.throughput = 100 / r.iteration_time_s;
    r.rank = i + 1;
    f.rows.push_back(r);
    f.ranking.push_back(i);
  }
  return f;
}

// Five iterations each: sorted, they are min, q1, median, q3, max.
io::Measurements Measured() {
  const double q1[] = {1.20, 1.15, 1.55, 1.85, 1.66};
  const double median[] = {1.25, 1.20, 1.60, 1.90, 1.70};
  const double q3[] = {1.30, 1.26, 1.65, 1.95, 1.75};
  io::Measurements m;
  m.backend = "cpu";
  m.ranks = 2;
  m.started_at = "2025-01-31T12:00:00Z";
  m.host = {"lab-1", "Test CPU", 2};
  m.has_spread = true;
  for (int64_t i = 0; i < 5; ++i) {
    io::MeasuredRow r{i, median[i], 100 / median[i], 5, 4096, "ok", ""};
    r.time_min_s = q1[i] - 0.02;
    r.time_q1_s = q1[i];
    r.time_q3_s = q3[i];
    r.time_max_s = q3[i] + 0.1;
    r.iteration_times_s = {r.time_max_s, q1[i], median[i], r.time_min_s, q3[i]};
    m.rows.push_back(r);
  }
  return m;
}

Status Write(const std::string& which, const std::string& path) {
  const std::string calibrated_on = which == "tied" ? "lab-1" : which == "noisy" ? "lab-0" : "";
  DISTIR_RETURN_IF_ERROR(io::WriteResultsFile(path, Simulated(which == "tied", calibrated_on)));
  return io::WriteMeasurements(path, Measured());
}

}  // namespace
}  // namespace distir::testing

int main(int argc, char** argv) {
  const std::string which = argc == 3 ? argv[1] : "";
  if (which != "noisy" && which != "tied" && which != "unrecorded") {
    std::cerr << "usage: distir-validation-fixture noisy|tied|unrecorded FILE\n";
    return 2;
  }
  const distir::Status written = distir::testing::Write(which, argv[2]);
  if (!written.ok()) {
    std::cerr << "distir-validation-fixture: " << written.ToString() << "\n";
    return 1;
  }
  return 0;
}
