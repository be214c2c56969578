#include "sharding/stages.h"

#include <algorithm>
#include <map>
#include <set>

#include "sharding/pipeline_task.h"

namespace distir::sharding {
namespace {

TaskTag TaskOf(const Op& op) { return GetTask(op).value_or(TaskTag{0, 0, TaskPhase::kForward}); }

// Layer of every weight (by value id; -1 for none) and the layer count.
int64_t FindLayers(const Function& fn, const std::vector<bool>& is_weight,
                   std::vector<int64_t>& layer) {
  layer.assign(fn.num_values(), -1);
  int64_t layers = 0;
  int64_t first_mb = -1;
  for (const auto& op : fn.ops()) {
    TaskTag t = TaskOf(*op);
    if (t.phase != TaskPhase::kForward) continue;
    if (first_mb < 0) first_mb = t.microbatch;
    if (t.microbatch != first_mb) continue;
    bool new_layer = false;
    for (const Value* v : op->inputs()) {
      if (!is_weight[v->id()] || layer[v->id()] >= 0) continue;
      layer[v->id()] = layers;
      new_layer = true;
    }
    layers += new_layer ? 1 : 0;
  }
  return layers;
}

}  // namespace

int64_t StageOfLayer(int64_t layer, int64_t layers, int64_t stages) {
  const int64_t base = layers / stages, extra = layers % stages;
  // Stages 0 .. extra-1 hold base + 1 layers, the others base.
  if (layer < extra * (base + 1)) return layer / (base + 1);
  return extra + (layer - extra * (base + 1)) / std::max<int64_t>(base, 1);
}

Status AssignStages(Module& module, std::string function, int64_t stages,
                    const std::vector<std::string>& batch_params) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to pipeline";
  if (stages < 1) return InvalidArgument() << "pipeline stages must be >= 1, got " << stages;
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  std::vector<bool> is_weight(fn->num_values(), false);
  for (const auto& p : fn->params()) is_weight[p->id()] = batch.count(p->name()) == 0;
  std::vector<int64_t> layer;
  const int64_t layers = FindLayers(*fn, is_weight, layer);
  if (stages > layers)
    return InvalidArgument() << "P = " << stages << " pipeline stages, but @" << function
                             << " has " << layers
                             << " layers (forward ops that read a weight): at most one stage per layer";
  std::vector<int64_t> stage_of(fn->ops().size(), 0);
  auto producer_stage = [&](const Value* v) -> int64_t {
    return v->def() == nullptr ? -1 : stage_of[static_cast<size_t>(v->def()->id())];
  };
  for (const auto& op : fn->ops()) {
    TaskTag t = TaskOf(*op);
    int64_t from_weights = -1, latest = -1, latest_fwd = -1, earliest = -1;
    for (const Value* v : op->inputs()) {
      if (layer[v->id()] >= 0)
        from_weights = std::max(from_weights, StageOfLayer(layer[v->id()], layers, stages));
      int64_t s = producer_stage(v);
      if (s < 0) continue;
      latest = std::max(latest, s);
      earliest = earliest < 0 ? s : std::min(earliest, s);
      if (TaskOf(*v->def()).phase == TaskPhase::kForward) latest_fwd = std::max(latest_fwd, s);
    }
    int64_t s = from_weights;
    bool forward_like = t.phase == TaskPhase::kForward || t.phase == TaskPhase::kSetup;
    if (s < 0) s = forward_like ? latest : (latest_fwd >= 0 ? latest_fwd : earliest);
    s = std::max<int64_t>(s, 0);
    stage_of[static_cast<size_t>(op->id())] = s;
    t.stage = s;
    SetTask(*op, t);
  }
  return Status::Ok();
}

}  // namespace distir::sharding
