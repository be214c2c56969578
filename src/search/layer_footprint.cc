#include "search/layer_footprint.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "ir/op_alias.h"
#include "models/transformer_metrics.h"
#include "sharding/microbatch.h"

namespace distir::search {
namespace {

// The walk over `seq` that LayerFootprintOf summarises; per value and op id.
class FootprintWalk {
 public:
  FootprintWalk(const Function& fn, std::vector<bool> forward)
      : fn_(fn), forward_(std::move(forward)) {}

  // Layers of the weights: the parameters (not batch inputs) that forward
  // ops read and the pattern matches, numbered by the capture group in order
  // of first use (sharding/stages.cc FindLayers).
  void WeightLayers(const std::set<std::string>& batch, const std::regex& pattern) {
    const auto nv = static_cast<size_t>(fn_.num_values());
    is_weight_.assign(nv, false);
    weight_layer_.assign(nv, -1);
    for (const auto& p : fn_.params())
      is_weight_[static_cast<size_t>(p->id())] = batch.count(p->name()) == 0;
    std::map<std::string, int64_t> by_key;
    for (const auto& op : fn_.ops()) {
      if (!forward_[static_cast<size_t>(op->id())]) continue;
      for (const Value* v : op->inputs()) {
        const auto u = static_cast<size_t>(v->id());
        if (!is_weight_[u] || weight_layer_[u] >= 0) continue;
        std::smatch m;
        if (!std::regex_search(v->name(), m, pattern)) continue;
        auto [it, added] = by_key.try_emplace(m.size() > 1 ? m[1].str() : m[0].str(),
                                              static_cast<int64_t>(by_key.size()));
        weight_layer_[u] = it->second;
      }
    }
    layers_ = static_cast<int64_t>(by_key.size());
    key_of_layer_.assign(static_cast<size_t>(layers_), "");
    for (const auto& [key, layer] : by_key) key_of_layer_[static_cast<size_t>(layer)] = key;
  }

  // The layer of each forward op (sharding/stages.h ForwardLayers' rule).
  void ForwardLayers() {
    op_layer_.assign(fn_.ops().size(), -1);
    for (const auto& op : fn_.ops()) {
      if (!forward_[static_cast<size_t>(op->id())]) continue;
      int64_t from_weights = -1, latest = -1;
      bool reads_weight = false;
      for (const Value* v : op->inputs()) {
        from_weights = std::max(from_weights, weight_layer_[static_cast<size_t>(v->id())]);
        reads_weight = reads_weight || is_weight_[static_cast<size_t>(v->id())];
        if (v->def() != nullptr) latest = std::max(latest, LayerOfValue(*v));
      }
      op_layer_[static_cast<size_t>(op->id())] = from_weights >= 0 ? from_weights
                                                 : reads_weight    ? -1
                                                                   : latest;
    }
  }

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
    saved.assign(static_cast<size_t>(layers_), 0.0);
    unmarked.assign(static_cast<size_t>(layers_), 0.0);
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

  int64_t layers() const { return layers_; }
  const std::vector<std::string>& key_of_layer() const { return key_of_layer_; }

 private:
  // The layer of a forward op's result; -1 for any other value.
  int64_t LayerOfValue(const Value& v) const {
    return v.def() != nullptr ? op_layer_[static_cast<size_t>(v.def()->id())] : -1;
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
      from_weights = std::max(from_weights, weight_layer_[static_cast<size_t>(v->id())]);
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
  std::vector<bool> forward_, backward_, is_weight_;
  std::vector<int64_t> weight_layer_, op_layer_;
  std::vector<int32_t> root_;
  int64_t layers_ = 0;
  std::vector<std::string> key_of_layer_;
  mutable std::vector<const Value*> values_;
};

double LeastOf(const std::vector<double>& per_layer) {
  return per_layer.empty() ? 0.0 : *std::min_element(per_layer.begin(), per_layer.end());
}

}  // namespace

StatusOr<LayerFootprint> LayerFootprintOf(const Function& seq,
                                          const std::vector<std::string>& batch_params,
                                          const std::string& layer_pattern) {
  std::optional<std::regex> pattern;
  try {
    pattern.emplace(layer_pattern);
  } catch (const std::regex_error& e) {
    return InvalidArgument() << "layer pattern '" << layer_pattern << "': " << e.what();
  }
  DISTIR_ASSIGN_OR_RETURN(std::vector<bool> forward, sharding::ForwardOps(seq, batch_params));
  const std::set<std::string> batch(batch_params.begin(), batch_params.end());
  FootprintWalk walk(seq, std::move(forward));
  walk.WeightLayers(batch, *pattern);
  if (walk.layers() == 0)
    return InvalidArgument() << "@" << seq.name() << ": no weight matches the layer pattern '"
                             << layer_pattern << "'";
  walk.ForwardLayers();
  walk.BackwardOps(batch);
  walk.Roots();
  LayerFootprint f;
  f.layers = walk.layers();
  for (const auto& p : seq.params()) {
    if (batch.count(p->name()) != 0 && p->type().rank() >= 1 && f.batch == 0)
      f.batch = p->type().shape()[0];
  }
  std::vector<double> saved, unmarked;
  walk.Saved(saved, unmarked);
  f.saved = LeastOf(saved);
  f.saved_selective = LeastOf(unmarked);
  // Parameters by layer: the weights' and their optimizer state's (named
  // after the weight: `<w>.master`, `<w>.exp_avg`, ...), grouped by the same
  // capture. The optimizer runs on its weight's stage (it reads the weight's
  // gradient, computed there), so the state lives there too.
  std::map<std::string, size_t> layer_of_key;
  for (size_t l = 0; l < walk.key_of_layer().size(); ++l) layer_of_key[walk.key_of_layer()[l]] = l;
  std::vector<double> weights(static_cast<size_t>(f.layers), 0.0),
      state(static_cast<size_t>(f.layers), 0.0);
  for (const auto& p : seq.params()) {
    std::smatch m;
    if (!p->type().HasStaticShape() || !std::regex_search(p->name(), m, *pattern)) continue;
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
