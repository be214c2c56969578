#include "sharding/equivalence.h"

#include <cmath>
#include <set>

#include "interp/reference_executor.h"
#include "sharding/shard_data.h"

namespace distir::sharding {
namespace {

const Mesh* MeshOfValue(const Module& module, const Value& v) {
  return v.sharding() == nullptr ? nullptr : module.LookupMesh(v.sharding()->mesh);
}

double MaxAbsDiff(const DenseTensor& a, const DenseTensor& b) {
  double worst = 0;
  for (size_t i = 0; i < a.values.size() && i < b.values.size(); ++i)
    worst = std::max(worst, std::fabs(a.values[i] - b.values[i]));
  return worst;
}

}  // namespace

StatusOr<EquivalenceReport> CheckPartitionEquivalence(const Module& global,
                                                      const Module& partitioned,
                                                      std::string function,
                                                      uint64_t seed, double rtol, double atol,
                                                      const RandomInputOptions& input_options) {
  const Function* g = global.Lookup(function);
  const Function* p = partitioned.Lookup(function);
  if (g == nullptr || p == nullptr) return NotFound() << "no function @" << function;
  DISTIR_ASSIGN_OR_RETURN(std::vector<HostValue> inputs, RandomInputs(*g, seed, input_options));
  DISTIR_ASSIGN_OR_RETURN(std::vector<HostValue> expected, Execute(global, *g, inputs));
  std::vector<HostValue> local_inputs;
  EquivalenceReport report;
  std::set<DeviceId> devices;
  for (int i = 0; i < g->num_params(); ++i) {
    const Value& param = *g->param(i);
    const Mesh* mesh = MeshOfValue(global, param);
    if (mesh == nullptr) return FailedPrecondition(param.loc()) << param.Ref() << " has no sharding";
    devices.insert(mesh->devices().begin(), mesh->devices().end());
    std::vector<DenseTensor> pieces = ShardDense(inputs[i].tensor(), *param.sharding(), *mesh);
    for (int64_t dev = 0; dev < mesh->num_devices(); ++dev)
      local_inputs.push_back(HostValue::Tensor(pieces[dev], mesh->devices()[dev]));
  }
  DISTIR_ASSIGN_OR_RETURN(std::vector<HostValue> outputs, Execute(partitioned, *p, local_inputs));
  std::vector<HostValue> gathered;
  size_t next = 0;  // outputs are per returned value, per device of its mesh
  for (size_t r = 0; r < g->returns().size(); ++r) {
    const Value& v = *g->returns()[r];
    const Mesh* mesh = MeshOfValue(global, v);
    if (mesh == nullptr) return FailedPrecondition(v.loc()) << v.Ref() << " has no sharding";
    std::vector<DenseTensor> pieces;
    for (int64_t dev = 0; dev < mesh->num_devices(); ++dev)
      pieces.push_back(outputs[next++].tensor());
    DISTIR_ASSIGN_OR_RETURN(DenseTensor whole,
                            UnshardDense(pieces, *v.sharding(), *mesh, v.type().shape()));
    devices.insert(mesh->devices().begin(), mesh->devices().end());
    report.max_abs_diff = std::max(report.max_abs_diff, MaxAbsDiff(whole, expected[r].tensor()));
    report.elements += whole.NumElements();
    gathered.push_back(HostValue::Tensor(std::move(whole)));
  }
  report.outputs = static_cast<int>(gathered.size());
  report.devices = static_cast<int64_t>(devices.size());
  DISTIR_RETURN_IF_ERROR(AllClose(gathered, expected, rtol, atol));
  return report;
}

}  // namespace distir::sharding
