#include "calibrate/comm_benchmarks.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "backend/cpu/host_kernels.h"
#include "calibrate/timer.h"

namespace distir::calibrate {
namespace {

// One call of `op` on `sub` with S = bytes (f32 elements).
void CallOnce(CommOp op, MPI_Comm sub, int64_t bytes, std::vector<float>& send,
              std::vector<float>& recv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(sub, &rank);
  MPI_Comm_size(sub, &size);
  const int count = static_cast<int>(bytes / 4);
  if (op == CommOp::kAllReduce) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, sub);
  } else if (op == CommOp::kAllGather) {
    MPI_Allgather(send.data(), count / size, MPI_FLOAT, recv.data(), count / size, MPI_FLOAT, sub);
  } else if (rank == 0) {  // ping-pong: a round trip is two one-way messages
    MPI_Send(send.data(), count, MPI_FLOAT, 1, 0, sub);
    MPI_Recv(recv.data(), count, MPI_FLOAT, 1, 0, sub, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(recv.data(), count, MPI_FLOAT, 0, 0, sub, MPI_STATUS_IGNORE);
    MPI_Send(send.data(), count, MPI_FLOAT, 0, 0, sub);
  }
}

// The compute a rank does between two communication calls in the executor: a
// square f32 Gemm of `dim` (nothing when dim is 0).
class Filler {
 public:
  explicit Filler(int64_t dim)
      : dim_(dim), a_(static_cast<size_t>(dim * dim), 0.5f), b_(a_), c_(a_.size()) {}
  void operator()() {
    if (dim_ > 0)
      backend::Gemm<float>(false, false, dim_, dim_, dim_, 1, a_.data(), b_.data(), 0, c_.data());
  }

 private:
  int64_t dim_;
  std::vector<float> a_, b_, c_;
};

// The slowest rank's seconds per repetition of `body`, `calls` times between barriers.
template <typename Body>
double SlowestPerCall(MPI_Comm sub, int calls, Body&& body) {
  MPI_Barrier(sub);
  const double start = MPI_Wtime();
  for (int c = 0; c < calls; ++c) body();
  double mine = (MPI_Wtime() - start) / calls, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, sub);
  return slowest;
}

// Median over trials of the slowest rank's seconds per call. With a filler, a
// trial also times `calls` x (filler, call) and `calls` x (filler) alone, and
// the difference is what a call adds to a rank that computes between calls, as
// the executor's ranks do, waiting for a partner that was preempted or is behind
// included. A call never costs less than its transfer, so the result is the
// larger of that difference's median and the back-to-back calls' median (the
// difference of two noisy times can be near zero when the machine is quiet).
// Valid on every rank of `sub`.
double TimeOnSub(CommOp op, MPI_Comm sub, int64_t bytes, const CommSweep& sweep) {
  std::vector<float> send(static_cast<size_t>(bytes / 4), 1.0f), recv(send.size());
  Filler filler(sweep.filler_dim);
  // Expected ~ 10 us + S / 1 GB/s on shared memory (+ the filler): enough calls to fill a trial.
  const double filler_guess = 2.0 * std::pow(static_cast<double>(sweep.filler_dim), 3) / 5e10;
  const double guess = 1e-5 + static_cast<double>(bytes) / 1e9 + filler_guess;
  const int calls = std::clamp(static_cast<int>(sweep.target_trial_s / guess), 2, 1000);
  const auto call = [&] { CallOnce(op, sub, bytes, send, recv); };
  const auto both = [&] {
    filler();
    call();
  };
  // Warm-up: connections, registered buffers, the protocol's caches; a whole
  // trial's worth, untimed, so the first timed trial is like the others.
  for (int c = 0; c < calls; ++c) both();
  std::vector<double> alone, added;
  for (int t = 0; t < sweep.trials; ++t) {
    alone.push_back(SlowestPerCall(sub, calls, call));
    if (sweep.filler_dim == 0) continue;
    const double with_filler = SlowestPerCall(sub, calls, both);
    added.push_back(with_filler - SlowestPerCall(sub, calls, filler));
  }
  double seconds = MedianSample(std::move(alone));
  if (!added.empty()) seconds = std::max(seconds, MedianSample(std::move(added)));
  return op == CommOp::kSend ? seconds / 2 : seconds;  // a round trip is two messages
}

// Every op over every size on the first `k` ranks of `comm` (ranks >= k wait).
void SweepRanks(MPI_Comm comm, int k, const CommSweep& sweep, std::vector<Measurement>& out) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(comm, rank < k ? 0 : MPI_UNDEFINED, rank, &sub);
  if (sub != MPI_COMM_NULL) {
    for (CommOp op : {CommOp::kSend, CommOp::kAllReduce, CommOp::kAllGather}) {
      if (op == CommOp::kSend && k != 2) continue;  // point-to-point: two ranks say it all
      for (int64_t bytes : sweep.message_bytes) {
        const double t = TimeOnSub(op, sub, bytes, sweep);
        if (rank == 0)
          out.push_back({CommOpName(op), "f32", std::to_string(bytes) + " B", 0,
                         static_cast<double>(bytes), k, t});
      }
    }
    MPI_Comm_free(&sub);
  }
  MPI_Barrier(comm);
}

}  // namespace

const char* CommOpName(CommOp op) {
  switch (op) {
    case CommOp::kSend:
      return "Send";
    case CommOp::kAllReduce:
      return "AllReduce";
    case CommOp::kAllGather:
      return "AllGather";
  }
  return "?";
}

StatusOr<std::vector<int>> CommRankCounts(const std::vector<int>& requested, int world) {
  std::vector<int> counts = requested;
  if (counts.empty()) {
    for (int k = 2; k < world; k *= 2) counts.push_back(k);
    counts.push_back(world);
  }
  for (int k : counts) {
    if (k < 2 || k > world) {
      return InvalidArgument() << "communication benchmark over " << k << " ranks needs 2 to "
                               << world << " ranks";
    }
  }
  return counts;
}

CommSweep DefaultCommSweep() {
  CommSweep s;
  // Multiples of 4 bytes x 64 ranks so AllGather splits evenly for any rank count used.
  for (int64_t b = 8 << 10; b <= (int64_t{2} << 20); b *= 2) s.message_bytes.push_back(b);
  s.filler_dim = 256;
  s.target_trial_s = 0.02;
  return s;
}

CommSweep QuickCommSweep() {
  CommSweep s;
  s.message_bytes = {256, 4096, 65536};
  s.trials = 3;
  s.target_trial_s = 1e-3;
  return s;
}

StatusOr<std::vector<Measurement>> RunMpiCommBenchmarks(MPI_Comm comm, const CommSweep& sweep) {
  int world = 1;
  MPI_Comm_size(comm, &world);
  std::vector<Measurement> out;
  if (world < 2) return out;
  DISTIR_ASSIGN_OR_RETURN(const std::vector<int> counts, CommRankCounts(sweep.rank_counts, world));
  for (int k : counts) SweepRanks(comm, k, sweep, out);
  return out;
}

}  // namespace distir::calibrate
