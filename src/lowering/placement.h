// Device placement analysis: which devices each op of a function runs on
// (paper §3.2), the first step of lowering to per-rank programs.
//
// Placement reads what type inference wrote (interp/infer_types.h): an op runs
// on the devices of its inputs and results, plus the destinations its device
// attributes name (Send, Broadcast, Reduce, Constant, ...). A call of a
// device-generic function runs on its arguments' device; a call of any other
// function runs on every device that function touches. The per-rank
// communication ops (SendTo, RecvFrom, Collective) run on their own device
// only: their `device` and `group` attributes name peers. rank_program.h
// projects a function onto its devices from this analysis.

#pragma once

#include <span>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

/// The devices every op of one function runs on. An immutable side table
/// indexed by op id (STYLE.md §4); it refers to the function and module it was
/// computed from, which must outlive it.
class Placement {
 public:
  /// The devices `op` runs on, sorted and distinct; empty when no type or
  /// attribute of the op names a device. REQUIRES: `op` belongs to function().
  std::span<const DeviceId> devices(const Op& op) const;

  /// For a call: the first communication op (Send, a collective or a per-rank
  /// op) reachable through the callee, or nullptr. nullptr for other ops.
  const Op* CalleeCommunication(const Op& op) const { return callee_comm_[op.id()]; }

  /// Every device some op or parameter of the function is on, sorted.
  const std::vector<DeviceId>& all_devices() const { return all_devices_; }

  const Function& function() const { return *fn_; }

 private:
  friend StatusOr<Placement> ComputePlacement(const Module& module, const Function& fn);

  const Function* fn_ = nullptr;
  std::vector<int> begin_;  ///< op id -> first index in devices_; size ops + 1
  std::vector<DeviceId> devices_;
  std::vector<const Op*> callee_comm_;
  std::vector<DeviceId> all_devices_;
};

/// Computes the placement of every op of `fn`, a function of `module` (for
/// calls). Linear in the size of `fn` and of the functions before it.
///
/// REQUIRES: VerifyModule(module) holds.
/// Errors (FailedPrecondition, located at the op): an input or result whose
/// type is unknown, i.e. type inference has not run.
StatusOr<Placement> ComputePlacement(const Module& module, const Function& fn);

/// True for the per-rank communication ops of lowered programs: SendTo,
/// RecvFrom and Collective.
bool IsPerRankCommunication(OpKind kind);

}  // namespace distir
