// Megatron-LM's interleaved 1F1B schedule (Narayanan et al. 2021, §2.2;
// megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving): each of the P physical
// stages holds v model chunks, the L layers cut into P v contiguous chunks,
// chunk c on physical stage c mod P. A PipelineTask's `stage` here is the
// chunk (the virtual stage), 0 .. P v - 1.
//
// Rank r runs K v forward and K v backward tasks in a fixed order. Forward
// k (k = 0 .. K v - 1) is of local chunk (k mod P v) / P, backward k of local
// chunk v - 1 - that; within a chunk the microbatches come in order, so
// forward k is microbatch (k / P v) P + k mod P. The rank runs
//
//   warm-up   forwards 0 .. W-1, W = (P - r - 1) 2 + (v - 1) P, at most K v
//             (all K v when K = P: every forward, then every backward);
//   steady    for k = 0 .. K v - W - 1: forward k + W, then backward k;
//   cool-down backwards K v - W .. K v - 1.
//
// With v = 1 it is Megatron's 1F1B without interleaving
// (forward_backward_pipelining_without_interleaving): W = P - r - 1, at most
// K, forwards of microbatches 0 .. W-1, then one forward and one backward
// at a time, then the last W backwards.
//
// Inference runs the forwards alone, in order. As SchedulePipeline's, the
// orders are merged into synchronous timesteps: in each timestep every rank
// runs its next task if it is ready (its predecessor ran in an earlier
// timestep: the forward of the previous chunk, the backward of the next one,
// the forward of the last chunk for its backward), so the program order of
// each device is the rank's order above.

#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"
#include "transforms/pipeline_schedule.h"

namespace distir {

/// OK when P physical stages with v chunks each can run K microbatches
/// interleaved: P >= 2 and K a multiple of P (Megatron's check).
/// InvalidArgument naming the numbers otherwise. v = 1 is always OK.
Status CheckInterleaving(int64_t stages, int64_t chunks, int64_t microbatches);

/// The tasks of rank `rank` in Megatron's order; task.stage is the virtual
/// stage: the rank's local chunk c is virtual stage c * stages + rank.
/// REQUIRES: CheckInterleaving OK, 0 <= rank < stages.
std::vector<PipelineTask> InterleavedRankOrder(int64_t stages, int64_t chunks, int64_t microbatches,
                                               int64_t rank, bool training);

/// Every rank's order merged into synchronous timesteps, each timestep's
/// tasks in rank order; task.stage is the virtual stage. REQUIRES:
/// CheckInterleaving OK.
std::vector<std::vector<PipelineTask>> ScheduleInterleaved(int64_t stages, int64_t chunks,
                                                           int64_t microbatches, bool training);

}  // namespace distir
