#include "search/layer_footprint.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "ir/op_alias.h"
#include "models/transformer_metrics.h"
#include "sharding/microbatch.h"
#include "sharding/stages.h"

namespace distir::search {
namespace {

// The walk over `seq` that LayerFootprintOf summarises; per value and op id.
// The layers of its weights and forward ops are the stage assignment's
// (sharding/stages.h LayersOfForwardOps).
class FootprintWalk {
 public:
  FootprintWalk(const Function& fn, std::vector<bool> forward,
                const sharding::ProgramLayers& layers)
      : fn_(fn), forward_(std::move(forward)), layers_(layers) {}

  // Backward ops: those that depend on a batch input, neither forward nor
  // update (an optimizer op, or an op reading an update op's result).
  void BackwardOps(const std::set<std::string>& batch) {
    const auto nv = static_cast<size_t>(fn_.num_values());
    std::vector<char> from_batch(nv, 0), updated(nv, 0);
    for (const auto& p : fn_.params())
      from_batch[static_cast<size_t>(p->id())] = batch.count(p->name()) != 0;
    backward_.assign(fn_.ops().size(), false);
    for (const auto& op : fn_.ops()) {
      bool depends = false, update = op->kind() == OpKind::kAdam || op->kind() == OpKind::kSGD;
      for (const Value* v : op->inputs()) {
        depends = depends || from_batch[static_cast<size_t>(v->id())] != 0;
        update = update || updated[static_cast<size_t>(v->id())] != 0;
      }
      for (const auto& r : op->results()) {
        from_batch[static_cast<size_t>(r->id())] = depends;
        updated[static_cast<size_t>(r->id())] = update;
      }
      backward_[static_cast<size_t>(op->id())] =
          depends && !update && !forward_[static_cast<size_t>(op->id())];
    }
  }

  // Each value's buffer: the value that allocates it (ir/op_alias.h).
  void Roots() {
    root_.assign(static_cast<size_t>(fn_.num_values()), -1);
    for (const auto& p : fn_.params()) root_[static_cast<size_t>(p->id())] = p->id();
    for (const auto& op : fn_.ops()) {
      for (int r = 0; r < op->num_results(); ++r) {
        const int a = AliasedInput(*op, r);
        const int32_t id = op->result(r)->id();
        root_[static_cast<size_t>(id)] =
            a >= 0 && a < op->num_inputs() ? root_[static_cast<size_t>(op->input(a)->id())] : id;
      }
    }
  }

  // The saved buffers of each layer, all and those no marked op writes.
  void Saved(std::vector<double>& saved, std::vector<double>& unmarked) const {
    saved.assign(static_cast<size_t>(layers_.count), 0.0);
    unmarked.assign(static_cast<size_t>(layers_.count), 0.0);
    std::set<int32_t> counted;
    for (const auto& op : fn_.ops()) {
      if (!backward_[static_cast<size_t>(op->id())]) continue;
      const int64_t layer = ReaderLayer(*op);
      if (layer < 0) continue;
      for (const Value* v : op->inputs()) {
        if (v->def() == nullptr || LayerOfValue(*v) != layer) continue;
        const int32_t root = root_[static_cast<size_t>(v->id())];
        const Value* buffer = ValueById(root);
        if (buffer == nullptr || buffer->def() == nullptr || LayerOfValue(*buffer) != layer ||
            !buffer->type().HasStaticShape() || !counted.insert(root).second)
          continue;
        const auto bytes = static_cast<double>(buffer->type().SizeInBytes());
        saved[static_cast<size_t>(layer)] += bytes;
        if (buffer->def()->GetInt("recompute", 0) == 0)
          unmarked[static_cast<size_t>(layer)] += bytes;
      }
    }
  }

 private:
  // The layer of a forward op's result; -1 for any other value.
  int64_t LayerOfValue(const Value& v) const {
    return v.def() != nullptr ? layers_.of_op[static_cast<size_t>(v.def()->id())] : -1;
  }

