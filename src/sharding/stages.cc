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

// The forward ops of the first microbatch, by op index, as tagged.
std::vector<bool> FirstForwardOps(const Function& fn) {
  std::vector<bool> out(fn.ops().size(), false);
  int64_t first_mb = -1;
  for (size_t i = 0; i < fn.ops().size(); ++i) {
    TaskTag t = TaskOf(*fn.ops()[i]);
    if (t.phase != TaskPhase::kForward) continue;
    if (first_mb < 0) first_mb = t.microbatch;
    out[i] = t.microbatch == first_mb;
  }
  return out;
}

// Layer of every weight (by value id; -1 for none) and the layer count, from
// the ops `forward` marks (by op index). Without a pattern each such op that
// reads new weights starts a layer; with one, the weights whose names match it
// form a layer per value of its first capture group, in order of first use,
// and other weights none.
int64_t FindLayers(const Function& fn, const std::vector<bool>& forward,
                   const std::vector<bool>& is_weight, const std::optional<std::regex>& pattern,
                   std::vector<int64_t>& layer, std::vector<std::string>& keys) {
  layer.assign(fn.num_values(), -1);
  std::map<std::string, int64_t> by_key;
  int64_t layers = 0;
  for (size_t i = 0; i < fn.ops().size(); ++i) {
    if (!forward[i]) continue;
    const auto& op = fn.ops()[i];
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
      if (added) keys.push_back(it->first);
      layers += added ? 1 : 0;
      layer[v->id()] = it->second;
    }
    layers += new_layer ? 1 : 0;
  }
  return layers;
}

