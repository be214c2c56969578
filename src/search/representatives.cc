#include "search/representatives.h"

#include <algorithm>

namespace distir::search {

bool ReplicasSitAlike(int64_t group_devices, int devices_per_node) {
  const int64_t node = std::max(1, devices_per_node);
  return node % group_devices == 0 || group_devices % node == 0;
}

std::vector<char> ReplicaZeroDevices(const ParallelOptions& o, int devices_per_node) {
  if (o.dp <= 1 || !ReplicasSitAlike(o.tp * o.pp, devices_per_node)) return {};
  return std::vector<char>(static_cast<size_t>(o.tp * o.pp), 1);
}

int64_t Representatives::Of(int64_t d) const {
  int64_t x = replica > 0 ? d % replica : d;
  if (tp > 0) {
    const int64_t rank = x % tp;
    if (!(last_apart && rank == tp - 1)) x -= rank - std::min<int64_t>(rank, 1);
  }
  return x;
}

std::vector<Representatives> RepresentativesOf(const ParallelOptions& o, int devices_per_node) {
  std::vector<Representatives> out;
  const std::vector<char> replica_zero = ReplicaZeroDevices(o, devices_per_node);
  const int64_t replica = replica_zero.empty() ? 0 : o.tp * o.pp;
  if (o.tp > 2 && ReplicasSitAlike(o.tp, devices_per_node)) {
    for (bool last_apart : {false, true}) {
      if (last_apart && o.tp < 4) break;  // ranks 0, 1 and 2 are all of T = 3
      // Device d of the world [dp, pp, tp] has tensor-parallel rank d mod T.
      Representatives r{{}, replica, o.tp, last_apart};
      r.keep.resize(static_cast<size_t>(replica > 0 ? replica : o.dp * o.pp * o.tp));
      for (size_t d = 0; d < r.keep.size(); ++d) {
        const int64_t rank = static_cast<int64_t>(d) % o.tp;
        r.keep[d] = rank < 2 || (last_apart && rank == o.tp - 1);
      }
      out.push_back(std::move(r));
    }
  }
  if (replica > 0) out.push_back(Representatives{replica_zero, replica, 0, false});
  return out;
}

std::vector<sharding::DevicePart> PartsOf(const std::vector<Representatives>& ways) {
  std::vector<sharding::DevicePart> parts;
  parts.reserve(ways.size());
  for (const Representatives& w : ways) parts.push_back({w.keep, w.EvenAxis(), {}, w.last_apart});
  return parts;
}

sim::SimulationResult AllDevices(sim::SimulationResult one, const Representatives& r,
                                 int64_t world) {
  std::vector<const sim::DeviceResult*> of(r.keep.size(), nullptr);
  for (const sim::DeviceResult& d : one.devices) {
    const auto id = static_cast<size_t>(d.device.value());
    if (id < of.size()) of[id] = &d;
  }
  std::vector<sim::DeviceResult> all;
  all.reserve(static_cast<size_t>(world));
  for (int64_t id = 0; id < world; ++id) {
    const auto rep = static_cast<size_t>(r.Of(id));
    if (rep >= of.size() || of[rep] == nullptr) continue;
    all.push_back(*of[rep]);
    all.back().device = DeviceId(static_cast<int32_t>(id));
  }
  one.devices = std::move(all);
  return one;
}

}  // namespace distir::search
