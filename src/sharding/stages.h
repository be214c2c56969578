// Stage assignment: which pipeline stage runs each op of a global-view
// program (docs/transforms.md §12.7).
//
// Layers are found from the dataflow: the forward ops of the first
// microbatch (microbatch.h tags them) that read a weight, in program order;
// the weights such an op reads first belong to its layer. A weight is a
// parameter that is not a batch input. A model whose layers hold several
// weight-reading ops (a transformer block) names them by a pattern instead. The L layers are cut
// into P contiguous stages, the first L mod P stages one layer longer (as Megatron's uniform
// split). Then every op, in program order:
//   - reads a weight: the stage of the weight's layer (the latest, if several);
//   - else a forward or setup op: the latest stage among its operands;
//   - else (backward, update): the latest stage among its forward operands
//     (ReluGrad(h, da) runs where h was computed), else the earliest among
//     its operands (a gradient sum runs where its terms were computed).
// Setup ops (they read no batch input), and update ops that read parameters
// only (AdamW's decay), then run on the stage of their first reader. The stage is written into the
// op's `task` (pipeline_task.h); ops without a task get one.
//
// With v > 1 model chunks per stage (Megatron's interleaving) the same rules
// cut the layers into P v contiguous chunks of L / (P v) layers each, and
// the task's stage is the chunk (the virtual stage); chunk c runs on stage
// c mod P (stage_meshes.h), so the embedding is on chunk 0 (stage 0), the
// output layer and loss on chunk P v - 1 (stage P - 1), and chunk P - 1
// feeds chunk P across the wrap from stage P - 1 to stage 0.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status.h"
#include "support/status_or.h"

namespace distir::sharding {

/// Assigns a stage in [0, stages) to every op of `function`. `batch_params`
/// names the batch inputs (microbatch parameters included). A non-empty
/// `layer_pattern` (a regular expression searched in weight names, e.g.
/// `^h\.([0-9]+)\.` for GPT-2's blocks) groups the weights into layers by its
/// first capture group; weights it does not match belong to no layer.
/// With `virtual_stages` v > 1 the stages written are the P v chunks, of
/// equal length. Errors (InvalidArgument): stages or v < 1; more stages
/// (chunks) than layers (naming both counts); v > 1 and L not a multiple of
/// P v (naming L, P and v); a pattern that is not a regular expression.
Status AssignStages(Module& module, std::string function, int64_t stages,
                    const std::vector<std::string>& batch_params,
                    const std::string& layer_pattern = "", int64_t virtual_stages = 1);

/// The layer of every forward op of `function`, by op position: the layer of
/// the weights it reads (the latest, if several); -1 when it reads weights of
/// no layer only (an embedding, a final norm, an output layer whose weights
/// the pattern does not name); else the latest layer of its operands'
/// producers (-1 without one). Other ops: -1. Layers
/// as AssignStages finds them; the same errors for `layer_pattern`. The
/// recomputation's checkpoints per layer (recompute.h) are cut by them.
StatusOr<std::vector<int64_t>> ForwardLayers(const Function& fn,
                                             const std::vector<std::string>& batch_params,
                                             const std::string& layer_pattern);

/// The layers of a program without tasks (the sequential step before
/// SplitMicrobatches tags it), where `forward` marks its forward ops (by op
/// index; microbatch.h ForwardOps): the layer of each weight (by value id;
/// -1: none) as AssignStages groups them, with its pattern capture (`key`,
/// per layer; empty without a pattern), and of each forward op by
/// ForwardLayers' rule (by op index; -1 for other ops). The memory bound of
/// pruning (search/layer_footprint.h) follows the stages with it. Errors:
/// `forward` not one mark per op; a bad pattern.
struct ProgramLayers {
  int64_t count = 0;
  std::vector<std::string> key;
  std::vector<int64_t> of_weight;
  std::vector<int64_t> of_op;
};
StatusOr<ProgramLayers> LayersOfForwardOps(const Function& fn, const std::vector<bool>& forward,
                                           const std::vector<std::string>& batch_params,
                                           const std::string& layer_pattern);

/// AssignStages' check of its P stages (P v chunks, `chunks` = v) against the
/// L = `layers` layers of @`function`: InvalidArgument when P > L (v = 1), or
/// v > 1 and L is not a multiple of P v, in AssignStages' words.
Status CheckStageChunks(const std::string& function, int64_t layers, int64_t stages,
                        int64_t chunks);

/// The layer count AssignStages finds once SplitMicrobatches has split `fn`,
/// counted on `fn` itself: the weights (parameters not in `batch_params`)
/// that the ops `forward` marks (by op index; SplitMicrobatches' forward ops,
/// microbatch.h ForwardOps) read, grouped as AssignStages groups them. The
/// split keeps the forward ops in order and the weights by name, so the count
/// is the same (tests/unit/sharding/pipeline_chunks_test.cc); cheaper by the
/// split. Errors: `forward` not one mark per op; a bad pattern.
StatusOr<int64_t> CountLayers(const Function& fn, const std::vector<bool>& forward,
                              const std::vector<std::string>& batch_params,
                              const std::string& layer_pattern);

/// Stage of layer `layer` of `layers` cut into `stages` contiguous stages,
/// the first layers mod stages one layer longer.
int64_t StageOfLayer(int64_t layer, int64_t layers, int64_t stages);

}  // namespace distir::sharding
