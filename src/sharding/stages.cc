#include "sharding/stages.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "sharding/pipeline_task.h"

namespace distir::sharding {
namespace {

TaskTag TaskOf(const Op& op) { return GetTask(op).value_or(TaskTag{0, 0, TaskPhase::kForward}); }

// Layer of every weight (by value id; -1 for none) and the layer count.
// Without a pattern each forward op that reads new weights starts a layer;
// with one, the weights whose names match it form a layer per value of its
// first capture group, in order of first use, and other weights none.
int64_t FindLayers(const Function& fn, const std::vector<bool>& is_weight,
                   const std::optional<std::regex>& pattern, std::vector<int64_t>& layer) {
  layer.assign(fn.num_values(), -1);
  std::map<std::string, int64_t> by_key;
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
      if (!pattern.has_value()) {
        layer[v->id()] = layers;
        new_layer = true;
        continue;
      }
      std::smatch m;
      if (!std::regex_search(v->name(), m, *pattern)) continue;
      auto [it, added] = by_key.try_emplace(m.size() > 1 ? m[1].str() : m[0].str(), layers);
      layers += added ? 1 : 0;
      layer[v->id()] = it->second;
    }
    layers += new_layer ? 1 : 0;
  }
  return layers;
}

// Setup ops (they read parameters only) run on the stage of their first
// reader, so that a stage computes what it reads instead of receiving it.
void PlaceSetupOps(const Function& fn, std::vector<int64_t>& stage_of) {
  std::vector<int64_t> reader_stage(fn.num_values(), -1);
  for (auto it = fn.ops().rbegin(); it != fn.ops().rend(); ++it) {
    const Op& op = **it;
    if (TaskOf(op).phase == TaskPhase::kSetup) {
      int64_t s = -1;
      for (const auto& r : op.results()) {
        if (reader_stage[r->id()] >= 0) s = s < 0 ? reader_stage[r->id()] : std::min(s, reader_stage[r->id()]);
      }
      stage_of[static_cast<size_t>(op.id())] = std::max<int64_t>(s, 0);
    }
    for (const Value* v : op.inputs()) {
      int64_t& r = reader_stage[v->id()];
      const int64_t s = stage_of[static_cast<size_t>(op.id())];
      r = r < 0 ? s : std::min(r, s);
    }
  }
}

}  // namespace

int64_t StageOfLayer(int64_t layer, int64_t layers, int64_t stages) {
  const int64_t base = layers / stages, extra = layers % stages;
  // Stages 0 .. extra-1 hold base + 1 layers, the others base.
  if (layer < extra * (base + 1)) return layer / (base + 1);
  return extra + (layer - extra * (base + 1)) / std::max<int64_t>(base, 1);
}

Status AssignStages(Module& module, std::string function, int64_t stages,
                    const std::vector<std::string>& batch_params, const std::string& layer_pattern) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to pipeline";
  if (stages < 1) return InvalidArgument() << "pipeline stages must be >= 1, got " << stages;
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  std::vector<bool> is_weight(fn->num_values(), false);
  for (const auto& p : fn->params()) is_weight[p->id()] = batch.count(p->name()) == 0;
  std::optional<std::regex> pattern;
  if (!layer_pattern.empty()) {
    try {
      pattern.emplace(layer_pattern);
    } catch (const std::regex_error& e) {
      return InvalidArgument() << "layer pattern '" << layer_pattern << "' is not a regular expression: " << e.what();
    }
  }
  std::vector<int64_t> layer;
  const int64_t layers = FindLayers(*fn, is_weight, pattern, layer);
  if (stages > layers)
    return InvalidArgument() << "P = " << stages << " pipeline stages, but @" << function
                             << " has " << layers
                             << " layers (forward ops that read a weight): at most one stage per layer";
  std::vector<int64_t> stage_of(fn->ops().size(), 0);
  // Setup values do not decide a reader's stage: they are placed after.
  auto producer_stage = [&](const Value* v) -> int64_t {
    if (v->def() == nullptr || TaskOf(*v->def()).phase == TaskPhase::kSetup) return -1;
    return stage_of[static_cast<size_t>(v->def()->id())];
  };
  for (const auto& op : fn->ops()) {
    TaskTag t = TaskOf(*op);
    if (t.phase == TaskPhase::kSetup) continue;
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
    bool forward_like = t.phase == TaskPhase::kForward;
    if (s < 0) s = forward_like ? latest : (latest_fwd >= 0 ? latest_fwd : earliest);
    s = std::max<int64_t>(s, 0);
    stage_of[static_cast<size_t>(op->id())] = s;
  }
  PlaceSetupOps(*fn, stage_of);
  for (const auto& op : fn->ops()) {
    TaskTag t = TaskOf(*op);
    t.stage = stage_of[static_cast<size_t>(op->id())];
    SetTask(*op, t);
  }
  return Status::Ok();
}

}  // namespace distir::sharding
