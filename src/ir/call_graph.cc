#include "ir/call_graph.h"

#include <unordered_set>
#include <utility>

namespace distir {
namespace {

// A function being walked and the index of its next op to look at.
using Visit = std::pair<const Function*, size_t>;

// The next callee of `visit` not yet seen (advancing its op index), or nullptr.
const Function* NextCallee(const Module& module, Visit& visit,
                           const std::unordered_set<const Function*>& seen) {
  const std::vector<std::unique_ptr<Op>>& ops = visit.first->ops();
  while (visit.second < ops.size()) {
    const Op& op = *ops[visit.second++];
    if (!op.is_call()) continue;
    const Function* callee = module.Lookup(op.callee());
    if (callee != nullptr && seen.count(callee) == 0) return callee;
  }
  return nullptr;
}

}  // namespace

std::vector<const Function*> CalleesBottomUp(const Module& module, const Function& fn,
                                             const std::function<bool(const Function&)>& known) {
  std::vector<const Function*> order;
  std::unordered_set<const Function*> seen{&fn};
  std::vector<Visit> stack{{&fn, 0}};
  while (!stack.empty()) {
    const Function* callee = NextCallee(module, stack.back(), seen);
    if (callee == nullptr) {
      order.push_back(stack.back().first);  // all its callees are listed
      stack.pop_back();
      continue;
    }
    seen.insert(callee);
    if (known && known(*callee)) continue;
    stack.emplace_back(callee, 0);
  }
  return order;
}

}  // namespace distir
