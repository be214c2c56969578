// Op attributes: typed compile-time parameters such as `axis = 0`.
//
// An attribute is one of a fixed set of kinds (AttrType). The op registry
// (op_registry.h) says which attributes each op takes, of which kind, and which
// are required, so the parser can coerce literals (an integer literal where a
// float is expected, an empty list) and the verifier can check them.
// Attributes of an op are kept sorted by name, which is also the printed order.

#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/dense_tensor.h"
#include "ir/device.h"
#include "ir/dtype.h"
#include "ir/sharding.h"

namespace distir {

enum class AttrType {
  kInt, kFloat, kString, kInts, kFloats, kStrings, kDevice, kDevices, kDType, kTensor,
  kSharding
};

/// Name used in messages and in the registry's spec strings: "int", "ints", ...
std::string_view AttrTypeName(AttrType type);

/// A sharding held by an attribute: shared and immutable, so that the rare
/// sharding attribute does not make every Attribute as large as a Sharding
/// (192 instead of 64 bytes). Compares by value.
struct ShardingRef {
  std::shared_ptr<const Sharding> sharding;
  bool operator==(const ShardingRef& other) const { return *sharding == *other.sharding; }
};

class Attribute {
 public:
  using Storage = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, DeviceId,
                               std::vector<DeviceId>, DType, DenseTensor, ShardingRef>;

  Attribute() : storage_(int64_t{0}) {}
  Attribute(int64_t v) : storage_(v) {}                     // NOLINT
  Attribute(int v) : storage_(int64_t{v}) {}                // NOLINT
  Attribute(double v) : storage_(v) {}                      // NOLINT
  Attribute(std::string v) : storage_(std::move(v)) {}      // NOLINT
  Attribute(const char* v) : storage_(std::string(v)) {}    // NOLINT
  Attribute(std::vector<int64_t> v) : storage_(std::move(v)) {}      // NOLINT
  Attribute(std::vector<double> v) : storage_(std::move(v)) {}       // NOLINT
  Attribute(std::vector<std::string> v) : storage_(std::move(v)) {}  // NOLINT
  Attribute(DeviceId v) : storage_(v) {}                             // NOLINT
  Attribute(std::vector<DeviceId> v) : storage_(std::move(v)) {}     // NOLINT
  Attribute(DType v) : storage_(v) {}                                // NOLINT
  Attribute(DenseTensor v) : storage_(std::move(v)) {}               // NOLINT
  Attribute(Sharding v)  // NOLINT
      : storage_(ShardingRef{std::make_shared<const Sharding>(std::move(v))}) {}

  AttrType type() const { return static_cast<AttrType>(storage_.index()); }

  /// Typed access. REQUIRES: type() is the matching kind.
  int64_t AsInt() const;
  double AsFloat() const;
  const std::string& AsString() const;
  const std::vector<int64_t>& AsInts() const;
  const std::vector<double>& AsFloats() const;
  const std::vector<std::string>& AsStrings() const;
  DeviceId AsDevice() const;
  const std::vector<DeviceId>& AsDevices() const;
  DType AsDType() const;
  const DenseTensor& AsTensor() const;
  const Sharding& AsSharding() const;

  /// Canonical text: 3, 1.0, "s", [1, 2], [d0, d1], f32, dense<2xi64>[1, 2],
  /// <@m, [[a], []]>.
  std::string ToString() const;

  bool operator==(const Attribute& other) const { return storage_ == other.storage_; }

 private:
  Storage storage_;
};

/// Attributes of one op, sorted by name: a flat map (the subset of std::map's
/// interface the project uses). An op has a few attributes, and the passes
/// copy every op's attributes when they clone it (millions of ops a search):
/// one array per op instead of a tree node per attribute. Our own rather than
/// Boost.Container's flat_map: this header is in almost every translation unit,
/// and Boost's doubled their compile time under the sanitizers (CI's ASan
/// build 546 -> 689 s). Inserting or erasing moves the others: no iterator or
/// pointer into the map survives them.
class AttrMap {
 public:
  using value_type = std::pair<std::string, Attribute>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  AttrMap() = default;
  /// The first of equal keys is kept, as std::map keeps it.
  AttrMap(std::initializer_list<value_type> entries);

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  iterator find(std::string_view key);
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const { return find(key) != end() ? 1 : 0; }
  /// The attribute `key`; REQUIRES: present.
  const Attribute& at(std::string_view key) const;
  /// The attribute `key`, inserted default-constructed when absent.
  Attribute& operator[](std::string_view key);
  /// Inserts `key` unless present; the entry and whether it was inserted.
  std::pair<iterator, bool> emplace(std::string key, Attribute value);
  /// emplace; `hint` is not needed (a binary search finds the place).
  iterator emplace_hint(const_iterator hint, std::string key, Attribute value);
  /// Removes `key`; how many were removed (0 or 1).
  size_t erase(std::string_view key);

  bool operator==(const AttrMap& other) const = default;

 private:
  // The first entry whose key is not less than `key`.
  const_iterator LowerBound(std::string_view key) const;

  std::vector<value_type> entries_;
};

}  // namespace distir
