#include "sharding/template_fold.h"

#include <optional>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "sharding/pipeline_task.h"

namespace distir::sharding {
namespace {

bool SameSharding(const Value& x, const Value& y) {
  if ((x.sharding() == nullptr) != (y.sharding() == nullptr)) return false;
  return x.sharding() == nullptr || *x.sharding() == *y.sharding();
}

int8_t PhaseOf(const Op& op) {
  std::optional<TaskTag> t = GetTask(op);
  return t.has_value() ? static_cast<int8_t>(t->phase) : int8_t{-1};
}

// The learning walk: which values of `b` are `a`'s (to_a, to_b), and the
// chains where a matched op reads an inserted value.
class Matcher {
 public:
  Matcher(const Function& a, const Function& b, const FoldSpec& spec)
      : spec_(spec),
        to_a_(static_cast<size_t>(b.num_values()), nullptr),
        to_b_(static_cast<size_t>(a.num_values()), -1),
        inserted_(static_cast<size_t>(b.num_values()), 0),
        partner_(static_cast<size_t>(b.num_values()), -1) {}

  void Bind(const Value& vb, const Value& va) {
    to_a_[static_cast<size_t>(vb.id())] = &va;
    to_b_[static_cast<size_t>(va.id())] = vb.id();
  }
  void Insert(const Value& vb) { inserted_[static_cast<size_t>(vb.id())] = 1; }

  // `vb` read where `a` reads `va`: the same value, or an inserted Y where
  // `a` reads X (a chain, X <-> Y, one partner each).
  Status Read(const Value& vb, const Value& va, const std::string& where) {
    const auto y = static_cast<size_t>(vb.id());
    if (inserted_[y] == 0) {
      if (to_a_[y] != &va)
        return FailedPrecondition()
               << where << " reads %" << vb.name() << " where a part fewer reads %" << va.name();
      return Status::Ok();
    }
    const int32_t x = to_b_[static_cast<size_t>(va.id())];
    if (x < 0)
      return FailedPrecondition() << where << " reads %" << vb.name() << " for %" << va.name()
                                  << ", which a part more lacks";
    int32_t& px = partner_[static_cast<size_t>(x)];
    int32_t& py = partner_[y];
    if (px < 0 && py < 0) {
      px = vb.id();
      py = x;
    } else if (px != vb.id() || py != x) {
      return FailedPrecondition() << where << " reads %" << vb.name()
                                  << " in place of two values, or %" << va.name()
                                  << " is replaced by two";
    }
    return Status::Ok();
  }

  // `ob` is `oa` but for names (its results named as `a` names them) and
  // where it reads an inserted layer.
  Status Match(const Op& ob, const Op& oa) {
    const std::string where = "op %" + ob.result(0)->name();
    if (ob.kind() != oa.kind() || ob.callee() != oa.callee() ||
        ob.num_inputs() != oa.num_inputs() || ob.num_results() != oa.num_results() ||
        !spec_.SameAttrs(ob.attrs(), oa.attrs()))
      return FailedPrecondition() << where << " differs from %" << oa.result(0)->name();
    for (int k = 0; k < ob.num_inputs(); ++k)
      DISTIR_RETURN_IF_ERROR(Read(*ob.input(k), *oa.input(k), where));
    return BindResults(ob, oa, where);
  }

  std::vector<char> TakeInserted() { return std::move(inserted_); }
  std::vector<int32_t> TakePartners() { return std::move(partner_); }

 private:
  Status BindResults(const Op& ob, const Op& oa, const std::string& where) {
    for (int i = 0; i < ob.num_results(); ++i) {
      const Value& rb = *ob.result(i);
      const Value& ra = *oa.result(i);
      const FoldNames names = spec_.NameInA(rb.name());
      if (i > 0 && names.exact != ra.name() && names.shifted != ra.name())
        return FailedPrecondition()
               << where << ": result %" << rb.name() << " is not %" << ra.name();
      if (!spec_.SameType(rb.type(), ra.type()) || !SameSharding(rb, ra))
        return FailedPrecondition()
               << where << ": result %" << rb.name() << " is typed or laid out otherwise";
      Bind(rb, ra);
    }
    return Status::Ok();
  }

