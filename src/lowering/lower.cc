#include "lowering/lower.h"

#include <sstream>
#include <unordered_set>

#include "lowering/dedupe.h"
#include "lowering/placement.h"
#include "lowering/rank_program.h"

namespace distir {
namespace {

// "rank_", or "rank1_", ... when a function of the module could clash with a
// rank program's name.
std::string RankPrefix(const Module& module) {
  for (int n = 0;; ++n) {
    const std::string prefix = n == 0 ? "rank_" : "rank" + std::to_string(n) + "_";
    bool clash = false;
    for (const auto& f : module.functions()) clash = clash || f->name().rfind(prefix + "d", 0) == 0;
    if (!clash) return prefix;
  }
}

// A copy of `fn` with the same names, types, attributes and locations;
// `origin` maps the copy's value ids to `fn`'s values.
std::unique_ptr<Function> Clone(const Function& fn, std::vector<const Value*>& origin) {
  auto copy = std::make_unique<Function>(fn.name());
  copy->set_loc(fn.loc());
  copy->Reserve(fn.ops().size(), static_cast<size_t>(fn.num_values()));
  std::vector<Value*> map(fn.num_values(), nullptr);
  origin.assign(fn.num_values(), nullptr);
  for (const auto& p : fn.params()) {
    map[p->id()] = copy->AddParam(p->name(), p->type(), p->loc());
    origin[map[p->id()]->id()] = p.get();
  }
  for (const auto& op : fn.ops()) {
    std::vector<Value*> inputs;
    for (const Value* v : op->inputs()) inputs.push_back(map[v->id()]);
    std::vector<std::string> names;
    for (const auto& r : op->results()) names.push_back(r->name());
    Op* c = copy->AddOp(op->kind(), std::move(inputs), op->attrs(), std::move(names), op->loc(),
                        op->is_call() ? op->callee() : std::string());
    for (int i = 0; i < op->num_results(); ++i) {
      c->result(i)->set_type(op->result(i)->type());
      c->result(i)->set_loc(op->result(i)->loc());
      map[op->result(i)->id()] = c->result(i);
      origin[c->result(i)->id()] = op->result(i);
    }
  }
  std::vector<Value*> returns;
  for (const Value* v : fn.returns()) returns.push_back(map[v->id()]);
  copy->SetReturns(std::move(returns), fn.return_loc());
  origin.resize(copy->num_values(), nullptr);
  return copy;
}

void MarkCallees(const Function& fn, const Module& module,
                 std::unordered_set<const Function*>& needed) {
  for (const auto& op : fn.ops()) {
    if (op->is_call()) needed.insert(module.Lookup(op->callee()));
  }
}

// Copies into `out` the functions that the kept rank programs call, directly
// or not, in module order. Callees precede callers, so one backward sweep
// finds them all.
void CopyCallees(const Module& module, const std::vector<RankProgram>& ranks,
                 const std::vector<RankGroup>& groups, LoweredModule& out) {
  std::unordered_set<const Function*> needed;
  for (const RankGroup& g : groups) MarkCallees(*ranks[g.program].function, module, needed);
  const auto& functions = module.functions();
  for (auto it = functions.rbegin(); it != functions.rend(); ++it) {
    if (needed.count(it->get()) > 0) MarkCallees(**it, module, needed);
  }
  for (const auto& f : functions) {
    if (needed.count(f.get()) == 0) continue;
    std::vector<const Value*> origin;
    out.module.AddFunction(Clone(*f, origin));
    out.origins.push_back(std::move(origin));
  }
}

}  // namespace

StatusOr<LoweredModule> LowerToRanks(const Module& module, const LowerOptions& options) {
  const Function* fn =
      options.function.empty() ? module.entry() : module.Lookup(options.function);
  if (fn == nullptr) {
    return NotFound() << "no function @" << options.function << " to lower"
                      << (options.function.empty() ? " (the module is empty)" : "");
  }
  DISTIR_ASSIGN_OR_RETURN(Placement placement, ComputePlacement(module, *fn));
  DISTIR_ASSIGN_OR_RETURN(std::vector<RankProgram> ranks,
                          ProjectToRanks(placement, RankPrefix(module)));
  std::vector<RankView> views;
  views.reserve(ranks.size());
  for (const RankProgram& r : ranks) views.push_back(RankView{r.device, r.function.get()});
  DISTIR_RETURN_IF_ERROR(CheckDeadlockFree(views, options.deadlock));
  const std::vector<RankGroup> groups = GroupIdenticalRanks(ranks);
  LoweredModule out;
  out.lowered = fn->name();
  CopyCallees(module, ranks, groups, out);
  for (const RankGroup& g : groups) {
    RankProgram& p = ranks[g.program];
    out.programs.push_back(SharedProgram{p.function->name(), g.ranks});
    out.origins.push_back(std::move(p.origin));
    out.module.AddFunction(std::move(p.function));
  }
  return out;
}

std::string DescribePrograms(const LoweredModule& lowered) {
  size_t num_ranks = 0;
  for (const SharedProgram& p : lowered.programs) num_ranks += p.ranks.size();
  std::ostringstream os;
  os << "// @" << lowered.lowered << " lowered to " << num_ranks
     << (num_ranks == 1 ? " rank, " : " ranks, ") << lowered.programs.size()
     << (lowered.programs.size() == 1 ? " program\n" : " programs\n");
  for (const SharedProgram& p : lowered.programs) {
    os << "// " << (p.ranks.size() == 1 ? "rank " : "ranks ");
    for (size_t i = 0; i < p.ranks.size(); ++i) os << (i > 0 ? ", " : "") << p.ranks[i];
    os << ": program @" << p.function << "\n";
  }
  return os.str();
}

}  // namespace distir
