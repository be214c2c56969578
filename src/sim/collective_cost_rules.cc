// Alpha-beta cost of collectives over the links the participants use.
//
// Every formula is derived in docs/cost_model.md ("Collectives"), nccl-tests
// style; the equation numbers below (C1..C8) refer to that section. S is the
// nccl-tests buffer size of the op (see the header), n the number of
// participants, B and alpha the bandwidth and latency of the bottleneck link.

#include "sim/collective_cost_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/check.h"

namespace distir::sim {
namespace {

// How the participants fall into nodes: all the model needs of their placement.
struct Placement {
  int64_t num_participants = 0;
  int64_t num_nodes = 0;     // distinct nodes holding a participant
  int64_t min_per_node = 0;  // participants in the emptiest of those nodes
  int64_t max_per_node = 0;  // participants in the fullest of those nodes
};

// One alpha-beta pair: bytes/s and seconds per message.
struct AlphaBeta {
  double bandwidth = 0;
  double latency = 0;
};

void CheckParticipants(const HardwareProfile& hw, const std::vector<DeviceId>& participants) {
  const std::optional<int64_t> num_devices = hw.NumDevices();
  for (DeviceId d : participants) {
    DISTIR_CHECK(d.has_value()) << "collective participant without a device";
    DISTIR_CHECK(!num_devices || d.value() < *num_devices)
        << "participant " << d << " is not a device of profile '" << hw.name << "', which has "
        << *num_devices;
  }
#ifndef NDEBUG
  std::vector<DeviceId> sorted = participants;
  std::sort(sorted.begin(), sorted.end());
  DISTIR_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end())
      << "collective participants are not distinct";
#endif
}

Placement Place(const HardwareProfile& hw, const std::vector<DeviceId>& participants) {
  std::vector<int> nodes;
  nodes.reserve(participants.size());
  for (DeviceId d : participants) nodes.push_back(hw.NodeOf(d));
  std::sort(nodes.begin(), nodes.end());
  Placement p;
  p.num_participants = static_cast<int64_t>(participants.size());
  p.min_per_node = p.num_participants;
  for (size_t begin = 0; begin < nodes.size();) {
    size_t end = begin;
    while (end < nodes.size() && nodes[end] == nodes[begin]) ++end;
    const auto count = static_cast<int64_t>(end - begin);
    p.min_per_node = std::min(p.min_per_node, count);
    p.max_per_node = std::max(p.max_per_node, count);
    ++p.num_nodes;
    begin = end;
  }
  return p;
}

// The slowest link class any step of the algorithm crosses (lowest bandwidth,
// highest latency). NCCL orders rings and chains by topology, so a ring over
// several nodes crosses the inter-node network and, where a node holds two or
// more participants, the intra-node fabric; op order does not matter.
AlphaBeta Bottleneck(const HardwareProfile& hw, const Placement& p) {
  AlphaBeta ab{std::numeric_limits<double>::infinity(), 0};
  auto use = [&ab](const LinkSpec& link) {
    ab.bandwidth = std::min(ab.bandwidth, link.bandwidth);
    ab.latency = std::max(ab.latency, link.latency);
  };
  if (p.max_per_node >= 2) use(hw.intra_node);
  if (p.num_nodes >= 2) use(hw.inter_node);
  DISTIR_CHECK(ab.bandwidth > 0 && std::isfinite(ab.bandwidth))
      << "profile '" << hw.name << "' has no usable link between the participants";
  return ab;
}

// (C1)-(C3), (C7), (C8): `passes` rounds of n-1 ring steps, each moving S/n per rank:
// passes * (n-1)/n * S/B + passes * (n-1) * alpha.
double RingTime(const AlphaBeta& ab, int64_t n, double s, int passes) {
  const auto ranks = static_cast<double>(n);
  return passes * ((ranks - 1) / ranks * s / ab.bandwidth + (ranks - 1) * ab.latency);
}

// (C4): binary double tree (reduce up, broadcast down), pipelined:
// 2 * S/B + 2 * ceil(log2 n) * alpha.
double TreeTime(const AlphaBeta& ab, int64_t n, double s) {
  const double depth = std::ceil(std::log2(static_cast<double>(n)));
  return 2 * s / ab.bandwidth + 2 * depth * ab.latency;
}

// (C5)-(C6): two-level ring. `passes` = 2 for all-reduce (reduce-scatter in the
// nodes, all-reduce across them on S/g, all-gather in the nodes), 1 for
// all-gather and reduce-scatter (one intra and one inter phase). With uneven
// placement the fullest node sets the intra term (most steps) and the emptiest
// the inter term (largest shard, S / g_min).
double HierarchicalTime(const HardwareProfile& hw, const Placement& p, double s, int passes) {
  const double g_max = static_cast<double>(p.max_per_node);
  const double g_min = static_cast<double>(p.min_per_node);
  const double m = static_cast<double>(p.num_nodes);
  const LinkSpec& intra = hw.intra_node;
  const LinkSpec& inter = hw.inter_node;
  const double intra_time = (g_max - 1) / g_max * s / intra.bandwidth + (g_max - 1) * intra.latency;
  const double inter_time = (m - 1) / m * (s / g_min) / inter.bandwidth + (m - 1) * inter.latency;
  return passes * (intra_time + inter_time);
}

bool UseHierarchy(const HardwareProfile& hw, const Placement& p) {
  return hw.collectives.allreduce == AllReduceAlgorithm::kHierarchical && p.num_nodes >= 2;
}

double AllReduceTime(const HardwareProfile& hw, const Placement& p, double s) {
  if (UseHierarchy(hw, p)) return HierarchicalTime(hw, p, s, 2);
  const AlphaBeta ab = Bottleneck(hw, p);
  if (hw.collectives.allreduce == AllReduceAlgorithm::kTree) {
    return TreeTime(ab, p.num_participants, s);
  }
  return RingTime(ab, p.num_participants, s, 2);
}

// Time of the algorithm alone, without the collective launch overhead.
double AlgorithmTime(const HardwareProfile& hw, CollectiveKind kind, const Placement& p, double s) {
  const int64_t n = p.num_participants;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return AllReduceTime(hw, p, s);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      if (UseHierarchy(hw, p)) return HierarchicalTime(hw, p, s, 1);
      return RingTime(Bottleneck(hw, p), n, s, 1);
    case CollectiveKind::kAllToAll:  // (C7)
    case CollectiveKind::kScatter:   // (C8)
    case CollectiveKind::kGather:
      return RingTime(Bottleneck(hw, p), n, s, 1);
    case CollectiveKind::kSend:       // (C9): S/B + alpha
    case CollectiveKind::kBroadcast:  // (C10): pipelined chain, S/B + alpha
    case CollectiveKind::kReduce: {
      const AlphaBeta ab = Bottleneck(hw, p);
      return s / ab.bandwidth + ab.latency;
    }
  }
  DISTIR_CHECK(false) << "unknown collective kind";
  return 0;
}

}  // namespace

