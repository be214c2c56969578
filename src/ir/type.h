// Types of DistIR values.
//
// A tensor type records what every abstract domain needs to know about a tensor
// without its contents: element type, shape and the device holding it. A scalar
// is a single element on a device; a tuple groups other types (the paper packs a
// layer's weights into one). Placing a value on a device is part of its type, so
// moving data between devices always shows up as an explicit op (Send, ...).
// A value whose type is not yet inferred has the unknown type.
//
// Types are small immutable values: copy them freely and compare them with ==.
// Text forms (parsed back exactly by parser.h):
//   tensor<8x512xf32, d0>   tensor<f32, d1> (rank 0)   tensor<?x768xf16> (no device)
//   scalar<i64, d0>         tuple<tensor<4x4xf32, d0>, tensor<4xf32, d0>>

#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/device.h"
#include "ir/dtype.h"

namespace distir {

/// An extent not known statically, printed "?".
inline constexpr int64_t kDynamicDim = -1;

/// The extents of a tensor type: a vector of int64_t that keeps up to
/// kInlineRank extents in place and only allocates for higher ranks, so that
/// creating and copying the types of ordinary tensors never touches the heap
/// (type inference creates one per op). It behaves like the subset of
/// std::vector<int64_t> that shape code uses (iteration, indexing, push_back,
/// resize, insert) and converts implicitly to and from std::vector<int64_t>,
/// and to std::span<const int64_t>.
class Dims {
 public:
  static constexpr size_t kInlineRank = 4;
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;

  Dims() = default;
  Dims(std::initializer_list<int64_t> extents) { assign(extents.begin(), extents.end()); }
  /// Implicit, like a copy: shape code built on std::vector keeps working.
  Dims(const std::vector<int64_t>& extents) { assign(extents.begin(), extents.end()); }
  explicit Dims(size_t n) { resize(n); }
  Dims(size_t n, int64_t value) { resize(n, value); }
  template <std::input_iterator It>
  Dims(It first, It last) {
    assign(first, last);
  }
  Dims(const Dims& other) { CopyFrom(other); }
  Dims(Dims&& other) noexcept { MoveFrom(other); }
  Dims& operator=(const Dims& other) {
    if (this != &other) {
      Release();
      CopyFrom(other);
    }
    return *this;
  }
  Dims& operator=(Dims&& other) noexcept {
    if (this != &other) {
      Release();
      MoveFrom(other);
    }
    return *this;
  }
  ~Dims() { Release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return is_inline() ? inline_ : heap_; }
  const int64_t* data() const { return is_inline() ? inline_ : heap_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  std::reverse_iterator<iterator> rbegin() { return std::reverse_iterator<iterator>(end()); }
  std::reverse_iterator<iterator> rend() { return std::reverse_iterator<iterator>(begin()); }
  std::reverse_iterator<const_iterator> rbegin() const {
    return std::reverse_iterator<const_iterator>(end());
  }
  std::reverse_iterator<const_iterator> rend() const {
    return std::reverse_iterator<const_iterator>(begin());
  }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  /// REQUIRES: i < size() (as for std::vector, unchecked).
  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  /// REQUIRES: !empty().
  int64_t& front() { return data()[0]; }
  const int64_t& front() const { return data()[0]; }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) Grow(n);
  }
  void clear() { size_ = 0; }
  void push_back(int64_t d) {
    if (size_ == capacity_) Grow(2 * capacity_);
    data()[size_++] = d;
  }
  void pop_back() { --size_; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>)
      reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(*first);
  }
  void assign(size_t n, int64_t value) {
    clear();
    resize(n, value);
  }
  /// Inserts [first, last) before `pos`. REQUIRES: the range is not in *this.
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    size_t at = static_cast<size_t>(pos - begin());
    size_t n = static_cast<size_t>(std::distance(first, last));
    reserve(size_ + n);
    int64_t* p = data();
    std::move_backward(p + at, p + size_, p + size_ + n);
    std::copy(first, last, p + at);
    size_ += static_cast<uint32_t>(n);
    return p + at;
  }
  iterator insert(const_iterator pos, int64_t d) {
    const int64_t one[1] = {d};
    return insert(pos, one, one + 1);
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    int64_t* p = data();
    size_t at = static_cast<size_t>(first - p);
    size_t n = static_cast<size_t>(last - first);
    std::move(p + at + n, p + size_, p + at);
    size_ -= static_cast<uint32_t>(n);
    return p + at;
  }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }
  operator std::span<const int64_t>() const { return {data(), size_}; }

  friend bool operator==(const Dims& a, const Dims& b) { return Equal(a.data(), a.size_, b); }
  friend bool operator==(const Dims& a, const std::vector<int64_t>& b) {
    return Equal(b.data(), b.size(), a);
  }

 private:
  bool is_inline() const { return capacity_ == kInlineRank; }
  static bool Equal(const int64_t* a, size_t n, const Dims& b) {
    return n == b.size_ && std::equal(a, a + n, b.data());
  }
  void Grow(size_t n);  // REQUIRES: n > capacity_
  void Release() {
    if (!is_inline()) delete[] heap_;
    capacity_ = kInlineRank;
  }
  // REQUIRES: *this is released (inline).
  void CopyFrom(const Dims& other) {
    if (other.is_inline()) {
      std::copy(other.inline_, other.inline_ + kInlineRank, inline_);
      size_ = other.size_;
      return;
    }
    assign(other.begin(), other.end());
  }
  void MoveFrom(Dims& other) {
    std::copy(other.inline_, other.inline_ + kInlineRank, inline_);  // or heap_, bitwise
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.capacity_ = kInlineRank;
    other.size_ = 0;
    std::fill(other.inline_, other.inline_ + kInlineRank, 0);
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = kInlineRank;  // kInlineRank: inline_ is in use; larger: heap_
  union {
    int64_t inline_[kInlineRank] = {};  // always fully initialized while in use
    int64_t* heap_;
  };
};

