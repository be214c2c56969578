// Cost rules for communication ops: the alpha-beta model over the links the
// participants actually use, with nccl-tests' bus-bandwidth factors.
//
// The simulator (simulator.h) charges every participant of a collective the same
// time, synchronously; this file says how long that time is, from the hardware
// profile (hardware_profile.h) alone. Compute ops have their own rules
// (compute_cost_rules.cc). The formulas and their derivations are in
// docs/cost_model.md (section "Collectives"); each one here cites its equation.

#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/device.h"
#include "ir/op.h"
#include "sim/hardware_profile.h"
#include "support/status_or.h"

namespace distir::sim {

/// The communication patterns the cost model knows. Send is point to point; the
/// others are NCCL/MPI collectives (MPIGather is kGather, MPIScatter kScatter).
enum class CollectiveKind {
  kSend,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kScatter,
  kGather,
  kReduce,
};

/// Short name for messages and traces, e.g. "AllReduce".
std::string_view CollectiveKindName(CollectiveKind kind);

/// Seconds one collective takes on every participant (the simulator charges all
/// of them the same, synchronously).
///
/// `participants`: every device involved, distinct, in op order (Send: {src, dst};
/// rooted ops include the root). Only the set matters: the model assumes the
/// topology-aware ring/chain order NCCL builds, not the op order.
/// `bytes` (nccl-tests convention): AllReduce, ReduceScatter, Broadcast, Reduce,
/// Send: size of the full buffer S (one input of AllReduce/ReduceScatter/Reduce,
/// the input of Broadcast/Send); AllGather and Gather: size of the full gathered
/// output; Scatter: size of the full input; AllToAll: size of one device's input.
///
/// Returns 0 for one participant or zero bytes (nothing moves); otherwise
/// collectives.launch_overhead plus the algorithm's time.
/// REQUIRES: participants.size() >= 1 (Send: at most 2), bytes >= 0, every
/// participant a valid device of `hw` (has a value, below hw.NumDevices()).
/// Checked with DISTIR_CHECK: breaking them is a bug of the caller.
double CollectiveTime(const HardwareProfile& hw, CollectiveKind kind,
                      const std::vector<DeviceId>& participants, int64_t bytes);

/// Cost rule of the per-rank communication ops of lowered programs (SendTo,
/// RecvFrom, Collective; docs/ir.md "Lowering to per-rank programs"): the
/// CollectiveTime of the global op the rank takes part in. Participants are
/// {self, peer} for SendTo and RecvFrom and `group` for Collective; the buffer
/// size S follows the conventions above, from the rank's own input or result
/// (a gather or scatter rank that holds one chunk counts n chunks).
/// Errors: a kind that names no collective; a device the profile lacks.
StatusOr<double> PerRankCommunicationTime(const Op& op, const HardwareProfile& hw);

/// Appends to a cost memo `key` what the cost of a per-rank communication op
/// depends on beyond its types: its attributes (peer, group, kind, root). The
/// cost model's memo is keyed by types, and a rank's types name only its own
/// device. The same for a global collective of a part of a program: its
/// `participants` (docs/ir.md), which its types name only in part. Appends
/// nothing for other ops.
void AppendPerRankCostKey(const Op& op, std::vector<int64_t>& key);

}  // namespace distir::sim