std::string_view CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kSend:
      return "Send";
    case CollectiveKind::kAllReduce:
      return "AllReduce";
    case CollectiveKind::kAllGather:
      return "AllGather";
    case CollectiveKind::kReduceScatter:
      return "ReduceScatter";
    case CollectiveKind::kAllToAll:
      return "AllToAll";
    case CollectiveKind::kBroadcast:
      return "Broadcast";
    case CollectiveKind::kScatter:
      return "Scatter";
    case CollectiveKind::kGather:
      return "Gather";
    case CollectiveKind::kReduce:
      return "Reduce";
  }
  return "?";
}

double CollectiveTime(const HardwareProfile& hw, CollectiveKind kind,
                      const std::vector<DeviceId>& participants, int64_t bytes) {
  DISTIR_CHECK(!participants.empty()) << CollectiveKindName(kind) << " without participants";
  DISTIR_CHECK(bytes >= 0) << CollectiveKindName(kind) << " of " << bytes << " bytes";
  DISTIR_CHECK(kind != CollectiveKind::kSend || participants.size() <= 2)
      << "Send has " << participants.size() << " participants, expected {src, dst}";
  CheckParticipants(hw, participants);
  // A lone participant has nobody to talk to, and an empty buffer moves nothing.
  if (participants.size() == 1 || bytes == 0) return 0;
  const Placement placement = Place(hw, participants);
  DISTIR_DCHECK(placement.num_nodes * placement.max_per_node >= placement.num_participants);
  return hw.collectives.launch_overhead +
         AlgorithmTime(hw, kind, placement, static_cast<double>(bytes));
}

}  // namespace distir::sim
