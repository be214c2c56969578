#include "ir/clone.h"

#include <vector>

namespace distir {
namespace {

// Copies what a value carries besides its name: its type, sharding and location.
void CopyValueFacts(const Value& from, Value& to) {
  to.set_type(from.type());
  to.set_loc(from.loc());
  to.CopyShardingFrom(from);
}

}  // namespace

std::unique_ptr<Function> CloneFunction(const Function& fn) { return CloneFunction(fn, nullptr); }

std::unique_ptr<Function> CloneFunction(const Function& fn, const CloneRewrite& rewrite) {
  auto out = std::make_unique<Function>(fn.name());
  out->set_loc(fn.loc());
  out->Reserve(fn.ops().size(), static_cast<size_t>(fn.num_values()));
  std::vector<Value*> map(static_cast<size_t>(fn.num_values()), nullptr);
  for (const auto& p : fn.params()) {
    Value* copy = out->AddParam(p->name(), p->type(), p->loc());
    copy->CopyShardingFrom(*p);
    map[static_cast<size_t>(p->id())] = copy;
  }
  for (const auto& op : fn.ops()) {
    if (rewrite && rewrite(*op, map, *out)) continue;
    std::vector<Value*> inputs;
    inputs.reserve(op->inputs().size());
    for (const Value* v : op->inputs()) inputs.push_back(map[static_cast<size_t>(v->id())]);
    std::vector<std::string> names;
    names.reserve(op->results().size());
    for (const auto& r : op->results()) names.push_back(r->name());
    Op* copy = out->AddOp(op->kind(), std::move(inputs), op->attrs(), std::move(names), op->loc(),
                          op->callee());
    for (int i = 0; i < op->num_results(); ++i) {
      CopyValueFacts(*op->result(i), *copy->result(i));
      map[static_cast<size_t>(op->result(i)->id())] = copy->result(i);
    }
  }
  std::vector<Value*> returns;
  for (const Value* v : fn.returns()) returns.push_back(map[static_cast<size_t>(v->id())]);
  out->SetReturns(std::move(returns), fn.return_loc());
  return out;
}

}  // namespace distir
