#include "sharding/annotate.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "sharding/rebuilder.h"

namespace distir::sharding {

StatusOr<ParamRule> ParseParamRule(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument() << "sharding rule '" << text
                             << "' must read PATTERN=[{axes}, ...], e.g. w*=[{}, {tp}]";
  ParamRule rule;
  std::string pattern = text.substr(0, eq);
  rule.text = text;
  constexpr std::string_view kUsers = "@users";
  if (pattern.ends_with(kUsers)) {
    rule.for_users = true;
    pattern.resize(pattern.size() - kUsers.size());
    if (pattern.empty())
      return InvalidArgument() << "sharding rule '" << text << "' has no pattern before @users";
  }
  rule.pattern = GlobPattern(std::move(pattern));
  StatusOr<Sharding> s = ParseShardingText("<@mesh, " + text.substr(eq + 1) + ">", "rule");
  if (!s.ok())
    return InvalidArgument() << "sharding rule '" << text << "': " << s.status().message();
  if (!s->offsets.empty())
    return InvalidArgument() << "sharding rule '" << text << "' may only split dims (no offsets)";
  if (s->is_partial() && s->partial_kind != ReductionKind::kSum)
    return InvalidArgument() << "sharding rule '" << text << "' may only be partial(sum)";
  rule.dims = s->dims;
  rule.partial = s->partial;
  return rule;
}

StatusOr<std::vector<ParamRule>> ParseParamRules(const std::vector<std::string>& texts) {
  std::vector<ParamRule> rules;
  for (const std::string& text : texts) {
    DISTIR_ASSIGN_OR_RETURN(ParamRule rule, ParseParamRule(text));
    rules.push_back(std::move(rule));
  }
  return rules;
}

StatusOr<std::vector<MeshAxis>> ParseMeshAxes(const std::string& text) {
  std::vector<MeshAxis> axes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    size_t eq = item.find('=');
    int64_t size = 0;
    const char* end = item.data() + item.size();
    auto [ptr, ec] = eq == std::string::npos
                         ? std::from_chars(end, end, size)
                         : std::from_chars(item.data() + eq + 1, end, size);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != end || size < 1 ||
        size > (int64_t{1} << 20))
      return InvalidArgument() << "mesh axis '" << item
                               << "' must read NAME=SIZE with a size from 1 to 2^20";
    std::string name = item.substr(0, eq);
    for (const MeshAxis& a : axes) {
      if (a.name == name) return InvalidArgument() << "mesh axis '" << name << "' given twice";
    }
    axes.push_back({name, size});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axes;
}

namespace {

// `rule`'s dims on `mesh`: axes the mesh lacks (size-1 axes) dropped.
Sharding OnMesh(const ParamRule& rule, const Mesh& mesh) {
  Sharding s = Sharding::Replicated(mesh.name(), static_cast<int64_t>(rule.dims.size()));
  for (size_t d = 0; d < rule.dims.size(); ++d) {
    for (const std::string& a : rule.dims[d]) {
      if (mesh.AxisIndex(a) >= 0) s.dims[d].push_back(a);
    }
  }
  for (const std::string& a : rule.partial) {
    if (mesh.AxisIndex(a) >= 0) s.partial.push_back(a);
  }
  return s;
}

// A global-view program lives on no device: the mesh places it. Parameter
// types lose their device, result types are inferred again, Constants lose
// their `device`.
void StripDevices(Function& fn) {
  for (const auto& p : fn.params()) p->set_type(p->type().WithDevice(DeviceId()));
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) r->set_type(Type());
  }
}

Status CheckNoDeviceAttrs(const Function& fn) {
  for (const auto& op : fn.ops()) {
    if (op->kind() != OpKind::kConstant && IsCommunication(op->kind()))
      return InvalidArgument(op->loc()) << "@" << fn.name() << " is already distributed ("
                                        << op->Name() << "): annotate a sequential program";
    if (op->is_call())
      return Unimplemented(op->loc()) << "calls cannot be sharded yet (" << op->Name() << ")";
  }
  return Status::Ok();
}

Status CheckRank(const ParamRule& rule, const Value& v) {
  if (!v.type().is_tensor() || v.type().rank() != static_cast<int64_t>(rule.dims.size()))
    return InvalidArgument(v.loc()) << "sharding rule '" << rule.text << "' gives "
                                    << rule.dims.size() << " dims, but " << v.Ref() << " is "
                                    << v.type();
  return Status::Ok();
}

