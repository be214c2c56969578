#include "interp/mixed_domain.h"

#include "support/check.h"

namespace distir {

MixedValue MixedValue::Concrete(DenseTensor tensor, DeviceId device) {
  DISTIR_CHECK(tensor.IsWellFormed()) << "malformed concrete tensor " << tensor.ToString();
  MixedValue v(Type::Tensor(tensor.dtype, tensor.shape, device));
  v.concrete_ = std::make_shared<const DenseTensor>(std::move(tensor));
  return v;
}

MixedValue MixedValue::Make(DenseTensor tensor, DeviceId device) {
  if (IsIntegral(tensor.dtype) && tensor.NumElements() <= kMaxConcreteElements) {
    return Concrete(std::move(tensor), device);
  }
  return MixedValue(Type::Tensor(tensor.dtype, std::move(tensor.shape), device));
}

const DenseTensor& MixedValue::tensor() const {
  DISTIR_CHECK(is_concrete()) << "tensor() of abstract value " << type_.ToString();
  return *concrete_;
}

MixedValue MixedValue::WithDevice(DeviceId device) const {
  MixedValue v = *this;
  v.type_ = type_.WithDevice(device);
  return v;
}

std::string MixedValue::ToString() const {
  if (!is_concrete()) return type_.ToString();
  std::string out = concrete_->ToString();
  if (device().has_value()) out += " on " + device().ToString();
  return out;
}

bool MixedValue::operator==(const MixedValue& other) const {
  if (type_ != other.type_ || is_concrete() != other.is_concrete()) return false;
  return !is_concrete() || *concrete_ == *other.concrete_;
}

const MixedDomain& DefaultMixedDomain() {
  // Built on first use (thread-safe), never destroyed, like DefaultShapeDomain().
  static const MixedDomain* const kDomain = [] {
    auto* domain = new MixedDomain();
    RegisterMixedRules(*domain);
    return domain;
  }();
  return *kDomain;
}

}  // namespace distir
