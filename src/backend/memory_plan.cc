// Memory plan (see memory_plan.h): buffers and live intervals in one pass over
// the ops, then offsets by greedy best-fit, biggest buffers first.

#include "backend/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "ir/op_alias.h"

namespace distir::backend {
namespace {

int64_t AlignUp(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool Overlaps(const PlannedBuffer& a, const PlannedBuffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

// The best-fit offset for `b` among the already placed buffers that are live
// at the same time: the smallest gap that holds it, else the end of the last.
int64_t BestFitOffset(const PlannedBuffer& b, const std::vector<const PlannedBuffer*>& placed) {
  std::vector<const PlannedBuffer*> conflicts;
  for (const PlannedBuffer* p : placed) {
    if (Overlaps(*p, b)) conflicts.push_back(p);
  }
  std::sort(conflicts.begin(), conflicts.end(),
            [](const PlannedBuffer* x, const PlannedBuffer* y) { return x->offset < y->offset; });
  const int64_t need = AlignUp(b.bytes);
  int64_t best = -1;
  int64_t best_gap = 0;
  int64_t cursor = 0;
  for (const PlannedBuffer* p : conflicts) {
    const int64_t gap = p->offset - cursor;
    if (gap >= need && (best < 0 || gap < best_gap)) {
      best = cursor;
      best_gap = gap;
    }
    cursor = std::max(cursor, p->offset + AlignUp(p->bytes));
  }
  return best >= 0 ? best : cursor;
}

Status CheckPlannable(const Value& v) {
  const Type& t = v.type();
  if (t.is_tuple() || t.is_unknown() || !t.HasStaticShape()) {
    return InvalidArgument(v.loc()) << "value " << v.Ref()
                                    << " needs a static tensor type to be planned in memory, got "
                                    << t.ToString();
  }
  return Status::Ok();
}

}  // namespace

int64_t LivePeakBytes(const std::vector<PlannedBuffer>& buffers) {
  int32_t end = 0;
  for (const PlannedBuffer& b : buffers) end = std::max(end, b.last);
  // Sweep the op indices: +bytes where a buffer starts, -bytes after it ends.
  std::vector<int64_t> delta(static_cast<size_t>(end) + 2, 0);
  for (const PlannedBuffer& b : buffers) {
    delta[b.first] += b.bytes;
    delta[b.last + 1] -= b.bytes;
  }
  int64_t live = 0;
  int64_t peak = 0;
  for (int32_t i = 0; i <= end; ++i) {
    live += delta[i];
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t PackBuffers(std::vector<PlannedBuffer>& buffers) {
  // Biggest first (ties: earliest first), so that large buffers claim the low
  // offsets and small ones fill the gaps between them.
  std::vector<int32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const PlannedBuffer& x = buffers[a];
    const PlannedBuffer& y = buffers[b];
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.first < y.first;
  });
  std::vector<const PlannedBuffer*> placed;
  placed.reserve(order.size());
  int64_t arena = 0;
  for (int32_t id : order) {
    PlannedBuffer& b = buffers[id];
    b.offset = BestFitOffset(b, placed);
    arena = std::max(arena, b.offset + AlignUp(b.bytes));
    placed.push_back(&b);
  }
  return arena;
}

StatusOr<MemoryPlan> MemoryPlan::Build(const Function& fn) {
  MemoryPlan plan;
  const auto num_ops = static_cast<int32_t>(fn.ops().size());
  plan.buffer_of_.assign(fn.num_values(), -1);
  for (const auto& p : fn.params()) {
    DISTIR_RETURN_IF_ERROR(CheckPlannable(*p));
    plan.buffer_of_[p->id()] = static_cast<int32_t>(plan.buffers_.size());
    plan.buffers_.push_back({p->type().SizeInBytes(), 0, num_ops, 0});
  }
  for (int32_t i = 0; i < num_ops; ++i) {
    const Op& op = *fn.ops()[i];
    for (const Value* in : op.inputs()) {
      PlannedBuffer& b = plan.buffers_[plan.buffer_of_[in->id()]];
      b.last = std::max(b.last, i);
    }
    for (int r = 0; r < op.num_results(); ++r) {
      const Value& v = *op.result(r);
      const int alias = AliasedInput(op, r);
      if (alias >= 0 && alias < op.num_inputs()) {
        plan.buffer_of_[v.id()] = plan.buffer_of_[op.input(alias)->id()];
        continue;
      }
      DISTIR_RETURN_IF_ERROR(CheckPlannable(v));
      plan.buffer_of_[v.id()] = static_cast<int32_t>(plan.buffers_.size());
      plan.buffers_.push_back({v.type().SizeInBytes(), i, i, 0});
    }
  }
  for (const Value* r : fn.returns()) plan.buffers_[plan.buffer_of_[r->id()]].last = num_ops;

  plan.live_peak_bytes_ = LivePeakBytes(plan.buffers_);
  plan.arena_bytes_ = PackBuffers(plan.buffers_);
  return plan;
}

}  // namespace distir::backend
