// Shardings: how a tensor of the global program is laid out over a mesh.
//
// A Sharding names a mesh (mesh.h) and gives, per tensor dimension, the ordered
// list of mesh axes that split it (major to minor, MLIR's split_axes); axes on
// no dimension replicate the tensor. Axes in `partial` hold partial values
// still to be reduced with `partial_kind` (MLIR Mesh's partial, DTensor's
// Partial, Shardy's unreduced axes). A split dimension is cut into contiguous
// chunks, torch.chunk style (ceil(extent / n) each, the last ones shorter or
// empty), one axis after the other (the first axis cuts the dim, the next
// cuts each of those chunks, ...), unless `offsets` gives the shard
// boundaries of that dimension explicitly (MLIR Shard's
// sharded_dims_offsets). Text form:
//
//   <@m, [{a}, {b}]>                      rows over a, columns over b
//   <@m, [{}, {a, b}], partial = sum[c]>  columns over a (major) and b; sum over c pending
//   <@m, [{x}, {}], offsets = [{0, 64, 127}, {}]>
// (Braces, as Shardy writes dims, keep the text clear of FileCheck's `[[`.)
//
// Shardings are small immutable values compared with ==; the location of the
// literal they were parsed from is kept for diagnostics and ignored by ==.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/mesh.h"
#include "support/status.h"

namespace distir {

/// How partial values combine. kLogSumExp: log(sum_i exp(x_i)), the pieces of
/// a log-sum-exp over a split axis (a vocabulary-parallel cross-entropy's).
enum class ReductionKind { kSum, kMax, kMin, kLogSumExp };

/// "sum", "max", "min", "logsumexp".
const char* ReductionKindName(ReductionKind kind);
/// Parses "sum", "max", "min" or "logsumexp"; false otherwise.
bool ParseReductionKind(const std::string& text, ReductionKind* kind);

struct Sharding {
  std::string mesh;                            ///< mesh name without '@'
  std::vector<std::vector<std::string>> dims;  ///< per tensor dim, axes major -> minor
  std::vector<std::string> partial;            ///< axes holding unreduced partial values
  ReductionKind partial_kind = ReductionKind::kSum;
  /// Empty, or one entry per dim: empty (ceil-chunks) or the n + 1 shard
  /// boundaries 0 = o_0 <= ... <= o_n = extent for a dim split n ways.
  std::vector<std::vector<int64_t>> offsets;
  SourceLoc loc;  ///< where the literal was written; not part of the value

  /// Replicated over `mesh` for a tensor of rank `rank`.
  static Sharding Replicated(std::string mesh, int64_t rank);

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool is_partial() const { return !partial.empty(); }
  /// True when no dim is split and nothing is partial.
  bool IsReplicated() const;
  /// True when `axis` splits a dim or is partial.
  bool UsesAxis(const std::string& axis) const;
  /// The dim `axis` splits, or -1.
  int DimOfAxis(const std::string& axis) const;

  /// Number of shards of dim `d` on `mesh`: the product of its axes' sizes.
  int64_t NumShards(const Mesh& m, int d) const;
  /// Which shard of dim `d` the device at `coords` holds (major axis first).
  int64_t ShardIndex(const Mesh& m, int d, const std::vector<int64_t>& coords) const;
  /// [begin, end) of shard `index` of dim `d`, whose global extent is `extent`.
  std::pair<int64_t, int64_t> ShardRange(const Mesh& m, int d, int64_t extent, int64_t index) const;
  /// The local shape on the device at `coords` of a tensor of global `shape`.
  std::vector<int64_t> LocalShape(const Mesh& m, const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& coords) const;
  /// True when every split dim of `shape` divides evenly and has no offsets.
  bool IsEven(const Mesh& m, const std::vector<int64_t>& shape) const;

  /// Checks this sharding against `mesh` and a tensor of global `shape`
  /// (InvalidArgument at `loc`, naming the offending axis or dim): the mesh
  /// name matches; one entry per dim; every axis exists; no axis used twice
  /// (on two dims, twice on one, or split and partial); offsets well formed.
  Status Validate(const Mesh& m, const std::vector<int64_t>& shape) const;

  /// The canonical text form (see the file comment).
  std::string ToString() const;

  bool operator==(const Sharding& other) const {
    return mesh == other.mesh && dims == other.dims && partial == other.partial &&
           (partial.empty() || partial_kind == other.partial_kind) && offsets == other.offsets;
  }
  bool operator!=(const Sharding& other) const { return !(*this == other); }
};

/// 1 / (product of the sizes of the axes that split a dim): the share of a
/// tensor each device holds when the splits are even; used by cost estimates.
double LocalFraction(const Sharding& sharding, const Mesh& m);

}  // namespace distir
