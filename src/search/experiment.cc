#include "search/experiment.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <system_error>

#include "importers/onnx/onnx_importer.h"
#include "interp/infer_types.h"
#include "io/yaml_reader.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "models/gpt.h"
#include "models/mlp.h"
#include "models/model_sharding.h"
#include "sharding/annotate.h"
#include "sharding/pipeline_task.h"
#include "support/byte_size.h"
#include "support/checked_math.h"
#include "support/read_file.h"
#include "transforms/fuse_gelu.h"

namespace distir::search {
namespace {

// Reads YAML nodes with file:line:col errors (locations and key checks:
// io/yaml_reader.h).
class Reader {
 public:
  explicit Reader(std::string file) : yaml_(std::move(file)) {}

  SourceLoc Loc(const YAML::Mark& mark) const { return yaml_.Loc(mark); }
  SourceLoc Loc(const YAML::Node& node) const { return yaml_.Loc(node); }

  // Checks that `node` is a map whose keys are all in `allowed`.
  Status CheckMap(const YAML::Node& node, const std::string& what,
                  std::initializer_list<std::string_view> allowed) const {
    if (!node.IsMap()) return InvalidArgument(Loc(node)) << what << " must be a map";
    return yaml_.CheckKeys(node, what, allowed);
  }

  StatusOr<int64_t> Int(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) return InvalidArgument(Loc(node)) << what << " must be an integer";
    const std::string& text = node.Scalar();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return InvalidArgument(Loc(node)) << what << " must be an integer, got '" << text << "'";
    }
    return value;
  }

  StatusOr<int64_t> Positive(const YAML::Node& node, const std::string& what) const {
    DISTIR_ASSIGN_OR_RETURN(int64_t v, Int(node, what));
    if (v < 1) return InvalidArgument(Loc(node)) << what << " must be >= 1, got " << v;
    return v;
  }

  StatusOr<std::string> String(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      return InvalidArgument(Loc(node)) << what << " must be a non-empty string";
    }
    return node.Scalar();
  }

  StatusOr<bool> Bool(const YAML::Node& node, const std::string& what) const {
    if (node.IsScalar()) {
      const std::string& t = node.Scalar();
      if (t == "true" || t == "yes" || t == "on") return true;
      if (t == "false" || t == "no" || t == "off") return false;
    }
    return InvalidArgument(Loc(node)) << what << " must be true or false";
  }

  // A list of positive integers: `8`, `[1, 2, 4]`, `{pow2: [lo, hi]}` (2^lo..2^hi)
  // or, when `all` > 0, the word `all` (every power of two up to `all`).
  StatusOr<std::vector<int64_t>> Values(const YAML::Node& node, const std::string& what,
                                        int64_t all) const {
    std::vector<int64_t> out;
    if (node.IsScalar() && node.Scalar() == "all" && all > 0) {
      // Doubling stops before it could pass INT64_MAX.
      for (int64_t v = 1;; v *= 2) {
        out.push_back(v);
        if (v > all / 2) break;
      }
      return out;
    }
    if (node.IsScalar()) {
      DISTIR_ASSIGN_OR_RETURN(int64_t v, Positive(node, what));
      return std::vector<int64_t>{v};
    }
    if (node.IsSequence()) {
      if (node.size() == 0) return InvalidArgument(Loc(node)) << what << " is an empty list";
      for (const auto& item : node) {
        DISTIR_ASSIGN_OR_RETURN(int64_t v, Positive(item, what));
        if (std::find(out.begin(), out.end(), v) != out.end()) {
          return InvalidArgument(Loc(item)) << what << " lists " << v << " twice";
        }
        out.push_back(v);
      }
      return out;
    }
    if (node.IsMap()) {
      DISTIR_RETURN_IF_ERROR(CheckMap(node, what, {"pow2"}));
      const YAML::Node range = node["pow2"];
      if (!range.IsDefined() || !range.IsSequence() || range.size() != 2) {
        return InvalidArgument(Loc(range.IsDefined() ? range : node))
               << what << ".pow2 must be [lowest, highest] exponents";
      }
      DISTIR_ASSIGN_OR_RETURN(int64_t lo, Int(range[0], what + ".pow2"));
      DISTIR_ASSIGN_OR_RETURN(int64_t hi, Int(range[1], what + ".pow2"));
      if (lo < 0 || hi > 40 || lo > hi) {
        return InvalidArgument(Loc(range))
               << what << ".pow2 must satisfy 0 <= lowest <= highest <= 40, got [" << lo << ", "
               << hi << "]";
      }
      for (int64_t e = lo; e <= hi; ++e) out.push_back(int64_t{1} << e);
      return out;
    }
    return InvalidArgument(Loc(node))
           << what << " must be a number, a list, {pow2: [lo, hi]} or all";
  }

  const std::string& file() const { return yaml_.file(); }

 private:
  io::YamlReader yaml_;
};

// The largest memory_limit: sizes are int64 bytes, so 8 EiB (2^63 bytes) is
// out of reach, and a limit that large is no limit anyway.
// Device ids (d0, d1, ...) are int32.
constexpr int64_t kMaxWorldSize = INT32_MAX;

constexpr double kMaxMemoryLimit = 9223372036854775808.0;  // 2^63

StatusOr<int64_t> ParseBytes(const Reader& rd, const YAML::Node& node) {
  if (!node.IsScalar()) return InvalidArgument(rd.Loc(node)) << "memory_limit must be a size";
  const std::string& text = node.Scalar();
  if (text == "none") return int64_t{0};  // no limit
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  std::string unit(end, text.data() + text.size());
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  // The units of --max-memory (support/byte_size.h); an infinite number is
  // "too large" here, not malformed.
  const std::optional<double> scale = ByteUnitScale(unit);
  if (ec == std::errc() && scale && number > 0) {
    const double bytes = number * *scale;
    if (!(bytes < kMaxMemoryLimit)) {
      return InvalidArgument(rd.Loc(node)) << "memory_limit '" << text
                                           << "' is too large: it must be below 8 EiB (2^63 "
                                              "bytes); write 'none' for no limit";
    }
    if (bytes < 1) {
      return InvalidArgument(rd.Loc(node))
             << "memory_limit '" << text << "' is less than 1 byte; write 'none' for no limit";
    }
    return static_cast<int64_t>(bytes);
  }
  return InvalidArgument(rd.Loc(node)) << "memory_limit must be a positive size with a unit ("
                                       << ByteSizeUnits() << "), got '" << text << "'";
}

