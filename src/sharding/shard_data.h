// Shard and unshard tensor contents: the data side of a sharding.
//
// ShardDense cuts a global tensor into the local pieces each device of a mesh
// holds under a sharding (a partial sum puts the whole value on the devices
// whose partial-axis coordinates are all 0 and zeros elsewhere); UnshardDense
// puts pieces back together (summing, or taking the max or min, over partial
// axes; reading replicated copies from coordinate 0). Partitioning slices
// sharded constants with them, and the equivalence check (equivalence.h)
// scatters inputs and gathers outputs.

#pragma once

#include <utility>
#include <vector>

#include "ir/dense_tensor.h"
#include "ir/mesh.h"
#include "ir/type.h"
#include "ir/sharding.h"
#include "support/status_or.h"

namespace distir::sharding {

/// The box [begin, end) per dim of `t`. REQUIRES: the box lies inside t.
DenseTensor SliceDense(const DenseTensor& t, const std::vector<std::pair<int64_t, int64_t>>& box);

/// The box of the global tensor of `shape` that the device at `coords` holds.
std::vector<std::pair<int64_t, int64_t>> ShardBox(const Sharding& s, const Mesh& mesh,
                                                  const std::vector<int64_t>& shape,
                                                  const std::vector<int64_t>& coords);

/// One local piece per device of `mesh`, in its row-major device order.
/// REQUIRES: s.Validate(mesh, global.shape).ok().
std::vector<DenseTensor> ShardDense(const DenseTensor& global, const Sharding& s,
                                    const Mesh& mesh);

/// ShardDense's piece for device `dev` (in the mesh's order) alone.
DenseTensor ShardDenseOn(const DenseTensor& global, const Sharding& s, const Mesh& mesh,
                         int64_t dev);

/// The global tensor of `shape` from one piece per device (as ShardDense
/// makes them). InvalidArgument when a piece has the wrong shape.
StatusOr<DenseTensor> UnshardDense(const std::vector<DenseTensor>& pieces, const Sharding& s,
                                   const Mesh& mesh, const std::vector<int64_t>& shape);

}  // namespace distir::sharding
