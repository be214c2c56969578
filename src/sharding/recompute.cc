#include "sharding/recompute.h"

#include <set>
#include <tuple>

#include "sharding/pipeline_task.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {
namespace {

class Recomputer {
 public:
  Recomputer(const Function& fn, const std::vector<int64_t>& forward_layers, bool selective)
      : fn_(fn),
        b_(fn),
        layer_(forward_layers),
        clone_(fn.num_values(), nullptr),
        kept_(fn.num_values(), false) {
    if (!layer_.empty()) KeepLayerInputs();
    if (selective) KeepUnmarked();
  }

  std::unique_ptr<Function> Run();

 private:
  // The forward value `v` recomputed for a backward op of (stage, microbatch)
  // `t`, or nullptr when `v` is not recomputed (kept from the forward task).
  // With `force`, a kept value too (a layer's output, rerun with its layer).
  Value* Recomputed(const Value* v, const TaskTag& t, bool force = false);
  // Marks the checkpoints of per-layer recomputation: the forward values that
  // a forward op of another layer reads, and every value of the ops outside
  // the layers (layer -1: embedding, final norm, output layer, loss), which
  // Megatron's checkpointed blocks do not cover.
  void KeepLayerInputs();
  // Selective recomputation: keeps the values of every op not marked
  // `recompute = 1`.
  void KeepUnmarked();
  // Reruns the rest of layer `layer` of (stage, microbatch) `t` once, as a
  // checkpointed block reruns its whole forward: its outputs are recomputed
  // (and dropped) though the backward reads only some of its values.
  void RerunLayer(int64_t layer, const TaskTag& t);
  int64_t LayerOf(const Op& op) const { return layer_[static_cast<size_t>(op.id())]; }

  const Function& fn_;
  Rebuilder b_;
  std::vector<int64_t> layer_;  // by old op id; empty: checkpoints per stage only
  std::vector<Value*> clone_;   // by old value id
  std::vector<bool> kept_;      // by old value id: a layer's input, a checkpoint
  std::vector<std::vector<const Value*>> outputs_;  // by layer: values kept for a later layer
  std::set<std::tuple<int64_t, int64_t, int64_t>> rerun_;  // (layer, stage, microbatch)
};

void Recomputer::KeepLayerInputs() {
  for (const auto& op : fn_.ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    if (!t.has_value() || t->phase != TaskPhase::kForward) continue;
    if (LayerOf(*op) < 0) {
      for (const auto& r : op->results()) kept_[r->id()] = true;
      continue;
    }
    for (const Value* v : op->inputs()) {
      if (v->def() == nullptr || kept_[v->id()] || LayerOf(*v->def()) == LayerOf(*op)) continue;
      kept_[v->id()] = true;
      if (LayerOf(*v->def()) < 0) continue;  // a setup value, or one outside the layers
      const auto layer = static_cast<size_t>(LayerOf(*v->def()));
      if (layer >= outputs_.size()) outputs_.resize(layer + 1);
      outputs_[layer].push_back(v);
    }
  }
}

void Recomputer::KeepUnmarked() {
  for (const auto& op : fn_.ops()) {
    if (op->GetInt("recompute", 0) != 0) continue;
    for (const auto& r : op->results()) kept_[r->id()] = true;
  }
}

void Recomputer::RerunLayer(int64_t layer, const TaskTag& t) {
  if (layer < 0 || !rerun_.emplace(layer, t.stage, t.microbatch).second) return;
  if (static_cast<size_t>(layer) >= outputs_.size()) return;
  for (const Value* out : outputs_[static_cast<size_t>(layer)]) Recomputed(out, t, /*force=*/true);
}

Value* Recomputer::Recomputed(const Value* v, const TaskTag& t, bool force) {
  if (v->def() == nullptr || (kept_[v->id()] && !force)) return nullptr;
  std::optional<TaskTag> p = GetTask(*v->def());
  if (!p.has_value() || p->phase != TaskPhase::kForward || p->stage != t.stage ||
      p->microbatch != t.microbatch)
    return nullptr;
  if (clone_[v->id()] != nullptr) return clone_[v->id()];
  const Op& op = *v->def();
  if (!layer_.empty()) RerunLayer(LayerOf(op), t);
  if (clone_[v->id()] != nullptr) return clone_[v->id()];  // the rerun made it
  std::vector<Value*> inputs;
  for (const Value* in : op.inputs()) {
    Value* rc = Recomputed(in, t);
    inputs.push_back(rc != nullptr ? rc : b_.Map(in));
  }
  std::vector<std::string> names;
  for (const auto& r : op.results())
    names.push_back(r->name().empty() ? r->name() : b_.Fresh(r->name() + ".rc"));
  Op* n = b_.out().AddOp(op.kind(), std::move(inputs), op.attrs(), std::move(names), op.loc());
  SetTask(*n, TaskTag{t.stage, t.microbatch, TaskPhase::kBackward});
  for (int i = 0; i < op.num_results(); ++i) {
    const Value& r = *op.result(i);
    n->result(i)->set_type(r.type());
    n->result(i)->CopyShardingFrom(r);
    clone_[r.id()] = n->result(i);
  }
  return clone_[v->id()];
}

std::unique_ptr<Function> Recomputer::Run() {
  for (const auto& op : fn_.ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    if (!t.has_value() || t->phase != TaskPhase::kBackward) {
      b_.Clone(*op);
      continue;
    }
    // Read the recomputed operands: bind them for the clone, then restore.
    std::vector<std::pair<const Value*, Value*>> kept;
    for (const Value* in : op->inputs()) {
      Value* rc = Recomputed(in, *t);
      if (rc == nullptr) continue;
      kept.emplace_back(in, b_.Map(in));
      b_.Bind(in, rc);
    }
    b_.Clone(*op);
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) b_.Bind(it->first, it->second);
  }
  return b_.Finish();
}

}  // namespace

Status RecomputeForward(Module& module, std::string function,
                        const std::vector<int64_t>& forward_layers, bool selective) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to recompute";
  if (!forward_layers.empty() && forward_layers.size() != fn->ops().size())
    return InvalidArgument() << "forward layers for " << forward_layers.size() << " ops of @"
                             << function << ", which has " << fn->ops().size();
  bool backward = false;
  for (const auto& op : fn->ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    backward = backward || (t.has_value() && t->phase == TaskPhase::kBackward);
  }
  if (!backward) return Status::Ok();
  module.ReplaceFunction(Recomputer(*fn, forward_layers, selective).Run());
  return Status::Ok();
}

}  // namespace distir::sharding