// One input shape of an imported model: [B, 128], where B is the batch.
StatusOr<std::vector<int64_t>> ParseOnnxInputShape(const Reader& rd, const YAML::Node& node,
                                                   const std::string& what) {
  if (!node.IsSequence()) {
    return InvalidArgument(rd.Loc(node)) << what << " must be a list of extents, e.g. [B, 128]";
  }
  std::vector<int64_t> dims;
  for (const auto& item : node) {
    if (item.IsScalar() && item.Scalar() == "B") {
      dims.push_back(kBatchExtent);
      continue;
    }
    DISTIR_ASSIGN_OR_RETURN(int64_t d,
                            rd.Positive(item, what + " (an extent, or B for the batch)"));
    dims.push_back(d);
  }
  return dims;
}

// Whether `fn` updates weights (SGD, Adam): a training step.
bool HasOptimizer(const Function& fn) {
  return std::any_of(fn.ops().begin(), fn.ops().end(),
                     [](const auto& op) { return sharding::IsOptimizer(op->kind()); });
}

// model: {onnx: PATH, inputs: {NAME: [B, 128]}, dtype: f16} or {distir: PATH,
// inputs: {NAME: [B, 16]}}. The model is loaded once here (batch 1) so that a
// bad file is reported at load time.
Status ParseModelFile(const Reader& rd, const YAML::Node& node, Experiment& e) {
  ModelFile m;
  m.format = node["onnx"] ? ModelFileFormat::kOnnx : ModelFileFormat::kDistir;
  const char* key = m.format == ModelFileFormat::kOnnx ? "onnx" : "distir";
  if (m.format == ModelFileFormat::kOnnx) {
    DISTIR_RETURN_IF_ERROR(rd.CheckMap(node, "model", {"onnx", "inputs", "dtype"}));
  } else {
    DISTIR_RETURN_IF_ERROR(rd.CheckMap(node, "model", {"distir", "inputs"}));
  }
  DISTIR_ASSIGN_OR_RETURN(std::string path, rd.String(node[key], std::string("model.") + key));
  std::filesystem::path p(path);
  if (p.is_relative()) {
    const std::filesystem::path beside = std::filesystem::path(rd.file()).parent_path() / p;
    std::error_code ec;  // a name too long for the OS is no file, not an exception
    if (std::filesystem::exists(beside, ec)) p = beside;
  }
  m.path = p.string();
  if (const YAML::Node inputs = node["inputs"]) {
    if (!inputs.IsMap()) return InvalidArgument(rd.Loc(inputs)) << "model.inputs must be a map";
    for (const auto& entry : inputs) {
      const std::string name = entry.first.as<std::string>("");
      DISTIR_ASSIGN_OR_RETURN(m.inputs[name],
                              ParseOnnxInputShape(rd, entry.second, "model.inputs." + name));
    }
  }
  if (const YAML::Node dtype = node["dtype"]) {
    DISTIR_ASSIGN_OR_RETURN(std::string text, rd.String(dtype, "model.dtype"));
    m.dtype = ParseDType(text);
    if (!m.dtype || !IsFloat(*m.dtype)) {
      return InvalidArgument(rd.Loc(dtype))
             << "model.dtype must be f16, bf16, f32 or f64, got '" << text << "'";
    }
  }
  StatusOr<Module> probe = LoadModelFile(m, 1);
  if (!probe.ok()) {
    // A located error (a line of a DistIR file) keeps its location.
    const Status& st = probe.status();
    return InvalidArgument(rd.Loc(node[key]))
           << "model." << key << ": "
           << (st.loc().empty() ? st.message() : st.loc().ToString() + ": " + st.message());
  }
  e.model = ModelSpec{};
  e.model.name = path;
  // A program with an optimizer trains (recomputation and ZeRO apply); an
  // ONNX import is forward only.
  e.model.family =
      HasOptimizer(*probe->entry()) ? ModelFamily::kMlpTraining : ModelFamily::kGpt2Inference;
  e.model_file = std::move(m);
  return Status::Ok();
}

// A number for a transformer's rates: a finite decimal (the builder checks
// the range and names the option).
StatusOr<double> ParseRate(const Reader& rd, const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && std::isfinite(v)) return v;
  }
  return InvalidArgument(rd.Loc(node)) << what << " must be a number";
}

