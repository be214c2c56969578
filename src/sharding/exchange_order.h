// Exchange order: a pipelined program's ops ordered so that each pipeline
// stage runs its tasks in its schedule order and meets a neighbour only for
// the transfers between them, as Megatron-LM's runtime does
// (megatron/core/pipeline_parallel/schedules.py; docs/transforms.md §12.7,
// docs/cost_model.md §7).
//
// Ordering by synchronous timesteps alone (every task of timestep t, then
// every Send of t) couples all stages: a stage cannot start its task of t + 1
// before its Sends of t, and those wait for its neighbours' tasks of t, so
// every timestep lasts as long as the slowest stage's task, and a stage that
// runs a forward idles while its neighbour runs a backward. Megatron's
// stages exchange with their neighbours (one batch_isend_irecv) only at
// communication points of their own order:
//
//   1F1B (v = 1)     after every task: a forward's output goes out with the
//                    gradient the next backward reads (send_forward_recv_
//                    backward), a backward's gradient with the next forward's
//                    input (send_backward_recv_forward);
//   interleaved      after every warm-up forward and every backward: a steady
//                    forward's output waits for the backward after it, and
//                    all four transfers with both neighbours are one exchange
//                    (send_forward_backward_recv_forward_backward).
//
// Every Send between two stages joins the sender's first communication point
// at or after the task that produced it and the receiver's last one before
// the first task that reads it. The stages' orders are then merged into one
// program: a stage runs its tasks' ops up to a communication point, and a
// Send is emitted once both its stages have reached the points that hold it
// (within a point, in the order the points become complete; the simulator
// runs a point's Sends one after another). Since the simulator starts an op
// when all its devices are free, the timeline depends only on each device's
// sequence of ops, not on how the stages were merged.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/function.h"
#include "sharding/order_view.h"
#include "sharding/pipeline_task.h"

namespace distir::sharding {

/// The exchange order of the ops of `fn` (a FunctionOrderView or an
/// ExpandedOrderView, order_view.h, or the task segments of a
/// SegmentOrderView, segment_view.h) that run in a task: those with
/// step[i] >= 0, the timestep of their task `tasks[i]` (each physical stage
/// runs its tasks in timestep order). A task of stage (chunk) c runs on chain
/// c mod `chains` (P, the physical pipeline stages); a Send's receiving chain
/// is that of its result's device. `interleaved`: Megatron's interleaved
/// communication points, else one after every task. Returns those ops'
/// positions in their new order (ops with step < 0 left out), or nullopt when
/// two stages would each wait for the other (the caller keeps the timestep
/// order then).
template <typename View>
std::optional<std::vector<size_t>> ExchangeOrder(const View& fn,
                                                 const std::vector<std::optional<TaskTag>>& tasks,
                                                 const std::vector<int64_t>& step, int64_t chains,
                                                 bool interleaved);

}  // namespace distir::sharding
