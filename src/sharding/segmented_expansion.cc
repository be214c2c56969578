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

#include "absl/container/flat_hash_map.h"
#include "ir/op_alias.h"
#include "sharding/expander.h"

namespace distir::sharding {
// Named, not anonymous: SegmentWriter is the Expander's friend (expander.h).
namespace segment_writer {

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

// An op's position in the program, the segment holding it (its index in
// program order) and its offset there: where a copy is read or freed, found
// without searching the segments. `pos` kNoReader: no such op.
struct At {
  int64_t pos = kNoReader;
  int32_t seg = -1;
  int32_t offset = 0;
};
inline At Later(const At& a, const At& b) { return b.pos > a.pos ? b : a; }

// Folds the frees of buffers that cross segments into their kinds: a value's
// copies freed after the same op of a kind, r in each of its segments, are r
// kind changes. A family (a root's copies, with its running sums when it is
// summed: a sum frees copy 0 of its value in the first later segment and the
// previous sum in the others) is tried alone first; its other frees are tried
// with those of the other families of the same value.
class FreeFolder {
 public:
  explicit FreeFolder(SegmentedProgram& p) : p_(p) {
    stamp_.assign(p.segment_kind.size(), 0);
    count_.assign(p.segment_kind.size(), 0);
    segments_of_.assign(static_cast<size_t>(p.num_kinds()), 0);
    for (int32_t kind : p.segment_kind) ++segments_of_[static_cast<size_t>(kind)];
  }

  /// A copy of `value` freed after the op at `death`.
  void Add(int32_t value, const At& death) {
    family_.push_back({value, p_.segment_kind[static_cast<size_t>(death.seg)], death.offset,
                       death.seg, death.pos});
  }
  /// Folds what the family's frees fold alone (grouped by kind and offset,
  /// a family's frees falling in a few groups); keeps the rest.
  void EndFamily() {
    groups_.clear();
    group_of_.clear();
    size_t g = 0;  // a family's frees come in runs of one group: try the last first
    for (const Free& f : family_) {
      if (g >= groups_.size() || groups_[g].kind != f.kind || groups_[g].offset != f.offset) {
        g = static_cast<size_t>(
            std::find_if(groups_.begin(), groups_.end(),
                         [&](const Group& x) { return x.kind == f.kind && x.offset == f.offset; }) -
            groups_.begin());
        if (g == groups_.size()) groups_.push_back(Group{f.kind, f.offset, 0, 0});
      }
      ++groups_[g].count;
      group_of_.push_back(static_cast<int32_t>(g));
    }
    bool rest = false;
    for (size_t x = 0; x < groups_.size(); ++x) {
      Group& group = groups_[x];
      group.times = Uniform(static_cast<int32_t>(x));
      for (int32_t r = 0; r < group.times; ++r) {
        folded_.push_back({family_.front().value, group.offset, false});
        kinds_.push_back(group.kind);
      }
      rest = rest || group.times == 0;
    }
    // The rest in the family's order (Finish sorts them; frees equal in
    // value, kind, offset and segment are equal in all).
    for (size_t i = 0; rest && i < family_.size(); ++i) {
      if (groups_[static_cast<size_t>(group_of_[i])].times == 0) rest_.push_back(family_[i]);
    }
    family_.clear();
  }
  /// How many segments are of `kind`.
  int64_t SegmentsOf(int32_t kind) const { return segments_of_[static_cast<size_t>(kind)]; }
  /// One copy of `value` freed after op `offset` in each segment of `kind`,
  /// the family's frees there: the change EndFamily folds them into.
  /// REQUIRES: no Add since the last EndFamily.
  void FoldOnePerSegment(int32_t value, int32_t kind, int32_t offset) {
    folded_.push_back({value, offset, false});
    kinds_.push_back(kind);
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
  std::vector<int64_t> segments_of_;  // by kind
  struct Group {
    int32_t kind, offset;
    int64_t count;
    int32_t times;  // frees folded per segment of the kind (Uniform); 0: none
  };

  // How many of the family's copies group `g` frees in each segment of its
  // kind: r when every segment has r of them, else 0 (not foldable).
  int32_t Uniform(int32_t g) {
    const Group& group = groups_[static_cast<size_t>(g)];
    const int64_t segments = segments_of_[static_cast<size_t>(group.kind)];
    if (segments == 0 || group.count % segments != 0) return 0;
    const auto r = static_cast<int32_t>(group.count / segments);
    ++token_;
    for (size_t i = 0; i < family_.size(); ++i) {
      if (group_of_[i] != g) continue;
      const auto s = static_cast<size_t>(family_[i].segment);
      if (stamp_[s] != token_) stamp_[s] = token_, count_[s] = 0;
      if (++count_[s] > r) return 0;
    }
    return r;  // no segment above r, r x segments in all: r in each
  }
  std::vector<Free> family_, rest_;
  std::vector<Group> groups_;
  std::vector<int32_t> group_of_;  // per free of the family: its group
  std::vector<int32_t> stamp_;  // by segment: the last group that counted there
  std::vector<int32_t> count_;  // by segment: that group's frees there
  int32_t token_ = 0;
  std::vector<SegmentedProgram::KindChange> folded_;
  std::vector<int32_t> kinds_;  // of folded_
};

// Expander::Segmented's work, step by step, over the expander's template,
// classes and segments.
class SegmentWriter {
 public:
  explicit SegmentWriter(const Expander& x)
      : x_(x), ops_(x.fn_.ops()), k_(x.k_), nv_(static_cast<size_t>(x.fn_.num_values())) {}