// model: {name: gpt3-175b, num_layers: 8, bf16: true, ...}: a named
// transformer size with Megatron-LM's options on top (their names as
// Megatron's command line has them, with '_' for '-'; docs/configs.md).
Status ParseTransformerModel(const Reader& rd, const YAML::Node& node, Experiment& e) {
  DISTIR_RETURN_IF_ERROR(rd.CheckMap(node, "model",
                                     {"name",
                                      "num_layers",
                                      "hidden_size",
                                      "ffn_hidden_size",
                                      "num_attention_heads",
                                      "num_query_groups",
                                      "seq_length",
                                      "max_position_embeddings",
                                      "vocab_size",
                                      "bf16",
                                      "fp16",
                                      "untie_embeddings_and_output_weights",
                                      "lr",
                                      "weight_decay",
                                      "adam_beta1",
                                      "adam_beta2",
                                      "adam_eps",
                                      "norm_epsilon",
                                      "rotary_base",
                                      "loss_scale",
                                      "use_flash_attn",
                                      "gradient_accumulation_fusion"}));
  TransformerOptions& o = e.model.transformer;
  std::optional<bool> bf16, fp16;
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    const std::string what = "model." + key;
    if (key == "name") continue;
    if (key == "use_flash_attn") {
      DISTIR_ASSIGN_OR_RETURN(o.flash_attention, rd.Bool(v, what));
      continue;
    }
    if (key == "gradient_accumulation_fusion") {
      DISTIR_ASSIGN_OR_RETURN(o.gradient_accumulation_fusion, rd.Bool(v, what));
      continue;
    }
    if (key == "bf16" || key == "fp16" || key == "untie_embeddings_and_output_weights") {
      DISTIR_ASSIGN_OR_RETURN(bool flag, rd.Bool(v, what));
      (key == "bf16" ? bf16 : key == "fp16" ? fp16 : o.untie_embeddings_and_output_weights) = flag;
      continue;
    }
    const std::pair<const char*, double*> rates[] = {{"lr", &o.lr},
                                                     {"weight_decay", &o.weight_decay},
                                                     {"adam_beta1", &o.adam_beta1},
                                                     {"adam_beta2", &o.adam_beta2},
                                                     {"adam_eps", &o.adam_eps},
                                                     {"norm_epsilon", &o.norm_epsilon},
                                                     {"rotary_base", &o.rotary_base},
                                                     {"loss_scale", &o.loss_scale}};
    bool rate = false;
    for (const auto& [name, field] : rates) {
      if (key != name) continue;
      DISTIR_ASSIGN_OR_RETURN(*field, ParseRate(rd, v, what));
      rate = true;
    }
    if (rate) continue;
    DISTIR_ASSIGN_OR_RETURN(int64_t n, rd.Positive(v, what));
    const std::pair<const char*, int64_t*> sizes[] = {
        {"num_layers", &o.num_layers},
        {"hidden_size", &o.hidden_size},
        {"ffn_hidden_size", &o.ffn_hidden_size},
        {"num_attention_heads", &o.num_attention_heads},
        {"num_query_groups", &o.num_query_groups},
        {"seq_length", &o.seq_length},
        {"max_position_embeddings", &o.max_position_embeddings},
        {"vocab_size", &o.vocab_size}};
    for (const auto& [name, field] : sizes) {
      if (key == name) *field = n;
    }
  }
  // Megatron's precision flags: --bf16 or --fp16 (not both); neither given
  // keeps the named size's dtype, `false` for the one it has means f32.
  if (bf16.value_or(false) && fp16.value_or(false)) {
    return InvalidArgument(rd.Loc(node["fp16"])) << "model.fp16 and model.bf16 are exclusive";
  }
  if (bf16.value_or(false)) o.params_dtype = DType::kBF16;
  if (fp16.value_or(false)) o.params_dtype = DType::kF16;
  if ((bf16 && !*bf16 && o.params_dtype == DType::kBF16) ||
      (fp16 && !*fp16 && o.params_dtype == DType::kF16))
    o.params_dtype = DType::kF32;
  return Status::Ok();
}

Status ParseModel(const Reader& rd, const YAML::Node& node, Experiment& e) {
  if (node.IsMap() && (node["onnx"] || node["distir"])) return ParseModelFile(rd, node, e);
  YAML::Node name_node = node.IsMap() ? node["name"] : node;
  if (node.IsMap() && !name_node)
    return InvalidArgument(rd.Loc(node)) << "model is missing required key 'name'";
  DISTIR_ASSIGN_OR_RETURN(std::string name, rd.String(name_node, "model"));
  StatusOr<ModelSpec> spec = LookupModel(name);
  if (!spec.ok()) return InvalidArgument(rd.Loc(name_node)) << spec.status().message();
  e.model = *spec;
  if (!node.IsMap()) return Status::Ok();
  if (spec->family == ModelFamily::kTransformerTraining) return ParseTransformerModel(rd, node, e);
  DISTIR_RETURN_IF_ERROR(rd.CheckMap(
      node, "model",
      {"name", "n_layer", "d_model", "n_head", "seq_len", "vocab", "dtype", "optimizer"}));
  const bool mlp = e.model.family == ModelFamily::kMlpTraining;
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    const std::string what = "model." + key;
    if (key == "name") continue;
    if (key == "dtype") {
      DISTIR_ASSIGN_OR_RETURN(std::string text, rd.String(v, what));
      std::optional<DType> dtype = ParseDType(text);
      if (!dtype) return InvalidArgument(rd.Loc(v)) << what << ": unknown dtype '" << text << "'";
      (mlp ? e.model.mlp.dtype : e.model.gpt.dtype) = *dtype;
      continue;
    }
    if (key == "optimizer") {
      DISTIR_ASSIGN_OR_RETURN(std::string text, rd.String(v, what));
      if (!mlp || (text != "sgd" && text != "adam")) {
        return InvalidArgument(rd.Loc(v)) << what << " must be sgd or adam (MLP models only)";
      }
      e.model.mlp.optimizer = text == "adam" ? MlpOptimizer::kAdam : MlpOptimizer::kSgd;
      continue;
    }
    DISTIR_ASSIGN_OR_RETURN(int64_t n, rd.Positive(v, what));
    if (key == "n_layer") {
      (mlp ? e.model.mlp.n_layer : e.model.gpt.n_layer) = n;
    } else if (key == "d_model") {
      (mlp ? e.model.mlp.d_model : e.model.gpt.d_model) = n;
    } else if (mlp) {
      return InvalidArgument(rd.Loc(entry.first)) << what << " applies to GPT-2 models only";
    } else if (key == "n_head") {
      e.model.gpt.n_head = n;
    } else if (key == "seq_len") {
      e.model.gpt.seq_len = n;
    } else {
      e.model.gpt.vocab = n;
    }
  }
  e.model.paper_size_gb = 0;  // overridden: no longer the paper's model
  return Status::Ok();
}

// The file a `hardware:` path names: beside the experiment when it exists
// there, else as written (relative to the current directory). NotFound at
// `node`, naming every path tried, when it is in neither place.
StatusOr<std::string> FindHardwareProfile(const Reader& rd, const YAML::Node& node,
                                          const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> tried;  // path, how it was formed
  if (fs::path(path).is_relative()) {
    const fs::path beside = fs::path(rd.file()).parent_path() / path;
    if (beside != fs::path(path)) tried.emplace_back(beside.string(), " (beside the experiment)");
    tried.emplace_back(path, " (from the current directory)");
  } else {
    tried.emplace_back(path, "");
  }
  std::error_code ec;
  for (const auto& [candidate, how] : tried) {
    if (fs::exists(candidate, ec)) return candidate;
  }
  StatusBuilder error = NotFound(rd.Loc(node));
  error << "hardware profile '" << path << "' not found: tried ";
  for (size_t i = 0; i < tried.size(); ++i) {
    error << (i == 0 ? "" : " and ") << "'" << tried[i].first << "'" << tried[i].second;
  }
  return error;
}

