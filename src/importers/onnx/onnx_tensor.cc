#include "importers/onnx/onnx_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "interp/cpu_domain.h"

namespace distir::onnx_import {
namespace {

using onnx::TensorProto;

// More elements than this is surely a corrupt file for a tool that holds
// weights as doubles (2^40 doubles are 8 TiB).
constexpr int64_t kMaxElements = int64_t{1} << 40;

double HalfToDouble(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double v = 0;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);  // zero or subnormal
  } else if (exponent == 31) {
    v = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                      : std::numeric_limits<double>::infinity();
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

double BFloat16ToDouble(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

int64_t StoredWidth(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
      return 8;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::BOOL:
      return 1;
    default:
      return 0;
  }
}

template <typename T>
T LoadLittleEndian(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // x86-64 and arm64 are little-endian, as ONNX's raw_data
  return v;
}

double DecodeRaw(int32_t elem_type, const char* p) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return LoadLittleEndian<float>(p);
    case TensorProto::DOUBLE:
      return LoadLittleEndian<double>(p);
    case TensorProto::INT32:
      return LoadLittleEndian<int32_t>(p);
    case TensorProto::INT64:
      return static_cast<double>(LoadLittleEndian<int64_t>(p));
    case TensorProto::FLOAT16:
      return HalfToDouble(LoadLittleEndian<uint16_t>(p));
    case TensorProto::BFLOAT16:
      return BFloat16ToDouble(LoadLittleEndian<uint16_t>(p));
    default:  // BOOL
      return *p != 0 ? 1.0 : 0.0;
  }
}

Status ReadRaw(const TensorProto& t, int64_t n, std::vector<double>& out, const std::string& what) {
  const int64_t width = StoredWidth(t.data_type());
  const std::string& raw = t.raw_data();
  if (static_cast<int64_t>(raw.size()) != n * width) {
    return InvalidArgument() << what << " has " << raw.size() << " bytes of raw data, but its shape "
                             << "needs " << n * width << " (" << n << " elements of "
                             << OnnxTypeName(t.data_type()) << ")";
  }
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(DecodeRaw(t.data_type(), raw.data() + i * width));
  return Status::Ok();
}

// The typed field that holds `elem_type` and its size.
int64_t TypedFieldSize(const TensorProto& t) {
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      return t.float_data_size();
    case TensorProto::DOUBLE:
      return t.double_data_size();
    case TensorProto::INT64:
      return t.int64_data_size();
    default:  // INT32, BOOL, FLOAT16, BFLOAT16
      return t.int32_data_size();
  }
}

double TypedValue(const TensorProto& t, int i) {
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      return t.float_data(i);
    case TensorProto::DOUBLE:
      return t.double_data(i);
    case TensorProto::INT64:
      return static_cast<double>(t.int64_data(i));
    case TensorProto::FLOAT16:
      return HalfToDouble(static_cast<uint16_t>(t.int32_data(i)));
    case TensorProto::BFLOAT16:
      return BFloat16ToDouble(static_cast<uint16_t>(t.int32_data(i)));
    case TensorProto::BOOL:
      return t.int32_data(i) != 0 ? 1.0 : 0.0;
    default:  // INT32
      return t.int32_data(i);
  }
}

Status ReadTyped(const TensorProto& t, int64_t n, std::vector<double>& out,
                 const std::string& what) {
  const int64_t size = TypedFieldSize(t);
  if (size != n) {
    return InvalidArgument() << what << " holds " << size << " values, but its shape needs " << n;
  }
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < static_cast<int>(n); ++i) out.push_back(TypedValue(t, i));
  return Status::Ok();
}

}  // namespace

std::optional<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

std::string OnnxTypeName(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  }
  return "type " + std::to_string(elem_type);
}

StatusOr<DType> ImportDType(int32_t elem_type, const std::optional<DType>& float_override,
                            const std::string& what) {
  std::optional<DType> dtype = DTypeFromOnnx(elem_type);
  if (!dtype) {
    return InvalidArgument() << what << " has element type " << OnnxTypeName(elem_type)
                             << ", which DistIR does not support (FLOAT, DOUBLE, FLOAT16, "
                                "BFLOAT16, INT32, INT64, BOOL)";
  }
  if (float_override && IsFloat(*dtype)) return *float_override;
  return *dtype;
}

StatusOr<std::vector<int64_t>> TensorDims(const TensorProto& tensor, const std::string& what) {
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument() << what << " has a negative extent " << d;
    if (d > 0 && n > kMaxElements / d) {
      return InvalidArgument() << what << " has more than 2^40 elements (corrupt shape?)";
    }
    n *= d;
  }
  return dims;
}

StatusOr<DenseTensor> ReadTensor(const TensorProto& tensor,
                                 const std::optional<DType>& float_override,
                                 const std::string& what) {
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    return InvalidArgument() << what << " keeps its data in an external file, which the importer "
                                "does not read (re-export without external data)";
  }
  DISTIR_ASSIGN_OR_RETURN(DType dtype, ImportDType(tensor.data_type(), float_override, what));
  DenseTensor out;
  out.dtype = dtype;
  DISTIR_ASSIGN_OR_RETURN(out.shape, TensorDims(tensor, what));
  const int64_t n = ShapeNumElements(out.shape);
  if (tensor.has_raw_data()) {
    DISTIR_RETURN_IF_ERROR(ReadRaw(tensor, n, out.values, what));
  } else {
    DISTIR_RETURN_IF_ERROR(ReadTyped(tensor, n, out.values, what));
  }
  RoundTensorToDType(out);
  return out;
}

}  // namespace distir::onnx_import
