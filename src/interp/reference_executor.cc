#include "interp/reference_executor.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "interp/interpreter.h"
#include "support/parallel_for.h"
#include "support/str_util.h"

namespace distir {
namespace {

// ---- type checks

bool Fits(const Type& got, const Type& want) {
  if (want.is_unknown()) return true;
  if (got.kind() != want.kind()) return false;
  if (got.is_tuple()) {
    if (got.elements().size() != want.elements().size()) return false;
    for (size_t i = 0; i < got.elements().size(); ++i) {
      if (!Fits(got.elements()[i], want.elements()[i])) return false;
    }
    return true;
  }
  if (got.dtype() != want.dtype() || got.device() != want.device()) return false;
  if (got.is_scalar()) return true;
  if (got.rank() != want.rank()) return false;
  for (int64_t d = 0; d < got.rank(); ++d) {
    if (want.shape()[d] != kDynamicDim && want.shape()[d] != got.shape()[d]) return false;
  }
  return true;
}

Status CheckArguments(const Function& fn, const std::vector<HostValue>& args) {
  if (static_cast<int>(args.size()) != fn.num_params()) {
    return InvalidArgument(fn.loc()) << "function @" << fn.name() << " takes " << fn.num_params()
                                     << " arguments, got " << args.size();
  }
  for (int i = 0; i < fn.num_params(); ++i) {
    const Value& p = *fn.param(i);
    if (Fits(args[i].type(), p.type())) continue;
    return InvalidArgument(p.loc())
           << "argument " << i << " of @" << fn.name() << " does not fit parameter " << p.Ref()
           << ": expected " << p.type().ToString() << ", got " << args[i].type().ToString();
  }
  return Status::Ok();
}

// After each op: the computed results must fit the types the IR knows. A
// mismatch means the IR's annotations, the shape rules and the kernels disagree.
struct CheckResultTypes {
  Status operator()(const Op& op, std::vector<HostValue>& values) const {
    for (const std::unique_ptr<Value>& r : op.results()) {
      const Type& got = values[r->id()].type();
      if (Fits(got, r->type())) continue;
      return InvalidArgument(op.loc())
             << op.Name() << " result " << r->Ref() << " is " << got.ToString()
             << " on the reference executor, but its type is " << r->type().ToString();
    }
    return Status::Ok();
  }
};

// ---- random values

// splitmix64 (Steele, Lea and Flood 2014): a fixed, portable generator.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  /// Moves on `draws` calls of Next() at once: the state is a counter.
  void Skip(uint64_t draws) { state_ += draws * 0x9E3779B97F4A7C15ULL; }
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1): 53 random bits, never 0 (Box-Muller takes its log).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53; }
  double Normal() {
    const double u1 = Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
};

double FanInScale(const std::vector<int64_t>& shape) {
  if (shape.empty()) return 1;
  const int64_t fan_in = shape.size() == 1 ? shape[0] : shape[shape.size() - 2];
  return fan_in > 0 ? 1 / std::sqrt(static_cast<double>(fan_in)) : 1;
}

// Calls of SplitMix64::Next() one Draw makes: Box-Muller takes two uniforms.
uint64_t DrawsPerElement(DType dtype, const RandomInputOptions& options) {
  if (dtype == DType::kBool || IsIntegral(dtype)) return 1;
  return options.distribution == RandomInputOptions::Distribution::kUniform ? 1 : 2;
}

double Draw(SplitMix64& rng, DType dtype, double scale, const RandomInputOptions& options) {
  if (dtype == DType::kBool) return static_cast<double>(rng.Next() & 1);
  if (IsIntegral(dtype)) {
    const uint64_t span = static_cast<uint64_t>(options.int_max - options.int_min) + 1;
    return static_cast<double>(options.int_min + static_cast<int64_t>(rng.Next() % span));
  }
  if (options.distribution == RandomInputOptions::Distribution::kUniform) {
    return 2 * rng.Uniform() - 1;
  }
  return rng.Normal() * scale;
}

// Draws n elements of `dtype` from `rng` (moved past them) in chunks on
// threads of their own, handing each chunk to `sink`. Element i takes draws
// [i * per, (i + 1) * per) of the stream, so chunks drawn on threads of their
// own give the sequential loop's values exactly.
void DrawChunks(DType dtype, double scale, int64_t n, SplitMix64& rng,
                const RandomInputOptions& options,
                const std::function<void(int64_t, std::span<const double>)>& sink) {
  const uint64_t per = DrawsPerElement(dtype, options);
  ParallelFor(n, int64_t{1} << 16, [&](int64_t begin, int64_t end) {
    SplitMix64 local = rng;
    local.Skip(static_cast<uint64_t>(begin) * per);
    constexpr int64_t kBlock = 4096;  // doubles a thread keeps at once
    double block[kBlock];
    for (int64_t b = begin; b < end; b += kBlock) {
      const int64_t m = std::min(kBlock, end - b);
      for (int64_t j = 0; j < m; ++j)
        block[j] = RoundToDType(Draw(local, dtype, scale, options), dtype);
      sink(b, std::span<const double>(block, static_cast<size_t>(m)));
    }
  });
  rng.Skip(static_cast<uint64_t>(n) * per);
}