// hardware: a path, or an inline map read where it stands, so that its errors
// point at its own keys and values in the experiment.
Status ParseHardware(const Reader& rd, const YAML::Node& node, Experiment& e) {
  if (node.IsMap()) {
    YAML::Emitter out;
    out << node;
    e.hardware_text = out.c_str();
    StatusOr<sim::HardwareProfile> hw = sim::ReadHardwareProfileNode(node, rd.file());
    if (!hw.ok()) {
      return Status(hw.status().code(), "inline hardware profile: " + hw.status().message(),
                    hw.status().loc());
    }
    e.hardware = *hw;
    return Status::Ok();
  }
  DISTIR_ASSIGN_OR_RETURN(std::string path, rd.String(node, "hardware"));
  DISTIR_ASSIGN_OR_RETURN(std::string found, FindHardwareProfile(rd, node, path));
  StatusOr<std::string> text = ReadRegularFile(found);
  if (!text.ok()) {
    return InvalidArgument(rd.Loc(node))
           << "cannot read hardware profile: " << text.status().message();
  }
  e.hardware_path = found;
  e.hardware_text = std::move(text).value();
  DISTIR_ASSIGN_OR_RETURN(e.hardware, sim::ParseHardwareProfile(e.hardware_text, found));
  return Status::Ok();
}

// The built-in model's own rules (`sharding: model`, the default): the MLP's
// Megatron pairs, GPT-2's blocks with the grouped QKV layout, the transformer
// training models' Megatron layout (docs/transforms.md §12).
void SetModelSharding(Experiment& e) { e.sharding = ModelShardingOf(e.model); }

// An imported model without `sharding:`: each data input split over dp along
// its batch dimension (the `B` of `inputs:`), every weight replicated. Data
// parallelism only; tensor parallelism needs rules naming weights.
std::vector<std::string> FileBatchRules(const ModelFile& m) {
  std::vector<std::string> rules;
  for (const auto& [name, shape] : m.inputs) {
    auto batch = std::find(shape.begin(), shape.end(), kBatchExtent);
    if (batch == shape.end()) continue;
    std::string dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      dims += d == 0 ? "" : ", ";
      dims += shape.begin() + static_cast<std::ptrdiff_t>(d) == batch ? "{dp}" : "{}";
    }
    rules.push_back(name + "=[" + dims + "]");
  }
  return rules;
}

// sharding: model | [RULE, ...], each RULE "PATTERN=[{axes}, ...]" over the
// axes dp and tp (sharding/annotate.h); checked here so that a bad rule is an
// error at its line, not a search of invalid configurations.
Status ParseSharding(const Reader& rd, const YAML::Node& node, Experiment& e) {
  if (node.IsScalar()) {
    DISTIR_ASSIGN_OR_RETURN(std::string which, rd.String(node, "sharding"));
    if (which != "model")
      return InvalidArgument(rd.Loc(node)) << "sharding must be 'model' or a list of rules "
                                              "such as \"w*=[{}, {tp}]\", got '"
                                           << which << "'";
    if (e.model_file.has_value())
      return InvalidArgument(rd.Loc(node))
             << "model '" << e.model.name << "' has no sharding rules of its own; list them";
    SetModelSharding(e);
    return Status::Ok();
  }
  if (!node.IsSequence() || node.size() == 0)
    return InvalidArgument(rd.Loc(node)) << "sharding must be 'model' or a non-empty list of rules";
  std::vector<std::string> rules;
  for (const YAML::Node& item : node) {
    DISTIR_ASSIGN_OR_RETURN(std::string text, rd.String(item, "sharding rule"));
    StatusOr<sharding::ParamRule> rule = sharding::ParseParamRule(text);
    if (!rule.ok()) return InvalidArgument(rd.Loc(item)) << rule.status().message();
    rules.push_back(text);
  }
  e.sharding.rules = std::move(rules);
  return Status::Ok();
}

// mesh: {dp: 4, tp: 4} | [{dp: 2, tp: 8}, {dp: 4, tp: 2, pp: 2}, ...]: the
// mesh shapes to search (axes dp, tp, pp; an axis left out has size 1).
Status ParseMesh(const Reader& rd, const YAML::Node& node, Experiment& e) {
  if (!node.IsMap() && !(node.IsSequence() && node.size() > 0))
    return InvalidArgument(rd.Loc(node)) << "mesh must be a map of axis sizes such as {dp: 4, tp: "
                                            "4}, or a non-empty list of them";
  for (const YAML::Node& item : node.IsMap() ? YAML::Node(std::vector<YAML::Node>{node}) : node) {
    if (!item.IsMap())
      return InvalidArgument(rd.Loc(item)) << "a mesh shape must be a map such as {dp: 4, tp: 4}";
    for (const auto& entry : item) {
      const std::string axis = entry.first.as<std::string>("");
      if (axis != "dp" && axis != "tp" && axis != "pp")
        return InvalidArgument(rd.Loc(entry.first))
               << "mesh axis '" << axis
               << "' is not one this version distributes over (dp, tp, pp)";
    }
    MeshShape m;
    for (auto [axis, size] :
         {std::pair{"dp", &m.dp}, std::pair{"tp", &m.tp}, std::pair{"pp", &m.pp}}) {
      if (item[axis]) {
        DISTIR_ASSIGN_OR_RETURN(*size, rd.Positive(item[axis], std::string("mesh.") + axis));
      }
    }
    const int64_t devices = CheckedProduct({m.dp, m.tp, m.pp}).value_or(INT64_MAX);
    const bool fits =
        e.world_rule == WorldRule::kEqual ? devices == e.world_size : devices <= e.world_size;
    if (!fits)
      return InvalidArgument(rd.Loc(item))
             << "mesh {dp: " << m.dp << ", tp: " << m.tp << ", pp: " << m.pp << "} has " << devices
             << " devices; world_size is " << e.world_size
             << (e.world_rule == WorldRule::kEqual ? "" : " at most");
    if (std::find(e.space.meshes.begin(), e.space.meshes.end(), m) != e.space.meshes.end())
      return InvalidArgument(rd.Loc(item))
             << "mesh lists {dp: " << m.dp << ", tp: " << m.tp << ", pp: " << m.pp << "} twice";
    e.space.meshes.push_back(m);
  }
  return Status::Ok();
}

