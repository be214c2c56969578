// Ahead-of-time memory plan of one rank program: every tensor gets an offset
// in one arena, fixed before the first op runs.
//
// The paper notes that its naive allocation fragmented memory and ran out of
// it where the simulator predicted a fit. So the executor never allocates
// while it runs: MemoryPlan::Build() derives each buffer's live interval from
// the program's op order, with the simulator's buffer rules
// (docs/cost_model.md §4, sim/memory_tracker.h) so that both count the same
// bytes, and packs the intervals into one arena by a greedy best-fit.
//
//   * A buffer is live from its defining op to its last use, both included
//     (allocated at op start, freed at op end). An unused result lives for its
//     own op only. Parameters and returned values are live throughout.
//   * A result that is a view or an in-place update of an input shares that
//     input's buffer, as ir/op_alias.h says (Reshape, Squeeze, Unsqueeze,
//     Identity, SGD, Adam, and the token results of per-rank communication);
//     the simulator asks the same table.
//   * Every buffer is rounded up to kArenaAlignment bytes.
//
// live_peak_bytes() is the simulator's per-device peak for the same program
// (unaligned sum of live buffers); arena_bytes() is what the executor really
// allocates, at least as much: alignment padding plus any fragmentation the
// best-fit could not avoid. docs/backend.md compares the two.

#pragma once

#include <cstdint>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir::backend {

/// Every buffer's offset is a multiple of this (a cache line; AVX-512 loads).
inline constexpr int64_t kArenaAlignment = 64;

/// One buffer of the plan.
struct PlannedBuffer {
  int64_t bytes = 0;    ///< the tensor's bytes (elements x ByteWidth), unaligned
  int32_t first = 0;    ///< op index of the definition (0 for parameters)
  int32_t last = 0;     ///< op index of the last use, included (num_ops for resident buffers)
  int64_t offset = 0;   ///< in the arena, a multiple of kArenaAlignment
};

class MemoryPlan {
 public:
  /// Plans `fn`, a rank program (or any function whose values are all tensors
  /// or scalars with static types).
  /// Errors: InvalidArgument at the value for a tuple, an unknown type or a
  /// dynamic extent (the executor needs every size before it starts).
  static StatusOr<MemoryPlan> Build(const Function& fn);

  /// Bytes of the arena: the largest offset + aligned size (0 when empty).
  int64_t arena_bytes() const { return arena_bytes_; }
  /// The largest sum of the (unaligned) bytes of buffers live at one op: the
  /// simulator's peak for this program.
  int64_t live_peak_bytes() const { return live_peak_bytes_; }

  const std::vector<PlannedBuffer>& buffers() const { return buffers_; }
  /// The buffer of value `value_id`. Every value has one.
  int32_t buffer_of(int value_id) const { return buffer_of_[value_id]; }
  /// Offset of value `value_id`'s data in the arena.
  int64_t offset_of(int value_id) const { return buffers_[buffer_of_[value_id]].offset; }

 private:
  std::vector<PlannedBuffer> buffers_;
  std::vector<int32_t> buffer_of_;
  int64_t arena_bytes_ = 0;
  int64_t live_peak_bytes_ = 0;
};

/// Gives every buffer of `buffers` an offset (a multiple of kArenaAlignment)
/// so that no two buffers whose intervals [first, last] intersect share a byte
/// of their aligned extents; greedy best-fit, biggest first (ties: earliest
/// first). Returns the arena's size: the largest offset + aligned size, 0 when
/// `buffers` is empty. Only the offsets are written. MemoryPlan::Build()
/// calls it; it is exposed for tests on arbitrary interval sets.
/// REQUIRES: every buffer has bytes >= 0 and 0 <= first <= last.
int64_t PackBuffers(std::vector<PlannedBuffer>& buffers);

/// The largest sum of bytes of the buffers live at one op index i (those with
/// first <= i <= last), unaligned; 0 when `buffers` is empty. No packing can
/// fit in fewer bytes. REQUIRES: as PackBuffers().
int64_t LivePeakBytes(const std::vector<PlannedBuffer>& buffers);

}  // namespace distir::backend
