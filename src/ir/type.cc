#include "ir/type.h"

#include <algorithm>
#include <cstdlib>
#include <ostream>

#include "support/check.h"

namespace distir {

void Dims::Grow(size_t n) {
  n = std::max(n, 2 * size_t{capacity_});
  int64_t* grown = new int64_t[n];
  std::copy(begin(), end(), grown);
  Release();
  heap_ = grown;
  capacity_ = static_cast<uint32_t>(n);
}

Type Type::Tensor(DType dtype, Dims shape, DeviceId device) {
  for (int64_t d : shape) DISTIR_CHECK(d >= 0 || d == kDynamicDim) << "bad extent " << d;
  Type t;
  t.kind_ = TypeKind::kTensor;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.device_ = device;
  return t;
}

Type Type::Scalar(DType dtype, DeviceId device) {
  Type t;
  t.kind_ = TypeKind::kScalar;
  t.dtype_ = dtype;
  t.device_ = device;
  return t;
}

Type Type::Tuple(std::vector<Type> elements) {
  Type t;
  t.kind_ = TypeKind::kTuple;
  t.elements_ = std::make_unique<std::vector<Type>>(std::move(elements));
  return t;
}

void Type::FailAccess(const char* accessor) const {
  DISTIR_CHECK(false) << accessor << "() of " << ToString();
  std::abort();  // not reached: DISTIR_CHECK(false) aborts
}

DeviceId Type::TupleDevice() const {
  if (elements_->empty()) return {};
  DeviceId first = (*elements_)[0].device();
  for (const Type& e : *elements_) {
    if (e.device() != first) return {};
  }
  return first;
}

const std::vector<Type>& Type::elements() const {
  DISTIR_CHECK(is_tuple()) << "elements() of " << ToString();
  return *elements_;
}

bool Type::TupleHasStaticShape() const {
  for (const Type& e : *elements_) {
    if (!e.HasStaticShape()) return false;
  }
  return true;
}

int64_t Type::NumElements() const {
  DISTIR_CHECK(HasStaticShape()) << "NumElements() of " << ToString();
  if (is_tuple()) {
    int64_t n = 0;
    for (const Type& e : *elements_) n += e.NumElements();
    return n;
  }
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

int64_t Type::SizeInBytes() const {
  if (is_unknown()) return 0;
  if (is_tuple()) {
    int64_t n = 0;
    for (const Type& e : *elements_) n += e.SizeInBytes();
    return n;
  }
  return NumElements() * ByteWidth(dtype_);
}

Type Type::WithDevice(DeviceId device) const {
  Type t = *this;
  t.device_ = is_tuple() ? DeviceId() : device;
  if (is_tuple()) {
    for (Type& e : *t.elements_) e = e.WithDevice(device);
  }
  return t;
}

Type Type::WithShape(Dims shape) const {
  DISTIR_CHECK(is_tensor()) << "WithShape() of " << ToString();
  return Tensor(dtype_, std::move(shape), device_);
}

Type Type::WithDType(DType dtype) const {
  DISTIR_CHECK(is_tensor() || is_scalar()) << "WithDType() of " << ToString();
  Type t = *this;
  t.dtype_ = dtype;
  return t;
}

std::vector<DeviceId> Type::Devices() const {
  std::vector<DeviceId> out;
  auto add = [&out](DeviceId d) {
    if (!d.has_value()) return;
    for (DeviceId seen : out) {
      if (seen == d) return;
    }
    out.push_back(d);
  };
  if (!is_tuple()) {
    add(device_);
    return out;
  }
  for (const Type& e : *elements_) {
    for (DeviceId d : e.Devices()) add(d);
  }
  return out;
}

std::string ShapeToString(std::span<const int64_t> shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += "x";
    out += shape[i] == kDynamicDim ? std::string("?") : std::to_string(shape[i]);
  }
  return out;
}

std::string Type::ToString() const {
  auto with_device = [this](std::string body) {
    if (device_.has_value()) body += ", " + device_.ToString();
    return body + ">";
  };
  switch (kind_) {
    case TypeKind::kUnknown: return "?";
    case TypeKind::kScalar: return with_device("scalar<" + std::string(DTypeName(dtype_)));
    case TypeKind::kTensor: {
      std::string body = "tensor<" + ShapeToString(shape_);
      if (!shape_.empty()) body += "x";
      return with_device(body + std::string(DTypeName(dtype_)));
    }
    case TypeKind::kTuple: {
      std::string body = "tuple<";
      for (size_t i = 0; i < elements_->size(); ++i) {
        if (i > 0) body += ", ";
        body += (*elements_)[i].ToString();
      }
      return body + ">";
    }
  }
  return "?";
}

bool Type::operator==(const Type& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case TypeKind::kUnknown: return true;
    case TypeKind::kScalar: return dtype_ == other.dtype_ && device_ == other.device_;
    case TypeKind::kTensor:
      return dtype_ == other.dtype_ && shape_ == other.shape_ && device_ == other.device_;
    case TypeKind::kTuple:
      return *elements_ == *other.elements_;
  }
  return false;
}

std::ostream& operator<<(std::ostream& os, const Type& type) { return os << type.ToString(); }

}  // namespace distir
