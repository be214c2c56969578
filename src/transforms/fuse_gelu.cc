#include "transforms/fuse_gelu.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "ir/clone.h"

namespace distir {
namespace {

// The most ops a group may hold: the exports use 5 (Erf) to 9 (Tanh).
constexpr size_t kMaxGroupOps = 16;

bool IsArithmetic(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kSub || k == OpKind::kMul || k == OpKind::kDiv ||
         k == OpKind::kPow;
}

// The value of a one-element Constant, or nullopt.
std::optional<double> ScalarConstant(const Value& v) {
  const Op* def = v.def();
  if (def == nullptr || def->kind() != OpKind::kConstant) return std::nullopt;
  const Attribute* a = def->FindAttr("value");
  if (a == nullptr) return std::nullopt;
  const DenseTensor& t = a->AsTensor();
  if (t.NumElements() != 1 || t.values.size() != 1) return std::nullopt;
  return t.values[0];
}

double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double GeluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

struct Group {
  const Value* x = nullptr;
  const Value* y = nullptr;
  std::vector<const Op*> ops;  // in program order; the last defines y
  bool tanh = false;
};

class Matcher {
 public:
  explicit Matcher(const Function& fn) : readers_(static_cast<size_t>(fn.num_values())) {
    for (const auto& op : fn.ops()) {
      for (const Value* v : op->inputs())
        readers_[static_cast<size_t>(v->id())].push_back(op.get());
    }
    returned_.assign(static_cast<size_t>(fn.num_values()), false);
    for (const Value* v : fn.returns()) returned_[static_cast<size_t>(v->id())] = true;
  }

  // The group around the Tanh or Erf `anchor`, if it is a GELU.
  std::optional<Group> Match(const Op& anchor) const {
    for (const Value* x : Candidates(anchor)) {
      std::optional<Group> g = GroupOf(anchor, *x);
      if (g && Verified(*g)) return g;
    }
    return std::nullopt;
  }

 private:
  // The values of the anchor's arithmetic cone (through Add/Sub/Mul/Div/Pow,
  // scalar constants aside): each may be the x of the group.
  std::vector<const Value*> Candidates(const Op& anchor) const {
    std::vector<const Value*> found, stack = {anchor.input(0)};
    std::set<int> seen;
    while (!stack.empty() && found.size() < kMaxGroupOps) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!seen.insert(v->id()).second || ScalarConstant(*v)) continue;
      found.push_back(v);
      const Op* def = v->def();
      if (def != nullptr && IsArithmetic(def->kind())) {
        for (const Value* in : def->inputs()) stack.push_back(in);
      }
    }
    return found;
  }

  // Whether `v` is x, a scalar constant or a value of the group.
  static bool Inside(const Value& v, const Value& x, const std::set<int>& group_values) {
    return &v == &x || ScalarConstant(v) || group_values.count(v.id()) > 0;
  }

  // The group of `anchor` with input x: its cone down to x, then forward
  // the arithmetic on group values, x and constants; one value read outside.
  std::optional<Group> GroupOf(const Op& anchor, const Value& x) const {
    std::set<const Op*> ops = {&anchor};
    std::vector<const Value*> stack = {anchor.input(0)};
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (v == &x || ScalarConstant(*v)) continue;
      const Op* def = v->def();
      if (def == nullptr || !IsArithmetic(def->kind()) || ops.size() > kMaxGroupOps)
        return std::nullopt;  // another tensor feeds the cone
      if (ops.insert(def).second) {
        for (const Value* in : def->inputs()) stack.push_back(in);
      }
    }
    std::set<int> values;
    for (const Op* op : ops) values.insert(op->result(0)->id());
    // Forward: arithmetic reading only group values, x and constants (x * 0.5
    // may come before the product with the tanh term).
    for (bool grew = true; grew && ops.size() <= kMaxGroupOps;) {
      grew = false;
      std::vector<int> scan(values.begin(), values.end());
      scan.push_back(x.id());
      for (const int id : scan) {
        for (const Op* r : readers_[static_cast<size_t>(id)]) {
          if (ops.count(r) || !IsArithmetic(r->kind())) continue;
          if (!std::all_of(r->inputs().begin(), r->inputs().end(),
                           [&](const Value* in) { return Inside(*in, x, values); }))
            continue;
          ops.insert(r);
          values.insert(r->result(0)->id());
          grew = true;
        }
      }
    }
    if (ops.size() > kMaxGroupOps) return std::nullopt;
    Group g;
    g.x = &x;
    g.tanh = anchor.kind() == OpKind::kTanh;
    g.ops.assign(ops.begin(), ops.end());
    std::sort(g.ops.begin(), g.ops.end(),
              [](const Op* a, const Op* b) { return a->id() < b->id(); });
    for (const Op* op : g.ops) {
      const Value* r = op->result(0);
      const bool escapes = returned_[static_cast<size_t>(r->id())] ||
                           std::any_of(readers_[static_cast<size_t>(r->id())].begin(),
                                       readers_[static_cast<size_t>(r->id())].end(),
                                       [&](const Op* u) { return ops.count(u) == 0; });
      if (!escapes) continue;
      if (g.y != nullptr) return std::nullopt;  // two results leave the group
      g.y = r;
    }
    if (g.y == nullptr || g.y != g.ops.back()->result(0) || !(g.y->type() == x.type()) ||
        !IsFloat(x.type().dtype()))
      return std::nullopt;
    return g;
  }

  // The group evaluated on scalars equals the GELU of its form.
  static bool Verified(const Group& g) {
    for (int k = -7; k <= 7; ++k) {
      const double at = k * 5.0 / 7.0;
      const std::optional<double> y = Evaluate(g, at);
      const double want = g.tanh ? GeluTanh(at) : GeluErf(at);
      if (!y || std::abs(*y - want) > 1e-5 * std::max(1.0, std::abs(want))) return false;
    }
    return true;
  }

  static std::optional<double> Evaluate(const Group& g, double at) {
    std::vector<std::pair<int, double>> known = {{g.x->id(), at}};
    auto value = [&](const Value& v) -> std::optional<double> {
      if (std::optional<double> c = ScalarConstant(v)) return c;
      for (const auto& [id, x] : known) {
        if (id == v.id()) return x;
      }
      return std::nullopt;
    };
    for (const Op* op : g.ops) {
      std::optional<double> a = value(*op->input(0));
      std::optional<double> b =
          op->num_inputs() > 1 ? value(*op->input(1)) : std::optional<double>(0.0);
      if (!a || !b) return std::nullopt;
      double r = 0;
      switch (op->kind()) {
        case OpKind::kAdd:
          r = *a + *b;
          break;
        case OpKind::kSub:
          r = *a - *b;
          break;
        case OpKind::kMul:
          r = *a * *b;
          break;
        case OpKind::kDiv:
          r = *a / *b;
          break;
        case OpKind::kPow:
          r = std::pow(*a, *b);
          break;
        case OpKind::kTanh:
          r = std::tanh(*a);
          break;
        case OpKind::kErf:
          r = std::erf(*a);
          break;
        default:
          return std::nullopt;
      }
      known.emplace_back(op->result(0)->id(), r);
    }
    return value(*g.y);
  }

  std::vector<std::vector<const Op*>> readers_;
  std::vector<bool> returned_;
};

}  // namespace

