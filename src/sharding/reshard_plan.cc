#include "sharding/reshard_plan.h"

#include <algorithm>

namespace distir::sharding {
namespace {

using Axes = std::vector<std::string>;

bool Contains(const Axes& axes, const std::string& a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

// Offsets of dim d, or none.
const std::vector<int64_t>* OffsetsOf(const Sharding& s, size_t d) {
  if (s.offsets.empty() || s.offsets[d].empty()) return nullptr;
  return &s.offsets[d];
}

bool SameOffsets(const Sharding& a, const Sharding& b, size_t d) {
  const std::vector<int64_t>* x = OffsetsOf(a, d);
  const std::vector<int64_t>* y = OffsetsOf(b, d);
  return (x == nullptr && y == nullptr) || (x != nullptr && y != nullptr && *x == *y);
}

// How many leading axes of `cur`'s dim d the target keeps in place. Different
// shard boundaries keep none.
size_t KeptPrefix(const Sharding& cur, const Sharding& to, size_t d) {
  if (!SameOffsets(cur, to, d) && !cur.dims[d].empty()) return 0;
  const Axes& a = cur.dims[d];
  const Axes& b = to.dims[d];
  size_t c = 0;
  while (c < a.size() && c < b.size() && a[c] == b[c]) ++c;
  return c;
}

void SetOffsets(Sharding& s, size_t d, const std::vector<int64_t>* offsets) {
  if (offsets == nullptr) {
    if (!s.offsets.empty()) s.offsets[d].clear();
  } else {
    s.offsets.resize(s.dims.size());
    s.offsets[d] = *offsets;
  }
  bool any = false;
  for (const auto& o : s.offsets) any = any || !o.empty();
  if (!any) s.offsets.clear();
}

class Planner {
 public:
  Planner(const Sharding& from, const Sharding& to) : cur_(from), to_(to) {}

  StatusOr<std::vector<ReshardStep>> Run();

 private:
  void Emit(ReshardStep step) {
    step.result = cur_;
    steps_.push_back(std::move(step));
  }
  void Reduce();
  void AllToAll();
  void Slices(bool only_free_axes);
  void Gathers();

  Sharding cur_;
  const Sharding& to_;
  std::vector<ReshardStep> steps_;
};

void Planner::Reduce() {
  Axes reduce;
  for (const std::string& a : cur_.partial) {
    if (!Contains(to_.partial, a)) reduce.push_back(a);
  }
  if (reduce.empty()) return;
  ReductionKind kind = cur_.partial_kind;
  auto drop_partial = [&](const Axes& axes) {
    std::erase_if(cur_.partial, [&](const std::string& a) { return Contains(axes, a); });
  };
  // A dim the target splits over reduced axes right after what it has now:
  // reduce-scatter along it (not for log-sum-exps: partition.cc reduces those
  // by an all-gather of the pieces, whole).
  for (size_t d = 0; d < cur_.dims.size() && kind != ReductionKind::kLogSumExp; ++d) {
    const Axes& have = cur_.dims[d];
    const Axes& want = to_.dims[d];
    if (want.size() <= have.size() || !std::equal(have.begin(), have.end(), want.begin())) continue;
    if (!SameOffsets(cur_, to_, d) && !have.empty()) continue;
    Axes extra(want.begin() + static_cast<std::ptrdiff_t>(have.size()), want.end());
    Axes scatter;
    for (const std::string& a : extra) {
      if (!Contains(reduce, a)) break;
      scatter.push_back(a);
    }
    if (scatter.empty()) continue;
    drop_partial(scatter);
    cur_.dims[d].insert(cur_.dims[d].end(), scatter.begin(), scatter.end());
    if (scatter.size() == extra.size()) SetOffsets(cur_, d, OffsetsOf(to_, d));
    std::erase_if(reduce, [&](const std::string& a) { return Contains(scatter, a); });
    ReshardStep step;
    step.kind = OpKind::kMeshReduceScatter;
    step.axes = scatter;
    step.axis = static_cast<int>(d);
    step.reduction = kind;
    Emit(step);
  }
  if (reduce.empty()) return;
  drop_partial(reduce);
  ReshardStep step;
  step.kind = OpKind::kMeshAllReduce;
  step.axes = reduce;
  step.reduction = kind;
  Emit(step);
}

// An axis at the end of dim d1 that the target puts next on dim d2.
void Planner::AllToAll() {
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t d1 = 0; d1 < cur_.dims.size() && !moved; ++d1) {
      if (cur_.dims[d1].empty() || KeptPrefix(cur_, to_, d1) == cur_.dims[d1].size()) continue;
      const std::string a = cur_.dims[d1].back();
      int d2 = to_.DimOfAxis(a);
      if (d2 < 0 || static_cast<size_t>(d2) == d1) continue;
      const Axes& have = cur_.dims[d2];
      const Axes& want = to_.dims[d2];
      if (KeptPrefix(cur_, to_, d2) != have.size() || want.size() <= have.size() ||
          want[have.size()] != a || OffsetsOf(cur_, d1) != nullptr || OffsetsOf(to_, d2) != nullptr)
        continue;
      cur_.dims[d1].pop_back();
      cur_.dims[d2].push_back(a);
      ReshardStep step;
      step.kind = OpKind::kMeshAllToAll;
      step.axes = {a};
      step.split_axis = d2;
      step.concat_axis = static_cast<int>(d1);
      Emit(step);
      moved = true;
    }
  }
}

void Planner::Slices(bool only_free_axes) {
  for (size_t d = 0; d < cur_.dims.size(); ++d) {
    const Axes& have = cur_.dims[d];
    const Axes& want = to_.dims[d];
    if (KeptPrefix(cur_, to_, d) != have.size() || want.size() <= have.size()) continue;
    Axes extra(want.begin() + static_cast<std::ptrdiff_t>(have.size()), want.end());
    bool free = true;
    for (const std::string& a : extra) free = free && !cur_.UsesAxis(a);
    if (only_free_axes && !free) continue;
    cur_.dims[d] = want;
    SetOffsets(cur_, d, OffsetsOf(to_, d));
    ReshardStep step;
    step.kind = OpKind::kMeshSlice;
    step.axes = extra;
    step.axis = static_cast<int>(d);
    Emit(step);
  }
}

void Planner::Gathers() {
  for (size_t d = 0; d < cur_.dims.size(); ++d) {
    size_t keep = KeptPrefix(cur_, to_, d);
    if (keep == cur_.dims[d].size()) continue;
    Axes gathered(cur_.dims[d].begin() + static_cast<std::ptrdiff_t>(keep), cur_.dims[d].end());
    cur_.dims[d].resize(keep);
    if (keep == 0) SetOffsets(cur_, d, nullptr);
    ReshardStep step;
    step.kind = OpKind::kMeshAllGather;
    step.axes = gathered;
    step.axis = static_cast<int>(d);
    Emit(step);
  }
}

StatusOr<std::vector<ReshardStep>> Planner::Run() {
  for (const std::string& a : to_.partial) {
    if (!Contains(cur_.partial, a))
      return Unimplemented(to_.loc)
             << "cannot reshard " << cur_.ToString() << " to " << to_.ToString() << ": axis '" << a
             << "' would have to become partial";
  }
  if (!cur_.partial.empty() && !to_.partial.empty() && cur_.partial_kind != to_.partial_kind)
    return Unimplemented(to_.loc) << "cannot reshard " << cur_.ToString() << " to "
                                  << to_.ToString() << ": different reduction kinds";
  Reduce();
  AllToAll();
  Slices(/*only_free_axes=*/true);
  Gathers();
  Slices(/*only_free_axes=*/false);
  return steps_;
}

}  // namespace

StatusOr<std::vector<ReshardStep>> PlanReshard(const Sharding& from, const Sharding& to,
                                               const Mesh& /*mesh*/) {
  if (from == to) return std::vector<ReshardStep>{};
  return Planner(from, to).Run();
}

}  // namespace distir::sharding
