// The numerical check of a partition: the per-device program computes what
// the global-view program computes (SHARDING.md §7.3's third check).
//
// Both run on the reference executor (interp/reference_executor.h) with the
// same seeded random inputs: the global program on whole tensors, the
// partitioned one on the pieces ShardDense cuts from them (shard_data.h).
// The partitioned outputs are put back together with UnshardDense (summing
// partial values) and compared with AllClose. This is what catches a bias
// added once per device or a padding row summed in.

#pragma once

#include <cstdint>
#include <string>

#include "interp/reference_executor.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir::sharding {

struct EquivalenceReport {
  int outputs = 0;            ///< returned values compared
  int64_t elements = 0;       ///< their elements in all
  double max_abs_diff = 0;    ///< largest |partitioned - global|
  int64_t devices = 0;        ///< devices of the mesh
};

/// `global` holds `function` as a materialised global-view program (every
/// value sharded, reshards explicit); `partitioned` holds its
/// PartitionShardings. FailedPrecondition with AllClose's report when an
/// output differs beyond |a - b| <= atol + rtol |b|. `inputs` chooses how the
/// random inputs are drawn (e.g. overrides for values that must be positive).
StatusOr<EquivalenceReport> CheckPartitionEquivalence(const Module& global,
                                                      const Module& partitioned,
                                                      std::string function,
                                                      uint64_t seed, double rtol = 1e-5,
                                                      double atol = 1e-6,
                                                      const RandomInputOptions& inputs = {});

}  // namespace distir::sharding