  std::optional<SegmentedProgram> Write(const std::vector<size_t>& order) {
    if (HasTuples()) return std::nullopt;
    WriteClassKinds();
    WriteOrder(order);
    FindRoots();
    if (!FindReaders() || !WriteLocals() || !WriteCrossing()) return std::nullopt;
    CheckParamReads();
    if (undefined_) return std::nullopt;
    if (x_.restricted_) p_.whole_num_ops = x_.WholeOps();
    return std::move(p_);
  }

 private:
  // FreedInOwnSegments: per unit reading a root (a class, or an op's
  // one-op segments), its last reader's offsets in the unit's two kinds.
  struct UnitRead {
    int32_t unit;
    int32_t last[2];
  };

  bool KeptValue(int32_t v) const {
    return !x_.restricted_ || x_.kept_value_[static_cast<size_t>(v)] != 0;
  }
  bool KeptOp(size_t i) const { return !x_.restricted_ || x_.kept_op_[i] != 0; }
  bool PerOp(int32_t i) const { return x_.c_.per_op[static_cast<size_t>(i)] != 0; }
  bool PerValue(int32_t v) const { return x_.c_.per_value[static_cast<size_t>(v)] != 0; }
  bool Summed(size_t v) const { return x_.c_.summed[v] != 0; }
  int32_t ClassOf(int32_t i) const { return x_.class_of_[static_cast<size_t>(i)]; }

  // Buffers are one tensor each (SimulateSegmented): tuples are left to the copies.
  bool HasTuples() const {
    for (const auto& prm : x_.fn_.params()) {
      if (KeptValue(prm->id()) && prm->type().is_tuple()) return true;
    }
    for (const auto& op : ops_) {
      for (const auto& r : op->results()) {
        if (KeptValue(r->id()) && r->type().is_tuple()) return true;
      }
    }
    return false;
  }

  // Class c's microbatch 0 is kind 2c, its later ones 2c + 1: their ops (a
  // later microbatch's with their running sums) and offsets.
  void WriteClassKinds() {
    offset_[0].assign(ops_.size(), -1);
    offset_[1].assign(ops_.size(), -1);
    sum_offset_.assign(nv_, -1);
    for (size_t c = 0; c < x_.class_task_.size(); ++c) {
      for (int b = 0; b < 2; ++b) {
        const auto first = static_cast<int32_t>(p_.op.size());
        for (int32_t i : x_.class_ops_[b][c]) {
          offset_[b][static_cast<size_t>(i)] = static_cast<int32_t>(p_.op.size()) - first;
          p_.op.push_back(i);
          p_.summed.push_back(-1);
          if (b == 0 || !PerOp(i) || !x_.has_summed_[static_cast<size_t>(i)]) continue;
          for (const auto& r : ops_[static_cast<size_t>(i)]->results()) {
            if (!Summed(static_cast<size_t>(r->id())) || !KeptValue(r->id())) continue;
            sum_offset_[static_cast<size_t>(r->id())] = static_cast<int32_t>(p_.op.size()) - first;
            p_.op.push_back(SegmentedProgram::kSum);
            p_.summed.push_back(r->id());
          }
        }
        p_.kind_begin.push_back(static_cast<int32_t>(p_.op.size()));
      }
    }
  }

