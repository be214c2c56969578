// A program written as segments, each a copy of one of a few kinds of op
// sequences of a template function (docs/cost_model.md §3.3), without the
// values of the copies.
//
// An ExpandedProgram (expanded_program.h) lists every op of K microbatches'
// copies and every value they read and write; simulating it walks K x ops
// ops and builds a buffer plan of K x values buffers. But a pipelined
// program repeats a few op sequences: each task of a stage (its forward or
// backward, microbatch 0 or a later one) and each Send. A SegmentedProgram
// is those sequences (kinds) and the order of their copies (segments); the
// simulator replays the kinds' costed ops segment by segment, without any
// value of the copies (sim::SimulateSegmented). Memory comes in three parts: the buffers a kind
// allocates and frees inside each of its segments (the same in every copy:
// a live-bytes profile per kind); the allocations and frees of buffers that
// cross segments which every segment of a kind makes at the same op (the
// forward pass allocating what the backward frees); and the rest of the
// buffers that cross segments, each listed with the positions of its ends.
//
// Op positions: the ops of segment s follow those of segment s - 1, in
// their kind's order; position 0 is the first op of segment 0.

#pragma once

#include <cstdint>
#include <vector>

#include "ir/expanded_program.h"

namespace distir {

struct SegmentedProgram {
  /// op of a kind: a running sum's Add (ExpandedProgram::kSum).
  static constexpr int32_t kSum = ExpandedProgram::kSum;
  /// A buffer's death that never comes: it stays resident.
  static constexpr int64_t kResident = -1;
  /// A buffer's allocation before the first op: a parameter.
  static constexpr int64_t kBeforeFirstOp = -1;
  /// A buffer's allocation or death that is one of its kind's changes.
  static constexpr int64_t kInKind = -2;

  /// A buffer a kind allocates and frees within each of its segments:
  /// the template value whose type gives its device and bytes, and the
  /// offsets (in the kind) of the op that allocates it and of its last reader
  /// (its allocating op when nothing reads it).
  struct LocalBuffer {
    int32_t value = 0;
    int32_t def = 0;
    int32_t death = 0;
  };
  /// A change that every segment of a kind makes to the live bytes of
  /// buffers that cross segments: a copy of template value `value` allocated
  /// by the op at `offset` (alloc), or one freed after it (a copy's last
  /// reader there in every segment of the kind, or running sums that free
  /// the previous one).
  struct KindChange {
    int32_t value = 0;
    int32_t offset = 0;
    bool alloc = true;
  };
  /// Any other buffer: its template value, the positions of its allocating
  /// op (kBeforeFirstOp; kInKind) and last reader (kResident; kInKind).
  struct Buffer {
    int32_t value = 0;
    int64_t def = 0;
    int64_t death = 0;
  };

  // Kinds: each a sequence of ops (CSR).
  std::vector<int32_t> kind_begin{0};
  std::vector<int32_t> op;  ///< template op id, or kSum
  std::vector<int32_t>
      summed;  ///< kSum: the template value summed (its type is the Add's); else -1
  std::vector<int32_t> local_begin{0};  ///< CSR by kind: its local buffers
  std::vector<LocalBuffer> local;
  std::vector<int32_t> change_begin{0};  ///< CSR by kind: its changes
  std::vector<KindChange> changes;

  /// Segments in program order: the kind each copies.
  std::vector<int32_t> segment_kind;
  /// Every buffer that is not local to a segment, parameters included.
  std::vector<Buffer> buffers;

  /// As ExpandedProgram::keep_device and whole_num_ops.
  std::vector<char> keep_device;
  int64_t whole_num_ops = -1;

  int32_t num_kinds() const { return static_cast<int32_t>(kind_begin.size()) - 1; }
  int32_t KindSize(int32_t k) const { return kind_begin[k + 1] - kind_begin[k]; }
  /// The ops of every segment.
  int64_t num_ops() const {
    int64_t n = 0;
    for (int32_t k : segment_kind) n += KindSize(k);
    return n;
  }
};

}  // namespace distir
