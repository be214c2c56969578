#include "ir/op_registry.h"

#include <algorithm>
#include <string>

#include "support/check.h"

namespace distir {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

AttrType ParseAttrType(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(AttrType::kSharding); ++i) {
    if (AttrTypeName(static_cast<AttrType>(i)) == name) return static_cast<AttrType>(i);
  }
  DISTIR_CHECK(false) << "op_kinds.def: unknown attribute type '" << name << "'";
  return AttrType::kInt;
}

// Parses "axis:int?, split:ints?" from op_kinds.def. The strings are ours, so a
// malformed one is a bug and checked, not reported.
std::vector<AttrSpec> ParseAttrSpecs(std::string_view spec) {
  std::vector<AttrSpec> out;
  while (!Trim(spec).empty()) {
    size_t comma = spec.find(',');
    std::string_view item = Trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    size_t colon = item.find(':');
    DISTIR_CHECK(colon != std::string_view::npos) << "op_kinds.def: bad spec " << item;
    bool optional = item.back() == '?';
    std::string_view type = item.substr(colon + 1, item.size() - colon - 1 - (optional ? 1 : 0));
    out.push_back({item.substr(0, colon), ParseAttrType(type), !optional});
  }
  std::sort(out.begin(), out.end(),
            [](const AttrSpec& a, const AttrSpec& b) { return a.name < b.name; });
  return out;
}

std::vector<OpInfo> BuildRegistry() {
  std::vector<OpInfo> ops;
#define DISTIR_OP(name, min_in, max_in, min_out, max_out, cls, attrs)                    \
  ops.push_back({OpKind::k##name, #name, min_in, max_in, min_out, max_out, OpClass::cls, \
                 ParseAttrSpecs(attrs)});
#include "ir/op_kinds.def"
#undef DISTIR_OP
  return ops;
}

}  // namespace

const AttrSpec* OpInfo::FindAttr(std::string_view attr_name) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr_name) return &spec;
  }
  // Attributes every op may carry (op_registry.h).
  static const AttrSpec kTask{"task", AttrType::kInts, false};
  static const AttrSpec kRecompute{"recompute", AttrType::kInt, false};
  if (attr_name == kTask.name) return &kTask;
  if (attr_name == kRecompute.name) return &kRecompute;
  return nullptr;
}

const std::vector<OpInfo>& AllOps() {
  static const std::vector<OpInfo>* const kOps = new std::vector<OpInfo>(BuildRegistry());
  return *kOps;
}

const OpInfo& GetOpInfo(OpKind kind) {
  DISTIR_CHECK(kind != OpKind::kCall) << "calls have no registry entry";
  return AllOps()[static_cast<size_t>(kind)];
}

std::string_view OpKindName(OpKind kind) {
  return kind == OpKind::kCall ? std::string_view("call") : GetOpInfo(kind).name;
}

std::optional<OpKind> LookupOpKind(std::string_view name) {
  for (const OpInfo& info : AllOps()) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

bool IsCommunication(OpKind kind) {
  return kind != OpKind::kCall && GetOpInfo(kind).op_class == OpClass::kCommunication;
}

bool IsMeshCollective(OpKind kind) {
  switch (kind) {
    case OpKind::kMeshAllReduce:
    case OpKind::kMeshReduceScatter:
    case OpKind::kMeshAllGather:
    case OpKind::kMeshAllToAll:
    case OpKind::kMeshTransfer:
      return true;
    default:
      return false;
  }
}

}  // namespace distir
