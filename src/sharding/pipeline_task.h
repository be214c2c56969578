// Pipeline tasks: which forward or backward task of which stage and
// microbatch an op belongs to (docs/transforms.md §12.7).
//
// A pipelined program runs, on every stage, the forward and the backward
// pass of each microbatch as one task each (GPipe, 1F1B). The passes that
// build such a program record the task on every op as the attribute
// `task = [stage, microbatch, phase]`, which every op may carry
// (ir/op_registry.h): microbatch passes (microbatch.h) set the microbatch and
// the phase, stage assignment (stages.h) the stage, and task ordering
// (task_order.h) sorts each device's ops by it. With interleaving (v model
// chunks per stage, stages.h) `stage` is the chunk, run on stage chunk mod P.
// Ops run once per step, not
// per microbatch, have microbatch -1: setup ops (they read no batch input)
// before every task, update ops (the optimizer and what follows it) after.

#pragma once

#include <cstdint>
#include <optional>

#include "ir/function.h"

namespace distir::sharding {

enum class TaskPhase : int64_t {
  kForward = 0,   ///< computes a returned value of the microbatch (its loss, its outputs)
  kBackward = 1,  ///< the rest of the microbatch's work (gradients)
  kSetup = 2,     ///< once per step, before every task: reads no batch input
  kUpdate = 3,    ///< once per step, after every task: an optimizer op or one after it
};

struct TaskTag {
  int64_t stage = 0;
  int64_t microbatch = -1;  ///< -1 for setup and update ops
  TaskPhase phase = TaskPhase::kForward;

  bool operator==(const TaskTag&) const = default;
};

/// An optimizer op (SGD, Adam): the first update op of a training step.
inline bool IsOptimizer(OpKind kind) { return kind == OpKind::kSGD || kind == OpKind::kAdam; }

/// The `task` attribute of `op`, if it has a well-formed one.
std::optional<TaskTag> GetTask(const Op& op);

/// The `task` attribute's value for `task`: [stage, microbatch, phase].
Attribute TaskAttribute(const TaskTag& task);

/// Writes `task` as `op`'s `task` attribute.
void SetTask(Op& op, const TaskTag& task);

/// Gives every op without a task whose results only update ops read (the
/// all-reduce of an accumulated gradient) the task of such an update op;
/// every other op without a task the task of the producer of its first
/// operand that has one (a collective inserted after a tagged op belongs to
/// that op's task), else that of its first user with one (a collective on a
/// parameter runs for the task that reads it). Ops no tagged op reaches stay
/// untagged.
void InheritTasks(Function& fn);

}  // namespace distir::sharding
