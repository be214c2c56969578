#include "ir/dtype.h"

#include <array>

namespace distir {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int64_t bytes;
};

constexpr std::array<DTypeInfo, 7> kDTypes = {{
    {DType::kF16, "f16", 2},
    {DType::kBF16, "bf16", 2},
    {DType::kF32, "f32", 4},
    {DType::kF64, "f64", 8},
    {DType::kI32, "i32", 4},
    {DType::kI64, "i64", 8},
    {DType::kBool, "bool", 1},
}};

const DTypeInfo& InfoOf(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

int64_t ByteWidth(DType dtype) { return InfoOf(dtype).bytes; }

std::string_view DTypeName(DType dtype) { return InfoOf(dtype).name; }

std::optional<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

bool IsFloat(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 || dtype == DType::kF32 ||
         dtype == DType::kF64;
}

bool IsIntegral(DType dtype) { return !IsFloat(dtype); }

}  // namespace distir