  // The layer whose stage the stage assignment gives backward op `op`: that
  // of the latest layer's weight it reads, else that of its forward
  // operands when they are all of one layer's forward ops; -1 when it
  // cannot be told (an operand of the embedding or the head, whose stages
  // are not a layer's).
  int64_t ReaderLayer(const Op& op) const {
    int64_t from_weights = -1, forward_layer = -1;
    bool outside = false;
    for (const Value* v : op.inputs()) {
      from_weights = std::max(from_weights, layers_.of_weight[static_cast<size_t>(v->id())]);
      if (v->def() == nullptr || !forward_[static_cast<size_t>(v->def()->id())]) continue;
      const int64_t l = LayerOfValue(*v);
      if (l < 0 || (forward_layer >= 0 && l != forward_layer)) outside = true;
      forward_layer = std::max(forward_layer, l);
    }
    if (from_weights >= 0) return from_weights;
    return outside ? -1 : forward_layer;
  }

  const Value* ValueById(int32_t id) const {
    if (values_.empty()) {
      values_.assign(static_cast<size_t>(fn_.num_values()), nullptr);
      for (const auto& p : fn_.params()) values_[static_cast<size_t>(p->id())] = p.get();
      for (const auto& op : fn_.ops())
        for (const auto& r : op->results()) values_[static_cast<size_t>(r->id())] = r.get();
    }
    return id >= 0 ? values_[static_cast<size_t>(id)] : nullptr;
  }

  const Function& fn_;
  std::vector<bool> forward_, backward_;
  const sharding::ProgramLayers& layers_;
  std::vector<int32_t> root_;
  mutable std::vector<const Value*> values_;
};

double LeastOf(const std::vector<double>& per_layer) {
  return per_layer.empty() ? 0.0 : *std::min_element(per_layer.begin(), per_layer.end());
}

}  // namespace

StatusOr<LayerFootprint> LayerFootprintOf(const Function& seq,
                                          const std::vector<std::string>& batch_params,
                                          const std::string& layer_pattern) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<bool> forward, sharding::ForwardOps(seq, batch_params));
  DISTIR_ASSIGN_OR_RETURN(sharding::ProgramLayers layers,
                          sharding::LayersOfForwardOps(seq, forward, batch_params, layer_pattern));
  if (layers.count == 0 || layer_pattern.empty())
    return InvalidArgument() << "@" << seq.name() << ": no weight matches the layer pattern '"
                             << layer_pattern << "'";
  const std::set<std::string> batch(batch_params.begin(), batch_params.end());
  FootprintWalk walk(seq, std::move(forward), layers);
  walk.BackwardOps(batch);
  walk.Roots();
  LayerFootprint f;
  f.layers = layers.count;
  for (const auto& p : seq.params()) {
    if (batch.count(p->name()) != 0 && p->type().rank() >= 1 && f.batch == 0)
      f.batch = p->type().shape()[0];
  }
  std::vector<double> saved, unmarked;
  walk.Saved(saved, unmarked);
  f.saved = LeastOf(saved);
  f.saved_selective = LeastOf(unmarked);
  // Parameters by layer: the weights' and their optimizer state's (named
  // after the weight: `<w>.master`, `<w>.exp_avg`, ...), grouped by the
  // pattern's capture as the weights are. The optimizer runs on its weight's
  // stage (it reads the weight's gradient, computed there), so the state
  // lives there too.
  const std::regex pattern(layer_pattern);  // a valid one: LayersOfForwardOps compiled it
  std::map<std::string, size_t> layer_of_key;
  for (size_t l = 0; l < layers.key.size(); ++l) layer_of_key[layers.key[l]] = l;
  std::vector<double> weights(static_cast<size_t>(f.layers), 0.0),
      state(static_cast<size_t>(f.layers), 0.0);
  for (const auto& p : seq.params()) {
    std::smatch m;
    if (!p->type().HasStaticShape() || !std::regex_search(p->name(), m, pattern)) continue;
    auto it = layer_of_key.find(m.size() > 1 ? m[1].str() : m[0].str());
    if (it == layer_of_key.end()) continue;
    const auto bytes = static_cast<double>(p->type().SizeInBytes());
    const TransformerValueRole role = ClassifyTransformerValue(*p);
    if (role == TransformerValueRole::kWeight) weights[it->second] += bytes;
    if (role == TransformerValueRole::kOptimizerState) state[it->second] += bytes;
  }
  f.weights = LeastOf(weights);
  f.optimizer_state = LeastOf(state);
  return f;
}

}  // namespace distir::search