// Setup ops, and update ops that read parameters only (AdamW's decayed
// master copy), run on the stage of their first reader, so that a stage
// computes what it reads instead of receiving it.
void PlaceByReaders(const Function& fn, const std::vector<bool>& by_reader,
                    std::vector<int64_t>& stage_of) {
  std::vector<int64_t> reader_stage(fn.num_values(), -1);
  for (auto it = fn.ops().rbegin(); it != fn.ops().rend(); ++it) {
    const Op& op = **it;
    if (by_reader[static_cast<size_t>(op.id())]) {
      int64_t s = -1;
      for (const auto& r : op.results()) {
        if (reader_stage[r->id()] >= 0)
          s = s < 0 ? reader_stage[r->id()] : std::min(s, reader_stage[r->id()]);
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

// The weights' layers of `fn` (FindLayers) for AssignStages, ForwardLayers,
// CountLayers and LayersOfForwardOps. Errors: `forward` not one mark per op;
// a bad pattern.
struct WeightLayers {
  std::vector<bool> is_weight;  // by value id: a parameter that is not a batch input
  std::vector<int64_t> of_value;
  int64_t count = 0;
  std::vector<std::string> keys;  // per layer: its pattern capture (with a pattern)
};

StatusOr<WeightLayers> LayersOfWeights(const Function& fn, const std::vector<bool>& forward,
                                       const std::vector<std::string>& batch_params,
                                       const std::string& layer_pattern) {
  if (forward.size() != fn.ops().size())
    return InvalidArgument() << "@" << fn.name() << " has " << fn.ops().size()
                             << " ops, but the forward marks are " << forward.size();
  WeightLayers w;
  std::set<std::string> batch(batch_params.begin(), batch_params.end());
  w.is_weight.assign(fn.num_values(), false);
  for (const auto& p : fn.params()) w.is_weight[p->id()] = batch.count(p->name()) == 0;
  std::optional<std::regex> pattern;
  if (!layer_pattern.empty()) {
    try {
      pattern.emplace(layer_pattern);
    } catch (const std::regex_error& e) {
      return InvalidArgument() << "layer pattern '" << layer_pattern
                               << "' is not a regular expression: " << e.what();
    }
  }
  w.count = FindLayers(fn, forward, w.is_weight, pattern, w.of_value, w.keys);
  return w;
}

}  // namespace

Status CheckStageChunks(const std::string& function, int64_t layers, int64_t stages,
                        int64_t chunks) {
  if (chunks == 1 && stages > layers)
    return InvalidArgument()
           << "P = " << stages << " pipeline stages, but @" << function << " has " << layers
           << " layers (forward ops that read a weight): at most one stage per layer";
  if (chunks > 1 && (layers == 0 || layers % (stages * chunks) != 0))
    return InvalidArgument() << "L = " << layers << " layers of @" << function
                             << " do not divide into P x v = " << stages << " x " << chunks
                             << " model chunks of equal length (interleaved schedule)";
  return Status::Ok();
}

StatusOr<int64_t> CountLayers(const Function& fn, const std::vector<bool>& forward,
                              const std::vector<std::string>& batch_params,
                              const std::string& layer_pattern) {
  DISTIR_ASSIGN_OR_RETURN(WeightLayers w,
                          LayersOfWeights(fn, forward, batch_params, layer_pattern));
  return w.count;
}

int64_t StageOfLayer(int64_t layer, int64_t layers, int64_t stages) {
  const int64_t base = layers / stages, extra = layers % stages;
  // Stages 0 .. extra-1 hold base + 1 layers, the others base.
  if (layer < extra * (base + 1)) return layer / (base + 1);
  return extra + (layer - extra * (base + 1)) / std::max<int64_t>(base, 1);
}

namespace {

// ForwardLayers' rule over the ops `is_forward` marks (by op index): the
// latest layer of the weights an op reads, -1 when it reads only weights of
// no layer, else the latest layer of its operands' producers.
std::vector<int64_t> LayersOfOps(const Function& fn, const WeightLayers& w,
                                 const std::vector<bool>& is_forward) {
  std::vector<int64_t> of_op(fn.ops().size(), -1);
  std::vector<int64_t> of_value(fn.num_values(), -1);
  for (const auto& op : fn.ops()) {
    if (!is_forward[static_cast<size_t>(op->id())]) continue;
    int64_t from_weights = -1, latest = -1;
    bool reads_weight = false;
    for (const Value* v : op->inputs()) {
      from_weights = std::max(from_weights, w.of_value[v->id()]);
      reads_weight = reads_weight || w.is_weight[v->id()];
      if (v->def() != nullptr) latest = std::max(latest, of_value[v->id()]);
    }
    // An op that reads only weights of no layer is outside the layers.
    const int64_t layer = from_weights >= 0 ? from_weights : reads_weight ? -1 : latest;
    of_op[static_cast<size_t>(op->id())] = layer;
    for (const auto& r : op->results()) of_value[r->id()] = layer;
  }
  return of_op;
}

}  // namespace

StatusOr<std::vector<int64_t>> ForwardLayers(const Function& fn,
                                             const std::vector<std::string>& batch_params,
                                             const std::string& layer_pattern) {
  DISTIR_ASSIGN_OR_RETURN(WeightLayers w,
                          LayersOfWeights(fn, FirstForwardOps(fn), batch_params, layer_pattern));
  std::vector<bool> is_forward(fn.ops().size(), false);
  for (const auto& op : fn.ops())
    is_forward[static_cast<size_t>(op->id())] = TaskOf(*op).phase == TaskPhase::kForward;
  return LayersOfOps(fn, w, is_forward);
}

StatusOr<ProgramLayers> LayersOfForwardOps(const Function& fn, const std::vector<bool>& forward,
                                           const std::vector<std::string>& batch_params,
                                           const std::string& layer_pattern) {
  DISTIR_ASSIGN_OR_RETURN(WeightLayers w,
                          LayersOfWeights(fn, forward, batch_params, layer_pattern));
  ProgramLayers layers;
  layers.of_op = LayersOfOps(fn, w, forward);
  layers.count = w.count;
  layers.key = std::move(w.keys);
  layers.of_weight = std::move(w.of_value);
  return layers;
}

Status AssignStages(Module& module, std::string function, int64_t physical_stages,
                    const std::vector<std::string>& batch_params, const std::string& layer_pattern,
                    int64_t virtual_stages) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to pipeline";
  if (physical_stages < 1)
    return InvalidArgument() << "pipeline stages must be >= 1, got " << physical_stages;
  if (virtual_stages < 1)
    return InvalidArgument() << "model chunks per stage must be >= 1, got " << virtual_stages;
  DISTIR_ASSIGN_OR_RETURN(WeightLayers w,
                          LayersOfWeights(*fn, FirstForwardOps(*fn), batch_params, layer_pattern));
  const std::vector<int64_t>& layer = w.of_value;
  const int64_t layers = w.count;
  DISTIR_RETURN_IF_ERROR(CheckStageChunks(function, layers, physical_stages, virtual_stages));
  // From here on a stage is a model chunk (a virtual stage).
  const int64_t stages = physical_stages * virtual_stages;
  std::vector<int64_t> stage_of(fn->ops().size(), 0);
  // Ops computed from parameters alone (setup, and such update ops: AdamW's
  // decay of a master weight by a factor computed from the learning rate) do
  // not decide a reader's stage: they are placed after, on their readers'.
  std::vector<bool> by_reader(fn->ops().size(), false);
  for (const auto& op : fn->ops()) {
    const TaskPhase phase = TaskOf(*op).phase;
    const bool params_only =
        std::all_of(op->inputs().begin(), op->inputs().end(), [&](const Value* v) {
          return v->def() == nullptr || by_reader[static_cast<size_t>(v->def()->id())];
        });
    by_reader[static_cast<size_t>(op->id())] =
        phase == TaskPhase::kSetup || (phase == TaskPhase::kUpdate && params_only);
  }
  auto producer_stage = [&](const Value* v) -> int64_t {
    if (v->def() == nullptr || by_reader[static_cast<size_t>(v->def()->id())]) return -1;
    return stage_of[static_cast<size_t>(v->def()->id())];
  };
  for (const auto& op : fn->ops()) {
    TaskTag t = TaskOf(*op);
    if (by_reader[static_cast<size_t>(op->id())]) continue;
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
  PlaceByReaders(*fn, by_reader, stage_of);
  for (const auto& op : fn->ops()) {
    TaskTag t = TaskOf(*op);
    t.stage = stage_of[static_cast<size_t>(op->id())];
    SetTask(*op, t);
  }
  return Status::Ok();
}

}  // namespace distir::sharding
