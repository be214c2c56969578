// Element types of tensors and scalars.
//
// The set is the one DistIR programs need: floating types for activations and
// weights (f16, bf16, f32, f64), integers for indices and shapes (i32, i64) and
// bool for masks. Text names follow MLIR ("f32", "i64", "bool").

#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace distir {

enum class DType { kF16, kBF16, kF32, kF64, kI32, kI64, kBool };

/// Bytes per element: 2, 2, 4, 8, 4, 8, 1.
int64_t ByteWidth(DType dtype);

/// Canonical text name, e.g. "f32". The parser accepts exactly these names.
std::string_view DTypeName(DType dtype);

/// The DType named `name`, or nullopt.
std::optional<DType> ParseDType(std::string_view name);

/// True for f16, bf16, f32 and f64.
bool IsFloat(DType dtype);

/// True for i32, i64 and bool (values that are stored exactly as integers).
bool IsIntegral(DType dtype);

}  // namespace distir
