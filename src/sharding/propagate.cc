#include "sharding/propagate.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <set>

#include "interp/infer_types.h"
#include "sharding/factor_assignment.h"
#include "sharding/factor_rule.h"

namespace distir::sharding {
namespace {

// Strength of a value's sharding: 2 * priority (0 requirement, 1 hint), +1
// when inferred from such a source. Smaller is stronger.
constexpr int kUnset = INT_MAX;
bool IsInferred(int level) { return level != kUnset && (level & 1) != 0; }
int Inferred(int level) { return level == kUnset ? kUnset : (level | 1); }

struct ValueState {
  std::optional<Sharding> sharding;
  int level = kUnset;
  int64_t changed_at = 0;  // the Propagator's clock when `sharding` last changed
};

// Sharding `b` keeps everything `a` has: every dim's axes of `a` are a prefix
// of b's.
bool Extends(const Sharding& b, const Sharding& a) {
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (a.dims[d].size() > b.dims[d].size()) return false;
    if (!std::equal(a.dims[d].begin(), a.dims[d].end(), b.dims[d].begin())) return false;
  }
  return true;
}

class Propagator {
 public:
  Propagator(Module& module, Function& fn) : module_(module), fn_(fn) {}

  Status Run();

 private:
  Status Seed();
  Status SeedValue(const Value* v, const Sharding& s, int level, const SourceLoc& where);
  Status BuildRules();
  bool Sweep(bool pass_through_only);
  bool StaleSinceVisit(const Op& op) const;
  bool UpdateOp(const Op& op);
  bool Offer(const Value* v, const Sharding& s, int level);
  std::vector<TensorSource> Sources(const Op& op, const Mesh& mesh) const;
  const Mesh& OpMesh(const Op& op) const;
  const Mesh& MeshOf(const Sharding& s) const { return *module_.LookupMesh(s.mesh); }
  Status Finalize();
  Status FinalizeOp(Op& op, std::vector<Sharding>& wants);
  Status Rewrite(const std::vector<std::vector<Sharding>>& wants);

