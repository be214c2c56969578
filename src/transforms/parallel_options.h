// ParallelOptions: how a sequential model is distributed (paper §4).
//
// D (data), T (tensor, Megatron-style) and P (pipeline) degrees, K microbatches
// and a pipeline schedule, plus the memory optimizations of the paper's
// appendix (recomputation, ZeRO). The devices form a (D, P, T) mesh with T
// innermost: replica r, stage s, shard t runs on device (r*P + s)*T + t, so a
// tensor-parallel group sits on neighbouring devices (one NVSwitch board, one
// node). docs/transforms.md describes every knob.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/status.h"
#include "support/status_or.h"

namespace distir {

/// Order in which each pipeline stage runs its forward and backward microbatch tasks.
enum class PipelineSchedule {
  kGpipe,  ///< all forwards, then all backwards (FIFO by readiness, forwards first)
  k1F1B,   ///< synchronous 1F1B (PipeDream-flush): alternate forward and backward when both are
           ///< ready
};

/// "gpipe" or "1f1b".
std::string_view ScheduleName(PipelineSchedule schedule);
/// Parses "gpipe" / "1f1b" (case-insensitive); InvalidArgument listing both otherwise.
StatusOr<PipelineSchedule> ParseSchedule(std::string_view text);

/// Which activations a training step recomputes in its backward tasks. The
/// search's space.recompute (search/megatron_knobs.h has its text forms) and
/// the sharding path's GridOptions (sharding/grid.h) say it with this too.
enum class RecomputeKind {
  kNone,  ///< keep every activation
  /// Each stage recomputes its forward (the paper's); on the sharding path the
  /// transformer-training models recompute every layer's (Megatron's full).
  kFull,
  /// Only the forward ops the model marks `recompute = 1` (Megatron's selective
  /// recomputation of core attention); the sharding path only.
  kSelective,
};

struct ParallelOptions {
  int64_t dp = 1;  ///< D: data-parallel replicas; >= 1
  int64_t tp = 1;  ///< T: tensor-parallel shards per stage; >= 1
  int64_t pp = 1;  ///< P: pipeline stages; in [1, layers]
  /// v: model chunks per pipeline stage (Megatron's interleaved 1F1B,
  /// transforms/interleaved_schedule.h); 1: none. Sharding path only.
  int64_t virtual_stages = 1;
  int64_t microbatches = 1;  ///< K: microbatches per replica; batch / (D K) >= 1 and integral
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  /// Training: what each backward task recomputes of its forward first.
  RecomputeKind recompute = RecomputeKind::kNone;
  /// Megatron's sequence parallelism over tp (the model's rules,
  /// models/transformer_sharding.h); transformer models on the sharding path only.
  bool sequence_parallel = false;
  int zero_stage = 0;  ///< training with D > 1: ZeRO stage 0 (off), 1, 2 or 3
  /// Devices of the cluster; 0 means exactly D*T*P. Otherwise D*T*P must equal it.
  int64_t num_devices = 0;

  int64_t world_size() const { return dp * tp * pp; }
};

/// "D=2 T=4 P=2 K=8 1f1b" plus " vpp=2" / " sp" / " recompute" (or
/// " recompute=selective") / " zero=2" when set.
std::string DescribeParallelOptions(const ParallelOptions& options);

}  // namespace distir
