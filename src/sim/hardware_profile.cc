// Loading and validating hardware profiles from YAML (format: docs/configs.md).
//
// The reader is strict on purpose: a profile mistake silently changes every
// simulated time, so unknown keys, missing keys, unknown units and impossible
// values are all errors at the offending key or value. yaml-cpp throws; every
// yaml-cpp call happens below ParseHardwareProfile's try block, which turns the
// exceptions into Status, so none escapes.

#include "sim/hardware_profile.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include "io/yaml_reader.h"
#include "support/check.h"
#include "support/read_file.h"

namespace distir::sim {

const MatMulRegression* DeviceSpec::RegressionFor(DType dtype) const {
  for (const auto& [d, r] : matmul_regressions) {
    if (d == dtype) return &r;
  }
  return matmul_regression.has_value() ? &*matmul_regression : nullptr;
}

double DeviceSpec::MatrixFlops(DType dtype) const {
  switch (dtype) {
    case DType::kF16:
      return peak_flops_f16;
    case DType::kBF16:
      return peak_flops_bf16 > 0 ? peak_flops_bf16 : peak_flops_f32;
    case DType::kF32:
      return peak_flops_f32;
    case DType::kF64:
      return peak_flops_f64 > 0 ? peak_flops_f64 : peak_flops_f32;
    case DType::kI32:
    case DType::kI64:
    case DType::kBool:
      return vector_flops;
  }
  DISTIR_CHECK(false) << "unknown dtype";
  return 0;
}

std::optional<int64_t> HardwareProfile::NumDevices() const {
  if (num_nodes == 0) return std::nullopt;
  return static_cast<int64_t>(num_nodes) * devices_per_node;
}

int HardwareProfile::NodeOf(DeviceId d) const {
  DISTIR_CHECK(d.has_value()) << "NodeOf needs a device";
  DISTIR_CHECK(devices_per_node >= 1) << "profile has no devices per node";
  return d.value() / devices_per_node;
}

const LinkSpec& HardwareProfile::LinkBetween(DeviceId a, DeviceId b) const {
  DISTIR_CHECK(a != b) << "LinkBetween needs two different devices, got " << a << " twice";
  return NodeOf(a) == NodeOf(b) ? intra_node : inter_node;
}

namespace {

// Units. Every quantity in a profile is "<number> <unit>"; see docs/configs.md.

enum class Quantity { kTime, kSize, kBandwidth, kFlopRate, kTimePerFlop, kTimePerByte };

struct Unit {
  std::string_view name;
  double scale;  // to seconds, bytes, bytes/s or FLOP/s
};

constexpr Unit kTimeUnits[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
constexpr Unit kSizeUnits[] = {{"B", 1},           {"kB", 1e3},           {"MB", 1e6},
                               {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
                               {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
// Network links are quoted in bits per second (HDR InfiniBand: 200 Gb/s).
constexpr Unit kBitRateUnits[] = {
    {"b/s", 1.0 / 8}, {"kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8}};
constexpr Unit kFlopRateUnits[] = {
    {"FLOP/s", 1}, {"MFLOP/s", 1e6}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};

// Every quantity, scaled to its base unit (BaseUnit()), is 0 or between these
// in magnitude. Both are far beyond any machine, and they keep every time the
// cost model derives (up to 2^63 bytes or FLOPs over a rate, plus overheads,
// summed over at most kMaxModelOps ops) finite: a rate that underflows to a
// subnormal or an overhead of 1e308 s would make it infinite.
constexpr double kMinMagnitude = 1e-30;
constexpr double kMaxMagnitude = 1e30;

template <size_t N>
std::optional<double> Lookup(const Unit (&units)[N], std::string_view name) {
  for (const Unit& u : units) {
    if (u.name == name) return u.scale;
  }
  return std::nullopt;
}

// `base` + `suffix`, e.g. "GB" + "/s": the scale of the base unit.
template <size_t N>
std::optional<double> LookupWithSuffix(const Unit (&units)[N], std::string_view name,
                                       std::string_view suffix) {
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  return Lookup(units, name.substr(0, name.size() - suffix.size()));
}

std::optional<double> UnitScale(Quantity q, std::string_view unit) {
  switch (q) {
    case Quantity::kTime:
      return Lookup(kTimeUnits, unit);
    case Quantity::kSize:
      return Lookup(kSizeUnits, unit);
    case Quantity::kBandwidth:
      if (auto bits = Lookup(kBitRateUnits, unit)) return bits;
      return LookupWithSuffix(kSizeUnits, unit, "/s");
    case Quantity::kFlopRate:
      return Lookup(kFlopRateUnits, unit);
    case Quantity::kTimePerFlop:
      return LookupWithSuffix(kTimeUnits, unit, "/FLOP");
    case Quantity::kTimePerByte:
      return LookupWithSuffix(kTimeUnits, unit, "/B");
  }
  return std::nullopt;
}

std::string_view BaseUnit(Quantity q) {
  switch (q) {
    case Quantity::kTime:
      return "s";
    case Quantity::kSize:
      return "B";
    case Quantity::kBandwidth:
      return "B/s";
    case Quantity::kFlopRate:
      return "FLOP/s";
    case Quantity::kTimePerFlop:
      return "s/FLOP";
    case Quantity::kTimePerByte:
      return "s/B";
  }
  return "";
}

template <size_t N>
void AppendUnits(std::ostringstream& os, const Unit (&units)[N], std::string_view suffix) {
  for (const Unit& u : units) os << (os.tellp() > 0 ? ", " : "") << u.name << suffix;
}

// "a bandwidth (B/s, kB/s, ...)": what the error message says was expected.
std::string ExpectedUnits(Quantity q) {
  std::ostringstream os;
  switch (q) {
    case Quantity::kTime:
      AppendUnits(os, kTimeUnits, "");
      return "a duration (" + os.str() + ")";
    case Quantity::kSize:
      AppendUnits(os, kSizeUnits, "");
      return "a size (" + os.str() + ")";
    case Quantity::kBandwidth:
      AppendUnits(os, kSizeUnits, "/s");
      AppendUnits(os, kBitRateUnits, "");
      return "a bandwidth (" + os.str() + ")";
    case Quantity::kFlopRate:
      AppendUnits(os, kFlopRateUnits, "");
      return "a FLOP rate (" + os.str() + ")";
    case Quantity::kTimePerFlop:
      AppendUnits(os, kTimeUnits, "/FLOP");
      return "a time per FLOP (" + os.str() + ")";
    case Quantity::kTimePerByte:
      AppendUnits(os, kTimeUnits, "/B");
      return "a time per byte (" + os.str() + ")";
  }
  return "";
}

// One YAML mapping of the profile whose keys were checked against the allowed set.
class Section {
 public:
  Section(std::string path, const YAML::Node& node) : path_(std::move(path)), node_(node) {}

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  /// Entity name of a key, e.g. "device.dram_bandwidth".
  std::string Name(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  /// The value of `key`, or nullptr when absent.
  const YAML::Node* Find(std::string_view key) const {
    for (const auto& [k, v] : entries_) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  void Add(std::string key, const YAML::Node& value) {
    entries_.emplace_back(std::move(key), value);
  }

 private:
  std::string path_;
  YAML::Node node_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
};

class ProfileReader {
 public:
  explicit ProfileReader(std::string filename) : yaml_(std::move(filename)) {}

  SourceLoc Loc(const YAML::Mark& mark) const { return yaml_.Loc(mark); }
  SourceLoc Loc(const YAML::Node& node) const { return yaml_.Loc(node); }

  StatusOr<Section> OpenSection(const YAML::Node& node, std::string path,
                                std::initializer_list<std::string_view> allowed) const;
  StatusOr<YAML::Node> Require(const Section& s, std::string_view key) const;
  StatusOr<std::string> ReadString(const Section& s, std::string_view key) const;
  StatusOr<double> ReadQuantity(const Section& s, std::string_view key, Quantity q) const;
  StatusOr<double> ReadQuantityValue(const YAML::Node& v, const std::string& name,
                                     Quantity q) const;
  /// `name`'s value `v` is beyond [kMinMagnitude, kMaxMagnitude] once scaled.
  Status OutOfRange(const YAML::Node& v, const std::string& name, Quantity q) const;
  /// A quantity that must be > 0 (bandwidths, FLOP rates, capacities).
  StatusOr<double> ReadPositive(const Section& s, std::string_view key, Quantity q) const;
  /// A quantity that must be >= 0 (latencies, overheads).
  StatusOr<double> ReadNonNegative(const Section& s, std::string_view key, Quantity q) const;
  /// An integer >= `min`; when `any_means_zero`, the word `any` reads as 0.
  StatusOr<int> ReadCount(const Section& s, std::string_view key, int min,
                          bool any_means_zero) const;

 private:
  io::YamlReader yaml_;
};

StatusOr<Section> ProfileReader::OpenSection(
    const YAML::Node& node, std::string path,
    std::initializer_list<std::string_view> allowed) const {
  const std::string what = path.empty() ? "hardware profile" : path;
  if (!node.IsMap()) {
    return InvalidArgument(Loc(node))
           << what << " must be a map of keys, got " << io::DescribeYamlNode(node);
  }
  DISTIR_RETURN_IF_ERROR(yaml_.CheckKeys(node, what, allowed));
  Section section(std::move(path), node);
  for (const auto& entry : node) {
    const std::string& name = entry.first.Scalar();
    section.Add(name, entry.second);
  }
  return section;
}

StatusOr<YAML::Node> ProfileReader::Require(const Section& s, std::string_view key) const {
  const YAML::Node* v = s.Find(key);
  if (v == nullptr) {
    return InvalidArgument(Loc(s.node())) << (s.path().empty() ? "hardware profile" : s.path())
                                          << " is missing required key '" << key << "'";
  }
  return *v;
}

StatusOr<std::string> ProfileReader::ReadString(const Section& s, std::string_view key) const {
  DISTIR_ASSIGN_OR_RETURN(YAML::Node v, Require(s, key));
  if (!v.IsScalar() || v.Scalar().empty()) {
    return InvalidArgument(Loc(v))
           << s.Name(key) << " must be a non-empty string, got " << io::DescribeYamlNode(v);
  }
  return v.Scalar();
}

StatusOr<double> ProfileReader::ReadQuantityValue(const YAML::Node& v, const std::string& name,
                                                  Quantity q) const {
  if (!v.IsScalar()) {
    return InvalidArgument(Loc(v))
           << name << " must be " << ExpectedUnits(q) << ", got " << io::DescribeYamlNode(v);
  }
  const std::string& text = v.Scalar();
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec == std::errc::result_out_of_range) return OutOfRange(v, name, q);
  if (ec != std::errc() || !std::isfinite(number)) {
    return InvalidArgument(Loc(v)) << name << " must be a number with a unit, got '" << text << "'";
  }
  std::string_view unit(end, text.data() + text.size() - end);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit.empty()) {
    return InvalidArgument(Loc(v))
           << name << " has no unit in '" << text << "'; it must be " << ExpectedUnits(q);
  }
  std::optional<double> scale = UnitScale(q, unit);
  if (!scale) {
    return InvalidArgument(Loc(v)) << "unknown unit '" << unit << "' in " << name << " '" << text
                                   << "'; it must be " << ExpectedUnits(q);
  }
  const double value = number * *scale;
  const double magnitude = std::fabs(value);
  if (value != 0 && !(magnitude >= kMinMagnitude && magnitude <= kMaxMagnitude)) {
    return OutOfRange(v, name, q);
  }
  return value;
}

Status ProfileReader::OutOfRange(const YAML::Node& v, const std::string& name, Quantity q) const {
  return InvalidArgument(Loc(v)) << name << " '" << v.Scalar()
                                 << "' is out of range: its magnitude must be between "
                                 << kMinMagnitude << " and " << kMaxMagnitude << " " << BaseUnit(q);
}

StatusOr<double> ProfileReader::ReadQuantity(const Section& s, std::string_view key,
                                             Quantity q) const {
  DISTIR_ASSIGN_OR_RETURN(YAML::Node v, Require(s, key));
  return ReadQuantityValue(v, s.Name(key), q);
}

StatusOr<double> ProfileReader::ReadPositive(const Section& s, std::string_view key,
                                             Quantity q) const {
  DISTIR_ASSIGN_OR_RETURN(double value, ReadQuantity(s, key, q));
  if (value <= 0) {
    const YAML::Node& v = *s.Find(key);
    return InvalidArgument(Loc(v))
           << s.Name(key) << " must be positive, got '" << v.Scalar() << "'";
  }
  return value;
}

StatusOr<double> ProfileReader::ReadNonNegative(const Section& s, std::string_view key,
                                                Quantity q) const {
  DISTIR_ASSIGN_OR_RETURN(double value, ReadQuantity(s, key, q));
  if (value < 0) {
    const YAML::Node& v = *s.Find(key);
    return InvalidArgument(Loc(v))
           << s.Name(key) << " must not be negative, got '" << v.Scalar() << "'";
  }
  return value;
}

StatusOr<int> ProfileReader::ReadCount(const Section& s, std::string_view key, int min,
                                       bool any_means_zero) const {
  DISTIR_ASSIGN_OR_RETURN(YAML::Node v, Require(s, key));
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  if (any_means_zero && text == "any") return 0;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!v.IsScalar() || ec != std::errc() || end != text.data() + text.size() || value < min) {
    return InvalidArgument(Loc(v))
           << s.Name(key) << " must be an integer >= " << min << (any_means_zero ? " or 'any'" : "")
           << ", got " << io::DescribeYamlNode(v);
  }
  return value;
}

// The sections of a profile, in file order.

// peak_flops: {f16: ..., bf16: ..., f32: ..., f64: ...}; f16 and f32 are required.
Status ReadPeakFlops(const ProfileReader& r, const YAML::Node& node, DeviceSpec& d) {
  DISTIR_ASSIGN_OR_RETURN(Section s,
                          r.OpenSection(node, "device.peak_flops", {"f16", "bf16", "f32", "f64"}));
  DISTIR_ASSIGN_OR_RETURN(d.peak_flops_f16, r.ReadPositive(s, "f16", Quantity::kFlopRate));
  DISTIR_ASSIGN_OR_RETURN(d.peak_flops_f32, r.ReadPositive(s, "f32", Quantity::kFlopRate));
  if (s.Find("bf16") != nullptr) {
    DISTIR_ASSIGN_OR_RETURN(d.peak_flops_bf16, r.ReadPositive(s, "bf16", Quantity::kFlopRate));
  }
  if (s.Find("f64") != nullptr) {
    DISTIR_ASSIGN_OR_RETURN(d.peak_flops_f64, r.ReadPositive(s, "f64", Quantity::kFlopRate));
  }
  return Status::Ok();
}

StatusOr<MatMulRegression> ReadRegression(const ProfileReader& r, const YAML::Node& node,
                                          const std::string& path) {
  DISTIR_ASSIGN_OR_RETURN(Section s,
                          r.OpenSection(node, path, {"intercept", "per_flop", "per_byte"}));
  MatMulRegression m;
  // Fitted coefficients may come out slightly negative; only the units are checked.
  DISTIR_ASSIGN_OR_RETURN(m.intercept_s, r.ReadQuantity(s, "intercept", Quantity::kTime));
  DISTIR_ASSIGN_OR_RETURN(m.per_flop_s, r.ReadQuantity(s, "per_flop", Quantity::kTimePerFlop));
  DISTIR_ASSIGN_OR_RETURN(m.per_byte_s, r.ReadQuantity(s, "per_byte", Quantity::kTimePerByte));
  return m;
}

// device.matmul_regression: one regression (keys intercept, per_flop,
// per_byte) for every dtype, or one per dtype under the dtype's name
// (f16, bf16, f32, f64), as `distir calibrate` writes it.
Status ReadRegressions(const ProfileReader& r, const YAML::Node& node, DeviceSpec& d) {
  const char* kSingle[] = {"intercept", "per_flop", "per_byte"};
  bool single = !node.IsMap();
  for (const char* key : kSingle) single = single || node[key].IsDefined();
  if (single) {
    DISTIR_ASSIGN_OR_RETURN(d.matmul_regression,
                            ReadRegression(r, node, "device.matmul_regression"));
    return Status::Ok();
  }
  DISTIR_ASSIGN_OR_RETURN(
      Section s, r.OpenSection(node, "device.matmul_regression", {"f16", "bf16", "f32", "f64"}));
  for (const std::string name : {"f16", "bf16", "f32", "f64"}) {
    const YAML::Node* one = s.Find(name);
    if (one == nullptr) continue;
    DISTIR_ASSIGN_OR_RETURN(MatMulRegression m,
                            ReadRegression(r, *one, "device.matmul_regression." + name));
    d.matmul_regressions.emplace_back(*ParseDType(name), m);
  }
  return Status::Ok();
}

Status ReadMemoryCapacity(const ProfileReader& r, const Section& s, DeviceSpec& d) {
  DISTIR_ASSIGN_OR_RETURN(double bytes, r.ReadPositive(s, "memory_capacity", Quantity::kSize));
  if (bytes >= 9.2e18) {
    return InvalidArgument(r.Loc(*s.Find("memory_capacity")))
           << "device.memory_capacity must be below 8 EiB, got '"
           << s.Find("memory_capacity")->Scalar() << "'";
  }
  d.memory_capacity = std::llround(bytes);
  // A capacity that rounds to 0 would read as "no limit" in experiments.
  if (d.memory_capacity < 1) {
    return InvalidArgument(r.Loc(*s.Find("memory_capacity")))
           << "device.memory_capacity must be at least 1 B, got '"
           << s.Find("memory_capacity")->Scalar() << "'";
  }
  return Status::Ok();
}

// A number without a unit that is the whole scalar `v`, else nothing (the
// readers of fractions and counts check its range and word their errors).
std::optional<double> PlainNumber(const YAML::Node& v) {
  if (!v.IsScalar()) return std::nullopt;
  const std::string& text = v.Scalar();
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// device.gemm.max_efficiency (and device.attention's two): a plain number in
// (0, 1], no unit (a fraction of the peak).
StatusOr<double> ReadEfficiency(const ProfileReader& r, const Section& s,
                                const char* key = "max_efficiency") {
  DISTIR_ASSIGN_OR_RETURN(YAML::Node v, r.Require(s, key));
  const std::optional<double> value = PlainNumber(v);
  if (!value || !(*value > 0 && *value <= 1)) {
    return InvalidArgument(r.Loc(v))
           << s.Name(key) << " must be a number in (0, 1] (a fraction of the peak), got "
           << io::DescribeYamlNode(v);
  }
  return *value;
}

// device.gemm.tile: [tile_m, tile_n], two integers between 1 and 2^20 (no real
// kernel's thread-block tile comes near; the bound keeps ceil(m / tile) exact).
// A bad entry is reported at the entry, a list of the wrong length at the list.
Status ReadTile(const ProfileReader& r, const Section& s, GemmTiling& g) {
  const YAML::Node* v = s.Find("tile");
  if (v == nullptr) return Status::Ok();
  constexpr const char* kRule =
      " must be a list of two integers [tile_m, tile_n], each from 1 to "
      "1048576, got ";
  if (!v->IsSequence() || v->size() != 2) {
    return InvalidArgument(r.Loc(*v)) << s.Name("tile") << kRule
                                      << (v->IsSequence() ? "a list of " + std::to_string(v->size())
                                                          : io::DescribeYamlNode(*v));
  }
  int64_t dims[2] = {0, 0};
  for (size_t i = 0; i < 2; ++i) {
    const YAML::Node& e = (*v)[i];
    const std::string text = e.IsScalar() ? e.Scalar() : "";
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), dims[i]);
    if (ec != std::errc() || end != text.data() + text.size() || dims[i] < 1 ||
        dims[i] > (1 << 20)) {
      return InvalidArgument(r.Loc(e)) << s.Name("tile") << kRule << io::DescribeYamlNode(e);
    }
  }
  g.tile_m = dims[0];
  g.tile_n = dims[1];
  return Status::Ok();
}

// device.gemm: the tiled GEMM model's parameters (docs/configs.md, docs/cost_model.md §2.2.1).
StatusOr<GemmTiling> ReadGemm(const ProfileReader& r, const YAML::Node& node) {
  DISTIR_ASSIGN_OR_RETURN(
      Section s, r.OpenSection(node, "device.gemm",
                               {"model", "sm_count", "ctas_per_sm", "tile", "max_efficiency",
                                "tile_overhead", "split_k_min"}));
  DISTIR_ASSIGN_OR_RETURN(std::string model, r.ReadString(s, "model"));
  if (model != "tiled") {
    return InvalidArgument(r.Loc(*s.Find("model")))
           << "unknown model '" << model << "' in device.gemm.model; expected one of: tiled";
  }
  GemmTiling g;
  DISTIR_ASSIGN_OR_RETURN(g.sm_count, r.ReadCount(s, "sm_count", 1, false));
  if (s.Find("ctas_per_sm") != nullptr) {
    DISTIR_ASSIGN_OR_RETURN(g.ctas_per_sm, r.ReadCount(s, "ctas_per_sm", 1, false));
  }
  DISTIR_RETURN_IF_ERROR(ReadTile(r, s, g));
  DISTIR_ASSIGN_OR_RETURN(g.max_efficiency, ReadEfficiency(r, s));
  if (s.Find("tile_overhead") != nullptr) {
    DISTIR_ASSIGN_OR_RETURN(g.tile_overhead_s,
                            r.ReadNonNegative(s, "tile_overhead", Quantity::kTime));
  }
  if (s.Find("split_k_min") != nullptr) {
    DISTIR_ASSIGN_OR_RETURN(g.split_k_min, r.ReadCount(s, "split_k_min", 0, false));
  }
  return g;
}

// device.attention: the tiled attention model's parameters (docs/configs.md,
// docs/cost_model.md §2.2.2). It runs on device.gemm's SMs, so it needs that section.
StatusOr<AttentionTiling> ReadAttention(const ProfileReader& r, const YAML::Node& node,
                                        bool has_gemm) {
  DISTIR_ASSIGN_OR_RETURN(Section s, r.OpenSection(node, "device.attention",
                                                   {"model", "block", "block_overhead",
                                                    "max_efficiency", "backward_max_efficiency"}));
  DISTIR_ASSIGN_OR_RETURN(std::string model, r.ReadString(s, "model"));
  if (model != "tiled") {
    return InvalidArgument(r.Loc(*s.Find("model")))
           << "unknown model '" << model << "' in device.attention.model; expected one of: tiled";
  }
  if (!has_gemm) {
    return InvalidArgument(r.Loc(node))
           << "device.attention needs a device.gemm section (the tiled models share its sm_count)";
  }
  AttentionTiling a;
  if (s.Find("block") != nullptr) {
    DISTIR_ASSIGN_OR_RETURN(a.block, r.ReadCount(s, "block", 1, false));
  }
  if (const YAML::Node* v = s.Find("block_overhead")) {
    // A plain count of steps (no unit), fractional: a block's fixed cost.
    const std::optional<double> steps = PlainNumber(*v);
    if (!steps || !(*steps >= 0 && *steps <= 1e6)) {
      return InvalidArgument(r.Loc(*v))
             << s.Name("block_overhead")
             << " must be a number of steps from 0 to 1000000 (no unit), got "
             << io::DescribeYamlNode(*v);
    }
    a.block_overhead = *steps;
  }
  DISTIR_ASSIGN_OR_RETURN(a.max_efficiency, ReadEfficiency(r, s));
  DISTIR_ASSIGN_OR_RETURN(a.backward_max_efficiency,
                          ReadEfficiency(r, s, "backward_max_efficiency"));
  return a;
}

StatusOr<DeviceSpec> ReadDevice(const ProfileReader& r, const YAML::Node& node) {
  DISTIR_ASSIGN_OR_RETURN(
      Section s,
      r.OpenSection(node, "device",
                    {"name", "peak_flops", "vector_flops", "dram_bandwidth", "memory_capacity",
                     "kernel_launch_overhead", "matmul_regression", "gemm", "attention"}));
  DeviceSpec d;
  DISTIR_ASSIGN_OR_RETURN(d.name, r.ReadString(s, "name"));
  DISTIR_ASSIGN_OR_RETURN(YAML::Node flops, r.Require(s, "peak_flops"));
  DISTIR_RETURN_IF_ERROR(ReadPeakFlops(r, flops, d));
  DISTIR_ASSIGN_OR_RETURN(d.vector_flops, r.ReadPositive(s, "vector_flops", Quantity::kFlopRate));
  DISTIR_ASSIGN_OR_RETURN(d.dram_bandwidth,
                          r.ReadPositive(s, "dram_bandwidth", Quantity::kBandwidth));
  DISTIR_RETURN_IF_ERROR(ReadMemoryCapacity(r, s, d));
  DISTIR_ASSIGN_OR_RETURN(d.kernel_launch_overhead,
                          r.ReadNonNegative(s, "kernel_launch_overhead", Quantity::kTime));
  if (const YAML::Node* reg = s.Find("matmul_regression")) {
    DISTIR_RETURN_IF_ERROR(ReadRegressions(r, *reg, d));
  }
  if (const YAML::Node* gemm = s.Find("gemm")) {
    DISTIR_ASSIGN_OR_RETURN(d.gemm, ReadGemm(r, *gemm));
  }
  if (const YAML::Node* attention = s.Find("attention")) {
    DISTIR_ASSIGN_OR_RETURN(d.attention, ReadAttention(r, *attention, d.gemm.has_value()));
  }
  return d;
}

StatusOr<LinkSpec> ReadLink(const ProfileReader& r, const YAML::Node& node, std::string path) {
  DISTIR_ASSIGN_OR_RETURN(Section s,
                          r.OpenSection(node, std::move(path), {"name", "bandwidth", "latency"}));
  LinkSpec link;
  DISTIR_ASSIGN_OR_RETURN(link.name, r.ReadString(s, "name"));
  DISTIR_ASSIGN_OR_RETURN(link.bandwidth, r.ReadPositive(s, "bandwidth", Quantity::kBandwidth));
  DISTIR_ASSIGN_OR_RETURN(link.latency, r.ReadNonNegative(s, "latency", Quantity::kTime));
  return link;
}

Status ReadNodes(const ProfileReader& r, const YAML::Node& node, HardwareProfile& hw) {
  DISTIR_ASSIGN_OR_RETURN(Section s,
                          r.OpenSection(node, "nodes", {"devices_per_node", "num_nodes"}));
  DISTIR_ASSIGN_OR_RETURN(hw.devices_per_node, r.ReadCount(s, "devices_per_node", 1, false));
  DISTIR_ASSIGN_OR_RETURN(hw.num_nodes, r.ReadCount(s, "num_nodes", 0, true));
  return Status::Ok();
}

StatusOr<CollectiveSpec> ReadCollectives(const ProfileReader& r, const YAML::Node& node) {
  DISTIR_ASSIGN_OR_RETURN(Section s,
                          r.OpenSection(node, "collectives", {"allreduce", "launch_overhead"}));
  CollectiveSpec c;
  DISTIR_ASSIGN_OR_RETURN(std::string algo, r.ReadString(s, "allreduce"));
  if (algo == "ring") {
    c.allreduce = AllReduceAlgorithm::kRing;
  } else if (algo == "tree") {
    c.allreduce = AllReduceAlgorithm::kTree;
  } else if (algo == "hierarchical") {
    c.allreduce = AllReduceAlgorithm::kHierarchical;
  } else {
    return InvalidArgument(r.Loc(*s.Find("allreduce")))
           << "unknown algorithm '" << algo
           << "' in collectives.allreduce; expected one of: ring, tree, hierarchical";
  }
  DISTIR_ASSIGN_OR_RETURN(c.launch_overhead,
                          r.ReadNonNegative(s, "launch_overhead", Quantity::kTime));
  return c;
}

// overlap.comm_stream: true or false.
StatusOr<bool> ReadBool(const ProfileReader& r, const Section& s, std::string_view key) {
  DISTIR_ASSIGN_OR_RETURN(YAML::Node v, r.Require(s, key));
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  if (text == "true") return true;
  if (text == "false") return false;
  return InvalidArgument(r.Loc(v))
         << s.Name(key) << " must be true or false, got " << io::DescribeYamlNode(v);
}

// overlap.compute_slowdown and comm_slowdown: a plain number >= 0, no unit (a
// fraction of the op's time), at most 100 (a hundredfold slowdown is no overlap).
StatusOr<double> ReadSlowdown(const ProfileReader& r, const Section& s, std::string_view key) {
  const YAML::Node* v = s.Find(key);
  if (v == nullptr) return 0.0;
  const std::optional<double> value = PlainNumber(*v);
  if (!value || !(*value >= 0 && *value <= 100)) {
    return InvalidArgument(r.Loc(*v))
           << s.Name(key) << " must be a number from 0 to 100 (0.2 = overlapped work takes 20% "
           << "longer), got " << io::DescribeYamlNode(*v);
  }
  return *value;
}

// overlap: a communication stream per device (docs/configs.md, docs/cost_model.md §3.1).
StatusOr<OverlapSpec> ReadOverlap(const ProfileReader& r, const YAML::Node& node) {
  DISTIR_ASSIGN_OR_RETURN(
      Section s,
      r.OpenSection(node, "overlap", {"comm_stream", "compute_slowdown", "comm_slowdown"}));
  OverlapSpec o;
  DISTIR_ASSIGN_OR_RETURN(o.comm_stream, ReadBool(r, s, "comm_stream"));
  DISTIR_ASSIGN_OR_RETURN(o.compute_slowdown, ReadSlowdown(r, s, "compute_slowdown"));
  DISTIR_ASSIGN_OR_RETURN(o.comm_slowdown, ReadSlowdown(r, s, "comm_slowdown"));
  return o;
}

// The inter-node link is required exactly when devices can sit in different nodes.
Status ReadInterNode(const ProfileReader& r, const Section& top, HardwareProfile& hw) {
  const YAML::Node* inter = top.Find("inter_node");
  if (inter == nullptr && hw.num_nodes == 1) return Status::Ok();
  if (inter == nullptr) {
    return InvalidArgument(r.Loc(top.node()))
           << "hardware profile is missing required key 'inter_node' (needed because "
              "nodes.num_nodes is not 1)";
  }
  DISTIR_ASSIGN_OR_RETURN(hw.inter_node, ReadLink(r, *inter, "inter_node"));
  return Status::Ok();
}

// calibrated_on.host and .cpu_model: a string, possibly empty (unknown).
StatusOr<std::string> ReadText(const ProfileReader& r, const Section& s, std::string_view key) {
  DISTIR_ASSIGN_OR_RETURN(YAML::Node v, r.Require(s, key));
  if (v.IsNull()) return std::string();
  if (!v.IsScalar()) {
    return InvalidArgument(r.Loc(v))
           << s.Name(key) << " must be a string, got " << io::DescribeYamlNode(v);
  }
  return v.Scalar();
}

// calibrated_on: the machine `distir calibrate` measured (support/host_info.h).
StatusOr<HostInfo> ReadCalibratedOn(const ProfileReader& r, const YAML::Node& node) {
  DISTIR_ASSIGN_OR_RETURN(Section s,
                          r.OpenSection(node, "calibrated_on", {"host", "cpu_model", "cpus"}));
  HostInfo h;
  DISTIR_ASSIGN_OR_RETURN(h.host, ReadText(r, s, "host"));
  DISTIR_ASSIGN_OR_RETURN(h.cpu_model, ReadText(r, s, "cpu_model"));
  DISTIR_ASSIGN_OR_RETURN(int cpus, r.ReadCount(s, "cpus", 0, false));
  h.cpus = cpus;
  return h;
}

StatusOr<HardwareProfile> ReadProfile(const ProfileReader& r, const YAML::Node& root) {
  DISTIR_ASSIGN_OR_RETURN(Section top,
                          r.OpenSection(root, "",
                                        {"name", "device", "nodes", "intra_node", "inter_node",
                                         "collectives", "overlap", "calibrated_on"}));
  HardwareProfile hw;
  DISTIR_ASSIGN_OR_RETURN(hw.name, r.ReadString(top, "name"));
  DISTIR_ASSIGN_OR_RETURN(YAML::Node device, r.Require(top, "device"));
  DISTIR_ASSIGN_OR_RETURN(hw.device, ReadDevice(r, device));
  DISTIR_ASSIGN_OR_RETURN(YAML::Node nodes, r.Require(top, "nodes"));
  DISTIR_RETURN_IF_ERROR(ReadNodes(r, nodes, hw));
  DISTIR_ASSIGN_OR_RETURN(YAML::Node intra, r.Require(top, "intra_node"));
  DISTIR_ASSIGN_OR_RETURN(hw.intra_node, ReadLink(r, intra, "intra_node"));
  DISTIR_RETURN_IF_ERROR(ReadInterNode(r, top, hw));
  DISTIR_ASSIGN_OR_RETURN(YAML::Node collectives, r.Require(top, "collectives"));
  DISTIR_ASSIGN_OR_RETURN(hw.collectives, ReadCollectives(r, collectives));
  if (const YAML::Node* overlap = top.Find("overlap")) {
    DISTIR_ASSIGN_OR_RETURN(hw.overlap, ReadOverlap(r, *overlap));
  }
  if (const YAML::Node* on = top.Find("calibrated_on")) {
    DISTIR_ASSIGN_OR_RETURN(hw.calibrated_on, ReadCalibratedOn(r, *on));
  }
  return hw;
}

}  // namespace

StatusOr<HardwareProfile> ParseHardwareProfile(const std::string& yaml_text,
                                               const std::string& filename) {
  ProfileReader reader(filename);
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (root.IsNull()) {
      return InvalidArgument(SourceLoc{filename, 1, 1, ""}) << "hardware profile is empty";
    }
    return ReadProfile(reader, root);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(reader.Loc(e.mark)) << "invalid YAML: " << e.msg;
  } catch (const std::exception& e) {
    return Internal(SourceLoc{filename, 0, 0, ""}) << "reading hardware profile: " << e.what();
  }
}

StatusOr<HardwareProfile> ReadHardwareProfileNode(const YAML::Node& node,
                                                  const std::string& filename) {
  ProfileReader reader(filename);
  try {
    return ReadProfile(reader, node);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(reader.Loc(e.mark)) << "invalid YAML: " << e.msg;
  } catch (const std::exception& e) {
    return Internal(SourceLoc{filename, 0, 0, ""}) << "reading hardware profile: " << e.what();
  }
}

StatusOr<HardwareProfile> LoadHardwareProfile(const std::string& path) {
  StatusOr<std::string> text = ReadRegularFile(path);
  if (!text.ok()) {
    return Status(text.status().code(), "cannot open hardware profile: " + text.status().message(),
                  SourceLoc{path, 0, 0, ""});
  }
  DISTIR_ASSIGN_OR_RETURN(HardwareProfile hw, ParseHardwareProfile(*text, path));
  hw.source_path = path;
  return hw;
}

}  // namespace distir::sim
