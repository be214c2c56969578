// The devices of a grid point that stand for all in its simulation
// (docs/cost_model.md §3.2): data-parallel replica 0 for the D replicas, and
// tensor-parallel ranks 0 and 1 for the T ranks of each stage.
//
// Exact where the devices stood for run the same ops at the same costs as
// their representative: replicas of T P devices, and groups of T
// tensor-parallel ranks, that sit alike on the nodes (one divides the node
// size or the node size divides it), and pieces split evenly over tp. Rank 0
// stays simulated apart: it alone adds the bias of a row-parallel product
// (sharding/partition.h). Where a value splits unevenly over tp but only its
// last piece is smaller (the ceil-chunks of Sharding::ShardRange: GPT-2's
// vocabulary of 50257 over 4, 8 or 16 ranks), rank T - 1 is simulated apart
// too, ranks 0, 1 and T - 1 standing for all. Collectives join a
// representative and the devices it stands for; they start when the last
// participant is free, which is the representative's time since the others'
// clocks equal it (by induction).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sharding/partition.h"
#include "sim/simulator.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// Whether groups of `group_devices` consecutive devices sit alike on nodes of
/// `devices_per_node` devices (one divides the other).
bool ReplicasSitAlike(int64_t group_devices, int devices_per_node);

/// The devices of data-parallel replica 0 of a sharding-path program (by
/// id: replica r holds [r T P, (r + 1) T P) of the world [dp, pp, tp]),
/// where `o`'s D > 1 replicas of T P devices sit alike on nodes of
/// `devices_per_node`: replica 0 then stands for all; empty otherwise.
std::vector<char> ReplicaZeroDevices(const ParallelOptions& o, int devices_per_node);

/// Devices of the world [dp, pp, tp] simulated to stand for all: device d as
/// device Of(d).
struct Representatives {
  std::vector<char> keep;  ///< by device id: the devices simulated
  int64_t replica = 0;     ///< T P where replica 0 stands for every replica; 0: none
  int64_t tp = 0;          ///< T where ranks 0 and 1 stand for a stage's T; 0: none
  /// With tp: rank T - 1 is simulated apart (it may hold a smaller last piece).
  bool last_apart = false;

  /// The mesh axis whose pieces must split evenly (sharding::DevicePart).
  std::string EvenAxis() const { return tp > 0 ? "tp" : ""; }
  /// The device that stands for device `d`.
  int64_t Of(int64_t d) const;
};

/// The ways to simulate grid point `o` with fewer devices, fewest first:
/// tensor-parallel ranks 0 and 1 (of replica 0 where it stands for all) where
/// T > 2 and T's groups sit alike, then ranks 0, 1 and T - 1 where T > 3
/// (last_apart), then replica 0 where D > 1 and the replicas sit alike.
/// Empty: the whole world only.
std::vector<Representatives> RepresentativesOf(const ParallelOptions& o, int devices_per_node);

/// The parts of the world to build a template for, one per way, in order
/// (sharding::DistributedTemplateOfFirst).
std::vector<sharding::DevicePart> PartsOf(const std::vector<Representatives>& ways);

/// The simulation of `r.keep`'s devices as that of the whole world of
/// `world` devices: device d gets the figures of r.Of(d).
sim::SimulationResult AllDevices(sim::SimulationResult one, const Representatives& r,
                                 int64_t world);

}  // namespace distir::search
