// Task order: a pipelined per-device program's ops sorted into its
// schedule (docs/transforms.md §12.7).
//
// Each op carries its task (pipeline_task.h; ops without one inherit it).
// The schedule (transforms/pipeline_schedule.h: GPipe or 1F1B, in
// synchronous timesteps) gives every forward and backward task of every
// (stage, microbatch) a timestep. The ops are stably sorted by it: setup ops
// first, then the tasks timestep by timestep, then the update ops. Within a
// device the program order is the order the simulator and the executors run
// it in, so this is what makes the schedule GPipe or 1F1B. Within a
// timestep the tasks' own ops come first, then the Sends between stages in
// stage order (as the emitter orders them): a device that receives does not
// wait for the sender's task before starting its own.
//
// With v model chunks per stage the tasks' stages are chunks (stages.h) and
// the timesteps are those of Megatron's interleaved 1F1B
// (transforms/interleaved_schedule.h), whatever `schedule` says: each
// device's ops then run in Megatron's order of its chunks' tasks.

#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "sharding/pipeline_task.h"
#include "sharding/segment_view.h"
#include "support/status.h"
#include "transforms/parallel_options.h"

namespace distir::sharding {

/// Orders the ops of `function` by `schedule`, or with `virtual_stages`
/// v > 1 by the interleaved schedule; stages (chunks) and microbatches are
/// read from the tasks. A function without tasks is left unchanged.
/// Errors: Internal when the order would read a value before its definition
/// (a task read from a later one), naming both ops; InvalidArgument when
/// v > 1 and the chunk count is not a multiple of v, or CheckInterleaving
/// refuses P, v, K.
Status OrderPipelineTasks(Module& module, std::string function, PipelineSchedule schedule,
                          int64_t virtual_stages = 1);

/// The same order, from the task of each op of `fn` (by position) as given:
/// for a pass that knows them (replicate.h) without reading the attributes.
Status OrderByTasks(Function& fn, const std::vector<std::optional<TaskTag>>& tasks,
                    PipelineSchedule schedule, int64_t virtual_stages = 1);

/// The same order for `program`, copies of the ops of `tmpl`
/// (ir/expanded_program.h), with `tasks` the task of each of its ops: the
/// order OrderByTasks gives the function those copies describe. (Where the
/// exchange order applies, ExpandMicrobatchesInOrder writes the copies in
/// that order from the template's task segments instead: replicate.h.)
Status OrderExpandedByTasks(ExpandedProgram& program, const Function& tmpl,
                            const std::vector<std::optional<TaskTag>>& tasks,
                            PipelineSchedule schedule, int64_t virtual_stages = 1);

/// The exchange order of task segments (segment_view.h), over the segments:
/// the order OrderExpandedByTasks gives the program they describe, segment by
/// segment (where they name no task, each segment is one op and the order
/// stays); nullopt where the schedule refuses the tasks or the exchange order
/// does not apply (the caller then orders the ops of the program one by one).
std::optional<std::vector<size_t>> ExchangeSegmentOrder(const SegmentOrderView& segments,
                                                        PipelineSchedule schedule,
                                                        int64_t virtual_stages = 1);

}  // namespace distir::sharding
