#include "ir/attribute.h"

#include <algorithm>
#include <array>

#include "support/check.h"
#include "support/str_util.h"

namespace distir {
namespace {

template <typename T>
const T& Get(const Attribute::Storage& s, AttrType want, AttrType have) {
  DISTIR_CHECK(want == have) << "attribute is " << AttrTypeName(have) << ", not "
                             << AttrTypeName(want);
  return std::get<T>(s);
}

template <typename T, typename F>
std::string ListToString(const std::vector<T>& items, F format) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += format(items[i]);
  }
  return out + "]";
}

}  // namespace

std::string_view AttrTypeName(AttrType type) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "int", "float", "string", "ints", "floats", "strings", "device", "devices", "dtype",
      "tensor", "sharding"};
  return kNames[static_cast<size_t>(type)];
}

int64_t Attribute::AsInt() const { return Get<int64_t>(storage_, AttrType::kInt, type()); }
double Attribute::AsFloat() const { return Get<double>(storage_, AttrType::kFloat, type()); }
const std::string& Attribute::AsString() const {
  return Get<std::string>(storage_, AttrType::kString, type());
}
const std::vector<int64_t>& Attribute::AsInts() const {
  return Get<std::vector<int64_t>>(storage_, AttrType::kInts, type());
}
const std::vector<double>& Attribute::AsFloats() const {
  return Get<std::vector<double>>(storage_, AttrType::kFloats, type());
}
const std::vector<std::string>& Attribute::AsStrings() const {
  return Get<std::vector<std::string>>(storage_, AttrType::kStrings, type());
}
DeviceId Attribute::AsDevice() const { return Get<DeviceId>(storage_, AttrType::kDevice, type()); }
const std::vector<DeviceId>& Attribute::AsDevices() const {
  return Get<std::vector<DeviceId>>(storage_, AttrType::kDevices, type());
}
DType Attribute::AsDType() const { return Get<DType>(storage_, AttrType::kDType, type()); }
const DenseTensor& Attribute::AsTensor() const {
  return Get<DenseTensor>(storage_, AttrType::kTensor, type());
}
const Sharding& Attribute::AsSharding() const {
  return *Get<ShardingRef>(storage_, AttrType::kSharding, type()).sharding;
}

std::string Attribute::ToString() const {
  switch (type()) {
    case AttrType::kInt: return std::to_string(AsInt());
    case AttrType::kFloat: return FormatDouble(AsFloat());
    case AttrType::kString: return QuoteString(AsString());
    case AttrType::kInts:
      return ListToString(AsInts(), [](int64_t v) { return std::to_string(v); });
    case AttrType::kFloats: return ListToString(AsFloats(), FormatDouble);
    case AttrType::kStrings:
      return ListToString(AsStrings(), [](const std::string& s) { return QuoteString(s); });
    case AttrType::kDevice: return AsDevice().ToString();
    case AttrType::kDevices:
      return ListToString(AsDevices(), [](DeviceId d) { return d.ToString(); });
    case AttrType::kDType: return std::string(DTypeName(AsDType()));
    case AttrType::kTensor: return AsTensor().ToString();
    case AttrType::kSharding: return AsSharding().ToString();
  }
  return "";
}

AttrMap::AttrMap(std::initializer_list<value_type> entries) {
  for (const value_type& e : entries) emplace(e.first, e.second);
}

AttrMap::const_iterator AttrMap::LowerBound(std::string_view key) const {
  return std::lower_bound(entries_.begin(), entries_.end(), key,
                          [](const value_type& e, std::string_view k) { return e.first < k; });
}

AttrMap::const_iterator AttrMap::find(std::string_view key) const {
  const_iterator it = LowerBound(key);
  return it != entries_.end() && it->first == key ? it : entries_.end();
}

AttrMap::iterator AttrMap::find(std::string_view key) {
  return entries_.begin() + (std::as_const(*this).find(key) - entries_.cbegin());
}

const Attribute& AttrMap::at(std::string_view key) const {
  const_iterator it = find(key);
  DISTIR_CHECK(it != entries_.end()) << "no attribute '" << key << "'";
  return it->second;
}

Attribute& AttrMap::operator[](std::string_view key) {
  return emplace(std::string(key), Attribute()).first->second;
}

std::pair<AttrMap::iterator, bool> AttrMap::emplace(std::string key, Attribute value) {
  const_iterator at = LowerBound(key);
  if (at != entries_.end() && at->first == key)
    return {entries_.begin() + (at - entries_.cbegin()), false};
  return {entries_.emplace(at, std::move(key), std::move(value)), true};
}

AttrMap::iterator AttrMap::emplace_hint(const_iterator /*hint*/, std::string key, Attribute value) {
  return emplace(std::move(key), std::move(value)).first;
}

size_t AttrMap::erase(std::string_view key) {
  const_iterator it = find(key);
  if (it == entries_.end()) return 0;
  entries_.erase(it);
  return 1;
}

}  // namespace distir
