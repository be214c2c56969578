#include "sharding/factor_assignment.h"

#include <algorithm>
#include <list>

namespace distir::sharding {
namespace {

using Axes = std::vector<std::string>;

int64_t Product(const Axes& axes, const Mesh& mesh) {
  int64_t p = 1;
  for (const std::string& a : axes) p *= mesh.AxisSize(a);
  return p;
}

bool IsPrefix(const Axes& a, const Axes& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// A source's axes per factor, pointing into its sharding where a dim is one
// factor (no copy: AssignFactors runs for every op in each propagation round),
// into `owned` where a compound dim splits its axes; nullptr: none.
struct Projection {
  std::vector<const Axes*> of;  // per factor
  std::list<Axes> owned;  // compound dims' pieces (a list: pointers stay, none allocated empty)
};

// The axes of one dim split over its factors, major first. A dim of one
// factor takes all its axes (uneven shards allowed); in a compound dim an
// axis goes to the current factor while it divides what is left of it, and
// the next factor starts once the current one is fully sharded.
void ProjectDim(const Axes& axes, const std::vector<int>& factors, const FactorRule& rule,
                const Mesh& mesh, Projection& proj) {
  if (factors.empty()) return;
  if (factors.size() == 1) {
    proj.of[factors[0]] = &axes;
    return;
  }
  size_t i = 0;
  int64_t left = rule.factors[factors[0]].size;
  Axes* into = nullptr;  // factors[i]'s piece
  for (const std::string& a : axes) {
    while (left == 1 && ++i < factors.size()) {
      left = rule.factors[factors[i]].size;
      into = nullptr;
    }
    if (i >= factors.size()) return;
    int64_t n = mesh.AxisSize(a);
    if (left % n != 0) return;
    if (into == nullptr) {
      // Appended to what an earlier dim gave the factor, if any (as a list would be).
      const Axes* before = proj.of[factors[i]];
      into = before != nullptr ? &proj.owned.emplace_back(*before) : &proj.owned.emplace_back();
      proj.of[factors[i]] = into;
    }
    into->push_back(a);
    left /= n;
  }
}

void Project(const TensorSource& src, const FactorRule& rule, const Mesh& mesh, Projection& proj) {
  proj.of.assign(rule.factors.size(), nullptr);
  const TensorFactors& tf = *src.factors;
  for (size_t d = 0; d < tf.size() && d < src.sharding->dims.size(); ++d)
    ProjectDim(src.sharding->dims[d], tf[d], rule, mesh, proj);
}

bool HasFactor(const TensorFactors& tf, int f) {
  for (const auto& dim : tf) {
    if (std::find(dim.begin(), dim.end(), f) != dim.end()) return true;
  }
  return false;
}

// The source's explicit shard boundaries of the dim that is exactly factor f.
std::vector<int64_t> OffsetsOfFactor(const TensorSource& src, int f) {
  if (src.sharding == nullptr || src.sharding->offsets.empty()) return {};
  const TensorFactors& tf = *src.factors;
  for (size_t d = 0; d < tf.size(); ++d) {
    if (tf[d].size() == 1 && tf[d][0] == f) return src.sharding->offsets[d];
  }
  return {};
}

// A source's axes for one factor (pointing into Project's result: no copy,
// AssignFactors runs for every op in each propagation round).
struct Candidate {
  int source = 0;
  const Axes* axes = nullptr;
};

// Bytes resharded if factor f takes `axes`: every known tensor whose layout of
// f differs, except an operand that only needs a local slice (its axes are a
// prefix of the new ones).
double ReshardBytes(const Axes& axes, const std::vector<Candidate>& known,
                    const std::vector<TensorSource>& sources) {
  double bytes = 0;
  for (const Candidate& k : known) {
    if (*k.axes == axes) continue;
    if (!sources[k.source].is_result && IsPrefix(*k.axes, axes)) continue;
    bytes += sources[k.source].bytes;
  }
  return bytes;
}

// The winner among candidates of equal strength: the longest when they all
// extend one another; otherwise the cheapest, then the larger tensor, then an
// operand (forward beats backward), then the first.
const Candidate& Pick(const std::vector<Candidate>& cands, const std::vector<Candidate>& known,
                      const std::vector<TensorSource>& sources) {
  const Candidate* longest = &cands[0];
  bool compatible = true;
  for (const Candidate& c : cands) {
    if (!IsPrefix(*c.axes, *longest->axes) && !IsPrefix(*longest->axes, *c.axes))
      compatible = false;
    if (c.axes->size() > longest->axes->size()) longest = &c;
  }
  if (compatible) return *longest;
  const Candidate* best = &cands[0];
  double best_cost = ReshardBytes(*best->axes, known, sources);
  for (const Candidate& c : cands) {
    double cost = ReshardBytes(*c.axes, known, sources);
    const TensorSource& s = sources[c.source];
    const TensorSource& b = sources[best->source];
    bool better = cost < best_cost ||
                  (cost == best_cost && (s.bytes > b.bytes ||
                                         (s.bytes == b.bytes && !s.is_result && b.is_result)));
    if (better) {
      best = &c;
      best_cost = cost;
    }
  }
  return *best;
}

// Truncates `axes` at the first axis in `used`, then marks the rest used (a
// mesh has a few axes: a list, not a set).
void TakeUnused(Axes& axes, std::vector<const std::string*>& used) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (std::any_of(used.begin(), used.end(),
                    [&](const std::string* u) { return *u == axes[i]; })) {
      axes.resize(i);
      break;
    }
  }
  for (const std::string& a : axes) used.push_back(&a);
}

// A factor inside a compound dim takes axes dividing its size, and only
// after the factors before it in that dim are fully sharded.
bool FixCompoundDims(const FactorRule& rule, const std::vector<TensorSource>& sources,
                     const Mesh& mesh, FactorAssignment& fa) {
  bool changed = false;
  for (const TensorSource& src : sources) {
    for (const auto& dim : *src.factors) {
      if (dim.size() < 2) continue;
      bool open = true;
      for (int f : dim) {
        Axes& axes = fa.axes[f];
        if (!open && !axes.empty()) {
          axes.clear();
          changed = true;
        }
        while (!axes.empty() && rule.factors[f].size % Product(axes, mesh) != 0) {
          axes.pop_back();
          changed = true;
        }
        if (Product(axes, mesh) != rule.factors[f].size) open = false;
      }
    }
  }
  return changed;
}

}  // namespace

