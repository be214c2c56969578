// Evaluating one configuration: build (once per batch), validate, parallelize,
// simulate.

#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "search/experiment.h"
#include "io/results_file.h"
#include "search/grid.h"
#include "sim/cost_model.h"
#include "sim/simulator.h"

namespace distir::search {

enum class ConfigStatus : int8_t {
  kOk = 0,       ///< simulated
  kInvalid = 1,  ///< the transform rejects it; `reason` says which rule
  kError = 2,    ///< simulation failed; `reason` has the message
};

/// "ok", "invalid", "error".
const char* StatusName(ConfigStatus status);

struct ConfigResult {
  int64_t index = 0;
  ConfigStatus status = ConfigStatus::kOk;
  std::string reason;
  double iteration_time_s = 0;
  double throughput = 0;          ///< samples/s
  int64_t peak_memory_bytes = 0;  ///< the maximum over devices
  bool fits = false;              ///< peak <= the memory limit
  int64_t num_ops = 0;
};

/// Relative cost of simulating `c`, for load balancing: proportional to the
/// distributed program's op count, D T K (layers + 2).
double EstimatedCost(const Experiment& e, const Config& c);

class Evaluator {
 public:
  explicit Evaluator(const Experiment& e);

  ConfigResult Evaluate(const Config& c);

  /// Simulates `c` again recording its trace and memory timelines into `out`.
  Status Trace(const Config& c, io::TraceRecord& out);

 private:
  StatusOr<const Function*> Sequential(int64_t batch);

  const Experiment& e_;
  std::map<int64_t, Module> sequential_;  // per batch
  sim::CostModel costs_;                  // memo shared by every configuration
};

}  // namespace distir::search
