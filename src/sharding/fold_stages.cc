#include "sharding/fold_stages.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sharding/fold_layers.h"
#include "sharding/pipeline_task.h"

namespace distir::sharding {
namespace {

// The stages per group of the larger built template (its two middle ones
// inserted) and of the smaller.
constexpr int64_t kFrom = 4;
constexpr int64_t kSmall = 2;

void AppendNumber(std::string& out, int64_t x) {
  char digits[24];
  const std::to_chars_result r = std::to_chars(digits, digits + sizeof digits, x);
  out.append(digits, r.ptr);
}

std::optional<int64_t> Digits(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int64_t x = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    x = x * 10 + (ch - '0');
  }
  return x;
}

// Where each group of `sizes` stages starts, and their sum last.
std::vector<int64_t> Starts(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts{0};
  for (int64_t n : sizes) starts.push_back(starts.back() + n);
  return starts;
}

// The first layer of each chunk (and their count last) of a pipeline of
// `sizes` stages per group, v chunks per stage, `layers[g]` per chunk of a
// stage of group g; chunk c = s + P k.
std::vector<int64_t> FirstLayers(const std::vector<int64_t>& sizes, int64_t chunks,
                                 const std::vector<int64_t>& layers) {
  std::vector<int64_t> per_stage;
  for (size_t g = 0; g < sizes.size(); ++g)
    per_stage.insert(per_stage.end(), static_cast<size_t>(sizes[g]), layers[g]);
  std::vector<int64_t> first{0};
  for (int64_t k = 0; k < chunks; ++k) {
    for (int64_t n : per_stage) first.push_back(first.back() + n);
  }
  return first;
}

// The larger built template's stages, chunks, layers and devices in a
// template of `to[g]` stages per group: copy j >= 1 of each group's middle
// stages, or (j = 0) the matched ops, whose middle stages are neighbours of
// the group's first (stage 1) or last (stage 2), or none (`exact`: learning,
// a name of the middle).
class StageRenamer {
 public:
  StageRenamer(const StageLayout& layout, std::vector<int64_t> to, int j, bool exact)
      : layout_(layout),
        to_(std::move(to)),
        starts_(Starts(to_)),
        from_first_(
            FirstLayers(std::vector<int64_t>(to_.size(), kFrom), layout.chunks, layout.layers)),
        to_first_(FirstLayers(to_, layout.chunks, layout.layers)),
        j_(j),
        exact_(exact) {}

  int64_t from_stages() const { return kFrom * static_cast<int64_t>(to_.size()); }
  int64_t to_stages() const { return starts_.back(); }

  int64_t Stage(int64_t s) const {
    const auto g = static_cast<size_t>(s / kFrom);
    const int64_t pos = s % kFrom, start = starts_[g], size = to_[g];
    if (j_ > 0) return start + 2 * (j_ - 1) + pos;
    if (pos == 0) return start;
    if (pos == kFrom - 1) return start + size - 1;
    if (exact_) return -1;
    return pos == 1 ? start + 1 : start + size - 2;
  }
  int64_t Chunk(int64_t c) const {
    const int64_t s = Stage(c % from_stages());
    return s < 0 ? -1 : s + to_stages() * (c / from_stages());
  }
  int64_t Layer(int64_t layer) const {
    auto it = std::upper_bound(from_first_.begin(), from_first_.end(), layer);
    if (it == from_first_.begin() || it == from_first_.end()) return -1;
    const auto c = static_cast<int64_t>(it - from_first_.begin()) - 1;
    const int64_t to = Chunk(c);
    if (to < 0) return -1;
    return to_first_[static_cast<size_t>(to)] + layer - from_first_[static_cast<size_t>(c)];
  }
  std::optional<DeviceId> Device(DeviceId d) const {
    if (!d.has_value()) return d;
    const int64_t id = d.value(), t = id % layout_.tp;
    const int64_t s = (id / layout_.tp) % from_stages();
    const int64_t replica = id / (layout_.tp * from_stages());
    const int64_t stage = Stage(s);
    if (stage < 0) return std::nullopt;
    return DeviceId(static_cast<int32_t>((replica * to_stages() + stage) * layout_.tp + t));
  }