// Fills `type` from `rng`, tuple elements in order.
HostValue Fill(const Type& type, SplitMix64& rng, const RandomInputOptions& options) {
  if (type.is_tuple()) {
    std::vector<HostValue> elements;
    for (const Type& e : type.elements()) elements.push_back(Fill(e, rng, options));
    return HostValue::Tuple(std::move(elements));
  }
  const std::vector<int64_t> shape =
      type.is_tensor() ? std::vector<int64_t>(type.shape()) : std::vector<int64_t>();
  const double scale = FanInScale(shape);
  DenseTensor t{type.dtype(), shape, std::vector<double>(ShapeNumElements(shape))};
  DrawChunks(t.dtype, scale, static_cast<int64_t>(t.values.size()), rng, options,
             [&](int64_t first, std::span<const double> chunk) {
               std::copy(chunk.begin(), chunk.end(), t.values.begin() + first);
             });
  return HostValue::OfType(type, std::move(t));
}

// ---- comparison

std::string IndexText(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return "[" + JoinInts(index, ", ") + "]";
}

std::string StructureMismatch(const HostValue& actual, const HostValue& expected) {
  return "types differ: " + actual.type().WithDevice(DeviceId()).ToString() + " vs " +
         expected.type().WithDevice(DeviceId()).ToString();
}

Status TensorsClose(const DenseTensor& a, const DenseTensor& e, double rtol, double atol) {
  int64_t bad = 0, worst = -1;
  double max_diff = 0, worst_excess = 0;
  for (size_t i = 0; i < a.values.size(); ++i) {
    const double diff = std::fabs(a.values[i] - e.values[i]);
    const double tol = atol + rtol * std::fabs(e.values[i]);
    if (!(diff <= tol)) {  // NaN differences count as mismatches
      ++bad;
      const double excess = std::isnan(diff) ? INFINITY : diff - tol;
      if (worst < 0 || excess > worst_excess) {
        worst = static_cast<int64_t>(i);
        worst_excess = excess;
      }
    }
    if (diff > max_diff || std::isnan(diff)) max_diff = diff;
  }
  if (bad == 0) return Status::Ok();
  return FailedPrecondition() << bad << " of " << a.values.size() << " elements differ (max |diff| "
                              << FormatDouble(max_diff) << ", rtol " << FormatDouble(rtol)
                              << ", atol " << FormatDouble(atol) << "); worst at "
                              << IndexText(worst, a.shape) << ": " << FormatDouble(a.values[worst])
                              << " vs " << FormatDouble(e.values[worst]);
}

}  // namespace

StatusOr<std::vector<HostValue>> Execute(const Module& module, const Function& fn,
                                         std::vector<HostValue> args) {
  DISTIR_RETURN_IF_ERROR(CheckArguments(fn, args));
  std::vector<HostValue> values;
  DISTIR_RETURN_IF_ERROR(
      Interpreter<HostValue>(module, DefaultCpuDomain()).Run(fn, args, values, CheckResultTypes()));
  std::vector<HostValue> out;
  out.reserve(fn.returns().size());
  for (const Value* r : fn.returns()) out.push_back(values[r->id()]);
  return out;
}

HostValue RandomValue(const Type& type, uint64_t seed, const RandomInputOptions& options) {
  DISTIR_CHECK(!type.is_unknown() && type.HasStaticShape())
      << "RandomValue needs a static type, got " << type.ToString();
  DISTIR_CHECK(options.int_min <= options.int_max) << "empty random integer range";
  SplitMix64 rng(seed);
  return Fill(type, rng, options);
}

void DrawRandomElements(const Type& type, uint64_t seed, const RandomInputOptions& options,
                        const std::function<void(int64_t, std::span<const double>)>& sink) {
  DISTIR_CHECK(!type.is_unknown() && type.HasStaticShape() && !type.is_tuple())
      << "DrawRandomElements needs a static tensor or scalar type, got " << type.ToString();
  DISTIR_CHECK(options.int_min <= options.int_max) << "empty random integer range";
  const std::vector<int64_t> shape =
      type.is_tensor() ? std::vector<int64_t>(type.shape()) : std::vector<int64_t>();
  SplitMix64 rng(seed);
  DrawChunks(type.dtype(), FanInScale(shape), ShapeNumElements(shape), rng, options, sink);
}

