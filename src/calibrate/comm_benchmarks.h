// Communication microbenchmarks over MPI, the transport of the CPU executor:
// Send (ping-pong between two ranks), AllReduce (sum of f32) and AllGather over
// a sweep of message sizes and of rank counts (the first k ranks of the job).
//
// Sizes follow nccl-tests' convention, which is the cost model's S
// (docs/cost_model.md §2.6): the full buffer for Send and AllReduce, the full
// gathered output for AllGather. A time is the slowest rank's, per call, the
// median of several trials, each trial a fixed number of calls between
// barriers (every rank must make the same calls, so the count is fixed by the
// size, not adapted per rank as the compute timer does).
//
// With a filler (the default sweep), every call is preceded by a Gemm on each
// rank, as the executor's ranks compute between two messages, and the Gemms'
// own time (timed alone in the same trial) is subtracted: a call then costs
// what it adds to an iteration, including the wait for a partner that was
// preempted or is behind. Back-to-back calls measure only the transfer and, on a
// machine whose cores are shared, far less than the executor pays (calls of
// tens of microseconds mostly run while both ranks happen to be scheduled).

#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "calibrate/measurement.h"
#include "support/status_or.h"

namespace distir::calibrate {

struct CommSweep {
  std::vector<int64_t> message_bytes;  ///< S values; each a multiple of 4 * max rank count
  std::vector<int> rank_counts;        ///< participants; empty = 2, 4, 8, ... and the world size
  int trials = 9;
  double target_trial_s = 0.01;  ///< calls per trial ~ this / the size's expected time
  /// Before each call every rank computes a dim^3 f32 Gemm, whose time alone is
  /// measured too and subtracted (0: back-to-back calls). See TimeOnSub.
  int64_t filler_dim = 0;
};

/// The communication ops the benchmarks time (MPI here, NCCL in
/// gpu_benchmarks.h), and their Measurement op names: "Send", "AllReduce",
/// "AllGather".
enum class CommOp { kSend, kAllReduce, kAllGather };
const char* CommOpName(CommOp op);

/// The participant counts a sweep runs on a job of `world` ranks: `requested`,
/// or when empty 2, 4, 8, ... below `world`, then `world`.
/// Errors: InvalidArgument for a count below 2 or above `world`.
StatusOr<std::vector<int>> CommRankCounts(const std::vector<int>& requested, int world);

/// 8 KiB to 2 MiB in steps of 2x (the sizes of activations and gradients the
/// small models send; whole f32 chunks for up to 64 ranks), 9 trials, each call
/// after a 256^3 Gemm (about 0.3-1 ms: a layer's compute between two calls).
CommSweep DefaultCommSweep();
/// Three small sizes and few trials, for tests.
CommSweep QuickCommSweep();

/// Runs the sweep on `comm`; every rank of `comm` must call it with the same
/// sweep. Returns the measurements on rank 0 and an empty vector elsewhere; on
/// a communicator of one rank there is nothing to measure (empty everywhere).
/// Errors (InvalidArgument): a rank count above the size of `comm` or below 2.
StatusOr<std::vector<Measurement>> RunMpiCommBenchmarks(MPI_Comm comm, const CommSweep& sweep);

}  // namespace distir::calibrate
