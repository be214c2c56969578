// Microbatches after partitioning: a per-device program built for one
// microbatch, repeated K times (docs/transforms.md §12.8).
//
// The search builds every grid point with K microbatches. Splitting the
// global view into K microbatches first (microbatch.h) makes propagation,
// materialisation, clean-up, stage meshes and partitioning walk K copies of
// the same ops. Instead, the global view can be split in "first microbatch
// only" mode (the template: microbatch 0 of size B/K, no gradient sums), run
// through those passes once, and the partitioned program repeated here.
//
// ReplicateMicrobatches takes the partitioned template and the batch
// parameters of microbatch 0, and emits what splitting first would have
// given, device by device:
//   - per-microbatch ops: the ops tagged forward or backward (task.h) that
//     depend on a batch parameter, and the constants such a task owns
//     (partition's shape operands); cloned for microbatches 1..K-1 after the
//     template's ops of microbatch 0, with `.mb0` in their names replaced by
//     `.mb<m>` and their task's microbatch set to m;
//   - shared ops: the rest (setup, update, and reshards of weights that a
//     task reads), emitted once, in place; the ops after the last
//     per-microbatch op (the update) after every microbatch;
//   - sums: a per-microbatch value read by a shared op (a gradient the
//     optimizer or its all-reduce reads), or a returned scalar (the loss), is
//     summed by an Add chain as each microbatch's value is computed, on its
//     device, in the task of its producer; the last sum takes the value's
//     name without `.mb0`, the others `<name>.sum<m>`;
//   - batch parameters x.mb0.<dev> become x.mb0.<dev> .. x.mb<K-1>.<dev>;
//     a returned per-microbatch tensor is returned K times.
// It refuses (FailedPrecondition; callers then split first) what the
// template cannot express: a shared op before the last per-microbatch op
// that reads a per-microbatch value, an op without a task that depends on a
// batch parameter, a call. For the programs the grid builds (every D, T, P,
// K, schedule, recomputation, ZeRO 0 and 1) the result simulates exactly as
// the program split first (sharding_replicate_test.cc checks it).

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "ir/segmented_program.h"
#include "sharding/pipeline_task.h"
#include "support/status.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::sharding {

/// Repeats the per-microbatch work of the partitioned template `function`
/// `microbatches` times. `batch_params` are the template's local batch
/// parameters (microbatch 0 on each device). K = 1 changes nothing. With
/// `tasks`, the task of every op of the result, by position (for
/// OrderByTasks, task_order.h).
Status ReplicateMicrobatches(Module& module, std::string function, int64_t microbatches,
                             const std::vector<std::string>& batch_params,
                             std::vector<std::optional<TaskTag>>* tasks = nullptr);

/// The program ReplicateMicrobatches makes of the partitioned template `fn`,
/// as copies of its ops (ir/expanded_program.h) in the same order, without
/// building them; `tasks` gets the task of each of its ops (for
/// OrderExpandedByTasks, task_order.h). The search simulates this instead of
/// the built program (sim::SimulateExpanded): the same per-device ops,
/// costs and buffers. With `keep_devices` (by device id), only the part of
/// it on those devices: the ops that touch one, a collective with only its
/// operands and results there (ExpandedProgram::keep_device; the replica
/// symmetry of docs/cost_model.md §3.2). With `op_images` (per op of `fn`,
/// a template that is itself a part, PartitionShardingsPart's images), the
/// op count of the whole (ExpandedProgram::whole_num_ops) weighs each op by
/// its images. Errors: FailedPrecondition where
/// ReplicateMicrobatches refuses (K = 1 included: a call, a shared op reading
/// a microbatch early), or, with `keep_devices`, where an op other than a
/// collective or a value joins kept and other devices.
StatusOr<ExpandedProgram> ExpandMicrobatches(const Function& fn, int64_t microbatches,
                                             const std::vector<std::string>& batch_params,
                                             std::vector<std::optional<TaskTag>>& tasks,
                                             const std::vector<char>* keep_devices = nullptr,
                                             const std::vector<double>* op_images = nullptr);

/// The names ReplicateMicrobatches gives the results of the ops of `program`,
/// ExpandMicrobatches' (or ExpandMicrobatchesInOrder's) whole program of
/// `fn` with `microbatches` copies, by value id (a copy of microbatch m > 0
/// `.mb0` made `.mb<m>`, a sum its value's with `.mb0` made `.sum<m>` or
/// dropped; parameters are left empty): so that a trace of the copies is
/// labelled as a trace of the built program. nullopt where the built program
/// makes names unique as it goes (a template name with another `.mb<n>`
/// component or without its `.mb0`, a sum's name a template value has), or
/// where the template does not expand (ClassifyTemplate's errors).
std::optional<std::vector<std::string>> CopyNames(const Function& fn, int64_t microbatches,
                                                  const std::vector<std::string>& batch_params,
                                                  const ExpandedProgram& program);

/// ExpandMicrobatches' program with its ops already in the order
/// OrderExpandedByTasks gives them (`schedule`, `virtual_stages`), op for op,
/// its values numbered in that order: the order is found over the program's
/// task segments from the template (segment_view.h), and the copies are
/// written segment by segment, so the search neither orders nor permutes
/// K x ops ops. nullopt where that order does not apply (no schedule, the
/// exchange order refuses, a summed Send result): the caller then expands
/// and orders as before. Errors: those of ExpandMicrobatches.
StatusOr<std::optional<ExpandedProgram>> ExpandMicrobatchesInOrder(
    const Function& fn, int64_t microbatches, const std::vector<std::string>& batch_params,
    PipelineSchedule schedule, int64_t virtual_stages,
    const std::vector<char>* keep_devices = nullptr,
    const std::vector<double>* op_images = nullptr);

/// The program ExpandMicrobatchesInOrder writes, as kinds of segments and
/// their order (ir/segmented_program.h: each task of a stage, microbatch 0
/// or a later one, and each Send, setup or update op is a kind; the buffers
/// that cross segments are listed with the positions of their first and last
/// ops), for sim::SimulateSegmented, whose cost grows with the kinds' ops and
/// the segments, not with K x ops. nullopt where ExpandMicrobatchesInOrder
/// gives nullopt, or a value is a tuple, or a shared task op reads a sum.
/// Errors: those of ExpandMicrobatches.
StatusOr<std::optional<SegmentedProgram>> ExpandMicrobatchSegments(
    const Function& fn, int64_t microbatches, const std::vector<std::string>& batch_params,
    PipelineSchedule schedule, int64_t virtual_stages,
    const std::vector<char>* keep_devices = nullptr,
    const std::vector<double>* op_images = nullptr);

}  // namespace distir::sharding
