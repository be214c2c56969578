// Overflow-checked integer arithmetic for sizes and counts derived from input.
//
// Sizes, element counts and products of parallel degrees are int64 everywhere;
// a product of user-given numbers (d_model x d_model, D x K) that does not fit
// must become an error naming the input, never a wrapped value (signed overflow
// is undefined behaviour, and in practice a negative size or a division by
// zero far from the input that caused it). These helpers return nullopt on
// overflow so that the caller can say which key or op was too large.

#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace distir {

/// a * b, or nullopt when it does not fit in int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

/// a + b, or nullopt when it does not fit in int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

/// The product of `factors` (1 when empty), or nullopt when it, or any partial
/// product, does not fit in int64.
inline std::optional<int64_t> CheckedProduct(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(out, f, &out)) return std::nullopt;
  }
  return out;
}

}  // namespace distir