  // A name's layer (after the prefix), its `s<k>` parts and its last part
  // `d<N>`; nullopt where one is a middle stage's and `exact`. One pass that
  // copies the text between the numbers it rewrites in runs (it renames every
  // name of every written copy: 2-4 % of a folded search, parsed part by
  // part).
  std::optional<std::string> Name(const std::string& name) const {
    std::string out;
    out.reserve(name.size() + 8);
    const size_t n = name.size();
    size_t begin = 0, flushed = 0;
    if (const LayerRef r = LayerOf(name, layout_.prefix); r.layer >= 0) {
      const int64_t l = Layer(r.layer);
      if (l < 0) return std::nullopt;
      out.append(name, 0, r.begin);
      AppendNumber(out, l);
      begin = flushed = r.end;
    }
    while (begin < n) {
      // The part from `begin` (a '.' but at the start) to `end`.
      const auto* dot =
          static_cast<const char*>(std::memchr(name.data() + begin + 1, '.', n - begin - 1));
      const size_t end = dot == nullptr ? n : static_cast<size_t>(dot - name.data());
      const size_t part = name[begin] == '.' ? begin + 1 : begin;
      const char first = end - part > 1 ? name[part] : '\0';
      if (first == 's' || (first == 'd' && end == n)) {
        if (const std::optional<int64_t> number =
                Digits(std::string_view(name).substr(part + 1, end - part - 1))) {
          out.append(name, flushed, part + 1 - flushed);
          if (first == 's') {
            const int64_t s = *number < from_stages() ? Stage(*number) : -1;
            if (s < 0) return std::nullopt;
            AppendNumber(out, s);
          } else {
            std::optional<DeviceId> d = Device(DeviceId(static_cast<int32_t>(*number)));
            if (!d.has_value()) return std::nullopt;
            AppendNumber(out, d->value());
          }
          flushed = end;
        }
      }
      begin = end;
    }
    out.append(name, flushed, n - flushed);
    return out;
  }

  std::optional<Type> TypeOf(const Type& t) const {
    if (t.is_tuple()) {
      std::vector<Type> elements;
      elements.reserve(t.elements().size());
      for (const Type& e : t.elements()) {
        std::optional<Type> x = TypeOf(e);
        if (!x.has_value()) return std::nullopt;
        elements.push_back(std::move(*x));
      }
      return Type::Tuple(std::move(elements));
    }
    if (!t.device().has_value()) return t;
    std::optional<DeviceId> d = Device(t.device());
    if (!d.has_value()) return std::nullopt;
    return t.WithDevice(*d);
  }

  std::optional<AttrMap> Attrs(const AttrMap& attrs) const {
    AttrMap out = attrs;
    for (auto& [name, attr] : out) {
      if (attr.type() == AttrType::kDevice) {
        std::optional<DeviceId> d = Device(attr.AsDevice());
        if (!d.has_value()) return std::nullopt;
        attr = Attribute(*d);
      } else if (attr.type() == AttrType::kDevices) {
        std::vector<DeviceId> devices = attr.AsDevices();
        for (DeviceId& d : devices) {
          std::optional<DeviceId> x = Device(d);
          if (!x.has_value()) return std::nullopt;
          d = *x;
        }
        attr = Attribute(std::move(devices));
      } else if (name == "task" && attr.type() == AttrType::kInts && attr.AsInts().size() == 3) {
        std::vector<int64_t> task = attr.AsInts();
        const int64_t c = Chunk(task[0]);
        if (c < 0) return std::nullopt;
        task[0] = c;
        attr = Attribute(std::move(task));
      }
    }
    return out;
  }

