// A grid point of the search as passes: D x T x P x K (and the schedule) on
// meshes (docs/transforms.md §12.7).
//
// The mesh @mesh holds the axes of one stage (dp, tp); the parameter rules
// (annotate.h) lay out the weights and batch inputs on it. With K > 1 or
// P > 1 the batch inputs (parameters whose rule splits dim 0 over dp) are
// split into K microbatches (microbatch.h) and every op gets a pipeline
// stage (stages.h). Then shardings are propagated, materialised and cleaned
// up on @mesh, the stages move to sub-meshes @mesh.s<k> of the world
// [dp, pp, tp] (stage_meshes.h), the program is partitioned per device and
// each device's ops are put in schedule order (task_order.h). With
// recomputation, backward tasks recompute their forward values (recompute.h)
// before propagation, so the recomputed ops are sharded like the originals;
// ZeRO is shardings and Shard ops over dp on the optimizer's operands
// (zero.h), added last.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "ir/mesh.h"
#include "ir/segmented_program.h"
#include "sharding/annotate.h"
#include "sharding/partition.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::sharding {

struct GridOptions {
  std::vector<MeshAxis> axes;  ///< the mesh of one stage: {dp, D}, {tp, T}, ...
  int64_t pp = 1;              ///< P pipeline stages
  /// v model chunks per stage: the layers cut into P v chunks, chunk c on
  /// stage c mod P, run by Megatron's interleaved 1F1B
  /// (transforms/interleaved_schedule.h); 1: P contiguous stages.
  int64_t virtual_stages = 1;
  int64_t microbatches = 1;  ///< K
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  /// Backward tasks recompute their forward values (recompute.h): with kFull
  /// every forward value they need; with kSelective only those of the forward
  /// ops marked `recompute = 1` (Megatron's selective recomputation),
  /// everything else kept.
  RecomputeKind recompute = RecomputeKind::kNone;
  /// With kFull: every layer's input is a checkpoint (Megatron's full
  /// recomputation), not only the stage's (the paper's); layers by layer_pattern.
  bool recompute_layers = false;
  int zero_stage = 0;  ///< ZeRO 0..3 over dp (zero.h)
  /// Weights of one layer, for the pipeline stages (stages.h): a regular
  /// expression whose first group names the layer; empty: every weight-reading op.
  std::string layer_pattern;
  /// Values replicated over tp cross stages as Megatron-LM sends them by
  /// default: a 1/T piece from each tensor-parallel device, all-gathered over
  /// tp on arrival (stage_meshes.h; Megatron's
  /// --no-scatter-gather-tensors-in-pipeline turns it off). The transformer
  /// models set it (models/transformer_sharding.h); off, each device sends
  /// its whole copy, as the paper's transforms do.
  bool scatter_gather_transfers = false;
  /// Sequence-parallel linear layers keep their input's shard for the
  /// backward and all-gather it again there, as Megatron-LM does
  /// (regather.h). The transformer models set it with sequence parallelism.
  bool regather_linear_inputs = false;

  /// The axis stage transfers are scattered over (SplitStageMeshes'
  /// scatter_axis): "tp" with scatter_gather_transfers, else "".
  std::string ScatterAxis() const { return scatter_gather_transfers ? "tp" : ""; }
};

/// The grid point of a search configuration: D and T as mesh axes dp and tp,
/// and its P, K, schedule, recomputation (per layer with `recompute_layers`)
/// and ZeRO stage; Megatron's scatter-gather of stage transfers with
/// `scatter_gather_transfers`.
GridOptions GridOf(const ParallelOptions& o, std::string layer_pattern = "",
                   bool recompute_layers = false, bool scatter_gather_transfers = false);

/// Parses "dp=2,tp=4,pp=2,vpp=2,microbatches=8,schedule=gpipe,recompute,zero=1":
/// pp, vpp (virtual_stages), microbatches, schedule, recompute (alone, or =0 / =1; =layer keeps
/// every layer's input, kFull with recompute_layers; =selective, kSelective),
/// zero (0..3) and scatter_gather (alone, =0 or =1: scatter_gather_transfers)
/// are the grid point's, every other NAME=SIZE a mesh axis.
StatusOr<GridOptions> ParseGridSpec(const std::string& text);