  // One kind per op of one-op segments; each segment's kind, in `order`,
  // and where it starts.
  void WriteOrder(const std::vector<size_t>& order) {
    const auto& segments = x_.segments_;
    op_kind_.assign(ops_.size(), -1);
    of_class_.assign(x_.class_task_.size(), std::vector<int32_t>(static_cast<size_t>(k_), -1));
    of_op_.assign(ops_.size(), {});
    for (size_t s = 0; s < segments.size(); ++s) {
      const Expander::Segment& g = segments[s];
      if (g.cls >= 0) {
        of_class_[static_cast<size_t>(g.cls)][static_cast<size_t>(g.m)] = static_cast<int32_t>(s);
        continue;
      }
      const auto i = static_cast<size_t>(g.op);
      if (op_kind_[i] < 0) {
        op_kind_[i] = p_.num_kinds();
        p_.op.push_back(g.op);
        p_.summed.push_back(-1);
        p_.kind_begin.push_back(static_cast<int32_t>(p_.op.size()));
      }
      std::vector<int32_t>& copies = of_op_[i];
      if (copies.empty()) copies.assign(static_cast<size_t>(PerOp(g.op) ? k_ : 1), -1);
      copies[static_cast<size_t>(g.m)] = static_cast<int32_t>(s);
    }
    start_.assign(segments.size(), 0);
    in_order_.assign(segments.size(), -1);
    for (size_t s : order) {
      in_order_[s] = static_cast<int32_t>(p_.segment_kind.size());
      const Expander::Segment& g = segments[s];
      const int32_t kind =
          g.cls >= 0 ? 2 * g.cls + (g.m > 0 ? 1 : 0) : op_kind_[static_cast<size_t>(g.op)];
      p_.segment_kind.push_back(kind);
      start_[s] = total_;
      total_ += p_.KindSize(kind);
    }
    def_op_.assign(nv_, -1);
    for (size_t i = 0; i < ops_.size(); ++i) {
      for (const auto& r : ops_[i]->results()) def_op_[r->id()] = static_cast<int32_t>(i);
    }
  }

  // Offset `offset` of segment s (the Expander's numbering).
  At InSegment(int32_t s, int32_t offset) const {
    return {start_[static_cast<size_t>(s)] + offset, in_order_[static_cast<size_t>(s)], offset};
  }

  // Position of op i's copy for microbatch m (0 for a shared op).
  At PosAt(int32_t i, int64_t m) const {
    const auto u = static_cast<size_t>(i);
    const int64_t mm = PerOp(i) ? m : 0;
    const int32_t c = ClassOf(i);
    if (c >= 0) {
      const int32_t s = of_class_[static_cast<size_t>(c)][static_cast<size_t>(mm)];
      return InSegment(s, offset_[mm > 0 ? 1 : 0][u]);
    }
    return InSegment(of_op_[u][static_cast<size_t>(mm)], 0);
  }
  int64_t Pos(int32_t i, int64_t m) const { return PosAt(i, m).pos; }
  // Position of the running sum of `v` for microbatch m >= 1.
  At SumPosAt(int32_t v, int64_t m) const {
    const int32_t c = ClassOf(def_op_[static_cast<size_t>(v)]);
    const int32_t s = of_class_[static_cast<size_t>(c)][static_cast<size_t>(m)];
    return InSegment(s, sum_offset_[static_cast<size_t>(v)]);
  }

  // The value whose copy allocates each kept value's buffer; for a shared
  // op's view of a summed value (K > 1), the summed value, marked final_sum_.
  void FindRoots() {
    root_.assign(nv_, -1);
    final_sum_.assign(nv_, 0);
    for (const auto& prm : x_.fn_.params()) root_[static_cast<size_t>(prm->id())] = prm->id();
    for (size_t j = 0; j < ops_.size(); ++j) {
      if (!KeptOp(j)) continue;
      const Op& op = *ops_[j];
      const bool cut =
          x_.restricted_ && (x_.tin_begin_[j + 1] - x_.tin_begin_[j] != op.num_inputs() ||
                             x_.tout_begin_[j + 1] - x_.tout_begin_[j] != op.num_results());
      for (int r = 0; r < op.num_results(); ++r) {
        const auto v = static_cast<size_t>(op.result(r)->id());
        if (!KeptValue(static_cast<int32_t>(v))) continue;
        const int a = cut ? -1 : AliasedInput(op, r);
        if (a < 0 || a >= op.num_inputs()) {
          root_[v] = static_cast<int32_t>(v);
          continue;
        }
        const int32_t u = op.input(a)->id();
        if (!x_.c_.per_op[j] && PerValue(u) && k_ > 1) {
          root_[v] = u;
          final_sum_[v] = 1;
          continue;
        }
        root_[v] = root_[static_cast<size_t>(u)];
        final_sum_[v] = final_sum_[static_cast<size_t>(u)];
      }
    }
  }