// Two keys giving one knob (DistIR's name and Megatron's): at most one.
Status CheckOneOf(const Reader& rd, const YAML::Node& node, const char* ours, const char* theirs) {
  if (!node[ours] || !node[theirs]) return Status::Ok();
  return InvalidArgument(rd.Loc(node[theirs]))
         << "space." << theirs << " and space." << ours << " both give "
         << (std::string_view(ours) == "microbatches" ? "K" : "v") << "; keep one";
}

// Megatron's names in the space (search/megatron_knobs.h): micro_batch
// instead of microbatches, num_layers_per_virtual_pipeline_stage instead of
// virtual_stages.
Status ParseMegatronSpaceKeys(const Reader& rd, const YAML::Node& node, SearchSpace& s) {
  DISTIR_RETURN_IF_ERROR(CheckOneOf(rd, node, "microbatches", "micro_batch"));
  DISTIR_RETURN_IF_ERROR(
      CheckOneOf(rd, node, "virtual_stages", "num_layers_per_virtual_pipeline_stage"));
  if (const YAML::Node v = node["micro_batch"]) {
    DISTIR_ASSIGN_OR_RETURN(s.micro_batch, rd.Values(v, "space.micro_batch", 0));
  }
  if (const YAML::Node v = node["virtual_stages"]) {
    DISTIR_ASSIGN_OR_RETURN(s.virtual_stages, rd.Values(v, "space.virtual_stages", 0));
  }
  if (const YAML::Node v = node["num_layers_per_virtual_pipeline_stage"]) {
    DISTIR_ASSIGN_OR_RETURN(s.chunk_layers,
                            rd.Values(v, "space.num_layers_per_virtual_pipeline_stage", 0));
  }
  return Status::Ok();
}

// A knob's value or list of values: each item read by `read(item)` (a
// located error) and checked by `check(item, value)`, none listed twice
// (named by `name(value)`), not an empty list. Errors are at the item.
template <typename T, typename Read, typename Check, typename Name>
StatusOr<std::vector<T>> ReadDistinctValues(const Reader& rd, const YAML::Node& v,
                                            const std::string& key, Read read, Check check,
                                            Name name) {
  std::vector<T> out;
  for (const YAML::Node& item : v.IsSequence() ? v : YAML::Node(std::vector<YAML::Node>{v})) {
    DISTIR_ASSIGN_OR_RETURN(T value, read(item));
    if (std::find(out.begin(), out.end(), value) != out.end())
      return InvalidArgument(rd.Loc(item)) << key << " lists " << name(value) << " twice";
    DISTIR_RETURN_IF_ERROR(check(item, value));
    out.push_back(value);
  }
  if (v.IsSequence() && v.size() == 0)
    return InvalidArgument(rd.Loc(v)) << key << " is an empty list";
  return out;
}

// space.recompute: none | full | selective, or a truth value (true: full),
// one or a list. Selective recomputes the ops a model marks, which only the
// transformer-training models have: for any other model it would quietly be
// no recomputation, so it is an error at the value.
Status ParseRecompute(const Reader& rd, const YAML::Node& v, Experiment& e) {
  auto read = [&rd](const YAML::Node& item) -> StatusOr<RecomputeKind> {
    const std::optional<RecomputeKind> kind =
        item.IsScalar() ? ParseRecomputeKind(item.Scalar()) : std::nullopt;
    if (!kind) {
      return InvalidArgument(rd.Loc(item))
             << "space.recompute must be none, full, selective, true or false";
    }
    return *kind;
  };
  auto check = [&rd, &e](const YAML::Node& item, RecomputeKind kind) -> Status {
    if (kind != RecomputeKind::kSelective || e.model.family == ModelFamily::kTransformerTraining)
      return Status::Ok();
    return InvalidArgument(rd.Loc(item))
           << "space.recompute: selective recomputes the ops a model marks (Megatron's core "
              "attention); only the transformer-training models (gpt-tiny, gpt3-*, ...) "
              "mark them, "
           << e.model.name << " does not";
  };
  DISTIR_ASSIGN_OR_RETURN(
      e.space.recompute,
      ReadDistinctValues<RecomputeKind>(rd, v, "space.recompute", read, check, RecomputeKindName));
  return Status::Ok();
}

// space.sequence_parallel: a truth value or a list of them; true only for
// the transformer-training models (Megatron's sequence parallelism).
Status ParseSequenceParallel(const Reader& rd, const YAML::Node& v, Experiment& e) {
  auto read = [&rd](const YAML::Node& item) { return rd.Bool(item, "space.sequence_parallel"); };
  auto check = [&rd, &e](const YAML::Node& item, bool on) -> Status {
    if (!on || e.model.family == ModelFamily::kTransformerTraining) return Status::Ok();
    return InvalidArgument(rd.Loc(item))
           << "space.sequence_parallel: Megatron's sequence parallelism is modelled for the "
              "transformer-training models (gpt-tiny, gpt3-*, llama-*, ...), not "
           << e.model.name;
  };
  auto name = [](bool on) { return on ? "true" : "false"; };
  DISTIR_ASSIGN_OR_RETURN(
      e.space.sequence_parallel,
      ReadDistinctValues<bool>(rd, v, "space.sequence_parallel", read, check, name));
  return Status::Ok();
}

// Megatron's N (layers per virtual stage) needs the model's layer count,
// which an imported model does not declare.
Status CheckChunkLayersKnown(const Reader& rd, const YAML::Node& space, const Experiment& e) {
  if (e.space.chunk_layers.empty() || !e.model_file) return Status::Ok();
  return InvalidArgument(rd.Loc(space["num_layers_per_virtual_pipeline_stage"]))
         << "space.num_layers_per_virtual_pipeline_stage: the layers of an imported model are "
            "not known; give space.virtual_stages";
}