std::unique_ptr<Function> FuseGelus(const Function& fn) {
  const Matcher matcher(fn);
  std::vector<Group> groups;
  std::vector<char> grouped(fn.ops().size(), 0);
  for (const auto& op : fn.ops()) {
    if ((op->kind() != OpKind::kTanh && op->kind() != OpKind::kErf) || grouped[op->id()]) continue;
    std::optional<Group> g = matcher.Match(*op);
    if (!g) continue;
    for (const Op* member : g->ops) grouped[member->id()] = 1;
    groups.push_back(*g);
  }
  if (groups.empty()) return nullptr;
  // Per op: the group it ends (index + 1), -1 if it is dropped, 0 if kept.
  std::vector<int> role(fn.ops().size(), 0);
  for (size_t k = 0; k < groups.size(); ++k) {
    for (const Op* op : groups[k].ops) role[op->id()] = -1;
    role[groups[k].ops.back()->id()] = static_cast<int>(k) + 1;
  }
  // Scalar Constants read only by dropped ops go too.
  std::vector<int> live_readers(static_cast<size_t>(fn.num_values()), 0);
  for (const auto& op : fn.ops()) {
    if (role[op->id()] == 0) {
      for (const Value* v : op->inputs()) ++live_readers[static_cast<size_t>(v->id())];
    }
  }
  for (const Value* v : fn.returns()) ++live_readers[static_cast<size_t>(v->id())];
  for (const Group& g : groups) ++live_readers[static_cast<size_t>(g.x->id())];
  for (const auto& op : fn.ops()) {
    if (op->kind() == OpKind::kConstant && role[op->id()] == 0 &&
        live_readers[static_cast<size_t>(op->result(0)->id())] == 0 &&
        ScalarConstant(*op->result(0)))
      role[op->id()] = -1;
  }
  return CloneFunction(fn, [&](const Op& op, std::vector<Value*>& map, Function& out) {
    const int r = role[op.id()];
    if (r == 0) return false;
    if (r < 0) return true;
    const Group& g = groups[static_cast<size_t>(r - 1)];
    AttrMap attrs;
    if (g.tanh) attrs["approximate"] = Attribute("tanh");
    Op* gelu = out.AddOp(OpKind::kGelu, {map[static_cast<size_t>(g.x->id())]}, std::move(attrs),
                         std::vector<std::string>{g.y->name()}, op.loc());
    Value* y = gelu->result(0);
    y->set_type(g.y->type());
    y->set_loc(g.y->loc());
    y->CopyShardingFrom(*g.y);
    map[static_cast<size_t>(g.y->id())] = y;
    return true;
  });
}

bool FuseGelusIn(Module& m, const std::string& function) {
  const Function* fn = m.Lookup(function);
  if (fn == nullptr) return false;
  std::unique_ptr<Function> fused = FuseGelus(*fn);
  if (fused == nullptr) return false;
  m.ReplaceFunction(std::move(fused));
  return true;
}

}  // namespace distir
