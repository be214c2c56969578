#include "sharding/zero.h"

#include <algorithm>
#include <map>
#include <set>

#include "interp/infer_types.h"
#include "sharding/pipeline_task.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

// One optimizer op's weight: its layout and its layout split over dp.
struct WeightLayout {
  Sharding full;
  Sharding piece;
};

class ZeroAnnotator {
 public:
  ZeroAnnotator(const Function& fn, int stage, const Mesh& mesh, const std::string& axis)
      : fn_(fn), stage_(stage), mesh_(mesh), axis_(axis), b_(fn) {}

  std::unique_ptr<Function> Run();

 private:
  Sharding LayoutOf(const Value& v) const {
    return v.sharding() != nullptr ? *v.sharding()
                                   : Sharding::Replicated(mesh_.name(), v.type().rank());
  }
  Sharding Piece(Sharding s) const {
    s.dims[0].push_back(axis_);
    return s;
  }
  void FindWeights();
  // A Shard {for_users = 1} of `in` (a new value) to `to`.
  Value* Reshard(Value* in, const Sharding& to, const Op& at);
  void CloneReading(const Op& op, const std::map<int, Sharding>& reshard);

  const Function& fn_;
  int stage_;
  const Mesh& mesh_;
  std::string axis_;
  Rebuilder b_;
  std::map<int, WeightLayout> weights_;      // by weight value id
  std::map<int, Sharding> state_;            // optimizer state value id -> piece layout
  std::map<int, Sharding> gradient_;         // gradient term value id -> piece layout
  std::set<int> optimizers_;                 // op ids
  // Mixed precision: optimizer ops whose updated weight is a master copy that
  // is only cast to the compute weight; the cast ops and their weight's layout.
  std::set<int> mixed_;                      // op ids
  std::map<int, Sharding> casts_;            // cast op id -> the whole weight's layout
};

// The weight an optimizer updates, through what is applied to it before the
// update (AdamW's decay: Mul(master, factor)): its layout is the weight's own,
// a tensor-parallel split included.
const Value* UpdatedWeight(const Value* w) {
  while (w->def() != nullptr && w->def()->kind() == OpKind::kMul) w = w->def()->input(0);
  return w;
}

// The ops reading each value of `fn`, by value id.
std::vector<std::vector<const Op*>> UsersOf(const Function& fn) {
  std::vector<std::vector<const Op*>> users(static_cast<size_t>(fn.num_values()));
  for (const auto& op : fn.ops()) {
    for (const Value* in : op->inputs()) {
      auto& u = users[static_cast<size_t>(in->id())];
      if (u.empty() || u.back() != op.get()) u.push_back(op.get());
    }
  }
  return users;
}

// True when `users` are Casts, at least one: the readers of the master weight
// of mixed precision, which the step casts to the compute weight.
bool AllCasts(const std::vector<const Op*>& users) {
  return !users.empty() && std::all_of(users.begin(), users.end(), [](const Op* op) {
    return op->kind() == OpKind::kCast;
  });
}

void ZeroAnnotator::FindWeights() {
  const std::vector<std::vector<const Op*>> users = UsersOf(fn_);
  for (const auto& op : fn_.ops()) {
    if (!IsOptimizer(op->kind())) continue;
    optimizers_.insert(op->id());
    const Value& w = *op->input(0);
    const Value& root = *UpdatedWeight(&w);
    WeightLayout l{LayoutOf(root), Piece(LayoutOf(root))};
    for (int i = 2; i < op->num_inputs(); ++i) state_[op->input(i)->id()] = l.piece;
    // Megatron's distributed optimizer: the f32 master is optimizer state,
    // kept in pieces like the moments; the step all-gathers the compute-dtype
    // weight it casts the updated piece to, not the f32 master.
    const std::vector<const Op*>& readers = users[static_cast<size_t>(op->result(0)->id())];
    if (stage_ < 3 && AllCasts(readers) && root.is_param()) {
      mixed_.insert(op->id());
      state_[root.id()] = l.piece;
      for (const Op* c : readers) casts_[c->id()] = l.full;
    }
    // The gradient's terms: the microbatch pass's Add chain, newest term last.
    const Value* g = op->input(1);
    while (g->def() != nullptr && g->def()->kind() == OpKind::kAdd &&
           GetTask(*g->def()).value_or(TaskTag{}).microbatch >= 1) {
      gradient_[g->def()->input(1)->id()] = l.piece;
      g = g->def()->input(0);
    }
    gradient_[g->id()] = l.piece;
    weights_.emplace(w.id(), std::move(l));
  }
}