 private:
  const StageLayout& layout_;
  std::vector<int64_t> to_, starts_, from_first_, to_first_;
  int j_;
  bool exact_;
};

// Learning: the larger template read as the smaller.
class StageSpec final : public FoldSpec {
 public:
  explicit StageSpec(const StageLayout& layout)
      : exact_(layout, Small(layout), 0, true), shifted_(layout, Small(layout), 0, false) {}
  static std::vector<int64_t> Small(const StageLayout& layout) {
    return std::vector<int64_t>(layout.layers.size(), kSmall);
  }
  FoldNames NameInA(const std::string& name) const override {
    if (std::optional<std::string> exact = exact_.Name(name)) return {std::move(*exact), ""};
    std::optional<std::string> shifted = shifted_.Name(name);
    return {"", shifted.has_value() ? std::move(*shifted) : ""};
  }
  bool SameType(const Type& b, const Type& a) const override {
    std::optional<Type> t = shifted_.TypeOf(b);
    return t.has_value() && *t == a;
  }
  bool SameAttrs(const AttrMap& b, const AttrMap& a) const override {
    std::optional<AttrMap> x = shifted_.Attrs(b);
    return x.has_value() && *x == a;
  }

 private:
  StageRenamer exact_, shifted_;
};

class StageWriter final : public FoldWriter {
 public:
  StageWriter(const StageLayout& layout, const std::vector<int64_t>& stages)
      : copies_(static_cast<int>((stages.at(0) - 2) / 2)) {
    for (int j = 0; j <= copies_; ++j) renamers_.emplace_back(layout, stages, j, false);
  }
  int copies() const override { return copies_; }
  std::string Name(const std::string& name, int j) const override {
    return renamers_[static_cast<size_t>(j)].Name(name).value_or(name);
  }
  bool Retypes() const override { return true; }
  Type TypeOf(const Type& t, int j) const override {
    return renamers_[static_cast<size_t>(j)].TypeOf(t).value_or(t);
  }
  AttrMap Attrs(const AttrMap& attrs, int j) const override {
    return renamers_[static_cast<size_t>(j)].Attrs(attrs).value_or(attrs);
  }
  const StageRenamer& renamer(int j) const { return renamers_[static_cast<size_t>(j)]; }

 private:
  int copies_;
  std::vector<StageRenamer> renamers_;
};

// Which of the larger template's stages, and which copy, target stage `s` of
// a pipeline of `stages[g]` per group (starting at `starts[g]`) is.
std::pair<int64_t, int> SourceOf(int64_t s, const std::vector<int64_t>& stages,
                                 const std::vector<int64_t>& starts) {
  const auto g =
      static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), s) - starts.begin() - 1);
  const int64_t o = s - starts[g], base = kFrom * static_cast<int64_t>(g);
  if (o == 0) return {base, 0};
  if (o == stages[g] - 1) return {base + kFrom - 1, 0};
  return {base + (o - 1) % 2 + 1, static_cast<int>((o - 1) / 2 + 1)};
}

// "<base>.s<k>": k, else -1.
int64_t StageOfMesh(const std::string& name, std::string& base) {
  const size_t dot = name.rfind(".s");
  if (dot == std::string::npos) return -1;
  std::optional<int64_t> k = Digits(std::string_view(name).substr(dot + 2));
  if (!k.has_value()) return -1;
  base = name.substr(0, dot);
  return *k;
}

}  // namespace

StatusOr<StageFold> StageFold::Learn(const GridTemplate& a, const GridTemplate& b,
                                     const StageLayout& layout) {
  if (layout.tp < 1 || layout.chunks < 1 || layout.layers.empty() ||
      (layout.layers.size() > 1 && layout.chunks > 1))
    return FailedPrecondition() << "no stage layout to fold by";
  for (int64_t n : layout.layers) {
    if (n < 1) return FailedPrecondition() << "no stage layout to fold by";
  }
  if (a.part != b.part || a.local.size() != b.local.size() || a.module.functions().size() != 1 ||
      b.module.functions().size() != 1)
    return FailedPrecondition() << "the templates differ in more than their stages";
  for (const auto& v : b.module.entry()->params()) {
    if (v->sharding() != nullptr)
      return FailedPrecondition() << "%" << v->name() << " keeps a sharding";
  }
  for (const auto& op : b.module.entry()->ops()) {
    for (const auto& r : op->results()) {
      if (r->sharding() != nullptr)
        return FailedPrecondition() << "%" << r->name() << " keeps a sharding";
    }
  }
  StageFold f;
  f.layout_ = layout;
  DISTIR_ASSIGN_OR_RETURN(
      f.fold_, TemplateFold::Learn(*a.module.entry(), *b.module.entry(), StageSpec(f.layout_)));
  return f;
}

