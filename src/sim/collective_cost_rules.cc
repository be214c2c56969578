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
#include <optional>

#include "ir/op_registry.h"
#include "support/check.h"
#include "support/checked_math.h"

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

namespace distir::sim {
namespace {

// The cost model's kind of a global communication op.
std::optional<CollectiveKind> KindOf(OpKind kind) {
  switch (kind) {
    case OpKind::kSend: return CollectiveKind::kSend;
    case OpKind::kAllReduce: return CollectiveKind::kAllReduce;
    case OpKind::kAllGather: return CollectiveKind::kAllGather;
    case OpKind::kReduceScatter: return CollectiveKind::kReduceScatter;
    case OpKind::kAllToAll: return CollectiveKind::kAllToAll;
    case OpKind::kBroadcast: return CollectiveKind::kBroadcast;
    case OpKind::kScatter: return CollectiveKind::kScatter;
    case OpKind::kMPIGather: return CollectiveKind::kGather;
    case OpKind::kReduce: return CollectiveKind::kReduce;
    default: return std::nullopt;
  }
}

// The device of the rank running a per-rank op: that of its input, else its result.
DeviceId SelfOf(const Op& op) {
  const Type& t = op.num_inputs() > 0 ? op.input(0)->type() : op.result(0)->type();
  return t.device();
}

// S of the nccl-tests convention seen from one rank. Gather and scatter ranks
// that hold one chunk of the full buffer count n chunks (even chunks assumed).
// nullopt when n chunks do not fit in int64. The CostModel checked that the
// op's own sizes fit (cost_model.h).
std::optional<int64_t> RankBytes(const Op& op, CollectiveKind kind, DeviceId self, int64_t n) {
  const bool has_input = op.num_inputs() > 0;
  const int64_t in = has_input ? op.input(0)->type().SizeInBytes() : 0;
  const int64_t out = op.result(0)->type().SizeInBytes();
  const Attribute* root = op.FindAttr("device");
  switch (kind) {
    case CollectiveKind::kAllGather:
      return out;
    case CollectiveKind::kGather:
      return root != nullptr && root->AsDevice() == self ? out : CheckedMul(in, n);
    case CollectiveKind::kScatter:
      return has_input ? in : CheckedMul(out, n);
    default:
      return has_input ? in : out;
  }
}

}  // namespace

StatusOr<double> PerRankCommunicationTime(const Op& op, const HardwareProfile& hw) {
  const DeviceId self = SelfOf(op);
  std::vector<DeviceId> participants;
  CollectiveKind kind = CollectiveKind::kSend;
  if (op.kind() == OpKind::kCollective) {
    std::optional<OpKind> global = LookupOpKind(op.FindAttr("kind")->AsString());
    std::optional<CollectiveKind> k = global ? KindOf(*global) : std::nullopt;
    if (!k) {
      return InvalidArgument(op.loc()) << "cannot cost Collective of unknown kind \""
                                       << op.FindAttr("kind")->AsString() << "\"";
    }
    kind = *k;
    participants = op.FindAttr("group")->AsDevices();
  } else {
    participants = {self, op.FindAttr("device")->AsDevice()};
  }
  const std::optional<int64_t> num_devices = hw.NumDevices();
  for (DeviceId d : participants) {
    if (!num_devices || d.value() < *num_devices) continue;
    return InvalidArgument(op.loc()) << op.Name() << " uses device " << d << ", but hardware profile '"
                                     << hw.name << "' has " << *num_devices << " devices";
  }
  const auto n = static_cast<int64_t>(participants.size());
  const std::optional<int64_t> bytes = RankBytes(op, kind, self, n);
  if (!bytes) {
    return ResourceExhausted(op.loc())
           << "cannot cost " << op.Name() << ": the full buffer of its " << CollectiveKindName(kind)
           << " over " << n << " devices takes more than 2^63 bytes";
  }
  return CollectiveTime(hw, kind, participants, *bytes);
}

void AppendPerRankCostKey(const Op& op, std::vector<int64_t>& key) {
  // A part's collective: its types name the kept participants only.
  if (const Attribute* all = op.FindAttr("participants")) {
    key.push_back(-2);
    key.push_back(static_cast<int64_t>(all->AsDevices().size()));
    for (DeviceId d : all->AsDevices()) key.push_back(d.value());
    return;
  }
  if (op.kind() != OpKind::kSendTo && op.kind() != OpKind::kRecvFrom &&
      op.kind() != OpKind::kCollective) {
    return;
  }
  // Each attribute as its kind, then its value, so that different attribute
  // sets never encode alike.
  for (const auto& [name, attr] : op.attrs()) {
    key.push_back(static_cast<int64_t>(attr.type()));
    switch (attr.type()) {
      case AttrType::kDevice:
        key.push_back(attr.AsDevice().value());
        break;
      case AttrType::kDevices:
        key.push_back(static_cast<int64_t>(attr.AsDevices().size()));
        for (DeviceId d : attr.AsDevices()) key.push_back(d.value());
        break;
      case AttrType::kString: {
        std::optional<OpKind> k = LookupOpKind(attr.AsString());
        key.push_back(k ? static_cast<int64_t>(*k) : -1);
        break;
      }
      default:  // rank and axes: the cost does not depend on them
        key.push_back(0);
        break;
    }
  }
}

}  // namespace distir::sim
