#include "lowering/dedupe.h"

#include <functional>
#include <string>
#include <unordered_map>


namespace distir {
namespace {

// A device as seen from the rank on `self`: -2 for self, else its id.
int64_t Relative(DeviceId d, DeviceId self) {
  if (d == self) return -2;
  return d.has_value() ? d.value() : -1;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// Tuples nest at most 64 deep (parser), so recursion over a type is bounded.
uint64_t HashType(const Type& t, DeviceId self, uint64_t h) {
  h = Mix(h, static_cast<uint64_t>(t.kind()));
  switch (t.kind()) {
    case TypeKind::kUnknown:
      return h;
    case TypeKind::kTuple:
      for (const Type& e : t.elements()) h = HashType(e, self, h);
      return Mix(h, t.elements().size());
    case TypeKind::kTensor:
      for (int64_t d : t.shape()) h = Mix(h, static_cast<uint64_t>(d));
      h = Mix(h, t.shape().size());
      break;
    case TypeKind::kScalar:
      break;
  }
  h = Mix(h, static_cast<uint64_t>(t.dtype()));
  return Mix(h, static_cast<uint64_t>(Relative(t.device(), self)));
}

bool SameType(const Type& a, DeviceId da, const Type& b, DeviceId db) {
  if (a.kind() != b.kind()) return false;
  if (a.is_unknown()) return true;
  if (a.is_tuple()) {
    if (a.elements().size() != b.elements().size()) return false;
    for (size_t i = 0; i < a.elements().size(); ++i) {
      if (!SameType(a.elements()[i], da, b.elements()[i], db)) return false;
    }
    return true;
  }
  if (a.dtype() != b.dtype() || Relative(a.device(), da) != Relative(b.device(), db)) return false;
  return !a.is_tensor() || a.shape() == b.shape();
}

// A Collective's group is literal and its rank is derived (file comment of
// dedupe.h); every other device attribute is seen from the rank.
bool SameAttr(OpKind kind, const std::string& name, const Attribute& a, DeviceId da,
              const Attribute& b, DeviceId db) {
  if (kind == OpKind::kCollective && name == "rank") return true;
  if (kind == OpKind::kCollective || a.type() != b.type()) return a == b;
  if (a.type() == AttrType::kDevice) {
    return Relative(a.AsDevice(), da) == Relative(b.AsDevice(), db);
  }
  if (a.type() != AttrType::kDevices) return a == b;
  const std::vector<DeviceId>& x = a.AsDevices();
  const std::vector<DeviceId>& y = b.AsDevices();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (Relative(x[i], da) != Relative(y[i], db)) return false;
  }
  return true;
}

bool SameOp(const Op& a, DeviceId da, const Op& b, DeviceId db) {
  if (a.kind() != b.kind() || a.num_inputs() != b.num_inputs() ||
      a.num_results() != b.num_results() || a.attrs().size() != b.attrs().size()) {
    return false;
  }
  if (a.is_call() && a.callee() != b.callee()) return false;
  for (int i = 0; i < a.num_inputs(); ++i) {
    if (a.input(i)->id() != b.input(i)->id()) return false;
  }
  for (int i = 0; i < a.num_results(); ++i) {
    if (!SameType(a.result(i)->type(), da, b.result(i)->type(), db)) return false;
  }
  auto ia = a.attrs().begin();
  for (auto ib = b.attrs().begin(); ib != b.attrs().end(); ++ia, ++ib) {
    if (ia->first != ib->first || !SameAttr(a.kind(), ia->first, ia->second, da, ib->second, db)) {
      return false;
    }
  }
  return true;
}

// Hash consistent with SameUpToOwnDevice: it covers the structure and types but
// leaves attributes to the exact comparison (a collision costs one comparison).
uint64_t HashProgram(const Function& fn, DeviceId self) {
  uint64_t h = Mix(0, fn.params().size());
  for (const auto& p : fn.params()) h = HashType(p->type(), self, h);
  for (const auto& op : fn.ops()) {
    h = Mix(h, static_cast<uint64_t>(op->kind()));
    if (op->is_call()) h = Mix(h, std::hash<std::string>()(op->callee()));
    for (const Value* v : op->inputs()) h = Mix(h, static_cast<uint64_t>(v->id()));
    for (const auto& r : op->results()) h = HashType(r->type(), self, h);
  }
  for (const Value* v : fn.returns()) h = Mix(h, static_cast<uint64_t>(v->id()));
  return h;
}

}  // namespace

bool SameUpToOwnDevice(const Function& a, DeviceId a_device, const Function& b,
                       DeviceId b_device) {
  if (a.num_params() != b.num_params() || a.ops().size() != b.ops().size() ||
      a.returns().size() != b.returns().size()) {
    return false;
  }
  for (int i = 0; i < a.num_params(); ++i) {
    if (!SameType(a.param(i)->type(), a_device, b.param(i)->type(), b_device)) return false;
  }
  for (size_t i = 0; i < a.ops().size(); ++i) {
    if (!SameOp(*a.ops()[i], a_device, *b.ops()[i], b_device)) return false;
  }
  for (size_t i = 0; i < a.returns().size(); ++i) {
    if (a.returns()[i]->id() != b.returns()[i]->id()) return false;
  }
  return true;
}

std::vector<RankGroup> GroupIdenticalRanks(const std::vector<RankProgram>& programs) {
  std::vector<RankGroup> groups;
  // Hash -> groups whose first program has that hash.
  std::unordered_multimap<uint64_t, size_t> by_hash;
  for (size_t i = 0; i < programs.size(); ++i) {
    const RankProgram& p = programs[i];
    const uint64_t h = HashProgram(*p.function, p.device);
    auto [begin, end] = by_hash.equal_range(h);
    auto match = begin;
    for (; match != end; ++match) {
      const RankProgram& first = programs[groups[match->second].program];
      if (SameUpToOwnDevice(*first.function, first.device, *p.function, p.device)) break;
    }
    if (match != end) {
      groups[match->second].ranks.push_back(p.device);
      continue;
    }
    by_hash.emplace(h, groups.size());
    groups.push_back(RankGroup{static_cast<int>(i), {p.device}});
  }
  return groups;
}

}  // namespace distir