  // Readers of each root's copies and of each summed value's last sum, and
  // what stays resident. False where a task's shared op would read the sum
  // so far (RunInOrder), or a sum reads a shared buffer.
  bool FindReaders() {
    readers_.assign(nv_, {});
    final_readers_.assign(nv_, {});
    resident_.assign(nv_, 0);
    final_resident_.assign(nv_, 0);
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!KeptOp(i)) continue;
      const bool shared_task = !x_.c_.per_op[i] && x_.class_of_[i] >= 0;
      for (int32_t q = x_.tin_begin_[i]; q < x_.tin_begin_[i + 1]; ++q) {
        const int32_t v = x_.tin_[static_cast<size_t>(q)];
        const int32_t rv = root_[static_cast<size_t>(v)];
        Reader r{static_cast<int32_t>(i), Reach::kZero, def_op_[static_cast<size_t>(v)]};
        if (final_sum_[static_cast<size_t>(v)] || (!x_.c_.per_op[i] && PerValue(v) && k_ > 1)) {
          if (shared_task) return false;
          final_readers_[static_cast<size_t>(final_sum_[static_cast<size_t>(v)] ? rv : v)]
              .push_back(r);
          continue;
        }
        if (x_.c_.per_op[i]) r.reach = PerValue(rv) ? Reach::kOwn : Reach::kEvery;
        readers_[static_cast<size_t>(rv)].push_back(r);
      }
    }
    for (size_t v = 0; v < nv_; ++v) {
      if (!Summed(v) || !KeptValue(static_cast<int32_t>(v)) || k_ == 1) continue;
      const int32_t rv = root_[v];
      if (rv < 0 || !PerValue(rv)) return false;
      readers_[static_cast<size_t>(rv)].push_back(
          {static_cast<int32_t>(v), Reach::kSum, def_op_[v]});
    }
    for (const Value* v : x_.fn_.returns()) {
      if (!KeptValue(v->id())) continue;
      const auto u = static_cast<size_t>(v->id());
      if (final_sum_[u]) {
        final_resident_[static_cast<size_t>(root_[u])] = 1;
      } else if (Summed(u) && k_ > 1) {
        final_resident_[u] = 1;
      } else {
        resident_[static_cast<size_t>(root_[u])] = 1;
      }
    }
    return true;
  }

  // A root written by a task and read only by its own copy's ops of that
  // task: the same local buffer in every segment of the kind. False where
  // an op reads a value before it is written.
  bool WriteLocals() {
    std::vector<std::vector<SegmentedProgram::LocalBuffer>> local(
        static_cast<size_t>(p_.num_kinds()));
    is_local_.assign(nv_, 0);
    for (size_t v = 0; v < nv_; ++v) {
      const auto value = static_cast<int32_t>(v);
      if (!IsCrossingCandidate(v)) continue;
      const int32_t j = def_op_[v];
      const int32_t c = ClassOf(j);
      if (c < 0) continue;
      const Reach reach = PerOp(j) ? Reach::kOwn : Reach::kZero;
      const bool inside = std::all_of(readers_[v].begin(), readers_[v].end(), [&](const Reader& r) {
        return r.reach == reach && ClassOf(r.op) == c;
      });
      if (!inside || resident_[v]) continue;
      for (int b = 0; b < 2; ++b) {
        const int32_t def = offset_[b][static_cast<size_t>(j)];
        if (def < 0) continue;
        int32_t death = def;
        for (const Reader& r : readers_[v]) {
          const int32_t read = offset_[b][static_cast<size_t>(r.op)];
          if (read <= offset_[b][static_cast<size_t>(r.source)]) return false;
          death = std::max(death, read);
        }
        local[static_cast<size_t>(2 * c + b)].push_back({value, def, death});
      }
      is_local_[v] = 1;
    }
    for (const auto& list : local) {
      p_.local.insert(p_.local.end(), list.begin(), list.end());
      p_.local_begin.push_back(static_cast<int32_t>(p_.local.size()));
    }
    return true;
  }

  // A kept root written by an op.
  bool IsCrossingCandidate(size_t v) const {
    return root_[v] == static_cast<int32_t>(v) && def_op_[v] >= 0 &&
           KeptValue(static_cast<int32_t>(v));
  }