/// The parameters of `fn` whose first matching rule splits dim 0 over
/// `data_axis`: the batch inputs.
std::vector<std::string> BatchParams(const Function& fn, const std::vector<ParamRule>& rules,
                                     const std::string& data_axis = "dp");

/// Annotates `function` as a global-view program of the grid point: the mesh
/// and the rules' shardings, then (K > 1, P > 1 or recomputation)
/// microbatches and stages, then recomputation, then ZeRO. InvalidArgument
/// when a batch input's dim 0 is not a multiple of D x K (the batch is
/// micro-batch x D x K, as Megatron's global batch), when v > 1 and
/// CheckInterleaving refuses P, v, K (interleaved_schedule.h) or the
/// schedule is not 1F1B, or as the passes say.
Status AnnotateGrid(Module& module, std::string function, const GridOptions& grid,
                    const std::vector<ParamRule>& rules);

/// The whole pipeline: AnnotateGrid, propagate, materialise, clean up, stage
/// meshes, partition, task order. `function` becomes the per-device program.
Status DistributeGrid(Module& module, std::string function, const GridOptions& grid,
                      const std::vector<ParamRule>& rules);

/// True when DistributeGridReplicated builds the grid point from a template
/// of one microbatch: K > 1 and ZeRO 0 or 1 (ZeRO-2 reduce-scatters each
/// microbatch's gradient, ZeRO-3 gathers the weight for each reader).
bool ReplicatesMicrobatches(const GridOptions& grid);

/// The same program as DistributeGrid (the same ops on each device, in the
/// same order, up to names), built faster where ReplicatesMicrobatches: the
/// passes run on the template of microbatch 0 and the partitioned template
/// is repeated K times (replicate.h). FailedPrecondition where the template
/// cannot express the program; DistributeGrid on a fresh copy then applies.
Status DistributeGridReplicated(Module& module, std::string function, const GridOptions& grid,
                                const std::vector<ParamRule>& rules);

/// The checks of a grid point that depend on its number of microbatches K
/// (AnnotateGrid runs them first): the batch inputs of `fn` divide into
/// D x K micro-batches, CheckInterleaving accepts P, v, K, and v > 1 runs
/// 1F1B. InvalidArgument saying which fails.
Status CheckGridPoint(const Function& fn, const GridOptions& grid,
                      const std::vector<ParamRule>& rules);
/// The same with the batch inputs `batch_params` (BatchParams(fn, rules))
/// already found: a search checks every grid point of one program, and
/// matching every parameter's name against the rules is most of the work.
Status CheckGridPoint(const Function& fn, const GridOptions& grid,
                      const std::vector<std::string>& batch_params);

/// The layers AnnotateGrid's stage assignment finds in the sequential `seq`
/// (stages.h CountLayers over the forward ops SplitMicrobatches would tag),
/// with the batch inputs `batch_params` (BatchParams of the point's rules):
/// the same for every grid point of `seq`,
/// so a search counts them once. Errors: those of the batch inputs and of
/// `layer_pattern`.
StatusOr<int64_t> PipelineLayers(const Function& seq, const std::vector<std::string>& batch_params,
                                 const std::string& layer_pattern);

/// AnnotateGrid's check of the grid point's P stages (P v chunks) against the
/// `layers` layers of `seq` (PipelineLayers), before building anything: the
/// same InvalidArgument, word for word, as AnnotateGrid gives (stages.h
/// CheckStageChunks); Ok where AnnotateGrid assigns no stages (P = K = 1, no
/// recomputation).
Status CheckPipelineChunks(const Function& seq, const GridOptions& grid, int64_t layers);

/// The partitioned template of microbatch 0 of a grid point (replicate.h),
/// its ops tagged with their tasks, the entry of `module`; `local` names its
/// local microbatch parameters. Built from `seq` at batch B with K
/// microbatches, it depends on B and K only through the micro-batch B / K:
/// the grid points that differ only in K and B with the same B / K share it
/// (the search reuses it, after CheckGridPoint for each).
struct GridTemplate {
  Module module;
  std::vector<std::string> local;
  /// Built for some devices only (PartitionShardingsPart): nonzero by device
  /// id for those; empty: every device. `op_images`: per op of the entry, how
  /// many ops of the whole program it stands for.
  std::vector<char> keep_device;
  std::vector<double> op_images;
  /// DistributedTemplateOfFirst: which of its parts, -1 for the whole.
  int part = -1;
};

