// Sharing rank programs: ranks whose projected programs are the same up to the
// rank's own device run one program (seed tvm-distir-lowering-rfc: "ranks with
// identical programs share one"). Data-parallel replicas are the typical case.
//
// Two programs are the same when they have the same ops in the same order with
// the same kinds, callees, attributes, result types and use-def structure,
// after each rank's own device is replaced by a placeholder "self" in types
// and device attributes. Value names do not matter. A Collective's `group` is
// compared literally (it names a communicator that every member shares) and its
// `rank` not at all: it is the position of self in the group, which each rank
// recomputes. So a rank runs a shared program by reading its own device for
// the program's rank device.

#pragma once

#include <vector>

#include "lowering/rank_program.h"

namespace distir {

/// Ranks that share one program.
struct RankGroup {
  /// Index into the programs passed to GroupIdenticalRanks() of the program
  /// the group runs: that of its first rank.
  int program = 0;
  /// The devices of the ranks, in the order of the programs.
  std::vector<DeviceId> ranks;
};

/// True when `a` (the program of rank `a_device`) and `b` (of `b_device`) are
/// the same up to the rank's own device, as in the file comment.
bool SameUpToOwnDevice(const Function& a, DeviceId a_device, const Function& b,
                       DeviceId b_device);

/// Partitions `programs` into groups of identical programs (SameUpToOwnDevice),
/// ordered by their first rank. Hashes first, so it takes time linear in the
/// total size of the programs.
std::vector<RankGroup> GroupIdenticalRanks(const std::vector<RankProgram>& programs);

}  // namespace distir