  // Where reader r reads copy m of a root (pos kNoReader: it does not), after
  // checking that the value it reads is written before (else undefined_).
  At ReadAt(const Reader& r, int64_t m) {
    auto check = [&](At read, int64_t written_copy) {
      if (r.source >= 0 && read.pos <= Pos(r.source, written_copy)) undefined_ = true;
      return read;
    };
    switch (r.reach) {
      case Reach::kOwn:
        return check(PosAt(r.op, m), m);
      case Reach::kZero:
        return check(PosAt(r.op, 0), 0);
      case Reach::kSum:
        if (m > 0) return check(SumPosAt(r.op, m), m);
        return k_ > 1 ? check(SumPosAt(r.op, 1), 0) : At{};
      case Reach::kEvery: {
        // Copy n reads copy n of a view of the one buffer: every copy's
        // position, each after its own writer. A class whose segments come
        // in microbatch order reads first in copy 0, last in copy K - 1;
        // where the writer is not per microbatch, the first read is the one
        // to check.
        const int32_t c = ClassOf(r.op);
        const auto u = static_cast<size_t>(r.op);
        if (c >= 0 && (r.source < 0 || !PerOp(r.source)) && offset_[0][u] >= 0 &&
            (k_ == 1 || offset_[1][u] >= 0) && ClassInOrder(c)) {
          check(PosAt(r.op, 0), 0);
          return PosAt(r.op, k_ - 1);
        }
        At read;
        for (int64_t n = 0; n < k_; ++n) read = Later(read, check(PosAt(r.op, n), n));
        return read;
      }
    }
    return At{};
  }

  // Buffers that cross segments: parameters (resident), the other roots'
  // copies and the running sums. Every segment of a kind allocates one copy
  // of each such root its ops write: those allocations are kind changes.
  // Their frees are kind changes too where every segment of the kind frees
  // the same number after the same op (FreeFolder); the rest keep the
  // position of their last reader. False where the sums skip a microbatch.
  bool WriteCrossing() {
    for (const auto& prm : x_.fn_.params()) {
      if (!KeptValue(prm->id())) continue;
      const int64_t copies = PerValue(prm->id()) ? k_ : 1;
      for (int64_t m = 0; m < copies; ++m)
        p_.buffers.push_back(
            {prm->id(), SegmentedProgram::kBeforeFirstOp, SegmentedProgram::kResident});
    }
    changes_.assign(static_cast<size_t>(p_.num_kinds()), {});
    FreeFolder frees(p_);
    std::vector<char> sums_done(nv_, 0);
    for (size_t v = 0; v < nv_; ++v) {
      if (!IsCrossingCandidate(v) || is_local_[v]) continue;
      const auto value = static_cast<int32_t>(v);
      const int32_t j = def_op_[v];
      const int32_t c = ClassOf(j);
      if (c >= 0) {
        Allocates(2 * c, offset_[0][static_cast<size_t>(j)], value);
        Allocates(2 * c + 1, offset_[1][static_cast<size_t>(j)], value);
      } else {
        Allocates(op_kind_[static_cast<size_t>(j)], 0, value);
      }
      // A summed root read only by its sums: copies and sums fold in closed form.
      if (Summed(v) && k_ > 1 && FoldSummedRoot(value, frees)) {
        sums_done[v] = 1;
        frees.EndFamily();
        continue;
      }
      if (!resident_[v] && !FreedInOwnSegments(v, frees)) {
        const int64_t copies = PerOp(j) ? k_ : 1;
        for (int64_t m = 0; m < copies; ++m) {
          At last;
          for (const Reader& r : readers_[v]) last = Later(last, ReadAt(r, m));
          if (last.pos == kNoReader) last = PosAt(j, m);
          frees.Add(value, last);
        }
      }
      // A summed root's sums free its copy 0 and each other: one family.
      if (Summed(v) && k_ > 1) {
        sums_done[v] = 1;
        if (!AddSums(value, frees)) return false;
      }
      frees.EndFamily();
    }
    for (size_t v = 0; v < nv_; ++v) {
      if (!Summed(v) || !KeptValue(static_cast<int32_t>(v)) || k_ == 1 || sums_done[v]) continue;
      if (!AddSums(static_cast<int32_t>(v), frees)) return false;
      frees.EndFamily();
    }
    frees.Finish(changes_);
    for (const auto& list : changes_) {
      p_.changes.insert(p_.changes.end(), list.begin(), list.end());
      p_.change_begin.push_back(static_cast<int32_t>(p_.changes.size()));
    }
    return true;
  }