namespace {

// Ops that hand on (a piece of) their first operand's values unchanged.
bool MovesValues(OpKind kind) {
  switch (kind) {
    case OpKind::kShard:
    case OpKind::kSplit:
    case OpKind::kSlice:
    case OpKind::kReshape:
    case OpKind::kIdentity:
    case OpKind::kMeshSlice:
    case OpKind::kMeshAllGather:
      return true;
    default:
      return false;
  }
}

// The parameters read as Adam's second moment (operand 3), directly or
// through ops that move values (a ZeRO piece, a Shard annotation): a
// variance, so never negative.
std::vector<bool> SecondMoments(const Function& fn) {
  std::vector<bool> marked(static_cast<size_t>(fn.num_values()), false);
  for (const auto& op : fn.ops()) {
    if (op->kind() != OpKind::kAdam || op->num_inputs() < 4) continue;
    const Value* v = op->input(3);
    while (v->def() != nullptr && MovesValues(v->def()->kind())) v = v->def()->input(0);
    if (v->is_param()) marked[static_cast<size_t>(v->id())] = true;
  }
  return marked;
}

// `value` with every element made non-negative.
HostValue NonNegative(const HostValue& value, const Type& type) {
  if (!value.has_tensor()) return value;
  DenseTensor t = value.tensor();
  for (double& x : t.values) x = std::fabs(x);
  return HostValue::OfType(type, std::move(t));
}

}  // namespace

StatusOr<std::vector<HostValue>> RandomInputs(const Function& fn, uint64_t seed,
                                              const RandomInputOptions& options) {
  if (options.int_min > options.int_max) {
    return InvalidArgument(fn.loc()) << "random integer range must not be empty, got ["
                                     << options.int_min << ", " << options.int_max << "]";
  }
  for (const auto& [name, value] : options.overrides) {
    const Value* v = fn.LookupValue(name);
    if (v == nullptr || !v->is_param()) {
      return InvalidArgument(fn.loc()) << "random input override names %" << name
                                       << ", which is not a parameter of @" << fn.name();
    }
  }
  const std::vector<bool> second_moment = SecondMoments(fn);
  std::vector<HostValue> out;
  for (int i = 0; i < fn.num_params(); ++i) {
    const Value& p = *fn.param(i);
    if (auto it = options.overrides.find(p.name()); it != options.overrides.end()) {
      out.push_back(it->second);
      continue;
    }
    if (p.type().is_unknown() || !p.type().HasStaticShape()) {
      return InvalidArgument(p.loc())
             << "parameter " << p.Ref() << " of @" << fn.name()
             << " needs a static type for a random input, got " << p.type().ToString();
    }
    // Parameter i's own stream: one splitmix64 step away from seed + i.
    SplitMix64 stream(seed + static_cast<uint64_t>(i));
    out.push_back(RandomValue(p.type(), stream.Next(), options));
    if (second_moment[static_cast<size_t>(p.id())]) out.back() = NonNegative(out.back(), p.type());
  }
  return out;
}

Status AllClose(const HostValue& actual, const HostValue& expected, double rtol, double atol) {
  const Type a = actual.type().WithDevice(DeviceId());
  const Type e = expected.type().WithDevice(DeviceId());
  if (a != e) return FailedPrecondition() << StructureMismatch(actual, expected);
  if (actual.is_tuple()) {
    for (size_t i = 0; i < actual.elements().size(); ++i) {
      Status s = AllClose(actual.elements()[i], expected.elements()[i], rtol, atol);
      if (!s.ok()) return FailedPrecondition() << "tuple element " << i << ": " << s.message();
    }
    return Status::Ok();
  }
  if (!actual.has_tensor()) return Status::Ok();  // two empty values
  return TensorsClose(actual.tensor(), expected.tensor(), rtol, atol);
}

Status AllClose(const std::vector<HostValue>& actual, const std::vector<HostValue>& expected,
                double rtol, double atol) {
  if (actual.size() != expected.size()) {
    return FailedPrecondition() << "output counts differ: " << actual.size() << " vs "
                                << expected.size();
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    Status s = AllClose(actual[i], expected[i], rtol, atol);
    if (!s.ok()) return FailedPrecondition() << "output " << i << ": " << s.message();
  }
  return Status::Ok();
}

}  // namespace distir