/// True when the search can simulate the grid point from a template of one
/// microbatch (DistributedTemplate): ZeRO 0 or 1 (ZeRO-2 reduce-scatters
/// each microbatch's gradient, ZeRO-3 gathers the weight for each reader),
/// any K, K = 1 included (the template is then the program).
bool ExpandsFromTemplate(const GridOptions& grid);

/// The template of the grid point; with `keep_devices`, only its part on
/// those devices (PartitionShardingsPart: one data-parallel replica built for
/// all, docs/cost_model.md §3.2), which ExpandTemplate and SegmentTemplate
/// then expand for those devices only; with `even_axis` too, every value it
/// splits must split evenly (DevicePart::even_axis; but for its last piece
/// with `last_apart`, DevicePart::last_apart). Errors:
/// FailedPrecondition unless ExpandsFromTemplate(grid), or where the part
/// cannot be cut out; those of the passes.
StatusOr<GridTemplate> DistributedTemplate(const Function& seq, const GridOptions& grid,
                                           const std::vector<ParamRule>& rules,
                                           const std::vector<char>* keep_devices = nullptr,
                                           std::string even_axis = "", bool last_apart = false);

/// The template of the grid point for the first of `parts` (each a
/// DevicePart's keep and even_axis; partition.h) that can be partitioned,
/// else the whole (GridTemplate::part says which); the passes before
/// partitioning run once. Errors: those of DistributedTemplate for the whole.
StatusOr<GridTemplate> DistributedTemplateOfFirst(const Function& seq, const GridOptions& grid,
                                                  const std::vector<ParamRule>& rules,
                                                  std::vector<DevicePart> parts);

/// The program DistributeGridReplicated builds from template `t` with
/// grid.microbatches microbatches, as copies of its ops in the same order.
/// With `keep_devices`, only its part on those devices (ExpandMicrobatches);
/// a template of a part (GridTemplate::keep_device) needs them.
/// Errors: FailedPrecondition where the template cannot express it (or the
/// part cannot be cut out, or a part template is asked for the whole); those
/// of the task order.
StatusOr<ExpandedProgram> ExpandTemplate(const GridTemplate& t, const GridOptions& grid,
                                         const std::vector<char>* keep_devices = nullptr);

/// The program ExpandTemplate gives, as kinds of segments and their order
/// (ir/segmented_program.h, sharding::ExpandMicrobatchSegments) for
/// sim::SimulateSegmented; nullopt where it cannot be written so (the
/// caller then expands the copies). Errors: those of ExpandTemplate.
StatusOr<std::optional<SegmentedProgram>> SegmentTemplate(
    const GridTemplate& t, const GridOptions& grid,
    const std::vector<char>* keep_devices = nullptr);

/// A grid point as the search simulates it: the partitioned template of one
/// microbatch, the entry of `module`, and the program DistributeGridReplicated
/// builds from it as copies of its ops (ir/expanded_program.h), in the same
/// order.
struct ExpandedGrid {
  Module module;
  ExpandedProgram program;
};

/// The grid point as an ExpandedGrid, without the IR of the copies
/// (sim::SimulateExpanded simulates it as sim::Simulate simulates
/// DistributedCopy's program): DistributedTemplate, then ExpandTemplate.
/// Errors: theirs.
StatusOr<ExpandedGrid> DistributedExpansion(const Function& seq, const GridOptions& grid,
                                            const std::vector<ParamRule>& rules);

/// A fresh module whose entry is `seq` distributed as the grid point says:
/// DistributeGridReplicated on a copy, and where it answers
/// FailedPrecondition (the template cannot say it), DistributeGrid on another
/// copy. `seq` is left unchanged. Errors: those of the passes.
StatusOr<Module> DistributedCopy(const Function& seq, const GridOptions& grid,
                                 const std::vector<ParamRule>& rules);

}  // namespace distir::sharding