  // The frees of a root's copies where every copy is read only by its own
  // microbatch's segments (an activation read by the forward after it, by
  // the backward and by the Send to the next stage): copy m dies in the
  // latest of its readers' segments m (a class's, or a one-op segment's),
  // after its last reader there. Where that is the same reading unit for
  // every copy (a class's microbatch 0 apart: kinds of its own), the family
  // folds into one change per kind, as EndFamily would fold the K frees
  // (checked as ReadAt checks them). False, with nothing folded, where the
  // copies are read otherwise, the root is summed or the last unit changes.
  bool FreedInOwnSegments(size_t v, FreeFolder& frees) {
    const int32_t j = def_op_[v];
    const std::vector<Reader>& readers = readers_[v];
    if (!PerOp(j) || (Summed(v) && k_ > 1) || readers.empty()) return false;
    std::vector<UnitRead>& reads = reads_;
    reads.clear();
    for (const Reader& r : readers) {
      const int32_t unit = r.reach == Reach::kOwn ? UnitOf(r.op) : -1;
      if (unit < 0) return false;
      auto it = std::find_if(reads.begin(), reads.end(),
                             [&](const UnitRead& x) { return x.unit == unit; });
      if (it == reads.end()) it = reads.insert(reads.end(), UnitRead{unit, {-1, -1}});
      for (int b = 0; b < 2; ++b) it->last[b] = std::max(it->last[b], OffsetIn(unit, b, r.op));
    }
    // The reads ReadAt would check: where the value read is written in the
    // reader's own segment, once per kind (the offsets are those of every
    // segment); else copy by copy (CheckAcross).
    std::vector<const Reader*>& across = across_;
    across.clear();
    for (const Reader& r : readers) {
      if (r.source < 0) continue;
      if (PerOp(r.source) && ClassOf(r.op) >= 0 && ClassOf(r.source) == ClassOf(r.op)) {
        for (int b = 0; b < (k_ > 1 ? 2 : 1); ++b) {
          if (offset_[b][static_cast<size_t>(r.op)] <= offset_[b][static_cast<size_t>(r.source)])
            undefined_ = true;
        }
        continue;
      }
      across.push_back(&r);
    }
    // The latest unit for copy 0, and the one latest for every later copy:
    // where every unit reads in its later kind, the segments of different
    // units do not overlap and the latest segment holds the latest read.
    int32_t winner[2] = {LatestRead(reads, 0), -1};
    if (k_ > 1) {
      winner[1] = LatestRead(reads, 1);
      const int32_t w = reads[static_cast<size_t>(winner[1])].unit;
      const bool by_unit =
          std::all_of(reads.begin(), reads.end(), [](const UnitRead& x) { return x.last[1] >= 0; });
      for (const UnitRead& x : reads) {
        if (by_unit && x.unit != w && !AlwaysLater(w, x.unit)) return false;
      }
      for (int64_t m = 2; !by_unit && m < k_; ++m) {
        if (LatestRead(reads, m) != winner[1]) return false;
      }
    }
    return FoldOwnFrees(static_cast<int32_t>(v), reads, winner, across, frees);
  }

  // FreedInOwnSegments's folds, after the checks of the reads across
  // segments: a class's kinds (2c for copy 0, 2c + 1 for the later ones;
  // the two winners may be different classes) or a one-op kind holding
  // every copy's reader (winner for every copy). False, with nothing folded,
  // where those kinds have other segments.
  bool FoldOwnFrees(int32_t v, const std::vector<UnitRead>& reads, const int32_t winner[2],
                    const std::vector<const Reader*>& across, FreeFolder& frees) {
    const int nb = k_ > 1 ? 2 : 1;
    int32_t kind[2] = {-1, -1};
    for (int b = 0; b < nb; ++b) {
      const int32_t unit = reads[static_cast<size_t>(winner[b])].unit;
      if (unit >= num_classes()) {
        if (winner[nb - 1] != winner[0]) return false;  // one op's kind: every copy's
        kind[b] = op_kind_[static_cast<size_t>(unit - num_classes())];
        if (frees.SegmentsOf(kind[b]) != k_) return false;
      } else {
        kind[b] = 2 * unit + b;
        if (frees.SegmentsOf(kind[b]) != (b == 0 ? 1 : k_ - 1)) return false;
      }
    }
    for (const Reader* r : across) CheckAcross(*r);
    for (int b = 0; b < nb; ++b) {
      if (b == 1 && kind[1] == kind[0]) break;  // one one-op kind: one change
      const UnitRead& w = reads[static_cast<size_t>(winner[b])];
      frees.FoldOnePerSegment(v, kind[b], w.last[b]);
    }
    return true;
  }