Status ParseSpace(const Reader& rd, const YAML::Node& node, Experiment& e, bool has_mesh) {
  DISTIR_RETURN_IF_ERROR(rd.CheckMap(node, "space",
                                     {"batch", "dp", "tp", "pp", "microbatches", "micro_batch",
                                      "virtual_stages", "num_layers_per_virtual_pipeline_stage",
                                      "schedule", "recompute", "zero", "sequence_parallel"}));
  SearchSpace& s = e.space;
  if (!node["batch"])
    return InvalidArgument(rd.Loc(node)) << "space is missing required key 'batch'";
  for (const char* key : {"dp", "tp", "pp"}) {
    if (has_mesh && node[key])
      return InvalidArgument(rd.Loc(node[key]))
             << "space." << key << " and mesh both give the " << key << " degree; keep one";
    if (!has_mesh && !node[key])
      return InvalidArgument(rd.Loc(node)) << "space is missing required key '" << key
                                           << "' (or give the mesh shapes with mesh:)";
  }
  DISTIR_ASSIGN_OR_RETURN(s.batch, rd.Values(node["batch"], "space.batch", 0));
  if (!has_mesh) {
    DISTIR_ASSIGN_OR_RETURN(s.dp, rd.Values(node["dp"], "space.dp", e.world_size));
    DISTIR_ASSIGN_OR_RETURN(s.tp, rd.Values(node["tp"], "space.tp", e.world_size));
    DISTIR_ASSIGN_OR_RETURN(s.pp, rd.Values(node["pp"], "space.pp", e.world_size));
  }
  if (node["microbatches"]) {
    DISTIR_ASSIGN_OR_RETURN(s.microbatches,
                            rd.Values(node["microbatches"], "space.microbatches", 0));
  }
  DISTIR_RETURN_IF_ERROR(ParseMegatronSpaceKeys(rd, node, s));
  if (const YAML::Node v = node["schedule"]) {
    s.schedule.clear();
    for (const YAML::Node& item : v.IsSequence() ? v : YAML::Node(std::vector<YAML::Node>{v})) {
      DISTIR_ASSIGN_OR_RETURN(std::string text, rd.String(item, "space.schedule"));
      StatusOr<PipelineSchedule> sched = ParseSchedule(text);
      if (!sched.ok())
        return InvalidArgument(rd.Loc(item)) << "space.schedule: " << sched.status().message();
      if (std::find(s.schedule.begin(), s.schedule.end(), *sched) != s.schedule.end()) {
        return InvalidArgument(rd.Loc(item)) << "space.schedule lists " << text << " twice";
      }
      s.schedule.push_back(*sched);
    }
  }
  if (const YAML::Node v = node["recompute"]) DISTIR_RETURN_IF_ERROR(ParseRecompute(rd, v, e));
  if (const YAML::Node v = node["zero"]) {
    s.zero.clear();
    for (const YAML::Node& item : v.IsSequence() ? v : YAML::Node(std::vector<YAML::Node>{v})) {
      DISTIR_ASSIGN_OR_RETURN(int64_t z, rd.Int(item, "space.zero"));
      if (z < 0 || z > 3) return InvalidArgument(rd.Loc(item)) << "space.zero must be 0, 1, 2 or 3";
      s.zero.push_back(static_cast<int>(z));
    }
  }
  if (const YAML::Node v = node["sequence_parallel"])
    DISTIR_RETURN_IF_ERROR(ParseSequenceParallel(rd, v, e));
  const bool training = e.model.family != ModelFamily::kGpt2Inference;
  for (RecomputeKind r : s.recompute) {
    if (r != RecomputeKind::kNone && !training) {
      return InvalidArgument(rd.Loc(node["recompute"]))
             << "space.recompute: recomputation applies to training; " << e.model.name
             << " is an inference model";
    }
  }
  for (int z : s.zero) {
    if (z != 0 && !training) {
      return InvalidArgument(rd.Loc(node["zero"])) << "space.zero: ZeRO applies to training; "
                                                   << e.model.name << " is an inference model";
    }
  }
  for (const auto& [list, key] :
       {std::pair{&s.dp, "dp"}, std::pair{&s.tp, "tp"}, std::pair{&s.pp, "pp"}}) {
    for (int64_t v : *list) {
      if (v > e.world_size) {
        return InvalidArgument(rd.Loc(node[key]))
               << "space." << key << " value " << v << " exceeds world_size " << e.world_size;
      }
    }
  }
  return Status::Ok();
}

// The model's options at the smallest batch of the space: when the builder
// would refuse them (n_head not dividing d_model, sizes out of range, ...),
// it would refuse every configuration, so it is an error here, at the key to
// blame (model.n_head, space.batch, ...). What depends on the configuration
// (T dividing the heads, larger batches out of range) makes that
// configuration invalid, with the reason (Evaluator).
Status CheckModelAt(const Reader& rd, const YAML::Node& root, const Experiment& e) {
  if (e.model_file) return Status::Ok();  // loading it checked it
  const int64_t batch = *std::min_element(e.space.batch.begin(), e.space.batch.end());
  std::string culprit;
  Status valid = ValidateModel(WithBatch(e.model, batch), &culprit);
  if (valid.ok()) return valid;
  const YAML::Node model = root["model"];
  YAML::Node at = model;
  if (culprit == "batch") {
    at = root["space"]["batch"];
  } else if (model.IsMap() && model[culprit]) {
    at = model[culprit];
  } else if (culprit == "n_head" && model.IsMap() && model["d_model"]) {
    at = model["d_model"];  // the built-in n_head does not divide the d_model given
  }
  return InvalidArgument(rd.Loc(at)) << valid.message();
}

// "1, 2, 4" (at most 8 values, then "...").
std::string ListValues(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size() && i < 8; ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  }
  return values.size() > 8 ? out + ", ..." : out;
}

