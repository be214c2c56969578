#include "sharding/fold_layers.h"

#include <memory>
#include <string_view>
#include <utility>

namespace distir::sharding {
namespace {

std::string WithLayer(const std::string& name, const LayerRef& r, int64_t layer) {
  std::string out;
  out.reserve(name.size() + 4);
  out.append(name, 0, r.begin);
  out += std::to_string(layer);
  out.append(name, r.end, std::string::npos);
  return out;
}

// Names of the template of 3 C layers as the template of 2 C layers has
// them: chunk c's first and last layers (3c, 3c + 2) are its layers 2c and
// 2c + 1; the middle one (3c + 1) is inserted. But an op may carry the name
// of the next layer's value it lays out (a sequence-parallel all-gather of
// layer l + 1's input gradient runs in layer l's backward pass), so a name of
// the middle layer may also stand for the last layer's (`shifted`).
FoldNames LayerNamesInA(const std::string& name, std::string_view prefix) {
  const LayerRef r = LayerOf(name, prefix);
  if (r.layer < 0) return {name, ""};
  const int64_t chunk = r.layer / 3, at = r.layer % 3;
  if (at == 1) return {"", WithLayer(name, r, 2 * chunk + 1)};
  return {WithLayer(name, r, 2 * chunk + (at == 2 ? 1 : 0)), ""};
}

// Layers read and written by name (fold_layers.h).
class LayerSpec final : public FoldSpec {
 public:
  explicit LayerSpec(std::string_view prefix) : prefix_(prefix) {}
  FoldNames NameInA(const std::string& name) const override { return LayerNamesInA(name, prefix_); }

 private:
  std::string_view prefix_;
};

class LayerWriter final : public FoldWriter {
 public:
  LayerWriter(std::string_view prefix, int64_t n) : prefix_(prefix), n_(n) {}
  // The middle layer's copies: chunk c's layers are c n (first), c n + 1 ..
  // c n + n - 2 (copies 1 .. n - 2) and c n + n - 1 (last).
  int copies() const override { return static_cast<int>(n_ - 2); }
  std::string Name(const std::string& name, int j) const override {
    const LayerRef r = LayerOf(name, prefix_);
    if (r.layer < 0) return name;
    const int64_t chunk = r.layer / 3, at = r.layer % 3;
    // Matched: the first, the last, or (a middle layer's name) the second;
    // copy j: its own, or a neighbour's (at 0 or 2).
    const int64_t in_chunk = j == 0 ? (at == 0 ? 0 : at == 2 ? n_ - 1 : 1) : j + at - 1;
    return WithLayer(name, r, chunk * n_ + in_chunk);
  }

 private:
  std::string_view prefix_;
  int64_t n_;
};

}  // namespace

LayerRef LayerOf(std::string_view name, std::string_view prefix) {
  if (prefix.empty() || name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix)
    return {};
  size_t i = prefix.size();
  int64_t layer = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') {
    if (i - prefix.size() >= 9) return {};
    layer = layer * 10 + (name[i] - '0');
    ++i;
  }
  if (i == prefix.size() || i >= name.size() || name[i] != '.') return {};
  return {layer, prefix.size(), i};
}

std::string LayerNamePrefix(const std::string& layer_pattern) {
  // ^NAME\.([0-9]+)\.  with NAME of letters, digits, '_' and escaped dots.
  const std::string_view tail = "\\.([0-9]+)\\.";
  if (layer_pattern.size() <= tail.size() + 1 || layer_pattern[0] != '^' ||
      std::string_view(layer_pattern).substr(layer_pattern.size() - tail.size()) != tail)
    return "";
  std::string prefix;
  const std::string_view name =
      std::string_view(layer_pattern).substr(1, layer_pattern.size() - 1 - tail.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const char ch = name[i];
    if (ch == '\\' && i + 1 < name.size() && name[i + 1] == '.') {
      prefix += '.';
      ++i;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '_') {
      prefix += ch;
    } else {
      return "";
    }
  }
  return prefix.empty() ? "" : prefix + ".";
}

StatusOr<LayerFold> LayerFold::Learn(const GridTemplate& a, const GridTemplate& b,
                                     const std::string& prefix) {
  if (prefix.empty()) return FailedPrecondition() << "no layer names to fold by";
  if (a.local != b.local || a.keep_device != b.keep_device || a.part != b.part ||
      a.module.functions().size() != 1 || b.module.functions().size() != 1 ||
      a.module.meshes().size() != b.module.meshes().size())
    return FailedPrecondition() << "the templates differ in more than their layers";
  for (size_t i = 0; i < a.module.meshes().size(); ++i) {
    if (!(*a.module.meshes()[i] == *b.module.meshes()[i]))
      return FailedPrecondition() << "the templates' meshes differ";
  }
  for (const std::string& name : b.local) {
    if (LayerOf(name, prefix).layer >= 0)
      return FailedPrecondition() << "local parameter %" << name << " belongs to a layer";
  }
  LayerFold f;
  f.prefix_ = prefix;
  DISTIR_ASSIGN_OR_RETURN(
      f.fold_, TemplateFold::Learn(*a.module.entry(), *b.module.entry(), LayerSpec(f.prefix_)));
  return f;
}

StatusOr<GridTemplate> LayerFold::Write(const GridTemplate& b, int64_t n) const {
  if (n < 2) return FailedPrecondition() << "a fold writes two or more layers per chunk";
  if (n > 100000) return FailedPrecondition() << "too many layers per chunk";
  if (b.module.functions().size() != 1)
    return FailedPrecondition() << "the template is not the one learned from";
  GridTemplate out;
  out.local = b.local;
  out.keep_device = b.keep_device;
  out.part = b.part;
  for (const std::unique_ptr<Mesh>& mesh : b.module.meshes()) out.module.AddMesh(*mesh);
  DISTIR_ASSIGN_OR_RETURN(
      std::unique_ptr<Function> fn,
      fold_.Write(*b.module.entry(), LayerWriter(prefix_, n), b.op_images, out.op_images));
  out.module.AddFunction(std::move(fn));
  return out;
}

}  // namespace distir::sharding
