// Expander::Segmented (expander.h): the program RunInOrder writes, as kinds of
// segments, their order, and the buffers that cross segments
// (ir/segmented_program.h), found from the template and the positions of
// the segments, without the K x ops copies.
//
// Buffers follow the buffer plan of the expanded program
// (sim/memory_tracker.h): a copy of a template op allocates a fresh buffer
// for each result unless the op is a view or an in-place update
// (ir/op_alias.h), which reuses its operand's; a collective cut down to the
// kept devices allocates fresh results; a running sum allocates a fresh
// buffer; parameters and returned values stay resident; a buffer dies with
// its last reader. A buffer is identified by its root, the template value
// that allocates it, and a copy: microbatch m's copy of a per-microbatch
// root, the one copy of a shared root, or the m-th running sum of a summed
// value.

#include <algorithm>
#include <limits>
#include <tuple>

#include "ir/op_alias.h"
#include "sharding/expander.h"

namespace distir::sharding {
namespace {

// How a reader reaches a root's copies: its own microbatch's (a
// per-microbatch op reading a per-microbatch root), every copy's reads of
// the one copy (a per-microbatch op reading a shared root), the one reading
// of copy 0 (a shared op), or a running sum's reads (copy m by sum m, copy 0
// by sum 1 too).
enum class Reach : int8_t { kOwn, kEvery, kZero, kSum };

struct Reader {
  int32_t op;  // template op (kSum: the summed value)
  Reach reach;
  int32_t source;  // the op that writes the value read; -1: a parameter
};

constexpr int64_t kNoReader = std::numeric_limits<int64_t>::min();

// Folds the frees of buffers that cross segments into their kinds: a value's
// copies freed after the same op of a kind, one in each of its segments, are
// one kind change. A family (a root's copies, a value's running sums) is
// tried alone first; its other frees are tried with those of the other
// families of the same value (a running sum frees copy 0 of its value in
// its first segment and the previous sum in the others).
class FreeFolder {
 public:
  FreeFolder(SegmentedProgram& p, int64_t total) : p_(p) {
    start_.reserve(p.segment_kind.size() + 1);
    int64_t at = 0;
    for (int32_t kind : p.segment_kind) {
      start_.push_back(at);
      at += p.KindSize(kind);
    }
    start_.push_back(total);
    stamp_.assign(p.segment_kind.size(), 0);
    count_.assign(p.segment_kind.size(), 0);
    segments_of_.assign(static_cast<size_t>(p.num_kinds()), 0);
    for (int32_t kind : p.segment_kind) ++segments_of_[static_cast<size_t>(kind)];
  }

  /// A copy of `value` freed after the op at `death`.
  void Add(int32_t value, int64_t death) {
    const auto s = static_cast<int32_t>(std::upper_bound(start_.begin(), start_.end(), death) -
                                        start_.begin() - 1);
    family_.push_back({value, p_.segment_kind[static_cast<size_t>(s)],
                       static_cast<int32_t>(death - start_[static_cast<size_t>(s)]), s, death});
  }
  /// Folds what the family's frees fold alone (grouped by kind and offset,
  /// a family's frees falling in a few groups); keeps the rest.
  void EndFamily() {
    groups_.clear();
    for (const Free& f : family_) {
      auto g = std::find_if(groups_.begin(), groups_.end(), [&](const Group& x) {
        return x.kind == f.kind && x.offset == f.offset;
      });
      if (g == groups_.end()) g = groups_.insert(groups_.end(), Group{f.kind, f.offset, 0});
      ++g->count;
    }
    for (const Group& g : groups_) {
      const int32_t times = Uniform(g);
      for (int32_t r = 0; r < times; ++r) {
        folded_.push_back({family_.front().value, g.offset, false});
        kinds_.push_back(g.kind);
      }
      if (times > 0) continue;
      for (const Free& f : family_) {
        if (f.kind == g.kind && f.offset == g.offset) rest_.push_back(f);
      }
    }
    family_.clear();
  }
  /// Folds what the rest fold together; lists the others as buffers.
  void Finish(std::vector<std::vector<SegmentedProgram::KindChange>>& changes) {
    std::vector<Free> left;
    Fold(rest_, left);
    for (size_t i = 0; i < folded_.size(); ++i)
      changes[static_cast<size_t>(kinds_[i])].push_back(folded_[i]);
    for (const Free& f : left) p_.buffers.push_back({f.value, SegmentedProgram::kInKind, f.death});
  }

