// Deadlock freedom of a set of rank programs: every collective is entered by
// all members of its group in the same order, and every SendTo meets its
// RecvFrom, so the ranks cannot wait on each other forever.
//
// The check runs the ranks' communication abstractly, one op at a time: a
// SendTo posts a message on the FIFO queue of its (sender, receiver) pair, a
// RecvFrom takes the oldest message of its pair (so the k-th receive from a
// peer matches the k-th send to it), and a Collective waits until every member
// of its group has entered its next collective on that group, which must be
// the same (kind and attributes). Compute ops never block. rank_program.h
// produces the programs; lower.h runs this check on every lowering.

#pragma once

#include <vector>

#include "ir/function.h"
#include "support/status.h"

namespace distir {

/// One rank: its device and its program (not owned; must outlive the check).
struct RankView {
  DeviceId device;
  const Function* function = nullptr;
};

/// How a SendTo waits for its receiver.
enum class SendSemantics {
  /// The sender blocks until the receiver takes the message, like the global
  /// Send (which occupies both devices) and like large NCCL/MPI sends. The
  /// strict choice: a program safe here is safe with buffering too.
  kRendezvous,
  /// The sender goes on at once; messages wait in unbounded buffers.
  kBuffered,
};

struct DeadlockCheckOptions {
  SendSemantics sends = SendSemantics::kRendezvous;
};

/// Checks that `ranks` run to completion together. Linear in the number of ops
/// plus, for collectives, the sizes of their groups.
///
/// REQUIRES: every function's types are inferred, the devices are distinct, and
/// communication is in per-rank form (SendTo, RecvFrom, Collective).
/// Errors (InvalidArgument, located at the first offending op, naming the ranks,
/// ops and source locations involved): a global communication op in a rank
/// program; a peer or group member that is not among `ranks`; a Collective
/// whose group does not contain its rank at position `rank`; two members
/// entering different collectives as their k-th on a group; a RecvFrom whose
/// type differs from that of the matching SendTo (up to the device); a deadlock
/// (ranks blocked in a cycle, or on a peer that has returned), described by the
/// rank with the smallest device and a note per other blocked rank; with
/// buffered sends, a message never received.
Status CheckDeadlockFree(const std::vector<RankView>& ranks,
                         const DeadlockCheckOptions& options = {});

}  // namespace distir
