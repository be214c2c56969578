#include "sharding/cleanup.h"

#include <algorithm>

#include "sharding/cleanup_util.h"

namespace distir::sharding {

bool SameAxisSet(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() == b.size() && std::is_permutation(a.begin(), a.end(), b.begin());
}

bool SameSharding(const Value* a, const Value* b) {
  return a->sharding() != nullptr && b->sharding() != nullptr && *a->sharding() == *b->sharding();
}

const std::vector<NamedCleanupPass>& CleanupPasses() {
  // SHARDING.md §5: cancellations, reassociation, reduce-scatter formation,
  // moving collectives, folding.
  static const std::vector<NamedCleanupPass> kPasses = {
      {"gather-slice-cancel", GatherSliceCancel},
      {"reduce-scatter-gather-to-all-reduce", ReduceScatterGatherToAllReduce},
      {"all-reduce-reassociate", AllReduceReassociate},
      {"all-reduce-to-reduce-scatter", AllReduceToReduceScatter},
      {"all-gather-sink", AllGatherSink},
      {"all-reduce-fold", AllReduceFold},
  };
  return kPasses;
}

int RunCleanup(Module& module, std::string function) {
  int fired = 0;
  // Each rewrite removes a collective or moves one towards the inputs, so the
  // loop ends; the cap guards against a bug.
  for (int round = 0; round < 1000; ++round) {
    bool changed = false;
    for (const NamedCleanupPass& p : CleanupPasses()) {
      if (p.run(module, function)) {
        changed = true;
        ++fired;
      }
    }
    if (!changed) break;
  }
  return fired;
}

}  // namespace distir::sharding