Value* ZeroAnnotator::Reshard(Value* in, const Sharding& to, const Op& at) {
  std::string base = in->name().empty() ? "zero" : in->name() + ".zero";
  return b_.Emit(OpKind::kShard, {in}, {{"sharding", Attribute(to)}, {"for_users", int64_t{1}}},
                 b_.Fresh(base), at.loc(), in->type(), nullptr);
}

// Clones `op` reading operand i through a reshard to reshard.at(i).
void ZeroAnnotator::CloneReading(const Op& op, const std::map<int, Sharding>& reshard) {
  std::vector<std::pair<const Value*, Value*>> kept;
  for (const auto& [i, to] : reshard) {
    const Value* in = op.input(i);
    kept.emplace_back(in, b_.Map(in));
    b_.Bind(in, Reshard(b_.Map(in), to, op));
  }
  b_.Clone(op);
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) b_.Bind(it->first, it->second);
}

std::unique_ptr<Function> ZeroAnnotator::Run() {
  FindWeights();
  for (const auto& p : fn_.params()) {
    Value* v = b_.Map(p.get());
    if (state_.count(p->id())) v->set_sharding(state_.at(p->id()));
    if (stage_ == 3 && weights_.count(p->id())) v->set_sharding(weights_.at(p->id()).piece);
  }
  for (const auto& op : fn_.ops()) {
    std::map<int, Sharding> reshard;
    if (optimizers_.count(op->id())) {
      const WeightLayout& l = weights_.at(op->input(0)->id());
      reshard[1] = l.piece;
      if (stage_ < 3) reshard[0] = l.piece;
      CloneReading(*op, reshard);
      // The step's updated weight, whole again (stages 1, 2); a master stays
      // in pieces and its casts are made whole below.
      if (stage_ < 3 && !mixed_.count(op->id()))
        b_.Bind(op->result(0), Reshard(b_.Map(op->result(0)), l.full, *op));
      continue;
    }
    if (auto cast = casts_.find(op->id()); cast != casts_.end()) {
      CloneReading(*op, {});
      b_.Bind(op->result(0), Reshard(b_.Map(op->result(0)), cast->second, *op));
      continue;
    }
    for (int i = 0; i < op->num_inputs(); ++i) {
      const int id = op->input(i)->id();
      if (stage_ >= 2 && op->kind() == OpKind::kAdd && gradient_.count(id))
        reshard[i] = gradient_.at(id);
      if (stage_ == 3 && weights_.count(id)) reshard[i] = weights_.at(id).full;
    }
    CloneReading(*op, reshard);
  }
  return b_.Finish();
}

}  // namespace

Status ApplyZero(Module& module, std::string function, int stage, const std::string& data_axis) {
  if (stage < 0 || stage > 3) return InvalidArgument() << "ZeRO stage " << stage << " is not 0, 1, 2 or 3";
  if (stage == 0) return Status::Ok();
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " for ZeRO";
  bool training = false;
  for (const auto& op : fn->ops()) training = training || IsOptimizer(op->kind());
  if (!training)
    return InvalidArgument() << "ZeRO applies to training; @" << function
                             << " has no optimizer op";
  const Mesh* mesh = nullptr;
  for (const auto& p : fn->params()) {
    if (p->sharding() != nullptr) mesh = module.LookupMesh(p->sharding()->mesh);
  }
  if (mesh == nullptr || mesh->AxisIndex(data_axis) < 0)
    return InvalidArgument() << "ZeRO partitions over data-parallel replicas and needs D > 1";
  // The layouts need every optimizer operand's rank: a program whose result
  // types were not written (distir opt on a sequential program) is typed first.
  const bool untyped = std::any_of(fn->ops().begin(), fn->ops().end(), [](const auto& op) {
    return IsOptimizer(op->kind()) &&
           std::any_of(op->inputs().begin(), op->inputs().end(),
                       [](const Value* v) { return !v->type().is_tensor(); });
  });
  if (untyped) {
    DISTIR_RETURN_IF_ERROR(InferTypes(module));
    fn = module.Lookup(function);
  }
  module.ReplaceFunction(ZeroAnnotator(*fn, stage, *mesh, data_axis).Run());
  return Status::Ok();
}

}  // namespace distir::sharding