  // Reading units: class c is unit c, the one-op segments of op i (per
  // microbatch) unit num_classes() + i; -1 for an op in neither.
  int32_t num_classes() const { return static_cast<int32_t>(of_class_.size()); }
  int32_t UnitOf(int32_t i) const {
    if (ClassOf(i) >= 0) return ClassOf(i);
    const auto& copies = of_op_[static_cast<size_t>(i)];
    return static_cast<int64_t>(copies.size()) == k_ ? num_classes() + i : -1;
  }
  // Op i's offset in unit's kind for microbatch m > 0 (b 1) or 0 (b 0).
  int32_t OffsetIn(int32_t unit, int b, int32_t i) const {
    return unit < num_classes() ? offset_[b][static_cast<size_t>(i)] : 0;
  }
  int32_t SegmentOf(int32_t unit, int64_t m) const {
    const auto& segments = unit < num_classes() ? of_class_[static_cast<size_t>(unit)]
                                                : of_op_[static_cast<size_t>(unit - num_classes())];
    return segments[static_cast<size_t>(m)];
  }

  // The family of a summed root whose only reader is its running sum (a
  // weight gradient per microbatch): copy 0 dies at sum 1, copy m >= 1 at
  // sum m, sum m at sum m + 1, all after the sum's op in the later
  // microbatches' segments of the root's class: two frees in each of them,
  // the fold EndFamily would make of those 2K - 2 frees. The last sum is
  // left to the family (AddLastSum). False, with nothing written, where the
  // general path is needed: other readers, a resident root, a last sum with
  // neither readers nor residence (its free falls among the others), or
  // segments of the class out of microbatch order (AddSums's refusal).
  bool FoldSummedRoot(int32_t value, FreeFolder& frees) {
    const auto v = static_cast<size_t>(value);
    const int32_t j = def_op_[v];
    if (resident_[v] || j < 0 || !PerOp(j) || readers_[v].size() != 1 ||
        readers_[v][0].reach != Reach::kSum)
      return false;
    if (final_readers_[v].empty() && !final_resident_[v]) return false;
    const int32_t c = ClassOf(j);
    if (c < 0 || !ClassInOrder(c) || frees.SegmentsOf(2 * c + 1) != k_ - 1) return false;
    const auto sum = sum_offset_[v];
    // ReadAt's checks: copy m >= 1 is summed after its op in its own segment
    // (sum_offset_ follows the op by construction); copy 0 in segment 1.
    if (SumPosAt(value, 1).pos <= Pos(j, 0)) undefined_ = true;
    Allocates(2 * c + 1, sum, value);
    frees.FoldOnePerSegment(value, 2 * c + 1, sum);
    frees.FoldOnePerSegment(value, 2 * c + 1, sum);
    AddLastSum(value, frees);
    return true;
  }

  // Whether class c's segments come in microbatch order, each later than
  // the previous (computed once per class).
  bool ClassInOrder(int32_t c) {
    if (class_in_order_.empty()) {
      class_in_order_.assign(of_class_.size(), 0);
      for (size_t x = 0; x < of_class_.size(); ++x) {
        bool in_order = true;
        for (size_t m = 1; m < of_class_[x].size() && in_order; ++m) {
          const int32_t a = of_class_[x][m - 1], b = of_class_[x][m];
          in_order =
              a >= 0 && b >= 0 && start_[static_cast<size_t>(b)] > start_[static_cast<size_t>(a)];
        }
        class_in_order_[x] = in_order ? 1 : 0;
      }
    }
    return class_in_order_[static_cast<size_t>(c)] != 0;
  }

  // The index in `reads` of the unit whose segment m holds the latest read.
  int32_t LatestRead(const std::vector<UnitRead>& reads, int64_t m) const {
    const int b = m > 0 ? 1 : 0;
    int64_t latest = kNoReader;
    int32_t at = -1;
    for (size_t x = 0; x < reads.size(); ++x) {
      const int64_t pos = InSegment(SegmentOf(reads[x].unit, m), reads[x].last[b]).pos;
      if (pos > latest) latest = pos, at = static_cast<int32_t>(x);
    }
    return at;
  }

  // Whether unit a's segment m follows unit b's for every m >= 1 (cached
  // per pair: the roots of a program share a few pairs of units).
  bool AlwaysLater(int32_t a, int32_t b) {
    const int64_t units = num_classes() + static_cast<int64_t>(ops_.size());
    const auto [it, added] = later_.try_emplace(static_cast<int64_t>(a) * units + b, true);
    if (!added) return it->second;
    bool later = true;
    for (int64_t m = 1; m < k_ && later; ++m)
      later = start_[static_cast<size_t>(SegmentOf(a, m))] >
              start_[static_cast<size_t>(SegmentOf(b, m))];
    it->second = later;
    return later;
  }