// Op results that a rule names get a Shard op stating that layout (a
// requirement on the producer), which their users then read. Returns whether
// one of them is split.
StatusOr<bool> AnnotateValues(Module& module, const std::string& function,
                              const std::vector<ParamRule>& rules, const Mesh& mesh,
                              std::vector<bool>& used) {
  const Function& fn = *module.Lookup(function);
  // A rule that laid out a parameter names parameters only.
  const std::vector<bool> for_params = used;
  auto value_rule = [&](const Value& v) -> const ParamRule* {
    const ParamRule* r = MatchRule(rules, v.name());
    return r != nullptr && !for_params[static_cast<size_t>(r - rules.data())] ? r : nullptr;
  };
  // Each result's two rules, matched once (every build of a search annotates
  // its sequential program; the names are matched against every rule).
  std::vector<std::array<const ParamRule*, 2>> rule_of(static_cast<size_t>(fn.num_values()),
                                                       {nullptr, nullptr});
  bool any = false, split = false;
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) {
      auto& [own, users] = rule_of[static_cast<size_t>(r->id())];
      own = value_rule(*r);
      users = MatchUsersRule(rules, r->name());
      any = any || own != nullptr || users != nullptr;
    }
  }
  if (!any) return false;
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  Rebuilder b(fn);
  // A Shard of `r`'s current value laid out by `rule` (for its users, too).
  auto lay = [&](const Op& op, const Value& r, const ParamRule& rule,
                 const std::string& suffix) -> Status {
    used[static_cast<size_t>(&rule - rules.data())] = true;
    DISTIR_RETURN_IF_ERROR(CheckRank(rule, r));
    Sharding s = OnMesh(rule, mesh);
    split = split || !s.IsReplicated();
    AttrMap attrs = {{"sharding", Attribute(s)}};
    if (rule.for_users) attrs["for_users"] = Attribute(int64_t{1});
    b.Bind(&r, b.Emit(OpKind::kShard, {b.Map(&r)}, std::move(attrs), b.Fresh(r.name() + suffix),
                      op.loc(), Type(), nullptr));
    return Status::Ok();
  };
  for (const auto& op : fn.ops()) {
    b.Clone(*op);
    if (op->kind() == OpKind::kShard) continue;
    for (const auto& r : op->results()) {
      const auto& [own, users] = rule_of[static_cast<size_t>(r->id())];
      if (own != nullptr) DISTIR_RETURN_IF_ERROR(lay(*op, *r, *own, ".laid"));
      if (users != nullptr) DISTIR_RETURN_IF_ERROR(lay(*op, *r, *users, ".read"));
    }
  }
  module.ReplaceFunction(b.Finish());
  for (const auto& op : module.Lookup(function)->ops()) {
    for (const auto& r : op->results()) r->set_type(Type());
  }
  return split;
}

}  // namespace

const ParamRule* MatchRule(const std::vector<ParamRule>& rules, const std::string& name) {
  for (const ParamRule& r : rules) {
    if (!r.for_users && r.pattern.Matches(name)) return &r;
  }
  return nullptr;
}

bool RulesUseAxis(const std::vector<ParamRule>& rules, const std::string& axis) {
  auto names = [&axis](const std::vector<std::string>& axes) {
    return std::find(axes.begin(), axes.end(), axis) != axes.end();
  };
  return std::any_of(rules.begin(), rules.end(), [&](const ParamRule& r) {
    return names(r.partial) || std::any_of(r.dims.begin(), r.dims.end(), names);
  });
}

const ParamRule* MatchUsersRule(const std::vector<ParamRule>& rules, const std::string& name) {
  for (const ParamRule& r : rules) {
    if (r.for_users && r.pattern.Matches(name)) return &r;
  }
  return nullptr;
}

Status AnnotateMesh(Module& module, std::string function, const std::vector<MeshAxis>& axes,
                    const std::vector<ParamRule>& rules, const std::string& mesh_name) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to annotate";
  DISTIR_RETURN_IF_ERROR(CheckNoDeviceAttrs(*fn));
  StripDevices(*fn);
  for (const auto& op : fn->ops()) {
    if (op->kind() == OpKind::kConstant) op->EraseAttr("device");
  }
  if (module.LookupMesh(mesh_name) != nullptr)
    return InvalidArgument() << "mesh @" << mesh_name << " is already declared";
  std::vector<MeshAxis> kept;
  for (const MeshAxis& a : axes) {
    if (a.size > 1) kept.push_back(a);
  }
  Mesh mesh(mesh_name, kept);
  DISTIR_RETURN_IF_ERROR(mesh.Validate());
  const Mesh* m = module.AddMesh(std::move(mesh));
  std::vector<bool> used(rules.size(), false);
  bool any_axis = false;
  for (const auto& p : fn->params()) {
    const ParamRule* r = MatchRule(rules, p->name());
    if (r == nullptr) continue;
    used[static_cast<size_t>(r - rules.data())] = true;
    DISTIR_RETURN_IF_ERROR(CheckRank(*r, *p));
    if (!r->partial.empty())
      return InvalidArgument(p->loc()) << "sharding rule '" << r->text << "' matches parameter "
                                       << p->Ref() << ": a parameter cannot be partial";
    Sharding s = OnMesh(*r, *m);
    any_axis = any_axis || !s.IsReplicated();
    p->set_sharding(s);
  }
  DISTIR_ASSIGN_OR_RETURN(bool values_split, AnnotateValues(module, function, rules, *m, used));
  any_axis = any_axis || values_split;
  fn = module.Lookup(function);
  for (size_t r = 0; r < rules.size(); ++r) {
    if (!used[r])
      return InvalidArgument() << "sharding rule '" << rules[r].text
                               << "' matches no parameter or value of @" << function;
  }
  if (!any_axis) {
    for (const auto& p : fn->params()) {
      if (p->type().is_tensor()) p->set_sharding(Sharding::Replicated(m->name(), p->type().rank()));
    }
  }
  return Status::Ok();
}

}  // namespace distir::sharding