 private:
  struct Free {
    int32_t value, kind, offset, segment;
    int64_t death;
  };

  // Groups `frees` by (value, kind, offset): a group with r frees in every
  // segment of its kind is folded (r changes), the others go to `unfolded`.
  // (For the frees left over by the families: a sort.)
  void Fold(std::vector<Free>& frees, std::vector<Free>& unfolded) {
    std::sort(frees.begin(), frees.end(), [](const Free& x, const Free& y) {
      return std::tie(x.value, x.kind, x.offset, x.segment) <
             std::tie(y.value, y.kind, y.offset, y.segment);
    });
    for (size_t a = 0; a < frees.size();) {
      size_t b = a;
      while (b < frees.size() && frees[b].value == frees[a].value &&
             frees[b].kind == frees[a].kind && frees[b].offset == frees[a].offset)
        ++b;
      // Runs of one segment, all of the same length r, one per segment of the kind.
      int64_t runs = 0, r = -1;
      bool uniform = true;
      for (size_t x = a; x < b;) {
        size_t y = x;
        while (y < b && frees[y].segment == frees[x].segment) ++y;
        const auto length = static_cast<int64_t>(y - x);
        uniform = uniform && (r < 0 || length == r);
        r = length;
        ++runs;
        x = y;
      }
      if (uniform && runs == segments_of_[static_cast<size_t>(frees[a].kind)]) {
        for (int64_t i = 0; i < r; ++i) {
          folded_.push_back({frees[a].value, frees[a].offset, false});
          kinds_.push_back(frees[a].kind);
        }
      } else {
        unfolded.insert(unfolded.end(), frees.begin() + static_cast<std::ptrdiff_t>(a),
                        frees.begin() + static_cast<std::ptrdiff_t>(b));
      }
      a = b;
    }
  }

  SegmentedProgram& p_;
  std::vector<int64_t> start_;        // by segment in order
  std::vector<int64_t> segments_of_;  // by kind
  struct Group {
    int32_t kind, offset;
    int64_t count;
  };

