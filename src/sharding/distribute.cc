#include "sharding/distribute.h"

#include "sharding/cleanup.h"
#include "sharding/materialize.h"
#include "sharding/partition.h"
#include "sharding/propagate.h"

namespace distir::sharding {

bool IsGlobalView(const Module& module, const std::string& function) {
  const Function* fn = module.Lookup(function);
  if (fn == nullptr || module.meshes().empty()) return false;
  for (const auto& p : fn->params()) {
    if (p->sharding() != nullptr) return true;
  }
  for (const auto& op : fn->ops()) {
    if (op->kind() == OpKind::kShard || IsMeshCollective(op->kind())) return true;
  }
  return false;
}

Status DistributeGlobalView(Module& module, std::string function) {
  if (!IsGlobalView(module, function)) return Status::Ok();
  DISTIR_RETURN_IF_ERROR(PropagateShardings(module, function));
  DISTIR_RETURN_IF_ERROR(MaterializeShardings(module, function));
  RunCleanup(module, function);
  return PartitionShardings(module, function);
}

}  // namespace distir::sharding
