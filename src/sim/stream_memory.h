// Memory replay for a two-stream schedule (stream_scheduler.h).
//
// With one stream per device, ops end in program order, so MemoryTracker's
// OpStarts/OpEnds in program order free each buffer after its last reader in
// program order. With a communication stream that no longer holds: an
// all-reduce issued before a compute op may end after it, and the buffer it
// reads must stay live until then. This replay frees each buffer when the last
// of its readers ends (or its defining op, when nothing reads it) and feeds
// the tracker in time order. Rules in docs/cost_model.md §4.

#pragma once

#include <span>

#include "ir/function.h"
#include "sim/memory_tracker.h"

namespace distir::sim {

/// Replays `plan`, the buffer plan of `fn`, on `tracker` with op i running
/// from start[i] to end[i]. Events are applied in time order; at one instant,
/// buffers freed by ops that end then go before allocations of ops that start
/// then, except that an op of zero duration allocates before it frees.
/// REQUIRES: `tracker` was built on `plan` and has seen no op yet; start and end
/// have one entry per op of `fn`, start[i] <= end[i]; every reader of a value
/// ends no earlier than the value's defining op starts.
void ReplayMemoryOnStreams(const Function& fn, const BufferPlan& plan,
                           std::span<const double> start, std::span<const double> end,
                           MemoryTracker& tracker);

}  // namespace distir::sim
