#include "sharding/shard_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace distir::sharding {
namespace {

using Box = std::vector<std::pair<int64_t, int64_t>>;

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Calls f(global_offset, local_offset) for every element of `box` inside a
// tensor of `shape`, in row-major order of the box.
template <typename F>
void ForEachInBox(const std::vector<int64_t>& shape, const Box& box, F f) {
  std::vector<int64_t> strides = Strides(shape);
  std::vector<int64_t> idx(box.size());
  int64_t n = 1;
  for (const auto& [b, e] : box) n *= e - b;
  for (int64_t local = 0; local < n; ++local) {
    int64_t global = 0;
    for (size_t d = 0; d < box.size(); ++d) global += (box[d].first + idx[d]) * strides[d];
    f(global, local);
    for (size_t d = box.size(); d-- > 0;) {
      if (++idx[d] < box[d].second - box[d].first) break;
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> BoxShape(const Box& box) {
  std::vector<int64_t> shape;
  for (const auto& [b, e] : box) shape.push_back(e - b);
  return shape;
}

// True for the device that reads a replicated copy: coordinate 0 on every
// axis the sharding neither splits nor holds partial.
bool IsReader(const Sharding& s, const Mesh& mesh, const std::vector<int64_t>& coords) {
  for (int a = 0; a < mesh.num_axes(); ++a) {
    if (!s.UsesAxis(mesh.axes()[a].name) && coords[a] != 0) return false;
  }
  return true;
}

bool OnPartialOrigin(const Sharding& s, const Mesh& mesh, const std::vector<int64_t>& coords) {
  for (const std::string& p : s.partial) {
    if (coords[mesh.AxisIndex(p)] != 0) return false;
  }
  return true;
}

}  // namespace

DenseTensor SliceDense(const DenseTensor& t, const Box& box) {
  DenseTensor out{t.dtype, BoxShape(box), {}};
  out.values.resize(static_cast<size_t>(out.NumElements()));
  ForEachInBox(t.shape, box, [&](int64_t g, int64_t l) { out.values[l] = t.values[g]; });
  return out;
}

Box ShardBox(const Sharding& s, const Mesh& mesh, const std::vector<int64_t>& shape,
             const std::vector<int64_t>& coords) {
  Box box;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (s.dims[d].empty()) {
      box.emplace_back(0, shape[d]);
      continue;
    }
    int dim = static_cast<int>(d);
    box.push_back(s.ShardRange(mesh, dim, shape[d], s.ShardIndex(mesh, dim, coords)));
  }
  return box;
}

DenseTensor ShardDenseOn(const DenseTensor& global, const Sharding& s, const Mesh& mesh,
                         int64_t dev) {
  std::vector<int64_t> coords = mesh.Coords(dev);
  DenseTensor piece = SliceDense(global, ShardBox(s, mesh, global.shape, coords));
  // A partial sum (log-sum-exp): the whole value on one device of each
  // group, the reduction's identity 0 (-inf) elsewhere.
  if (s.is_partial() && !OnPartialOrigin(s, mesh, coords)) {
    if (s.partial_kind == ReductionKind::kSum)
      std::fill(piece.values.begin(), piece.values.end(), 0.0);
    if (s.partial_kind == ReductionKind::kLogSumExp)
      std::fill(piece.values.begin(), piece.values.end(), -std::numeric_limits<double>::infinity());
  }
  return piece;
}

std::vector<DenseTensor> ShardDense(const DenseTensor& global, const Sharding& s,
                                    const Mesh& mesh) {
  std::vector<DenseTensor> pieces;
  for (int64_t dev = 0; dev < mesh.num_devices(); ++dev)
    pieces.push_back(ShardDenseOn(global, s, mesh, dev));
  return pieces;
}

StatusOr<DenseTensor> UnshardDense(const std::vector<DenseTensor>& pieces, const Sharding& s,
                                   const Mesh& mesh, const std::vector<int64_t>& shape) {
  DenseTensor out{pieces.empty() ? DType::kF32 : pieces[0].dtype, shape, {}};
  out.values.assign(static_cast<size_t>(out.NumElements()), 0.0);
  std::vector<bool> seen(out.values.size(), false);
  for (int64_t dev = 0; dev < mesh.num_devices(); ++dev) {
    std::vector<int64_t> coords = mesh.Coords(dev);
    if (!IsReader(s, mesh, coords)) continue;
    Box box = ShardBox(s, mesh, shape, coords);
    const DenseTensor& piece = pieces[dev];
    if (piece.shape != BoxShape(box))
      return InvalidArgument() << "piece on device " << dev << " has shape ["
                               << ShapeToString(piece.shape) << "], expected ["
                               << ShapeToString(BoxShape(box)) << "]";
    ForEachInBox(shape, box, [&](int64_t g, int64_t l) {
      double v = piece.values[l];
      if (!seen[g]) {
        out.values[g] = v;
        seen[g] = true;
      } else if (s.partial_kind == ReductionKind::kMax) {
        out.values[g] = std::max(out.values[g], v);
      } else if (s.partial_kind == ReductionKind::kMin) {
        out.values[g] = std::min(out.values[g], v);
      } else if (s.partial_kind == ReductionKind::kLogSumExp) {
        const double hi = std::max(out.values[g], v), lo = std::min(out.values[g], v);
        if (lo != -std::numeric_limits<double>::infinity())
          out.values[g] = hi + std::log1p(std::exp(lo - hi));
        else
          out.values[g] = hi;
      } else {
        out.values[g] += v;
      }
    });
  }
  return out;
}

}  // namespace distir::sharding