// Without mesh:, some D*T*P of space.dp x tp x pp must meet the world rule,
// else the search has nothing to do (a mesh: shape is checked on its own).
Status CheckSpaceNotEmpty(const Reader& rd, const YAML::Node& root, const Experiment& e) {
  const SearchSpace& s = e.space;
  if (!s.meshes.empty()) return Status::Ok();
  std::set<int64_t> products;
  for (int64_t d : s.dp) {
    for (int64_t t : s.tp) {
      for (int64_t p : s.pp) products.insert(CheckedProduct({d, t, p}).value_or(INT64_MAX));
    }
  }
  const bool equal = e.world_rule == WorldRule::kEqual;
  if (products.empty() ||
      (equal ? products.count(e.world_size) > 0 : *products.begin() <= e.world_size)) {
    return Status::Ok();
  }
  return InvalidArgument(rd.Loc(root["space"]))
         << "the search space has no configuration: no D*T*P of space.dp [" << ListValues(s.dp)
         << "], space.tp [" << ListValues(s.tp) << "] and space.pp [" << ListValues(s.pp) << "] "
         << (equal ? "equals" : "is at most") << " world_size " << e.world_size
         << " (constraints.world: " << (equal ? "equal" : "at_most") << "); the products are "
         << ListValues({products.begin(), products.end()});
}

// constraints: {world: equal | at_most}.
Status ParseConstraints(const Reader& rd, const YAML::Node& c, Experiment& e) {
  DISTIR_RETURN_IF_ERROR(rd.CheckMap(c, "constraints", {"world"}));
  const YAML::Node w = c["world"];
  if (!w) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(std::string rule, rd.String(w, "constraints.world"));
  if (rule != "equal" && rule != "at_most") {
    return InvalidArgument(rd.Loc(w)) << "constraints.world must be equal or at_most";
  }
  e.world_rule = rule == "equal" ? WorldRule::kEqual : WorldRule::kAtMost;
  return Status::Ok();
}

// name, model, hardware and world_size, which the rest is checked against.
Status ParseHead(const Reader& rd, const YAML::Node& root, Experiment& e) {
  DISTIR_ASSIGN_OR_RETURN(e.name, rd.String(root["name"], "name"));
  DISTIR_RETURN_IF_ERROR(ParseModel(rd, root["model"], e));
  DISTIR_RETURN_IF_ERROR(ParseHardware(rd, root["hardware"], e));
  DISTIR_ASSIGN_OR_RETURN(e.world_size, rd.Positive(root["world_size"], "world_size"));
  if (e.world_size > kMaxWorldSize) {
    return InvalidArgument(rd.Loc(root["world_size"]))
           << "world_size " << e.world_size << " is too large: device ids are 32-bit, so at most "
           << kMaxWorldSize << " devices";
  }
  if (const std::optional<int64_t> n = e.hardware.NumDevices(); n && e.world_size > *n) {
    return InvalidArgument(rd.Loc(root["world_size"]))
           << "world_size " << e.world_size << " exceeds the " << *n << " devices of "
           << e.hardware.name;
  }
  return Status::Ok();
}

// `layers:` names the pipeline layers of a sharded model by its weights: a
// regular expression whose first capture group is the layer (sharding/stages.h).
Status ParseLayers(const Reader& rd, const YAML::Node& node, Experiment& e) {
  DISTIR_ASSIGN_OR_RETURN(std::string pattern, rd.String(node, "layers"));
  try {
    std::regex re(pattern);
    if (re.mark_count() < 1)
      return InvalidArgument(rd.Loc(node))
             << "layers '" << pattern << "' needs a capture group naming the layer, e.g. "
             << "'^model\\.layers\\.([0-9]+)\\.'";
  } catch (const std::regex_error& err) {
    return InvalidArgument(rd.Loc(node))
           << "layers '" << pattern << "' is not a regular expression: " << err.what();
  }
  e.sharding.layer_pattern = pattern;
  return Status::Ok();
}

// strategy: {kind: grid | random | anneal, budget: N, seed: S}.
Status ParseStrategy(const Reader& rd, const YAML::Node& node, Experiment& e) {
  if (!node.IsMap()) {
    return InvalidArgument(rd.Loc(node))
           << "strategy must be a map {kind: grid | random | anneal, budget: N, seed: S}";
  }
  DISTIR_RETURN_IF_ERROR(rd.CheckMap(node, "strategy", {"kind", "budget", "seed"}));
  if (!node["kind"]) return InvalidArgument(rd.Loc(node)) << "strategy is missing 'kind'";
  DISTIR_ASSIGN_OR_RETURN(std::string kind, rd.String(node["kind"], "strategy.kind"));
  Strategy& s = e.strategy;
  if (kind == "grid") {
    s.kind = StrategyKind::kGrid;
  } else if (kind == "random") {
    s.kind = StrategyKind::kRandom;
  } else if (kind == "anneal") {
    s.kind = StrategyKind::kAnneal;
  } else {
    return InvalidArgument(rd.Loc(node["kind"]))
           << "strategy.kind must be grid, random or anneal, got '" << kind << "'";
  }
  if (const YAML::Node b = node["budget"]) {
    DISTIR_ASSIGN_OR_RETURN(s.budget, rd.Positive(b, "strategy.budget"));
  } else if (s.kind != StrategyKind::kGrid) {
    return InvalidArgument(rd.Loc(node)) << "strategy " << kind << " needs a budget (evaluations)";
  }
  if (const YAML::Node seed = node["seed"]) {
    DISTIR_ASSIGN_OR_RETURN(int64_t v, rd.Int(seed, "strategy.seed"));
    if (v < 0) return InvalidArgument(rd.Loc(seed)) << "strategy.seed must be >= 0";
    s.seed = static_cast<uint64_t>(v);
  }
  return Status::Ok();
}

// The optional keys after the space: memory_limit, traces, output, sharding,
// layers.
Status ParseTail(const Reader& rd, const YAML::Node& root, Experiment& e) {
  e.memory_limit_bytes = e.hardware.device.memory_capacity;
  if (const YAML::Node m = root["memory_limit"]) {
    DISTIR_ASSIGN_OR_RETURN(e.memory_limit_bytes, ParseBytes(rd, m));
  }
  if (const YAML::Node t = root["traces"]) {
    DISTIR_ASSIGN_OR_RETURN(e.traces, rd.Int(t, "traces"));
    if (e.traces < 0) return InvalidArgument(rd.Loc(t)) << "traces must be >= 0";
  }
  if (const YAML::Node o = root["output"]) {
    DISTIR_ASSIGN_OR_RETURN(e.output, rd.String(o, "output"));
  }
  if (const YAML::Node sh = root["sharding"]) {
    DISTIR_RETURN_IF_ERROR(ParseSharding(rd, sh, e));
  } else if (e.model_file.has_value()) {
    e.sharding.rules = FileBatchRules(*e.model_file);
  } else {
    SetModelSharding(e);
  }
  if (const YAML::Node l = root["layers"]) DISTIR_RETURN_IF_ERROR(ParseLayers(rd, l, e));
  if (const YAML::Node st = root["strategy"]) DISTIR_RETURN_IF_ERROR(ParseStrategy(rd, st, e));
  return Status::Ok();
}

