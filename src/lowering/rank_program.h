// Projection of a global DistIR function onto its ranks (paper §3.2; the MPMD
// lowering of seed tvm-distir-lowering-rfc): one function per device holding
// exactly the ops that run there, in program order.
//
// Ops on one device are copied. Communication, written once for all
// participants in the global program, splits into per-rank halves:
//   %y = Send(%x) {device = d2}       d1: _ = SendTo(%x) {device = d2}
//                                     d2: %y = RecvFrom() {device = d1} : T
//   %a1, %a2 = AllReduce(%x1, %x2)    d1: %a1 = Collective(%x1) {group = [d1, d2],
//                                           kind = "AllReduce", rank = 0}  (d2: rank = 1)
// Per-rank ops already in the input stay on their device. placement.h says
// where each op runs; dedupe.h shares identical rank programs;
// deadlock_check.h checks that the halves match up.

#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"
#include "lowering/placement.h"
#include "support/status_or.h"

namespace distir {

/// The program of one rank (one device).
struct RankProgram {
  DeviceId device;
  /// Named `<prefix>d<N>` (`rank_d1`); parameters are the global parameters on the device, in
  /// order; returns are the global returned values on the device, in order.
  std::unique_ptr<Function> function;
  /// Local value id -> the global value it stands for; nullptr for the token
  /// results of SendTo and of collectives that deliver nothing to this rank.
  /// Points into the projected function, which must outlive it.
  std::vector<const Value*> origin;
};

/// Projects `placement.function()` onto every device in
/// `placement.all_devices()`, in device order. Value names, attributes,
/// result types and source locations are kept; a collective's group lists its
/// participants in op order (inputs, then result devices not yet listed).
/// Linear in the size of the function.
///
/// REQUIRES: the function verifies and its types are inferred (the placement
/// was computed).
/// Errors (InvalidArgument unless noted, located at the offending parameter or
/// op): a parameter with no device or on several; an op with no device; a
/// non-communication op on several devices (a call of a multi-device function,
/// a Tuple across devices); Unimplemented for a call whose callee communicates
/// (lowering does not inline).
/// The functions are named `prefix` + device (`rank_d1`).
StatusOr<std::vector<RankProgram>> ProjectToRanks(const Placement& placement,
                                                  const std::string& prefix = "rank_");

}  // namespace distir
