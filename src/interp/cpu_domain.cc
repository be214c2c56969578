#include "interp/cpu_domain.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "interp/cpu_kernels.h"
#include "interp/shape_domain.h"
#include "support/check.h"

namespace distir {
namespace {

// Rounds |value| to a binary float with `mantissa_bits` explicit fraction bits
// whose smallest normal exponent is `min_exp`, to nearest with ties to even.
// Dividing by the quantum (a power of two) is exact, so std::nearbyint (in
// the default round-to-nearest-even mode) rounds exactly once; doing this from
// double directly avoids the double rounding of going through float.
//
// Normal results (|value| >= min_normal = 2^min_exp) take a shorter way with
// the same result: the quantum is the value's own ulp at `mantissa_bits`, so
// rounding the double's significand bits to nearest-even at that position and
// clearing the rest is the same rounding (a carry into the exponent included).
// Random inputs of billion-parameter programs round every element, and frexp,
// ldexp and nearbyint took most of `distir run`'s set-up (perf, bf16 MLP).
double RoundToBinary(double value, int mantissa_bits, int min_exp, double min_normal,
                     double max_finite) {
  if (std::isnan(value) || std::isinf(value) || value == 0) return value;
  const double magnitude = std::fabs(value);
  if (magnitude >= min_normal) {
    const int drop = 52 - mantissa_bits;
    uint64_t bits = std::bit_cast<uint64_t>(magnitude);
    bits += (uint64_t{1} << (drop - 1)) - 1 + ((bits >> drop) & 1);
    bits &= ~((uint64_t{1} << drop) - 1);
    const double rounded = std::bit_cast<double>(bits);
    return std::copysign(rounded > max_finite ? std::numeric_limits<double>::infinity() : rounded,
                         value);
  }
  int exp = 0;
  std::frexp(magnitude, &exp);  // magnitude = f * 2^exp, f in [0.5, 1)
  const int unbiased = std::max(exp - 1, min_exp);
  const double quantum = std::ldexp(1.0, unbiased - mantissa_bits);
  double rounded = std::nearbyint(magnitude / quantum) * quantum;
  if (rounded > max_finite) rounded = std::numeric_limits<double>::infinity();
  return std::copysign(rounded, value);
}

HostValue ZerosOf(const Type& type) {
  if (type.is_tuple()) {
    std::vector<HostValue> elements;
    for (const Type& e : type.elements()) elements.push_back(ZerosOf(e));
    return HostValue::Tuple(std::move(elements));
  }
  if (type.is_unknown()) return HostValue();
  DenseTensor t{type.dtype(), {}, {}};
  if (type.is_tensor()) {
    for (int64_t d : type.shape()) t.shape.push_back(d == kDynamicDim ? 0 : d);
  }
  t.values.assign(ShapeNumElements(t.shape), 0.0);
  return HostValue::OfType(type, std::move(t));  // resolves the dynamic extents
}

bool ExtentsFit(std::span<const int64_t> type_shape, std::span<const int64_t> shape) {
  if (type_shape.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (type_shape[i] != kDynamicDim && type_shape[i] != shape[i]) return false;
  }
  return true;
}

}  // namespace

double RoundToDType(double value, DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return value;
    case DType::kF32:
      return static_cast<double>(static_cast<float>(value));
    case DType::kF16:
      return RoundToBinary(value, 10, -14, 0x1p-14, 65504.0);
    case DType::kBF16:
      return RoundToBinary(value, 7, -126, 0x1p-126, 0x1.fep127);
    case DType::kI32:
    case DType::kI64:
      return std::isnan(value) ? 0.0 : std::trunc(value);
    case DType::kBool:
      return value != 0 ? 1.0 : 0.0;
  }
  return value;
}

void RoundTensorToDType(DenseTensor& tensor) {
  if (tensor.dtype == DType::kF64) return;
  for (double& v : tensor.values) v = RoundToDType(v, tensor.dtype);
}

HostValue HostValue::Tensor(DenseTensor tensor, DeviceId device) {
  const Type type = Type::Tensor(tensor.dtype, tensor.shape, device);
  return OfType(type, std::move(tensor));
}

HostValue HostValue::Scalar(DType dtype, double value, DeviceId device) {
  return OfType(Type::Scalar(dtype, device), DenseTensor{dtype, {}, {value}});
}

HostValue HostValue::Tuple(std::vector<HostValue> elements) {
  std::vector<Type> types;
  types.reserve(elements.size());
  for (const HostValue& e : elements) types.push_back(e.type());
  HostValue v;
  v.type_ = Type::Tuple(std::move(types));
  v.elements_ = std::move(elements);
  return v;
}

