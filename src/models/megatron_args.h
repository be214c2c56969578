// A Megatron-LM launch line (`pretrain_gpt.py --num-layers 2 --hidden-size
// 4096 ... --bf16`, as pasted from a user's script) read into the transformer
// builder's options (transformer.h) and the parallel sizes it asks for.
// Every option is accounted for: modelled ones set an option, parallel and
// recomputation ones are kept for the caller to simulate or refuse, and the
// rest (learning-rate schedule, data, logging, ...) are listed in
// `unmodelled` for a warning, never dropped silently. docs/models.md lists the
// table; `distir simulate --megatron-args` is the client.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/transformer.h"
#include "support/status_or.h"

namespace distir {

/// What a Megatron launch line asks for.
struct MegatronArgs {
  /// The model and optimizer; `batch` is micro_batch_size.
  TransformerOptions transformer;
  int64_t micro_batch_size = 1;
  int64_t global_batch_size = 0;  ///< 0: not given (Megatron: micro x data parallel)
  int64_t tensor_model_parallel_size = 1;
  int64_t pipeline_model_parallel_size = 1;
  int64_t context_parallel_size = 1;
  int64_t num_layers_per_virtual_pipeline_stage = 0;  ///< 0: no interleaving
  bool sequence_parallel = false;
  bool use_distributed_optimizer = false;
  /// False with --no-scatter-gather-tensors-in-pipeline (Megatron's default:
  /// stage transfers scattered over tp and gathered, sharding::GridOptions).
  bool scatter_gather_tensors_in_pipeline = true;
  std::string recompute_granularity;  ///< "", "selective" or "full"
  /// Options read but not modelled, each as written ("--lr 1.5e-4",
  /// "--data-path /x"), in order.
  std::vector<std::string> unmodelled;

  /// tensor x pipeline x context parallel sizes: the world size of one
  /// data-parallel replica.
  int64_t ModelParallelSize() const;
};

/// Reads `line`: whitespace-separated words, '...' and "..." quoting, `\`
/// line continuations; the launcher, its options and the script are skipped
/// (everything up to the first word ending in ".py", or else up to the first
/// option); `--name value` and `--name=value`. Megatron's
/// defaults apply to what the line leaves out (GPT blocks: learned
/// positions, LayerNorm, GELU, biases, tied output layer; fp32). LLaMA blocks
/// need all of --swiglu, --normalization RMSNorm, --position-embedding-type
/// rope and --disable-bias-linear. Errors: InvalidArgument naming the option
/// (a value that is not a number, a missing value, a mix of GPT and LLaMA
/// block options, --fp16 with --bf16), and the transformer's own validation.
StatusOr<MegatronArgs> ParseMegatronArgs(std::string_view line);

/// The distribution a launch line asks for, in DistIR's terms: D x T x P
/// devices, K microbatches of micro_batch_size sequences each, recomputation,
/// ZeRO stage, and the global batch (micro batch x D x K, Megatron's rule).
struct MegatronDistribution {
  int64_t dp = 1, tp = 1, pp = 1, microbatches = 1;
  /// v model chunks per stage: L / (P N) with
  /// --num-layers-per-virtual-pipeline-stage N (interleaved 1F1B); else 1.
  int64_t virtual_stages = 1;
  bool recompute = false;  ///< --recompute-granularity full: every layer; selective: see below
  /// --recompute-granularity selective: the core attention only.
  bool recompute_selective = false;
  /// --sequence-parallel (Megatron turns it off at T = 1, and so does the mesh).
  bool sequence_parallel = false;
  int zero_stage = 0;  ///< 1 with --use-distributed-optimizer
  /// Stage transfers by scatter-gather (off: --no-scatter-gather-tensors-in-pipeline).
  bool scatter_gather = true;
  int64_t global_batch = 1;
};

/// The distribution of `args` on `world_size` devices (the launcher's world:
/// D = world / (T x P x CP)). InvalidArgument when the world size is not a
/// multiple of ModelParallelSize() or the global batch not a multiple of
/// micro batch x D, and, with --num-layers-per-virtual-pipeline-stage N, as
/// Megatron: P <= 2, or L not a multiple of P with L / P a multiple of N;
/// Unimplemented naming every option the simulator does not model yet
/// (--context-parallel-size, and N = L / P: one chunk
/// per stage), so no line is simulated as something else. The
/// interleaved schedule's K % P == 0 is checked where it is built
/// (transforms/interleaved_schedule.h).
StatusOr<MegatronDistribution> MegatronDistributionOf(const MegatronArgs& args, int64_t world_size);

}  // namespace distir