FactorAssignment AssignFactors(const FactorRule& rule, const std::vector<TensorSource>& sources,
                               const Mesh& mesh) {
  const int nf = static_cast<int>(rule.factors.size());
  FactorAssignment fa;
  fa.axes.assign(nf, {});
  fa.offsets.assign(nf, {});
  std::vector<Projection> proj(sources.size());
  for (size_t s = 0; s < sources.size(); ++s) {
    if (sources[s].sharding != nullptr && sources[s].shardable)
      Project(sources[s], rule, mesh, proj[s]);
  }
  static const Axes kNone;
  std::vector<int> level(nf, INT_MAX);
  std::vector<double> weight(nf, 0);
  std::vector<Candidate> known, cands;
  for (int f = 0; f < nf; ++f) {
    known.clear();
    for (size_t s = 0; s < sources.size(); ++s) {
      if (proj[s].of.empty() || !HasFactor(*sources[s].factors, f)) continue;
      bool constraint = sources[s].required && sources[s].is_result;
      const Axes* axes = proj[s].of[f] != nullptr ? proj[s].of[f] : &kNone;
      if (!axes->empty() || constraint) known.push_back({static_cast<int>(s), axes});
    }
    if (known.empty()) continue;
    int best = INT_MAX;
    bool result_required = false;
    for (const Candidate& c : known) best = std::min(best, sources[c.source].level);
    cands.clear();
    for (const Candidate& c : known) {
      const TensorSource& src = sources[c.source];
      if (src.level != best) continue;
      result_required |= src.required && src.is_result;
      cands.push_back(c);
    }
    // The annotation aimed at the op (on its result) wins over its operands'.
    if (result_required) {
      std::erase_if(cands, [&](const Candidate& c) { return !sources[c.source].is_result; });
    }
    const Candidate& pick = Pick(cands, known, sources);
    fa.axes[f] = *pick.axes;
    fa.offsets[f] = OffsetsOfFactor(sources[pick.source], f);
    level[f] = best;
    weight[f] = sources[pick.source].bytes;
    fa.level = std::min(fa.level, best);
  }
  for (int f = 0; f < nf; ++f) {
    if (rule.factors[f].need_replication || !rule.factors[f].reducible) fa.axes[f].clear();
    if (fa.axes[f].empty()) fa.offsets[f].clear();
  }
  // Stronger, then larger, factors keep their axes when two want the same one.
  std::vector<int> order(nf);
  for (int f = 0; f < nf; ++f) order[f] = f;
  // A stable insertion sort: an op has a few factors (std::stable_sort
  // allocated a buffer per call).
  auto before = [&](int a, int b) {
    return level[a] != level[b] ? level[a] < level[b] : weight[a] > weight[b];
  };
  for (int i = 1; i < nf; ++i) {
    const int f = order[i];
    int j = i;
    for (; j > 0 && before(f, order[j - 1]); --j) order[j] = order[j - 1];
    order[j] = f;
  }
  std::vector<const std::string*> used;
  for (int f : order) TakeUnused(fa.axes[f], used);
  // A required result may only be partial over its own partial axes.
  for (const TensorSource& src : sources) {
    if (!src.is_result || !src.required || src.sharding == nullptr) continue;
    for (int f = 0; f < nf; ++f) {
      if (HasFactor(*src.factors, f)) continue;
      const Axes& partial = src.sharding->partial;
      std::erase_if(fa.axes[f], [&](const std::string& a) {
        return std::find(partial.begin(), partial.end(), a) == partial.end();
      });
    }
  }
  for (int i = 0; i < 8 && FixCompoundDims(rule, sources, mesh, fa); ++i) {
  }
  return fa;
}

