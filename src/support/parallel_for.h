// ParallelFor: a loop over [0, n) cut into contiguous chunks run on threads of
// their own, for host work large enough to pay for starting them (filling
// random inputs of a billion-parameter program takes tens of seconds on one
// core; `distir run` does it for every configuration it measures).

#pragma once

#include <cstdint>
#include <functional>

namespace distir {

/// The cores this process may run on: its CPU affinity mask (one core for an
/// MPI rank that mpirun bound to a core, as OpenMPI does by default), or the
/// machine's hardware threads where the mask cannot be read. At least 1.
int64_t UsableCores();

/// Calls body(begin, end) on disjoint chunks that cover [0, n) exactly once,
/// each at least `min_chunk` long (the last may be shorter), on up to
/// UsableCores() threads (the calling one included);
/// returns when every chunk is done. n <= min_chunk runs body(0, n) on the
/// calling thread. `body` must be safe to call concurrently on disjoint ranges
/// and must not throw. REQUIRES: n >= 0, min_chunk >= 1.
void ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& body);

}  // namespace distir
