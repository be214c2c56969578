#include "sim/stream_memory.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace distir::sim {
namespace {

enum class Kind : uint8_t { kStart, kEnd, kFree };

struct Event {
  double time;
  uint8_t phase;  // 0: end of an op that took time; 1: a start; 2: end of a zero-duration op
  int32_t op;     // the op starting or ending (a free: the op whose end frees the buffer)
  Kind kind;
  int32_t buffer;  // kFree only

  bool operator<(const Event& o) const {
    return std::tie(time, phase, op, kind, buffer) <
           std::tie(o.time, o.phase, o.op, o.kind, o.buffer);
  }
};

// Per buffer: the op whose end frees it, the reader that ends last (its
// defining op when nothing reads it); -1 for resident buffers.
std::vector<int32_t> DeathOps(const Function& fn, const BufferPlan& plan,
                              std::span<const double> end) {
  std::vector<int32_t> death(plan.buffers().size(), -1);
  const int n = plan.num_ops();
  for (int i = 0; i < n; ++i) {
    for (int32_t b = plan.fresh_begin(i); b < plan.fresh_end(i); ++b) death[b] = i;
  }
  for (int i = 0; i < n; ++i) {
    for (const Value* v : fn.ops()[i]->inputs()) {
      for (int32_t b : plan.buffers_of(v->id())) {
        int32_t& d = death[b];
        if (d >= 0 && (end[i] > end[d] || (end[i] == end[d] && i > d))) d = i;
      }
    }
  }
  for (size_t b = 0; b < death.size(); ++b) {
    if (plan.buffers()[b].last_use == BufferPlan::kResident) death[b] = -1;
  }
  return death;
}

uint8_t EndPhase(std::span<const double> start, std::span<const double> end, int op) {
  return end[op] > start[op] ? 0 : 2;
}

}  // namespace

void ReplayMemoryOnStreams(const Function& fn, const BufferPlan& plan,
                           std::span<const double> start, std::span<const double> end,
                           MemoryTracker& tracker) {
  const int n = plan.num_ops();
  const std::vector<int32_t> death = DeathOps(fn, plan, end);
  std::vector<Event> events;
  events.reserve(2 * static_cast<size_t>(n) + death.size());
  for (int i = 0; i < n; ++i) {
    events.push_back({start[i], 1, i, Kind::kStart, -1});
    events.push_back({end[i], EndPhase(start, end, i), i, Kind::kEnd, -1});
  }
  for (size_t b = 0; b < death.size(); ++b) {
    const int32_t op = death[b];
    if (op < 0) continue;
    events.push_back({end[op], EndPhase(start, end, op), op, Kind::kFree, static_cast<int32_t>(b)});
  }
  std::sort(events.begin(), events.end());
  for (const Event& e : events) {
    const bool call = fn.ops()[e.op]->is_call();
    switch (e.kind) {
      case Kind::kStart:
        tracker.OpStarts(e.op, call, e.time);
        break;
      case Kind::kEnd:
        if (call) tracker.CallEnds(e.op, e.time);
        break;
      case Kind::kFree:
        tracker.Free(e.buffer, e.time);
        break;
    }
  }
}

}  // namespace distir::sim