Sharding ImpliedSharding(const FactorRule& /*rule*/, const FactorAssignment& fa,
                         const TensorFactors& tf, const Mesh& mesh) {
  Sharding s = Sharding::Replicated(mesh.name(), static_cast<int64_t>(tf.size()));
  bool any_offsets = false;
  std::vector<std::vector<int64_t>> offsets(tf.size());
  for (size_t d = 0; d < tf.size(); ++d) {
    for (int f : tf[d]) s.dims[d].insert(s.dims[d].end(), fa.axes[f].begin(), fa.axes[f].end());
    // Boundaries carry over only while the axes are those they were drawn for.
    if (tf[d].size() == 1 && !fa.offsets[tf[d][0]].empty() && !s.dims[d].empty() &&
        static_cast<int64_t>(fa.offsets[tf[d][0]].size()) == Product(s.dims[d], mesh) + 1) {
      offsets[d] = fa.offsets[tf[d][0]];
      any_offsets = true;
    }
  }
  if (any_offsets) s.offsets = std::move(offsets);
  return s;
}

namespace {

bool UsedByAssignment(const FactorAssignment& fa, const std::string& axis) {
  for (const Axes& axes : fa.axes) {
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return true;
  }
  return false;
}

bool Disjoint(const Axes& a, const Axes& b) {
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return false;
  }
  return true;
}

// Layout ops move elements without combining them, so any reduction kind
// passes; arithmetic ops pass partial sums only (or their own kind).
bool PassesKind(const Op& op, const FactorRule& rule, ReductionKind kind) {
  switch (op.kind()) {
    case OpKind::kTranspose: case OpKind::kReshape: case OpKind::kSqueeze:
    case OpKind::kUnsqueeze: case OpKind::kIdentity: case OpKind::kShard:
      return true;
    default:
      return kind == rule.flow_kind;
  }
}

}  // namespace

StatusOr<PartialFlowResult> FlowPartials(const Op& op, const FactorRule& rule,
                                         const FactorAssignment& fa,
                                         const std::vector<Sharding>& operands) {
  PartialFlowResult out;
  int n = op.num_inputs();
  out.keep.assign(n, false);
  auto flowable = [&](int i) {
    if (!rule.shardable[i] || operands[i].partial.empty()) return false;
    if (!PassesKind(op, rule, operands[i].partial_kind)) return false;
    for (const std::string& a : operands[i].partial) {
      if (UsedByAssignment(fa, a)) return false;
    }
    return true;
  };
  switch (rule.partial_flow) {
    case PartialFlow::kNone:
      break;
    case PartialFlow::kFirst:
      out.keep[0] = n > 0 && flowable(0);
      break;
    case PartialFlow::kAll: {
      bool all = n > 0;
      for (int i = 0; i < n && all; ++i) {
        all = flowable(i) && std::is_permutation(operands[i].partial.begin(),
                                                 operands[i].partial.end(),
                                                 operands[0].partial.begin(),
                                                 operands[0].partial.end()) &&
              operands[i].partial_kind == operands[0].partial_kind;
      }
      if (all) out.keep.assign(n, true);
      break;
    }
    case PartialFlow::kAny:
      for (int i = 0; i < n; ++i) {
        if (!flowable(i) || operands[i].partial_kind != ReductionKind::kSum) continue;
        bool clash = false;
        for (int j = 0; j < n; ++j) {
          if (j != i && rule.shardable[j] && !Disjoint(operands[i].partial, operands[j].partial) &&
              (out.keep[j] || j > i))
            clash = true;
        }
        out.keep[i] = !clash;
      }
      break;
  }
  for (int i = 0; i < n; ++i) {
    if (!out.keep[i]) continue;
    out.kind = operands[i].partial_kind;
    for (const std::string& a : operands[i].partial) {
      if (std::find(out.axes.begin(), out.axes.end(), a) == out.axes.end()) out.axes.push_back(a);
    }
  }
  return out;
}

StatusOr<Sharding> ResultSharding(const Op& op, const FactorRule& rule,
                                  const FactorAssignment& fa, int r,
                                  const PartialFlowResult& flow, const Mesh& mesh) {
  Sharding s = ImpliedSharding(rule, fa, rule.results[r], mesh);
  Axes partial = flow.axes;
  ReductionKind kind = flow.kind;
  bool have_kind = !partial.empty();
  for (size_t f = 0; f < rule.factors.size(); ++f) {
    if (fa.axes[f].empty() || HasFactor(rule.results[r], static_cast<int>(f))) continue;
    if (have_kind && kind != rule.factors[f].reduction)
      return Unimplemented(op.loc()) << op.Name() << " result " << op.result(r)->Ref()
                                     << " would be partial over two reduction kinds";
    kind = rule.factors[f].reduction;
    have_kind = true;
    partial.insert(partial.end(), fa.axes[f].begin(), fa.axes[f].end());
  }
  // Canonical order: as the mesh declares its axes.
  std::sort(partial.begin(), partial.end(), [&](const std::string& a, const std::string& b) {
    return mesh.AxisIndex(a) < mesh.AxisIndex(b);
  });
  s.partial = std::move(partial);
  s.partial_kind = kind;
  return s;
}

}  // namespace distir::sharding
