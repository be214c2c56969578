// The executor of lowered per-rank programs: one MPI rank per DistIR device.
//
// A distributed program (one global function, every op placed) is lowered to
// one program per device (src/lowering: placement, projection, deadlock
// check). PrepareExecution() does that and fixes the device-to-rank mapping;
// an Executor (cpu/cpu_executor.h for the host, the CUDA backend's for GPUs)
// then runs this MPI rank's program: tensors in an arena planned ahead of time
// (memory_plan.h), compute ops on its kernels, SendTo/RecvFrom as
// point-to-point messages and each `Collective` on a sub-communicator of its
// group, created once, collectively, before the first iteration.
//
// Device-to-rank mapping (RankMap): the devices of the program, sorted by id,
// go to MPI ranks 0, 1, ... in that order (d0, d2, d5 -> ranks 0, 1, 2).
// Ranks beyond the program's devices run nothing but take part in the
// collective set-up and the timing barriers. docs/backend.md has the details
// (inputs, timing protocol, dtypes).

#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/cpu/tensor_view.h"
#include "interp/cpu_domain.h"
#include "interp/reference_executor.h"
#include "ir/function.h"
#include "lowering/rank_program.h"
#include "support/status_or.h"

namespace distir::backend {

enum class BackendKind { kCpu, kCuda };

/// "cpu" or "cuda".
std::string_view BackendName(BackendKind kind);
/// The backend named `name`; InvalidArgument listing the names otherwise.
StatusOr<BackendKind> ParseBackend(std::string_view name);

/// DistIR devices <-> MPI ranks: the i-th device in id order is MPI rank i.
class RankMap {
 public:
  RankMap() = default;
  /// REQUIRES: `devices` distinct and placed (any order; they are sorted).
  explicit RankMap(std::vector<DeviceId> devices);

  /// Number of devices, i.e. MPI ranks that run a program.
  int num_devices() const { return static_cast<int>(devices_.size()); }
  /// The MPI rank of `device`, or nullopt when the program does not use it.
  std::optional<int> RankOf(DeviceId device) const;
  /// The device MPI rank `rank` runs; no device for rank >= num_devices().
  DeviceId DeviceOf(int rank) const;
  const std::vector<DeviceId>& devices() const { return devices_; }

 private:
  std::vector<DeviceId> devices_;
};

/// Every rank's program of one global function, as the executors take them.
struct ExecutionPlan {
  /// One per device, in device order: rank i's program is programs[i]
  /// (unshared, so each program's `origin` maps its values to the global
  /// ones; see lowering/rank_program.h).
  std::vector<RankProgram> programs;
  RankMap ranks;
  /// The global function (owned by the caller's module, which must outlive this).
  const Function* global = nullptr;

  /// Rank `rank`'s program, or nullptr for a rank beyond the devices.
  const RankProgram* ProgramOf(int rank) const;
};

/// This rank's index among the ranks of `comm` on its node (shared-memory
/// split), the usual choice of GPU: local rank modulo the visible devices.
/// Collective over `comm`. Errors: Internal when MPI fails.
StatusOr<int> NodeLocalRank(MPI_Comm comm);

/// Lowers `fn` of `module` for execution: placement, projection onto every
/// device and the deadlock check (lowering/lower.h's chain without sharing).
/// REQUIRES: `module` verifies and its types are inferred. `module` must
/// outlive the result. Errors: those of lowering, located at the op.
StatusOr<ExecutionPlan> PrepareExecution(const Module& module, const Function& fn);

/// The inputs of `program` picked from the global function's arguments
/// (`global_args`, one per parameter of plan.global): the values of its
/// parameters' origins. REQUIRES: global_args.size() == plan.global->num_params().
std::vector<HostValue> RankInputs(const RankProgram& program,
                                  std::span<const HostValue> global_args);

/// Random inputs of `program` equal to what RandomInputs(*plan.global, seed,
/// options) gives its parameters' origins, without drawing the other ranks'
/// parameters: global parameter i draws from the stream seed + i as
/// RandomInputs does. Overrides are not applied.
std::vector<HostValue> RandomRankInputs(const RankProgram& program, uint64_t seed,
                                        const RandomInputOptions& options = {});

/// Parameter `param` of `program`'s value in RandomRankInputs(program, seed,
/// options), stored into `view` in the view's dtype (the bytes StoreHostValue
/// would write), drawn on threads of their own. REQUIRES: the parameter is a
/// tensor or scalar of the view's element count; `view` holds it.
void StoreRandomRankInput(const RankProgram& program, int param, uint64_t seed,
                          const TensorView& view, const RandomInputOptions& options = {});

/// True when every parameter of `program` is a tensor or scalar (no tuple):
/// what StoreRandomRankInput draws; executors fall back to SetInputs otherwise.
bool ParamsAreTensors(const RankProgram& program);

/// True for the per-rank communication ops of a lowered program (SendTo,
/// RecvFrom, Collective): what an executor runs on its communication library.
bool IsRankCommunication(OpKind kind);

/// The simulator's trace label (sim::TraceLabel: the op's name and its first
/// result) of the global op a rank program's op belongs to, so that per-op
/// timings of every backend line up with the simulated trace. Found through the
/// origin of the local op's first result; a token result has none, so the
/// global op is found among the communication users of the input's origin.
class OpLabeler {
 public:
  /// `global` must outlive the labeler.
  explicit OpLabeler(const Function& global);
  /// `origin`: the rank program's local value id -> global value (RankProgram::origin).
  std::string Label(const Op& op, const std::vector<const Value*>& origin) const;

