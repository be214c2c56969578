// Lowering a global DistIR program to per-rank programs: the MPMD form a
// runtime launches, one process per device (paper §3.2; seed
// tvm-distir-lowering-rfc; DESIGN.md §6).
//
// LowerToRanks() chains the steps of this library: placement (placement.h),
// projection onto each device (rank_program.h), the deadlock check on the
// projected programs (deadlock_check.h), and sharing of identical programs
// (dedupe.h). The result is a module that prints and parses like any other:
// the functions the rank programs call, then one function per distinct
// program. `distir opt FILE --lower` prints it.

#pragma once

#include <string>
#include <vector>

#include "ir/function.h"
#include "lowering/deadlock_check.h"
#include "support/status_or.h"

namespace distir {

struct LowerOptions {
  /// The function to lower; empty for the module's entry (its last function).
  std::string function;
  DeadlockCheckOptions deadlock;
};

/// One distinct rank program and the ranks that run it.
struct SharedProgram {
  /// Name of the function in LoweredModule::module, e.g. "rank_d1": the program
  /// as written for its first rank. Another rank of the group runs it with its
  /// own device in place of the first rank's (dedupe.h).
  std::string function;
  std::vector<DeviceId> ranks;
};

struct LoweredModule {
  /// The callees the rank programs need (in their original order), then one
  /// function per entry of `programs`. Types are those of the input.
  Module module;
  /// Ordered by first rank.
  std::vector<SharedProgram> programs;
  /// Per function of `module`, in order: local value id -> the value of the
  /// input module it stands for (nullptr for tokens). Points into the input
  /// module, which must outlive its use.
  std::vector<std::vector<const Value*>> origins;
  /// Name of the lowered function.
  std::string lowered;
};

/// Lowers `options.function` of `module` to per-rank programs.
///
/// REQUIRES: VerifyModule(module) holds and types are inferred (InferTypes).
/// The input module is unchanged. Linear in the size of the lowered function
/// and its callees.
/// Errors: NotFound for an unknown function; those of ComputePlacement,
/// ProjectToRanks and CheckDeadlockFree (located at the offending op).
StatusOr<LoweredModule> LowerToRanks(const Module& module, const LowerOptions& options = {});

/// Comment lines for the head of a printed LoweredModule, one per program:
///   // @mlpDP lowered to 2 ranks, 1 program
///   // ranks d1, d2: program @rank_d1
std::string DescribePrograms(const LoweredModule& lowered);

}  // namespace distir