StatusOr<GridTemplate> StageFold::Write(const GridTemplate& b,
                                        const std::vector<int64_t>& stages) const {
  if (stages.size() != layout_.layers.size())
    return FailedPrecondition() << "a stage fold writes as many groups as it learned";
  for (int64_t n : stages) {
    if (n < 2 || n % 2 != 0 || n > 100000 || n != stages[0])
      return FailedPrecondition() << "a stage fold writes groups of one even number of stages";
  }
  if (b.module.functions().size() != 1)
    return FailedPrecondition() << "the template is not the one learned from";
  const StageWriter writer(layout_, stages);
  const std::vector<int64_t> starts = Starts(stages);
  const int64_t total = starts.back();
  const int64_t from = kFrom * static_cast<int64_t>(stages.size());
  GridTemplate out;
  out.part = b.part;
  for (const std::string& name : b.local) out.local.push_back(writer.Name(name, 0));
  // The devices kept: each target device as the one of `b` it copies.
  if (!b.keep_device.empty()) {
    const int64_t per_stage = layout_.tp;
    if (b.keep_device.size() % static_cast<size_t>(from * per_stage) != 0)
      return FailedPrecondition() << "the template keeps devices of another world";
    const auto replicas = static_cast<int64_t>(b.keep_device.size()) / (from * per_stage);
    out.keep_device.resize(static_cast<size_t>(replicas * total * per_stage));
    for (size_t d = 0; d < out.keep_device.size(); ++d) {
      const auto id = static_cast<int64_t>(d);
      const int64_t t = id % per_stage, s = (id / per_stage) % total, r = id / (per_stage * total);
      const int64_t source = SourceOf(s, stages, starts).first;
      out.keep_device[d] = b.keep_device[static_cast<size_t>((r * from + source) * per_stage + t)];
    }
  }
  // Meshes: the stage meshes <base>.s<k> of every target stage, in order,
  // where `b`'s first one was; the others as they are.
  bool stage_meshes = false;
  for (const std::unique_ptr<Mesh>& mesh : b.module.meshes()) {
    std::string base;
    if (StageOfMesh(mesh->name(), base) < 0) {
      out.module.AddMesh(*mesh);
      continue;
    }
    if (stage_meshes) continue;
    stage_meshes = true;
    for (int64_t s = 0; s < total; ++s) {
      const auto [source_stage, j] = SourceOf(s, stages, starts);
      const Mesh* source = b.module.LookupMesh(base + ".s" + std::to_string(source_stage));
      if (source == nullptr)
        return FailedPrecondition() << "mesh @" << base << ".s" << source_stage << " is missing";
      std::vector<DeviceId> devices;
      devices.reserve(source->devices().size());
      for (DeviceId d : source->devices()) {
        std::optional<DeviceId> x = writer.renamer(j).Device(d);
        if (!x.has_value()) return FailedPrecondition() << "mesh @" << source->name();
        devices.push_back(*x);
      }
      out.module.AddMesh(
          Mesh(base + ".s" + std::to_string(s), source->axes(),
               source->explicit_devices() ? std::move(devices) : std::vector<DeviceId>{},
               source->loc()));
    }
  }
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> fn,
                          fold_.Write(*b.module.entry(), writer, b.op_images, out.op_images));
  out.module.AddFunction(std::move(fn));
  return out;
}

}  // namespace distir::sharding