Status ParseRoot(const Reader& rd, const YAML::Node& root, Experiment& e) {
  DISTIR_RETURN_IF_ERROR(
      rd.CheckMap(root, "experiment",
                  {"name", "model", "hardware", "world_size", "space", "constraints",
                   "memory_limit", "traces", "output", "sharding", "mesh", "layers", "strategy"}));
  for (const char* key : {"name", "model", "hardware", "world_size", "space"}) {
    if (!root[key]) {
      return InvalidArgument(SourceLoc{rd.file(), 1, 1, ""})
             << "experiment is missing required key '" << key << "'";
    }
  }
  DISTIR_RETURN_IF_ERROR(ParseHead(rd, root, e));
  DISTIR_RETURN_IF_ERROR(ParseSpace(rd, root["space"], e, static_cast<bool>(root["mesh"])));
  DISTIR_RETURN_IF_ERROR(CheckModelAt(rd, root, e));
  if (const YAML::Node c = root["constraints"]) DISTIR_RETURN_IF_ERROR(ParseConstraints(rd, c, e));
  if (const YAML::Node m = root["mesh"]) DISTIR_RETURN_IF_ERROR(ParseMesh(rd, m, e));
  DISTIR_RETURN_IF_ERROR(CheckSpaceNotEmpty(rd, root, e));
  DISTIR_RETURN_IF_ERROR(ParseTail(rd, root, e));
  DISTIR_RETURN_IF_ERROR(CheckChunkLayersKnown(rd, root["space"], e));
  return Status::Ok();
}

}  // namespace

StatusOr<Experiment> ParseExperiment(const std::string& text, const std::string& path,
                                     std::string* error_source) {
  Reader rd(path);
  if (error_source != nullptr) *error_source = text;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& ex) {
    return InvalidArgument(rd.Loc(ex.mark)) << "malformed YAML: " << ex.msg;
  }
  // An empty file (or one truncated to its comments) is a document with no
  // node at all: say so, rather than that it is not a map.
  if (root.IsNull()) {
    return InvalidArgument(SourceLoc{path, 1, 1, ""})
           << "experiment is empty; it needs the keys name, model, hardware, world_size and space";
  }
  Experiment e;
  e.path = path;
  e.yaml_text = text;
  Status parsed = ParseRoot(rd, root, e);
  if (parsed.ok()) return e;
  // An error in the referenced hardware profile points into the profile's
  // text; one located elsewhere (nowhere, or in another file) into neither.
  if (error_source != nullptr) {
    const std::string& file = parsed.loc().file;
    const bool in_profile = !e.hardware_path.empty() && file == e.hardware_path;
    *error_source = file == path ? text : in_profile ? std::move(e.hardware_text) : "";
  }
  return parsed;
}

namespace {

StatusOr<Module> ImportOnnxModel(const ModelFile& model, int64_t batch) {
  onnx_import::ImportOptions options;
  for (const auto& [name, dims] : model.inputs) {
    std::vector<int64_t>& bound = options.input_shapes[name];
    for (int64_t d : dims) bound.push_back(d == kBatchExtent ? batch : d);
  }
  options.float_dtype = model.dtype;
  DISTIR_ASSIGN_OR_RETURN(onnx_import::ImportedModel imported,
                          onnx_import::ImportOnnxFile(model.path, options));
  // An exported GELU is one kernel in the frameworks: cost it as one op.
  FuseGelusIn(imported.module, imported.module.entry()->name());
  return std::move(imported.module);
}

// The program's entry with each listed parameter's shape rebound (B = batch);
// result types written in the file are checked against the inferred ones.
StatusOr<Module> LoadDistirProgram(const ModelFile& model, int64_t batch) {
  DISTIR_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(model.path));
  DISTIR_ASSIGN_OR_RETURN(Module m, ParseModule(text, model.path));
  DISTIR_RETURN_IF_ERROR(VerifyModule(m));
  Function* fn = m.entry();
  if (fn == nullptr) return InvalidArgument() << model.path << ": the file has no function";
  for (const auto& [name, dims] : model.inputs) {
    auto p = std::find_if(fn->params().begin(), fn->params().end(),
                          [&name = name](const auto& v) { return v->name() == name; });
    if (p == fn->params().end())
      return InvalidArgument() << model.path << ": @" << fn->name() << " has no parameter %" << name
                               << " (model.inputs)";
    const Type& t = (*p)->type();
    if (!t.is_tensor() || t.rank() != static_cast<int64_t>(dims.size()))
      return InvalidArgument() << model.path << ": model.inputs." << name << " has " << dims.size()
                               << " dims, %" << name << " is " << t.ToString();
    std::vector<int64_t> shape;
    for (int64_t d : dims) shape.push_back(d == kBatchExtent ? batch : d);
    (*p)->set_type(t.WithShape(shape));
  }
  DISTIR_RETURN_IF_ERROR(InferTypes(m));
  return m;
}

}  // namespace

StatusOr<Module> LoadModelFile(const ModelFile& model, int64_t batch) {
  return model.format == ModelFileFormat::kOnnx ? ImportOnnxModel(model, batch)
                                                : LoadDistirProgram(model, batch);
}

const char* StrategyName(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kGrid:
      return "grid";
    case StrategyKind::kRandom:
      return "random";
    case StrategyKind::kAnneal:
      return "anneal";
  }
  return "?";
}

StatusOr<Experiment> LoadExperiment(const std::string& path) {
  DISTIR_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path));
  return ParseExperiment(text, path);
}

}  // namespace distir::search