enum class TypeKind { kUnknown, kTensor, kScalar, kTuple };

class Type {
 public:
  /// The unknown type (not yet inferred).
  Type() = default;
  Type(const Type& other)
      : kind_(other.kind_), dtype_(other.dtype_), device_(other.device_), shape_(other.shape_) {
    if (other.elements_ != nullptr)
      elements_ = std::make_unique<std::vector<Type>>(*other.elements_);
  }
  Type(Type&& other) noexcept = default;
  Type& operator=(const Type& other) {
    if (this != &other) *this = Type(other);
    return *this;
  }
  Type& operator=(Type&& other) noexcept = default;
  ~Type() = default;

  /// REQUIRES: every extent is >= 0 or kDynamicDim.
  static Type Tensor(DType dtype, Dims shape, DeviceId device = {});
  static Type Scalar(DType dtype, DeviceId device = {});
  static Type Tuple(std::vector<Type> elements);

  TypeKind kind() const { return kind_; }
  bool is_unknown() const { return kind_ == TypeKind::kUnknown; }
  bool is_tensor() const { return kind_ == TypeKind::kTensor; }
  bool is_scalar() const { return kind_ == TypeKind::kScalar; }
  bool is_tuple() const { return kind_ == TypeKind::kTuple; }

  /// REQUIRES: is_tensor() or is_scalar().
  DType dtype() const {
    if (!is_tensor() && !is_scalar()) [[unlikely]]
      FailAccess("dtype");
    return dtype_;
  }
  /// REQUIRES: is_tensor().
  const Dims& shape() const {
    if (!is_tensor()) [[unlikely]]
      FailAccess("shape");
    return shape_;
  }
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }
  /// Device of a tensor or scalar; for a tuple, the device shared by all its
  /// elements, or none when they differ or there is none. Unknown: none.
  DeviceId device() const { return is_tuple() ? TupleDevice() : device_; }
  /// REQUIRES: is_tuple().
  const std::vector<Type>& elements() const;

  /// True when the shape of every tensor in the type is fully known.
  bool HasStaticShape() const {
    if (!is_tensor()) return is_scalar() || (is_tuple() && TupleHasStaticShape());
    for (int64_t d : shape_) {
      if (d == kDynamicDim) return false;
    }
    return true;
  }
  /// Elements of a tensor (1 for rank 0 and scalars). REQUIRES: HasStaticShape().
  int64_t NumElements() const;
  /// Bytes the value occupies: elements times ByteWidth, summed over tuples.
  /// REQUIRES: HasStaticShape(); 0 for the unknown type.
  int64_t SizeInBytes() const;

  /// This type placed on `device` (for a tuple, every element).
  Type WithDevice(DeviceId device) const;
  /// A tensor of the same device and dtype with another shape. REQUIRES: is_tensor().
  Type WithShape(Dims shape) const;
  /// A tensor or scalar of the same shape and device with another dtype.
  Type WithDType(DType dtype) const;

  /// Every distinct device the type mentions, in first-seen order.
  std::vector<DeviceId> Devices() const;

  /// Canonical text (see the file comment); "?" for the unknown type.
  std::string ToString() const;

  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }

 private:
  [[noreturn]] void FailAccess(const char* accessor) const;
  DeviceId TupleDevice() const;
  bool TupleHasStaticShape() const;

  TypeKind kind_ = TypeKind::kUnknown;
  DType dtype_ = DType::kF32;
  DeviceId device_;
  Dims shape_;  // empty unless a tensor
  // Non-null exactly for a tuple. Behind a pointer, which keeps a Type at 64
  // bytes (one cache line): tuples are rare, tensors are everywhere.
  std::unique_ptr<std::vector<Type>> elements_;
};

std::ostream& operator<<(std::ostream& os, const Type& type);

/// "8x512", "?x768", "" (rank 0): the shape part of a tensor type's text.
std::string ShapeToString(std::span<const int64_t> shape);

}  // namespace distir