HostValue HostValue::OfType(const Type& type, DenseTensor tensor) {
  DISTIR_CHECK(tensor.IsWellFormed()) << "malformed host tensor " << tensor.ToString();
  DISTIR_CHECK(type.is_tensor() || type.is_scalar())
      << "host tensor of non-tensor type " << type.ToString();
  DISTIR_CHECK(type.dtype() == tensor.dtype)
      << "host tensor of dtype " << DTypeName(tensor.dtype) << " for type " << type.ToString();
  DISTIR_CHECK(ExtentsFit(
      type.is_tensor() ? std::span<const int64_t>(type.shape()) : std::span<const int64_t>(),
      tensor.shape))
      << "host tensor of shape [" << ShapeToString(tensor.shape) << "] for type "
      << type.ToString();
  HostValue v;
  v.type_ = type.is_tensor() ? type.WithShape(tensor.shape) : type;
  v.tensor_ = std::make_shared<const DenseTensor>(std::move(tensor));
  return v;
}

const DenseTensor& HostValue::tensor() const {
  DISTIR_CHECK(has_tensor()) << "tensor() of host value " << type_.ToString();
  return *tensor_;
}

const std::vector<HostValue>& HostValue::elements() const {
  DISTIR_CHECK(is_tuple()) << "elements() of host value " << type_.ToString();
  return elements_;
}

HostValue HostValue::WithDevice(DeviceId device) const {
  HostValue v = *this;
  v.type_ = type_.WithDevice(device);
  for (HostValue& e : v.elements_) e = e.WithDevice(device);
  return v;
}

std::string HostValue::ToString() const {
  if (is_tuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i > 0) out += ", ";
      out += elements_[i].ToString();
    }
    return out + ")";
  }
  if (!has_tensor()) return "empty";
  std::string out = tensor_->ToString();
  if (device().has_value()) out += " on " + device().ToString();
  return out;
}

bool HostValue::operator==(const HostValue& other) const {
  if (type_ != other.type_ || has_tensor() != other.has_tensor()) return false;
  if (has_tensor() && *tensor_ != *other.tensor_) return false;
  return elements_ == other.elements_;
}

HostValue ValueTraits<HostValue>::FromType(const Type& type) { return ZerosOf(type); }

void RegisterCpuKernels(CpuDomain& domain) {
  cpu::RegisterComputeKernels(domain);
  cpu::RegisterShapeKernels(domain);
  cpu::RegisterTrainingKernels(domain);
  cpu::RegisterCommKernels(domain);
  cpu::RegisterTransformerKernels(domain);
}

const CpuDomain& DefaultCpuDomain() {
  // Built on first use (thread-safe), never destroyed, like DefaultShapeDomain().
  static const CpuDomain* const kDomain = [] {
    auto* domain = new CpuDomain();
    RegisterCpuKernels(*domain);
    return domain;
  }();
  return *kDomain;
}

namespace cpu {

StatusOr<std::vector<Type>> ResultTypes(const Op& op, Args in) {
  std::vector<const Type*> ptrs(in.size());
  for (int i = 0; i < in.size(); ++i) ptrs[i] = &in[i].type();
  return DefaultShapeDomain().Apply(op, ArgList<Type>(ptrs.data(), in.size()));
}

HostValue MakeResult(const Type& rule_type, DenseTensor tensor) {
  tensor.dtype = rule_type.dtype();
  RoundTensorToDType(tensor);
  return HostValue::OfType(rule_type, std::move(tensor));
}

Result One(HostValue v) {
  Values out;
  out.push_back(std::move(v));
  return out;
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

Shape Strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out) {
  DISTIR_CHECK(shape::BroadcastsTo(in, out))
      << "[" << ShapeToString(in) << "] does not broadcast to [" << ShapeToString(out) << "]";
  const Shape own = Strides(in);
  const size_t offset = out.size() - in.size();
  Shape strides(out.size(), 0);  // 0 along broadcast dims
  for (size_t i = 0; i < in.size(); ++i) strides[offset + i] = in[i] == 1 ? 0 : own[i];
  std::vector<int64_t> index(ShapeNumElements(out));
  Shape pos(out.size(), 0);
  int64_t flat_in = 0;
  for (int64_t& slot : index) {
    slot = flat_in;
    // Advance the multi-index, keeping flat_in in step with it.
    for (size_t d = out.size(); d-- > 0;) {
      flat_in += strides[d];
      if (++pos[d] < out[d]) break;
      flat_in -= strides[d] * out[d];
      pos[d] = 0;
    }
  }
  return index;
}

DenseTensor SumToShape(const DenseTensor& t, const Shape& shape) {
  DenseTensor out{t.dtype, shape, std::vector<double>(ShapeNumElements(shape), 0.0)};
  if (shape == t.shape) {
    out.values = t.values;
    return out;
  }
  const std::vector<int64_t> index = BroadcastIndex(shape, t.shape);
  for (size_t i = 0; i < index.size(); ++i) out.values[index[i]] += t.values[i];
  return out;
}

Shape Ints(const HostValue& v) {
  const DenseTensor& t = v.tensor();
  Shape out(t.values.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(t.values[i]);
  return out;
}

AxisSplit SplitAround(const Shape& shape, int64_t axis) {
  DISTIR_CHECK(axis >= 0 && axis < static_cast<int64_t>(shape.size())) << "axis out of range";
  return {Product(shape, 0, axis), shape[axis], Product(shape, axis + 1, shape.size())};
}

}  // namespace cpu
}  // namespace distir