  Module& module_;
  Function& fn_;
  const Mesh* mesh_ = nullptr;  // the first mesh named: the default for unreached values
  std::vector<ValueState> state_;
  std::vector<SourceLoc> required_at_;  // by value id: where a requirement was stated
  std::vector<std::optional<FactorRule>> rules_;
  // Each accepted offer ticks the clock. UpdateOp(op) depends only on the
  // states of op's own tensors, so an op none of whose tensors changed since
  // its last visit began would offer nothing new: Sweep skips it. This keeps
  // the fixpoint and the visiting order of the plain sweeps, only cheaper.
  int64_t clock_ = 0;
  std::vector<int64_t> visited_at_;  // by op id: clock when its last visit began; -1 never
};

Status Propagator::SeedValue(const Value* v, const Sharding& s, int level,
                             const SourceLoc& where) {
  ValueState& st = state_[v->id()];
  if (st.level == level && !IsInferred(level) && st.sharding != s) {
    return InvalidArgument(where) << "irreconcilable sharding requirements on " << v->Ref() << ": "
                                  << s.ToString() << " here and " << st.sharding->ToString()
                                  << " at " << required_at_[v->id()].ToString();
  }
  if (level >= st.level) return Status::Ok();
  st.sharding = s;
  st.level = level;
  required_at_[v->id()] = where;
  return Status::Ok();
}

// The mesh every sharding of the function names; the requirements and hints.
Status Propagator::Seed() {
  state_.assign(fn_.num_values(), {});
  required_at_.assign(fn_.num_values(), {});
  auto use_mesh = [&](const Sharding& s) -> Status {
    const Mesh* m = module_.LookupMesh(s.mesh);
    if (m == nullptr) return InvalidArgument(s.loc) << "undeclared mesh @" << s.mesh;
    if (mesh_ == nullptr) mesh_ = m;
    return Status::Ok();
  };
  for (const auto& p : fn_.params()) {
    if (p->sharding() == nullptr) continue;
    DISTIR_RETURN_IF_ERROR(use_mesh(*p->sharding()));
    DISTIR_RETURN_IF_ERROR(SeedValue(p.get(), *p->sharding(), 0, p->sharding()->loc));
  }
  for (const auto& op : fn_.ops()) {
    if (op->kind() != OpKind::kShard) continue;
    const Sharding& s = op->FindAttr("sharding")->AsSharding();
    DISTIR_RETURN_IF_ERROR(use_mesh(s));
    int level = op->GetInt("hint", 0) != 0 ? 2 : 0;
    DISTIR_RETURN_IF_ERROR(SeedValue(op->result(0), s, level, s.loc));
    if (op->GetInt("for_users", 0) == 0)
      DISTIR_RETURN_IF_ERROR(SeedValue(op->input(0), s, level, s.loc));
  }
  return Status::Ok();
}

Status Propagator::BuildRules() {
  rules_.assign(fn_.ops().size(), std::nullopt);
  visited_at_.assign(fn_.ops().size(), -1);
  for (const auto& op : fn_.ops()) {
    DISTIR_ASSIGN_OR_RETURN(FactorRule rule, BuildFactorRule(*op));
    rules_[op->id()] = std::move(rule);
  }
  return Status::Ok();
}

// The mesh an op runs on: its annotation's (a Shard op), else that of its
// first tensor already laid out, results first; else the default. Values on
// other meshes reach it through an explicit Shard onto its mesh only.
const Mesh& Propagator::OpMesh(const Op& op) const {
  if (op.kind() == OpKind::kShard) return MeshOf(op.FindAttr("sharding")->AsSharding());
  for (const auto& r : op.results()) {
    if (state_[r->id()].sharding.has_value()) return MeshOf(*state_[r->id()].sharding);
  }
  for (const Value* v : op.inputs()) {
    if (state_[v->id()].sharding.has_value()) return MeshOf(*state_[v->id()].sharding);
  }
  return *mesh_;
}

std::vector<TensorSource> Propagator::Sources(const Op& op, const Mesh& mesh) const {
  const FactorRule& rule = *rules_[op.id()];
  std::vector<TensorSource> sources;
  auto add = [&](const Value* v, const TensorFactors& tf, bool is_result, bool shardable) {
    const ValueState& st = state_[v->id()];
    TensorSource src;
    src.factors = &tf;
    src.bytes = static_cast<double>(v->type().SizeInBytes());
    src.is_result = is_result;
    src.shardable = shardable;
    if (st.sharding.has_value() && st.sharding->mesh == mesh.name()) {
      src.sharding = &*st.sharding;
      src.level = st.level;
      src.required = !IsInferred(st.level);
    }
    sources.push_back(src);
  };
  for (int i = 0; i < op.num_inputs(); ++i)
    add(op.input(i), rule.operands[i], false, rule.shardable[i]);
  for (int r = 0; r < op.num_results(); ++r) add(op.result(r), rule.results[r], true, true);
  return sources;
}

bool Propagator::Offer(const Value* v, const Sharding& s, int level) {
  ValueState& st = state_[v->id()];
  if (level == kUnset) return false;
  if (st.sharding.has_value() && st.sharding->mesh != s.mesh) return false;  // another stage
  if (st.sharding.has_value()) {
    if (!IsInferred(st.level) || level > st.level) return false;
    if (level == st.level && (!Extends(s, *st.sharding) || s == *st.sharding)) return false;
  }
  st.sharding = s;
  st.level = level;
  st.changed_at = ++clock_;
  return true;
}

// Shard ops with for_users = 1 are reshard points: nothing flows across them.
bool Propagator::UpdateOp(const Op& op) {
  if (op.kind() == OpKind::kShard && op.GetInt("for_users", 0) != 0) return false;
  const FactorRule& rule = *rules_[op.id()];
  const Mesh& mesh = OpMesh(op);
  std::vector<TensorSource> sources = Sources(op, mesh);
  FactorAssignment fa = AssignFactors(rule, sources, mesh);
  if (fa.level == kUnset) return false;
  int level = Inferred(fa.level);
  bool changed = false;
  for (int i = 0; i < op.num_inputs(); ++i) {
    if (!rule.shardable[i]) continue;
    changed |= Offer(op.input(i), ImpliedSharding(rule, fa, rule.operands[i], mesh), level);
  }
  for (int r = 0; r < op.num_results(); ++r)
    changed |= Offer(op.result(r), ImpliedSharding(rule, fa, rule.results[r], mesh), level);
  return changed;
}

bool Propagator::StaleSinceVisit(const Op& op) const {
  int64_t since = visited_at_[op.id()];
  if (since < 0) return true;
  for (const Value* v : op.inputs()) {
    if (state_[v->id()].changed_at > since) return true;
  }
  for (const auto& r : op.results()) {
    if (state_[r->id()].changed_at > since) return true;
  }
  return false;
}

bool Propagator::Sweep(bool pass_through_only) {
  bool changed = false;
  auto visit = [&](const Op& op) {
    if (pass_through_only && !rules_[op.id()]->IsPassThrough()) return;
    if (!StaleSinceVisit(op)) return;
    visited_at_[op.id()] = clock_;
    changed |= UpdateOp(op);
  };
  for (const auto& op : fn_.ops()) visit(*op);
  for (auto it = fn_.ops().rbegin(); it != fn_.ops().rend(); ++it) visit(**it);
  return changed;
}

// In program order, each op's factors are fixed from the final shardings of
// its tensors; its results get what it produces, and `wants` what each of its
// operands must be.
Status Propagator::FinalizeOp(Op& op, std::vector<Sharding>& wants) {
  const FactorRule& rule = *rules_[op.id()];
  const Mesh& mesh = OpMesh(op);
  auto replicated = [&](const Value* v) {
    return Sharding::Replicated(mesh.name(), v->type().rank());
  };
  if (op.kind() == OpKind::kShard && op.GetInt("for_users", 0) != 0) {
    wants.push_back(*op.input(0)->sharding());  // the reshard happens at this op
    op.result(0)->set_sharding(op.FindAttr("sharding")->AsSharding());
    return Status::Ok();
  }
  std::vector<TensorSource> sources = Sources(op, mesh);
  FactorAssignment fa = AssignFactors(rule, sources, mesh);
  std::vector<Sharding> operand_partial(op.num_inputs());
  for (int i = 0; i < op.num_inputs(); ++i) {
    wants.push_back(rule.shardable[i] ? ImpliedSharding(rule, fa, rule.operands[i], mesh)
                                      : replicated(op.input(i)));
    // A partial operand on another mesh is reduced before it moves.
    if (rule.shardable[i] && op.input(i)->sharding()->mesh == mesh.name())
      operand_partial[i] = *op.input(i)->sharding();
  }
  DISTIR_ASSIGN_OR_RETURN(PartialFlowResult flow, FlowPartials(op, rule, fa, operand_partial));
  for (int i = 0; i < op.num_inputs(); ++i) {
    if (!flow.keep[i]) continue;
    wants[i].partial = operand_partial[i].partial;
    wants[i].partial_kind = operand_partial[i].partial_kind;
  }
  for (int r = 0; r < op.num_results(); ++r) {
    DISTIR_ASSIGN_OR_RETURN(Sharding s, ResultSharding(op, rule, fa, r, flow, mesh));
    op.result(r)->set_sharding(s);
  }
  return Status::Ok();
}

Status Propagator::Finalize() {
  // A parameter nothing reached is replicated on the mesh of its first reader.
  std::vector<const Mesh*> first_reader(fn_.num_values(), nullptr);
  for (const auto& op : fn_.ops()) {
    for (const Value* v : op->inputs()) {
      if (first_reader[v->id()] == nullptr) first_reader[v->id()] = &OpMesh(*op);
    }
  }
  for (const auto& p : fn_.params()) {
    const ValueState& st = state_[p->id()];
    const Mesh* m = first_reader[p->id()] != nullptr ? first_reader[p->id()] : mesh_;
    p->set_sharding(st.sharding.has_value() ? *st.sharding
                                            : Sharding::Replicated(m->name(), p->type().rank()));
    state_[p->id()].sharding = *p->sharding();
  }
  // Seeded results of ops are read back through Sources(); results get their
  // final value as their op is finalised, which happens before any use.
  std::vector<std::vector<Sharding>> wants(fn_.ops().size());
  for (const auto& op : fn_.ops()) {
    DISTIR_RETURN_IF_ERROR(FinalizeOp(*op, wants[op->id()]));
    for (const auto& r : op->results()) {
      state_[r->id()].sharding = *r->sharding();
    }
  }
  return Rewrite(wants);
}

// Puts a Shard {for_users = 1} op in front of every operand whose sharding
// differs from what its op wants. In place: the Shard ops are appended, the
// readers rewired, and one permutation moves each Shard op just before its
// first reader (rebuilding the function cost a tenth of a search).
Status Propagator::Rewrite(const std::vector<std::vector<Sharding>>& wants) {
  const size_t num_ops = fn_.ops().size();
  // One reshard per (value, layout), shared by every op that needs it
  // (SHARDING.md W12): a partial value read by two ops is reduced once.
  std::vector<std::vector<std::pair<Sharding, Value*>>> reshards(fn_.num_values());
  std::vector<std::vector<size_t>> inserted_before(num_ops);  // new op positions, by reader
  for (size_t pos = 0; pos < num_ops; ++pos) {
    Op& op = *fn_.ops()[pos];
    if (op.kind() == OpKind::kShard && op.GetInt("for_users", 0) != 0) continue;  // reshard point
    for (int i = 0; i < op.num_inputs(); ++i) {
      Value* in = op.input(i);
      const Sharding& want = wants[pos][i];
      if (*in->sharding() == want) continue;
      auto& cache = reshards[in->id()];
      auto hit = std::find_if(cache.begin(), cache.end(),
                              [&](const auto& entry) { return entry.first == want; });
      if (hit == cache.end()) {
        AttrMap attrs = {{"sharding", Attribute(want)}, {"for_users", Attribute(int64_t{1})}};
        Op* shard = fn_.AddOp(OpKind::kShard, {in}, std::move(attrs),
                              {fn_.UniqueName(in->name().empty() ? "v" : in->name())}, op.loc());
        shard->result(0)->set_type(in->type());
        shard->result(0)->set_sharding(want);
        inserted_before[pos].push_back(fn_.ops().size() - 1);
        hit = cache.emplace(cache.end(), want, shard->result(0));
      }
      op.set_input(i, hit->second);
    }
  }
  if (fn_.ops().size() == num_ops) return Status::Ok();
  std::vector<size_t> order;
  order.reserve(fn_.ops().size());
  for (size_t pos = 0; pos < num_ops; ++pos) {
    order.insert(order.end(), inserted_before[pos].begin(), inserted_before[pos].end());
    order.push_back(pos);
  }
  fn_.PermuteOps(order);
  return Status::Ok();
}

Status Propagator::Run() {
  DISTIR_RETURN_IF_ERROR(Seed());
  if (mesh_ == nullptr) return Status::Ok();
  DISTIR_RETURN_IF_ERROR(BuildRules());
  // Pass-through ops first (elementwise, transposes, reshapes), then all.
  // Shardings only grow and there are finitely many, so both loops end; the
  // cap is a guard against a bug, not a limit users meet.
  for (bool pass_through_only : {true, false}) {
    for (int round = 0; round < 1000 && Sweep(pass_through_only); ++round) {
    }
  }
  return Finalize();
}

}  // namespace

Status PropagateShardings(Module& module, std::string function) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to propagate";
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  for (const auto& op : fn->ops()) {
    for (const auto& r : op->results()) {
      if (r->type().is_unknown()) return Internal(op->loc()) << "type of " << r->Ref() << " unknown";
    }
  }
  return Propagator(module, *fn).Run();
}

}  // namespace distir::sharding