 private:
  const Op* GlobalOp(const Op& op, const std::vector<const Value*>& origin) const;

  std::unordered_map<const Value*, std::vector<const Op*>> users_;
};

/// One op's interval on this rank, for the per-op timing mode.
struct OpTiming {
  /// The simulator's trace label of the global op it belongs to
  /// (sim::TraceLabel: "MatMul %h0.r0.m0", "Send %x.s1", "AllReduce %g.sum").
  std::string label;
  /// "compute" or "communication", as the simulator's trace categories.
  std::string category;
  double start_s = 0;  ///< from the start of the iteration on this rank
  double end_s = 0;
};

/// Runs this MPI rank's program. Not thread-safe; one per rank. Every method
/// that communicates must be called by all ranks of the communicator it was
/// created on, in the same order (MPI collective semantics).
class Executor {
 public:
  virtual ~Executor() = default;

  virtual BackendKind backend() const = 0;
  /// This rank's device; no device for an idle rank (beyond the plan's devices).
  virtual DeviceId device() const = 0;
  /// This rank's program; nullptr for an idle rank.
  virtual const RankProgram* program() const = 0;

  /// Sets the parameters, one HostValue per parameter of program() (of its
  /// type's dtype and shape), converted to the parameter's dtype. Idle ranks
  /// take an empty list. Errors: InvalidArgument naming the parameter.
  virtual Status SetInputs(std::span<const HostValue> args) = 0;

  /// SetInputs(RandomRankInputs(*program(), seed)), the values drawn straight
  /// into the executor's storage (StoreRandomRankInput) rather than through
  /// HostValues of doubles: the inputs of a billion-parameter program are
  /// gigabytes of doubles to page in, which dominated `distir run`'s set-up.
  /// The default goes through SetInputs.
  virtual Status SetRandomInputs(uint64_t seed);

  /// Runs one iteration of the program (all ops, in order). Parameters that
  /// the program updates in place (SGD, Adam) keep their new values.
  /// Errors: a failing MPI call, an index out of range, located at the op.
  virtual Status Run() = 0;

  /// As Run(), appending each op's interval to `ops` (clock: MPI_Wtime).
  virtual Status RunProfiled(std::vector<OpTiming>& ops) = 0;

  /// The returned values of the last Run(), one per return of program().
  virtual StatusOr<std::vector<HostValue>> Outputs() const = 0;

  /// Bytes of this rank's planned arena (memory_plan.h arena_bytes()); 0 when idle.
  virtual int64_t planned_peak_bytes() const = 0;
  /// The plan's unaligned live peak, the simulator's figure; 0 when idle.
  virtual int64_t live_peak_bytes() const = 0;
};

/// How to time an executor.
struct TimingOptions {
  int warmup = 2;       ///< untimed iterations first
  int iterations = 10;  ///< timed iterations, >= 1
  /// Samples per iteration, for the throughput.
  int64_t batch_size = 1;
  /// Also record per-op intervals (in one extra, separate iteration, so
  /// that the timed iterations carry no profiling overhead).
  bool per_op = false;
};

struct TimingResult {
  /// Per timed iteration: the slowest rank's time between the barriers.
  std::vector<double> iteration_s;
  double median_s = 0;
  double throughput = 0;           ///< batch_size / median_s (samples/s)
  int64_t planned_peak_bytes = 0;  ///< the largest over ranks
  int64_t live_peak_bytes = 0;     ///< the largest over ranks
  /// With per_op, on rank 0 only: every rank's op intervals, by rank.
  std::vector<std::vector<OpTiming>> ops;
};

/// The timing protocol (docs/backend.md): `warmup` iterations; then, for each
/// of `iterations`, MPI_Barrier, t0 = MPI_Wtime(), Run(), t1 = MPI_Wtime(),
/// and the iteration's time is the maximum of t1 - t0 over the ranks
/// (MPI_Allreduce MAX). Collective over `comm`; every rank gets the result.
StatusOr<TimingResult> TimeExecutor(Executor& executor, MPI_Comm comm,
                                    const TimingOptions& options);

/// Per-op intervals as Chrome trace JSON (the layout of sim/chrome_trace.h:
/// one process, one thread per device named "d<N>", "X" events with the
/// simulator's labels and categories, microseconds).
std::string OpTimingChromeTraceJson(const std::string& name, const RankMap& ranks,
                                    const std::vector<std::vector<OpTiming>>& per_rank);

}  // namespace distir::backend