  const FoldSpec& spec_;
  std::vector<const Value*> to_a_;  // by b's value id
  std::vector<int32_t> to_b_;       // by a's value id
  std::vector<char> inserted_;      // by b's value id
  std::vector<int32_t> partner_;    // by b's value id
};

// Aligns the names of `b` with `a`'s: for each of `b`'s, the index of `a`'s
// it is, or -1 (inserted). Each of `a`'s is the first of `b`'s after the
// previous match named as it exactly, or by a shifted name where no later
// one of `b`'s is named as it exactly (template_fold.h). nullopt, with
// `missing` set, when one of `a`'s stays unmatched.
std::optional<std::vector<int32_t>> Align(const std::vector<const std::string*>& b,
                                          const std::vector<const std::string*>& a,
                                          const FoldSpec& spec, std::string& missing) {
  std::vector<FoldNames> names;
  names.reserve(b.size());
  absl::flat_hash_map<std::string_view, int32_t> exact;
  for (size_t q = 0; q < b.size(); ++q) names.push_back(spec.NameInA(*b[q]));
  for (size_t q = 0; q < b.size(); ++q) {
    if (!names[q].exact.empty()) exact.emplace(names[q].exact, static_cast<int32_t>(q));
  }
  std::vector<int32_t> to_a(b.size(), -1);
  size_t ja = 0;
  for (size_t q = 0; q < b.size() && ja < a.size(); ++q) {
    const std::string& want = *a[ja];
    bool match = names[q].exact == want;
    if (!match && names[q].shifted == want) {
      auto it = exact.find(want);
      match = it == exact.end() || it->second < static_cast<int32_t>(q);
    }
    if (match) to_a[q] = static_cast<int32_t>(ja++);
  }
  if (ja != a.size()) {
    missing = *a[ja];
    return std::nullopt;
  }
  return to_a;
}

}  // namespace

StatusOr<TemplateFold> TemplateFold::Learn(const Function& fa, const Function& fb,
                                           const FoldSpec& spec) {
  Matcher m(fa, fb, spec);
  TemplateFold f;
  f.num_params_ = fb.num_params();
  f.num_values_ = fb.num_values();

  // Parameters, ops (by their first result) and returned values: `a`'s
  // among `b`'s (Align); the others are inserted.
  std::string missing;
  auto align = [&](const std::vector<const std::string*>& nb,
                   const std::vector<const std::string*>& na,
                   const char* what) -> StatusOr<std::vector<int32_t>> {
    std::optional<std::vector<int32_t>> to_a = Align(nb, na, spec, missing);
    if (!to_a.has_value())
      return FailedPrecondition() << what << " %" << missing
                                  << " has no counterpart in the larger template";
    return std::move(*to_a);
  };
  std::vector<const std::string*> nb, na;
  for (const auto& p : fb.params()) nb.push_back(&p->name());
  for (const auto& p : fa.params()) na.push_back(&p->name());
  DISTIR_ASSIGN_OR_RETURN(const std::vector<int32_t> params, align(nb, na, "parameter"));
  f.param_inserted_.assign(static_cast<size_t>(fb.num_params()), 0);
  for (int i = 0; i < fb.num_params(); ++i) {
    const Value& p = *fb.param(i);
    const int32_t j = params[static_cast<size_t>(i)];
    if (j < 0) {
      f.param_inserted_[static_cast<size_t>(i)] = 1;
      m.Insert(p);
      continue;
    }
    const Value& q = *fa.param(j);
    if (!spec.SameType(p.type(), q.type()) || !SameSharding(p, q))
      return FailedPrecondition() << "parameter %" << p.name() << " differs from %" << q.name();
    m.Bind(p, q);
  }

  const size_t num_ops = fb.ops().size();
  nb.clear();
  na.clear();
  for (const auto& op : fb.ops()) {
    if (op->num_results() == 0) return FailedPrecondition() << "an op without results";
    nb.push_back(&op->result(0)->name());
  }
  for (const auto& op : fa.ops()) {
    if (op->num_results() == 0) return FailedPrecondition() << "an op without results";
    na.push_back(&op->result(0)->name());
  }
  DISTIR_ASSIGN_OR_RETURN(const std::vector<int32_t> ops, align(nb, na, "op"));
  f.op_inserted_.assign(num_ops, 0);
  f.op_phase_.resize(num_ops);
  f.kinds_.reserve(num_ops);
  f.input_begin_.reserve(num_ops + 1);
  f.input_begin_.push_back(0);
  for (size_t k = 0; k < num_ops; ++k) {
    const Op& op = *fb.ops()[k];
    f.op_phase_[k] = PhaseOf(op);
    f.kinds_.push_back(static_cast<int32_t>(op.kind()));
    for (const Value* v : op.inputs()) f.inputs_.push_back(v->id());
    f.input_begin_.push_back(static_cast<int32_t>(f.inputs_.size()));
    if (ops[k] >= 0) {
      DISTIR_RETURN_IF_ERROR(m.Match(op, *fa.ops()[static_cast<size_t>(ops[k])]));
      continue;
    }
    // Without tasks the backward runs could not be told apart.
    if (f.op_phase_[k] < 0)
      return FailedPrecondition() << "op %" << op.result(0)->name() << " has no task";
    f.op_inserted_[k] = 1;
    for (const auto& r : op.results()) m.Insert(*r);
  }

  nb.clear();
  na.clear();
  for (const Value* v : fb.returns()) nb.push_back(&v->name());
  for (const Value* v : fa.returns()) na.push_back(&v->name());
  DISTIR_ASSIGN_OR_RETURN(const std::vector<int32_t> returns, align(nb, na, "returned value"));
  f.return_inserted_.assign(fb.returns().size(), 0);
  for (size_t i = 0; i < fb.returns().size(); ++i) {
    if (returns[i] < 0) {
      f.return_inserted_[i] = 1;
      continue;
    }
    DISTIR_RETURN_IF_ERROR(
        m.Read(*fb.returns()[i], *fa.returns()[static_cast<size_t>(returns[i])], "return"));
  }

  f.value_inserted_ = m.TakeInserted();
  f.partner_ = m.TakePartners();
  // A chain counts its copies from the last where its Y is a backward op's.
  f.descending_.assign(static_cast<size_t>(fb.num_values()), 0);
  for (const auto& op : fb.ops()) {
    if (PhaseOf(*op) != static_cast<int8_t>(TaskPhase::kBackward)) continue;
    for (const auto& r : op->results()) {
      const auto y = static_cast<size_t>(r->id());
      if (f.value_inserted_[y] == 0 || f.partner_[y] < 0) continue;
      f.descending_[y] = 1;
      f.descending_[static_cast<size_t>(f.partner_[y])] = 1;
    }
  }
  return f;
}

StatusOr<std::unique_ptr<Function>> TemplateFold::Write(const Function& fb,
                                                        const FoldWriter& writer,
                                                        const std::vector<double>& images,
                                                        std::vector<double>& written_images) const {
  const size_t num_ops = fb.ops().size();
  if (fb.num_params() != num_params_ || fb.num_values() != num_values_ ||
      num_ops != op_inserted_.size() || fb.returns().size() != return_inserted_.size())
    return FailedPrecondition() << "the template is not the one learned from";
  for (size_t k = 0; k < num_ops; ++k) {
    const Op& op = *fb.ops()[k];
    const auto begin = static_cast<size_t>(input_begin_[k]);
    if (static_cast<int32_t>(op.kind()) != kinds_[k] ||
        static_cast<size_t>(op.num_inputs()) != static_cast<size_t>(input_begin_[k + 1]) - begin)
      return FailedPrecondition() << "the template is not the one learned from";
    for (int i = 0; i < op.num_inputs(); ++i) {
      if (op.input(i)->id() != inputs_[begin + static_cast<size_t>(i)])
        return FailedPrecondition() << "the template is not the one learned from";
    }
  }

  const int copies = writer.copies();
  if (copies < 0) return FailedPrecondition() << "a fold writes no negative copies";
  const auto nv = static_cast<size_t>(num_values_);
  // Slot 0: the matched values; slot j: copy j of the inserted ones.
  std::vector<Value*> values((static_cast<size_t>(copies) + 1) * nv, nullptr);
  auto slot = [&](int j, int32_t id) -> Value*& {
    return values[static_cast<size_t>(j) * nv + static_cast<size_t>(id)];
  };
  const bool retypes = writer.Retypes();
  auto type_of = [&](const Type& t, int j) { return retypes ? writer.TypeOf(t, j) : t; };
  // The value copy j (0: a matched op) reads for `v`.
  auto read = [&](const Value& v, int j) -> Value* {
    const int32_t id = v.id();
    const auto i = static_cast<size_t>(id);
    if (value_inserted_[i] != 0) {
      if (j > 0) return slot(j, id);
      if (copies == 0) return slot(0, partner_[i]);       // no middle part: its X
      return slot(descending_[i] != 0 ? 1 : copies, id);  // the copy next to the reader
    }
    if (j > 0 && partner_[i] >= 0) {
      const int from = descending_[i] != 0 ? j + 1 : j - 1;
      if (from >= 1 && from <= copies) return slot(from, partner_[i]);
    }
    return slot(0, id);
  };

  auto fn = std::make_unique<Function>(fb.name());
  fn->set_loc(fb.loc());
  size_t inserted_ops = 0;
  for (char x : op_inserted_) inserted_ops += static_cast<size_t>(x);
  fn->Reserve(num_ops - inserted_ops + inserted_ops * static_cast<size_t>(copies),
              nv * static_cast<size_t>(copies + 1));
  written_images.clear();
  if (!images.empty()) written_images.reserve(fn->ops().capacity());

  // Parameters: each run of inserted ones once per copy, in order.
  for (int i = 0; i < fb.num_params();) {
    int end = i + 1;
    if (param_inserted_[static_cast<size_t>(i)] != 0) {
      while (end < fb.num_params() && param_inserted_[static_cast<size_t>(end)] != 0) ++end;
    }
    const bool inserted = param_inserted_[static_cast<size_t>(i)] != 0;
    for (int j = inserted ? 1 : 0; j <= (inserted ? copies : 0); ++j) {
      for (int q = i; q < end; ++q) {
        const Value& p = *fb.param(q);
        Value* v = fn->AddParam(writer.Name(p.name(), j), type_of(p.type(), j), p.loc());
        v->CopyShardingFrom(p);
        slot(j, p.id()) = v;
      }
    }
    i = end;
  }

  auto emit = [&](size_t k, int j) -> Status {
    const Op& op = *fb.ops()[k];
    std::vector<Value*> inputs;
    inputs.reserve(op.inputs().size());
    for (const Value* v : op.inputs()) {
      Value* x = read(*v, j);
      if (x == nullptr)
        return FailedPrecondition() << "%" << v->name() << " is read before it is written";
      inputs.push_back(x);
    }
    std::vector<std::string> names;
    names.reserve(op.results().size());
    for (const auto& r : op.results()) names.push_back(writer.Name(r->name(), j));
    Op* copy =
        fn->AddOp(op.kind(), std::move(inputs), retypes ? writer.Attrs(op.attrs(), j) : op.attrs(),
                  std::move(names), op.loc(), op.callee());
    for (int i = 0; i < op.num_results(); ++i) {
      const Value& r = *op.result(i);
      Value& c = *copy->result(i);
      c.set_type(type_of(r.type(), j));
      c.set_loc(r.loc());
      c.CopyShardingFrom(r);
      slot(j, r.id()) = &c;
    }
    if (!images.empty()) written_images.push_back(images[k]);
    return Status::Ok();
  };
  // Ops: each run of inserted ops of one phase once per copy, backward ones
  // from the last.
  for (size_t k = 0; k < num_ops;) {
    if (op_inserted_[k] == 0) {
      DISTIR_RETURN_IF_ERROR(emit(k, 0));
      ++k;
      continue;
    }
    // A run: consecutive inserted ops (the setup ops a stage's forward pass
    // holds among them); backward when it holds backward ops, which must
    // not be mixed with forward ones.
    size_t end = k;
    bool forward = false, backward = false;
    for (; end < num_ops && op_inserted_[end] != 0; ++end) {
      forward |= op_phase_[end] == static_cast<int8_t>(TaskPhase::kForward);
      backward |= op_phase_[end] == static_cast<int8_t>(TaskPhase::kBackward);
    }
    if (forward && backward)
      return FailedPrecondition()
             << "op %" << fb.ops()[k]->result(0)->name()
             << " starts forward and backward ops of the inserted part at once";
    for (int c = 1; c <= copies; ++c) {
      const int j = backward ? copies + 1 - c : c;
      for (size_t q = k; q < end; ++q) DISTIR_RETURN_IF_ERROR(emit(q, j));
    }
    k = end;
  }

  std::vector<Value*> returns;
  returns.reserve(fb.returns().size() + static_cast<size_t>(copies));
  for (size_t i = 0; i < fb.returns().size();) {
    size_t end = i + 1;
    const bool inserted = return_inserted_[i] != 0;
    if (inserted) {
      while (end < fb.returns().size() && return_inserted_[end] != 0) ++end;
    }
    for (int j = inserted ? 1 : 0; j <= (inserted ? copies : 0); ++j) {
      for (size_t q = i; q < end; ++q) {
        Value* v = read(*fb.returns()[q], j);
        if (v == nullptr) return FailedPrecondition() << "a returned value is never written";
        returns.push_back(v);
      }
    }
    i = end;
  }
  fn->SetReturns(std::move(returns), fb.return_loc());
  return fn;
}

}  // namespace distir::sharding
