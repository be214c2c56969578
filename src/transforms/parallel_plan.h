// ParallelPlan: the decisions Parallelize() shares between the program it
// emits and the @init / @collect functions around it (internal to
// src/transforms).
//
// The plan fixes the mesh, each op's pipeline stage, and the list of the
// program's parameters with where each comes from (which sequential
// parameter, which batch piece, which Megatron shard, which ZeRO piece, on
// which device), so that @init produces exactly those values, and the list of
// the program's results with how @collect reassembles them.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/device.h"
#include "ir/function.h"
#include "ir/type.h"
#include "transforms/model_layout.h"
#include "transforms/parallel_options.h"

namespace distir::parallel {

/// Devices as a (D, P, T) mesh, T innermost.
struct Mesh {
  int64_t dp = 1, pp = 1, tp = 1;
  DeviceId Device(int64_t r, int64_t s, int64_t t) const {
    return DeviceId(static_cast<int32_t>((r * pp + s) * tp + t));
  }
};

/// Pipeline stage of a layer: L layers cut into P contiguous stages, the first
/// L mod P stages one layer longer; ops before the first layer go to stage 0,
/// ops after the last to stage P - 1.
int64_t StageOfLayer(int64_t layer, int64_t num_layers, int64_t stages);

/// Extents of the T pieces of `extent` (the first extent mod T pieces one larger).
std::vector<int64_t> PieceSizes(int64_t extent, int64_t pieces);

/// The type of shard `t` of `full` under `split` (T shards), then, when
/// zero_pieces > 1, of piece `zero_piece` of that along dim 0; on `device`.
Type ShardType(const Type& full, TpSplit split, int64_t t, int64_t tp, int64_t zero_pieces,
               DeviceId device);

/// Where one parameter of the distributed program comes from.
struct ParamSource {
  int seq_param = 0;
  TpSplit split = TpSplit::kReplicated;
  int64_t shard = 0;         ///< t
  int64_t batch_piece = -1;  ///< data: piece r*K + m of D*K along dim 0
  int64_t zero_piece = -1;   ///< ZeRO: piece r of D along dim 0 (of the T shard)
  DeviceId device;
};

/// How @collect rebuilds one sequential result from program results.
struct ResultSink {
  OutputKind kind = OutputKind::kSum;
  TpSplit split = TpSplit::kReplicated;  ///< T assembly
  bool zero_sharded = false;             ///< kUpdated: replicas hold dim-0 pieces
  /// Program results, indexed [r][t][m] flattened as ((r * T) + t) * M + m,
  /// with M = K for kBatchConcat and 1 otherwise; T = 1 unless split.
  std::vector<int> results;
  std::vector<Type> types;  ///< of those results (parallel to `results`)
  int64_t replicas = 1, shards = 1, microbatches = 1;
};

struct ParallelPlan {
  ParallelOptions options;
  Mesh mesh;
  std::vector<ParamSource> params;  ///< parallel to the program's parameters
  std::vector<ResultSink> sinks;    ///< parallel to the sequential function's results
};

/// Builds @init: the sequential parameters on d0 -> the program's parameters.
StatusOr<std::unique_ptr<Function>> BuildInit(const Function& seq, const Function& program,
                                              const ParallelPlan& plan);

/// Builds @collect: the program's results -> the sequential results on d0.
StatusOr<std::unique_ptr<Function>> BuildCollect(const Function& seq, const Function& program,
                                                 const ParallelPlan& plan);

}  // namespace distir::parallel
