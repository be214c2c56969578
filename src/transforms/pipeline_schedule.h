// Pipeline schedules: the order in which each stage runs its microbatch tasks.
//
// A task is the forward or the backward pass of one stage on one microbatch.
// Schedules are computed in synchronous timesteps, as the original DistIR's
// pipeline_parallel_scheduler.py does: in every timestep each stage runs at
// most one ready task, and a task finished in timestep i makes its successor
// (forward of the next stage, or backward of the previous one) ready in
// timestep i + 1. The forward of stage 0 is ready for every microbatch from
// the start. Schedules differ only in which ready task a stage picks:
//
//   GPipe  a forward if one is ready (lowest microbatch), else a backward
//          (lowest microbatch): every forward before any backward.
//   1F1B   alternate: after a forward prefer a backward, after a backward
//          prefer a forward (lowest microbatch); the first pick is a forward.
//          This is PipeDream-flush as the original implements it; for P = 2,
//          K = 4 it gives exactly the order in DISTIR_PYTHON_NOTES.md §9.
//
// The transform emits the tasks of a timestep in stage order, so the program
// order (hence the simulated timeline) follows the schedule.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transforms/parallel_options.h"

namespace distir {

struct PipelineTask {
  int64_t stage = 0;
  int64_t microbatch = 0;
  bool backward = false;

  bool operator==(const PipelineTask&) const = default;
};

/// The tasks of each timestep, in stage order. `training` false gives forward
/// tasks only (inference). REQUIRES: stages >= 1, microbatches >= 1.
std::vector<std::vector<PipelineTask>> SchedulePipeline(int64_t stages, int64_t microbatches,
                                                        PipelineSchedule schedule, bool training);

/// "f0.1" / "b1.3": stage then microbatch, for tests and debugging.
std::string TaskName(const PipelineTask& task);

}  // namespace distir