  // ReadAt's check of kOwn reader r for every copy: the value it reads is
  // written before. A source per microbatch in another unit whose segments
  // all come earlier is checked for copy 0 only.
  void CheckAcross(const Reader& r) {
    const int32_t unit = UnitOf(r.op);
    const int32_t source = PerOp(r.source) ? UnitOf(r.source) : -1;
    const bool ordered = k_ > 1 && source >= 0 && source != unit && OffsetIn(unit, 1, r.op) >= 0 &&
                         OffsetIn(source, 1, r.source) >= 0 && AlwaysLater(unit, source);
    const int64_t copies = ordered ? 1 : k_;
    for (int64_t m = 0; m < copies; ++m) {
      if (PosAt(r.op, m).pos <= Pos(r.source, m)) undefined_ = true;
    }
  }

  void Allocates(int32_t kind, int32_t offset, int32_t value) {
    if (kind >= 0 && offset >= 0)
      changes_[static_cast<size_t>(kind)].push_back({value, offset, true});
  }

  // The running sums of summed value v: allocated by its class's later
  // microbatches' segments, each freed by the next sum (the last by the
  // readers of the whole sum). False where the sums skip a microbatch, or v
  // is a parameter.
  bool AddSums(int32_t value, FreeFolder& frees) {
    const auto v = static_cast<size_t>(value);
    if (def_op_[v] < 0) return false;
    Allocates(2 * ClassOf(def_op_[v]) + 1, sum_offset_[v], value);
    int64_t previous = kNoReader;
    for (int64_t m = 1; m < k_; ++m) {
      const At def = SumPosAt(value, m);
      if (def.pos <= previous) return false;
      previous = def.pos;
      if (m + 1 < k_) frees.Add(value, SumPosAt(value, m + 1));
    }
    AddLastSum(value, frees);
    return true;
  }

  // The last running sum of summed value v (K > 1): freed after the readers
  // of the whole sum, or resident.
  void AddLastSum(int32_t value, FreeFolder& frees) {
    const auto v = static_cast<size_t>(value);
    const At def = SumPosAt(value, k_ - 1);
    At last;
    for (const Reader& r : final_readers_[v]) {
      const At read = PosAt(r.op, 0);
      if (read.pos <= def.pos) undefined_ = true;
      last = Later(last, read);
    }
    if (final_resident_[v]) return;
    if (last.pos == kNoReader) last = def;
    frees.Add(value, last);
  }

  // The reads of the parameters' buffers (resident) are checked too.
  void CheckParamReads() {
    for (const auto& prm : x_.fn_.params()) {
      if (!KeptValue(prm->id())) continue;
      const int64_t copies = PerValue(prm->id()) ? k_ : 1;
      for (const Reader& r : readers_[static_cast<size_t>(prm->id())]) {
        if (r.source < 0) continue;  // the parameter itself: resident, nothing to check
        for (int64_t m = 0; m < copies; ++m) ReadAt(r, m);
      }
    }
  }

  const Expander& x_;
  const std::vector<std::unique_ptr<Op>>& ops_;
  const int64_t k_;
  const size_t nv_;
  SegmentedProgram p_;
  // Positions.
  int64_t total_ = 0;
  std::vector<int64_t> start_;                  // per segment (Expander's numbering)
  std::vector<int32_t> in_order_;               // per segment: its index in program order
  std::vector<UnitRead> reads_;
  std::vector<const Reader*> across_;           // FreedInOwnSegments: reads checked copy by copy
  std::vector<std::vector<int32_t>> of_class_;  // [class][microbatch]: its segment
  std::vector<char> class_in_order_;            // [class]: ClassInOrder, once computed
  absl::flat_hash_map<int64_t, bool> later_;    // AlwaysLater's answers, by pair of units
  std::vector<std::vector<int32_t>> of_op_;     // [op][microbatch]: a one-op segment
  std::vector<int32_t> offset_[2];              // [b][op]: offset in its class kind
  std::vector<int32_t> sum_offset_;             // [value]: its sum's offset in the b = 1 kind
  std::vector<int32_t> op_kind_;                // [op]: its one-op kind, or -1
  std::vector<int32_t> def_op_;                 // [value]: the op writing it, or -1
  // Buffers.
  std::vector<int32_t> root_;
  std::vector<char> final_sum_;  // root_[v] is a summed value whose last sum v views
  std::vector<std::vector<Reader>> readers_, final_readers_;
  std::vector<char> resident_, final_resident_, is_local_;
  std::vector<std::vector<SegmentedProgram::KindChange>> changes_;
  bool undefined_ = false;  // an op reads a value before it is written
};

}  // namespace segment_writer

std::optional<SegmentedProgram> Expander::Segmented(const std::vector<size_t>& order) const {
  return segment_writer::SegmentWriter(*this).Write(order);
}

}  // namespace distir::sharding
