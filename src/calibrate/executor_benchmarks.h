// Elementwise ops timed through the CPU executor (backend/cpu/cpu_executor.h),
// not as bare kernels: a one-device program of a chain of `Add`s is lowered,
// planned and run by the same Executor that `distir run` uses, so a time per op
// includes everything the executor pays per op (the kernel closure's dispatch,
// the arena views, the loop over the program) besides the kernel itself. At one
// element that is the per-op overhead, which the cost model's
// device.kernel_launch_overhead stands for; at millions of elements it is the
// memory bandwidth.

#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/measurement.h"
#include "calibrate/timer.h"
#include "support/status_or.h"

namespace distir::calibrate {

struct ExecutorSweep {
  std::vector<int64_t> sizes;       ///< elements of each Add
  std::vector<int64_t> relu_sizes;  ///< elements of each Relu (a check, reported in the CSV)
  int chain = 64;                   ///< Adds per program (the per-run cost is spread over them)
  TimingOptions timing;
};

/// 1, 4, 16, ..., 4^11 elements, chains of 64 Adds.
ExecutorSweep DefaultExecutorSweep();
/// Three small sizes, short chains and timings, for tests.
ExecutorSweep QuickExecutorSweep();

/// Times, for each size n, one run of the chain `y_{i+1} = Add(y_i, x)` (f32,
/// n elements, on this rank alone: MPI_COMM_SELF) and returns one Measurement
/// per size, op "Add", with the time of one Add (the run's time / chain), 1 FLOP
/// and 12 bytes per element (docs/cost_model.md §2.1). Every rank may call it at
/// once (each times its own copy), as the executor's ranks compute at once.
/// Errors: those of parsing, lowering or running the program (a bug).
StatusOr<std::vector<Measurement>> RunExecutorElementwiseBenchmarks(const ExecutorSweep& sweep);

}  // namespace distir::calibrate