  // How many of the family's copies group `g` frees in each segment of its
  // kind: r when every segment has r of them, else 0 (not foldable).
  int32_t Uniform(const Group& g) {
    const int64_t segments = segments_of_[static_cast<size_t>(g.kind)];
    if (segments == 0 || g.count % segments != 0) return 0;
    const auto r = static_cast<int32_t>(g.count / segments);
    ++token_;
    for (const Free& f : family_) {
      if (f.kind != g.kind || f.offset != g.offset) continue;
      const auto s = static_cast<size_t>(f.segment);
      if (stamp_[s] != token_) stamp_[s] = token_, count_[s] = 0;
      if (++count_[s] > r) return 0;
    }
    return r;  // no segment above r, r x segments in all: r in each
  }
  std::vector<Free> family_, rest_;
  std::vector<Group> groups_;
  std::vector<int32_t> stamp_;  // by segment: the last group that counted there
  std::vector<int32_t> count_;  // by segment: that group's frees there
  int32_t token_ = 0;
  std::vector<SegmentedProgram::KindChange> folded_;
  std::vector<int32_t> kinds_;  // of folded_
};

// Positions of the copies of template ops in the segmented program.
class Positions {
 public:
  int64_t total = 0;
  std::vector<int64_t> start;                  // per segment (Expander's numbering)
  std::vector<std::vector<int32_t>> of_class;  // [class][microbatch]: its segment
  std::vector<std::vector<int32_t>> of_op;     // [op][microbatch]: a one-op segment
  std::vector<int32_t> offset[2];              // [b][op]: offset in its class kind
  std::vector<int32_t> sum_offset;             // [value]: its sum's offset in the b = 1 kind
};

}  // namespace

std::optional<SegmentedProgram> Expander::Segmented(const std::vector<size_t>& order) const {
  const auto& ops = fn_.ops();
  const size_t num_ops = ops.size();
  const int64_t k = k_;
  auto kept_value = [&](int32_t v) { return !restricted_ || kept_value_[static_cast<size_t>(v)]; };
  auto kept_op = [&](size_t i) { return !restricted_ || kept_op_[i] != 0; };
  auto per_op = [&](int32_t i) { return c_.per_op[static_cast<size_t>(i)] != 0; };
  auto per_value = [&](int32_t v) { return c_.per_value[static_cast<size_t>(v)] != 0; };
  for (const auto& prm : fn_.params()) {
    if (kept_value(prm->id()) && prm->type().is_tuple()) return std::nullopt;
  }
  for (size_t i = 0; i < num_ops; ++i) {
    for (const auto& r : ops[i]->results()) {
      if (kept_value(r->id()) && r->type().is_tuple()) return std::nullopt;
    }
  }
  SegmentedProgram p;
  Positions at;
  // Kinds: class c's microbatch 0 is kind 2c, its later ones 2c + 1; then one
  // kind per op of a one-op segment.
  const size_t classes = class_task_.size();
  at.offset[0].assign(num_ops, -1);
  at.offset[1].assign(num_ops, -1);
  at.sum_offset.assign(static_cast<size_t>(fn_.num_values()), -1);
  p.kind_begin.clear();
  p.kind_begin.push_back(0);
  for (size_t c = 0; c < classes; ++c) {
    for (int b = 0; b < 2; ++b) {
      const int32_t first = static_cast<int32_t>(p.op.size());
      for (int32_t i : class_ops_[b][c]) {
        at.offset[b][static_cast<size_t>(i)] = static_cast<int32_t>(p.op.size()) - first;
        p.op.push_back(i);
        p.summed.push_back(-1);
        if (b == 0 || !per_op(i) || !has_summed_[static_cast<size_t>(i)]) continue;
        for (const auto& r : ops[static_cast<size_t>(i)]->results()) {
          if (!c_.summed[r->id()] || !kept_value(r->id())) continue;
          at.sum_offset[r->id()] = static_cast<int32_t>(p.op.size()) - first;
          p.op.push_back(SegmentedProgram::kSum);
          p.summed.push_back(r->id());
        }
      }
      p.kind_begin.push_back(static_cast<int32_t>(p.op.size()));
    }
  }
  std::vector<int32_t> op_kind(num_ops, -1);
  at.of_class.assign(classes, std::vector<int32_t>(static_cast<size_t>(k), -1));
  at.of_op.assign(num_ops, {});
  for (size_t s = 0; s < segments_.size(); ++s) {
    const Segment& g = segments_[s];
    if (g.cls >= 0) {
      at.of_class[static_cast<size_t>(g.cls)][static_cast<size_t>(g.m)] = static_cast<int32_t>(s);
      continue;
    }
    const auto i = static_cast<size_t>(g.op);
    if (op_kind[i] < 0) {
      op_kind[i] = p.num_kinds();
      p.op.push_back(g.op);
      p.summed.push_back(-1);
      p.kind_begin.push_back(static_cast<int32_t>(p.op.size()));
    }
    std::vector<int32_t>& copies = at.of_op[i];
    if (copies.empty()) copies.assign(static_cast<size_t>(per_op(g.op) ? k : 1), -1);
    copies[static_cast<size_t>(g.m)] = static_cast<int32_t>(s);
  }
  // Segments in order, and where each starts.
  at.start.assign(segments_.size(), 0);
  for (size_t s : order) {
    const Segment& g = segments_[s];
    const int32_t kind =
        g.cls >= 0 ? 2 * g.cls + (g.m > 0 ? 1 : 0) : op_kind[static_cast<size_t>(g.op)];
    p.segment_kind.push_back(kind);
    at.start[s] = at.total;
    at.total += p.KindSize(kind);
  }
  // Position of op i's copy for microbatch m (0 for a shared op).
  auto pos = [&](int32_t i, int64_t m) -> int64_t {
    const auto u = static_cast<size_t>(i);
    const int64_t mm = per_op(i) ? m : 0;
    const int32_t c = class_of_[u];
    if (c >= 0) {
      const int32_t s = at.of_class[static_cast<size_t>(c)][static_cast<size_t>(mm)];
      return at.start[static_cast<size_t>(s)] + at.offset[mm > 0 ? 1 : 0][u];
    }
    return at.start[static_cast<size_t>(at.of_op[u][static_cast<size_t>(mm)])];
  };
  std::vector<int32_t> def_op(static_cast<size_t>(fn_.num_values()), -1);
  for (size_t i = 0; i < num_ops; ++i) {
    for (const auto& r : ops[i]->results()) def_op[r->id()] = static_cast<int32_t>(i);
  }
  // Position of the running sum of `v` for microbatch m >= 1.
  auto sum_pos = [&](int32_t v, int64_t m) -> int64_t {
    const int32_t c = class_of_[static_cast<size_t>(def_op[static_cast<size_t>(v)])];
    const int32_t s = at.of_class[static_cast<size_t>(c)][static_cast<size_t>(m)];
    return at.start[static_cast<size_t>(s)] + at.sum_offset[static_cast<size_t>(v)];
  };

  // Roots: the value whose copy allocates each kept value's buffer; for a
  // shared op's view of a summed value (K > 1), the summed value, marked.
  const auto nv = static_cast<size_t>(fn_.num_values());
  std::vector<int32_t> root(nv, -1);
  std::vector<char> final_sum(nv, 0);  // root[v] is a summed value whose last sum v views
  for (const auto& prm : fn_.params()) root[prm->id()] = prm->id();
  for (size_t j = 0; j < num_ops; ++j) {
    if (!kept_op(j)) continue;
    const Op& op = *ops[j];
    const bool cut = restricted_ && (tin_begin_[j + 1] - tin_begin_[j] != op.num_inputs() ||
                                     tout_begin_[j + 1] - tout_begin_[j] != op.num_results());
    for (int r = 0; r < op.num_results(); ++r) {
      const int32_t v = op.result(r)->id();
      if (!kept_value(v)) continue;
      const int a = cut ? -1 : AliasedInput(op, r);
      if (a < 0 || a >= op.num_inputs()) {
        root[static_cast<size_t>(v)] = v;
        continue;
      }
      const int32_t u = op.input(a)->id();
      if (!c_.per_op[j] && per_value(u) && k > 1) {
        root[static_cast<size_t>(v)] = u;
        final_sum[static_cast<size_t>(v)] = 1;
        continue;
      }
      root[static_cast<size_t>(v)] = root[static_cast<size_t>(u)];
      final_sum[static_cast<size_t>(v)] = final_sum[static_cast<size_t>(u)];
    }
  }

  // Readers of each root's copies, and of each summed value's last sum.
  std::vector<std::vector<Reader>> readers(nv), final_readers(nv);
  std::vector<char> resident(nv, 0), final_resident(nv, 0);
  for (size_t i = 0; i < num_ops; ++i) {
    if (!kept_op(i)) continue;
    const bool shared_task = !c_.per_op[i] && class_of_[i] >= 0;
    for (int32_t q = tin_begin_[i]; q < tin_begin_[i + 1]; ++q) {
      const int32_t v = tin_[static_cast<size_t>(q)];
      const int32_t rv = root[static_cast<size_t>(v)];
      const Reader base{static_cast<int32_t>(i), Reach::kZero, def_op[static_cast<size_t>(v)]};
      const bool reads_last_sum =
          final_sum[static_cast<size_t>(v)] || (!c_.per_op[i] && per_value(v) && k > 1);
      if (reads_last_sum) {
        // A task's shared op would read the sum so far (RunInOrder): refused.
        if (shared_task) return std::nullopt;
        const int32_t summed = final_sum[static_cast<size_t>(v)] ? rv : v;
        final_readers[static_cast<size_t>(summed)].push_back(base);
        continue;
      }
      Reader r = base;
      if (c_.per_op[i]) r.reach = per_value(rv) ? Reach::kOwn : Reach::kEvery;
      readers[static_cast<size_t>(rv)].push_back(r);
    }
  }
  for (size_t v = 0; v < nv; ++v) {
    if (!c_.summed[v] || !kept_value(static_cast<int32_t>(v)) || k == 1) continue;
    const int32_t rv = root[v];
    // The sums read copies of a per-microbatch buffer.
    if (rv < 0 || !per_value(rv)) return std::nullopt;
    readers[static_cast<size_t>(rv)].push_back({static_cast<int32_t>(v), Reach::kSum, def_op[v]});
  }
  for (const Value* v : fn_.returns()) {
    if (!kept_value(v->id())) continue;
    const auto u = static_cast<size_t>(v->id());
    if (final_sum[u]) {
      final_resident[static_cast<size_t>(root[u])] = 1;
    } else if (c_.summed[u] && k > 1) {
      final_resident[u] = 1;
    } else {
      resident[static_cast<size_t>(root[u])] = 1;
    }
  }

  // Local buffers: a task's fresh result read only by its own copy's ops.
  std::vector<std::vector<SegmentedProgram::LocalBuffer>> local(static_cast<size_t>(p.num_kinds()));
  std::vector<char> is_local(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    const auto value = static_cast<int32_t>(v);
    if (root[v] != value || def_op[v] < 0 || resident[v] || !kept_value(value)) continue;
    const int32_t j = def_op[v];
    const int32_t c = class_of_[static_cast<size_t>(j)];
    if (c < 0) continue;
    const Reach reach = per_op(j) ? Reach::kOwn : Reach::kZero;
    const bool all_inside = std::all_of(readers[v].begin(), readers[v].end(), [&](const Reader& r) {
      return r.reach == reach && class_of_[static_cast<size_t>(r.op)] == c;
    });
    if (!all_inside) continue;
    for (int b = 0; b < 2; ++b) {
      const int32_t def = at.offset[b][static_cast<size_t>(j)];
      if (def < 0) continue;
      int32_t death = def;
      for (const Reader& r : readers[v]) {
        const int32_t read = at.offset[b][static_cast<size_t>(r.op)];
        const int32_t written = at.offset[b][static_cast<size_t>(r.source)];
        if (read <= written) return std::nullopt;  // read before it is written
        death = std::max(death, read);
      }
      local[static_cast<size_t>(2 * c + b)].push_back({value, def, death});
    }
    is_local[v] = 1;
  }
  p.local_begin.assign(1, 0);
  for (const auto& list : local) {
    p.local.insert(p.local.end(), list.begin(), list.end());
    p.local_begin.push_back(static_cast<int32_t>(p.local.size()));
  }

  // Where a reader reads copy m of a root (kNoReader: it does not), after
  // checking that the value it reads is written before.
  bool undefined = false;
  auto read_at = [&](const Reader& r, int64_t m) -> int64_t {
    auto check = [&](int64_t read, int64_t written_copy) {
      if (r.source >= 0 && read <= pos(r.source, written_copy)) undefined = true;
      return read;
    };
    switch (r.reach) {
      case Reach::kOwn:
        return check(pos(r.op, m), m);
      case Reach::kZero:
        return check(pos(r.op, 0), 0);
      case Reach::kSum:
        if (m > 0) return check(sum_pos(r.op, m), m);
        return k > 1 ? check(sum_pos(r.op, 1), 0) : kNoReader;
      case Reach::kEvery: {
        // Copy n reads copy n of a view of the one buffer: every copy's
        // position, each after its own writer.
        int64_t read = kNoReader;
        for (int64_t n = 0; n < k; ++n) read = std::max(read, check(pos(r.op, n), n));
        return read;
      }
    }
    return kNoReader;
  };

  // Buffers that cross segments: parameters (resident), the other roots'
  // copies and the running sums. Every segment of a kind allocates one copy
  // of each such root its ops write: those allocations are kind changes.
  // Their frees are kind changes too where every segment of the kind frees
  // one copy of the value after the same op (FoldFrees); the rest keep the
  // position of their last reader.
  for (const auto& prm : fn_.params()) {
    if (!kept_value(prm->id())) continue;
    const int64_t copies = per_value(prm->id()) ? k : 1;
    for (int64_t m = 0; m < copies; ++m)
      p.buffers.push_back(
          {prm->id(), SegmentedProgram::kBeforeFirstOp, SegmentedProgram::kResident});
  }
  std::vector<std::vector<SegmentedProgram::KindChange>> changes(
      static_cast<size_t>(p.num_kinds()));
  auto allocates = [&](int32_t kind, int32_t offset, int32_t value) {
    if (kind >= 0 && offset >= 0)
      changes[static_cast<size_t>(kind)].push_back({value, offset, true});
  };
  FreeFolder frees(p, at.total);
  // The running sums of summed value v: allocated by its class's later
  // microbatches' segments, each freed by the next sum (the last by the
  // readers of the whole sum). False where the sums skip a microbatch.
  std::vector<char> sums_done(nv, 0);
  auto add_sums = [&](int32_t value) {
    const auto v = static_cast<size_t>(value);
    sums_done[v] = 1;
    if (def_op[v] < 0) return false;  // a summed parameter: left to the copies
    const int32_t c = class_of_[static_cast<size_t>(def_op[v])];
    allocates(2 * c + 1, at.sum_offset[v], value);
    int64_t previous = kNoReader;
    for (int64_t m = 1; m < k; ++m) {
      const int64_t def = sum_pos(value, m);
      if (def <= previous) return false;
      previous = def;
      int64_t last = kNoReader;
      if (m + 1 < k) {
        last = sum_pos(value, m + 1);
      } else {
        for (const Reader& r : final_readers[v]) {
          const int64_t read = pos(r.op, 0);
          if (read <= def) undefined = true;
          last = std::max(last, read);
        }
        if (final_resident[v]) break;
      }
      frees.Add(value, last == kNoReader ? def : last);
    }
    return true;
  };
  for (size_t v = 0; v < nv; ++v) {
    const auto value = static_cast<int32_t>(v);
    if (root[v] != value || def_op[v] < 0 || is_local[v] || !kept_value(value)) continue;
    const int32_t j = def_op[v];
    const int32_t c = class_of_[static_cast<size_t>(j)];
    if (c >= 0) {
      allocates(2 * c, at.offset[0][static_cast<size_t>(j)], value);
      allocates(2 * c + 1, at.offset[1][static_cast<size_t>(j)], value);
    } else {
      allocates(op_kind[static_cast<size_t>(j)], 0, value);
    }
    if (!resident[v]) {
      const int64_t copies = per_op(j) ? k : 1;
      for (int64_t m = 0; m < copies; ++m) {
        int64_t last = kNoReader;
        for (const Reader& r : readers[v]) last = std::max(last, read_at(r, m));
        frees.Add(value, last == kNoReader ? pos(j, m) : last);
      }
    }
    // A summed root's sums free its copy 0 and each other: one family.
    if (c_.summed[v] && k > 1 && !add_sums(value)) return std::nullopt;
    frees.EndFamily();
  }
  for (size_t v = 0; v < nv; ++v) {
    if (c_.summed[v] && kept_value(static_cast<int32_t>(v)) && k > 1 && !sums_done[v]) {
      if (!add_sums(static_cast<int32_t>(v))) return std::nullopt;
      frees.EndFamily();
    }
  }
  frees.Finish(changes);
  p.change_begin.assign(1, 0);
  for (const auto& list : changes) {
    p.changes.insert(p.changes.end(), list.begin(), list.end());
    p.change_begin.push_back(static_cast<int32_t>(p.changes.size()));
  }
  // The reads of the parameters' buffers (resident) are checked too.
  for (const auto& prm : fn_.params()) {
    if (!kept_value(prm->id())) continue;
    const int64_t copies = per_value(prm->id()) ? k : 1;
    for (const Reader& r : readers[static_cast<size_t>(prm->id())]) {
      for (int64_t m = 0; m < copies; ++m) read_at(r, m);
    }
  }
  if (undefined) return std::nullopt;
  if (restricted_) p.whole_num_ops = WholeOps();
  return p;
}

}  // namespace distir::sharding
