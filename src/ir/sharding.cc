#include "ir/sharding.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "support/check.h"

namespace distir {

const char* ReductionKindName(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum:
      return "sum";
    case ReductionKind::kMax:
      return "max";
    case ReductionKind::kMin:
      return "min";
    case ReductionKind::kLogSumExp:
      return "logsumexp";
  }
  return "sum";
}

bool ParseReductionKind(const std::string& text, ReductionKind* kind) {
  if (text == "sum")
    *kind = ReductionKind::kSum;
  else if (text == "max")
    *kind = ReductionKind::kMax;
  else if (text == "min")
    *kind = ReductionKind::kMin;
  else if (text == "logsumexp")
    *kind = ReductionKind::kLogSumExp;
  else
    return false;
  return true;
}

Sharding Sharding::Replicated(std::string mesh, int64_t rank) {
  Sharding s;
  s.mesh = std::move(mesh);
  s.dims.resize(static_cast<size_t>(rank));
  return s;
}

bool Sharding::IsReplicated() const {
  if (!partial.empty()) return false;
  for (const auto& axes : dims) {
    if (!axes.empty()) return false;
  }
  return true;
}

int Sharding::DimOfAxis(const std::string& axis) const {
  for (size_t d = 0; d < dims.size(); ++d) {
    if (std::find(dims[d].begin(), dims[d].end(), axis) != dims[d].end())
      return static_cast<int>(d);
  }
  return -1;
}

bool Sharding::UsesAxis(const std::string& axis) const {
  return DimOfAxis(axis) >= 0 || std::find(partial.begin(), partial.end(), axis) != partial.end();
}

int64_t Sharding::NumShards(const Mesh& m, int d) const {
  int64_t n = 1;
  for (const std::string& a : dims[d]) n *= m.AxisSize(a);
  return n;
}

int64_t Sharding::ShardIndex(const Mesh& m, int d, const std::vector<int64_t>& coords) const {
  int64_t index = 0;
  for (const std::string& a : dims[d]) {
    int i = m.AxisIndex(a);
    index = index * m.axes()[i].size + coords[i];
  }
  return index;
}

std::pair<int64_t, int64_t> Sharding::ShardRange(const Mesh& m, int d, int64_t extent,
                                                 int64_t index) const {
  if (!offsets.empty() && !offsets[d].empty()) return {offsets[d][index], offsets[d][index + 1]};
  // The digits of `index` per axis, major first.
  const std::vector<std::string>& axes = dims[d];
  std::vector<int64_t> digit(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    int64_t n = m.AxisSize(axes[i]);
    digit[i] = index % n;
    index /= n;
  }
  // Nested torch.chunk: the first axis cuts the dim into ceil-chunks, the next
  // cuts each chunk, and so on (DTensor's (Shard(d), Shard(d))). Adding an
  // axis at the end thus always cuts inside the current piece, which is what a
  // local slice and a gather over the last axes rely on.
  int64_t begin = 0, end = extent;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t n = m.AxisSize(axes[i]);
    int64_t chunk = (end - begin + n - 1) / n;
    int64_t b = std::min(begin + digit[i] * chunk, end);
    end = std::min(b + chunk, end);
    begin = b;
  }
  return {begin, end};
}

std::vector<int64_t> Sharding::LocalShape(const Mesh& m, const std::vector<int64_t>& shape,
                                          const std::vector<int64_t>& coords) const {
  std::vector<int64_t> local = shape;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (dims[d].empty()) continue;
    auto [begin, end] = ShardRange(m, d, shape[d], ShardIndex(m, d, coords));
    local[d] = end - begin;
  }
  return local;
}

bool Sharding::IsEven(const Mesh& m, const std::vector<int64_t>& shape) const {
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (dims[d].empty()) continue;
    if (!offsets.empty() && !offsets[d].empty()) return false;
    if (shape[d] % NumShards(m, d) != 0) return false;
  }
  return true;
}

namespace {

Status ValidateOffsets(const Sharding& s, const Mesh& m, const std::vector<int64_t>& shape) {
  if (s.offsets.empty()) return Status::Ok();
  if (s.offsets.size() != s.dims.size())
    return InvalidArgument(s.loc) << "sharding offsets give " << s.offsets.size()
                                  << " dims, the tensor has " << s.dims.size();
  for (size_t d = 0; d < s.dims.size(); ++d) {
    const std::vector<int64_t>& o = s.offsets[d];
    if (o.empty()) continue;
    int64_t n = s.NumShards(m, static_cast<int>(d));
    if (static_cast<int64_t>(o.size()) != n + 1)
      return InvalidArgument(s.loc)
             << "sharding offsets of dim " << d << " have " << o.size() << " entries, expected "
             << n + 1 << " (dim split " << n << " ways)";
    if (o.front() != 0 || o.back() != shape[d])
      return InvalidArgument(s.loc)
             << "sharding offsets of dim " << d << " must run from 0 to the extent " << shape[d];
    if (!std::is_sorted(o.begin(), o.end()))
      return InvalidArgument(s.loc) << "sharding offsets of dim " << d << " decrease";
  }
  return Status::Ok();
}

}  // namespace

Status Sharding::Validate(const Mesh& m, const std::vector<int64_t>& shape) const {
  if (m.name() != mesh)
    return InvalidArgument(loc) << "sharding names mesh @" << mesh << ", expected @" << m.name();
  if (dims.size() != shape.size())
    return InvalidArgument(loc) << "sharding has " << dims.size() << " dims, the tensor has rank "
                                << shape.size();
  std::set<std::string> used;
  auto use = [&](const std::string& a, const char* where) -> Status {
    if (m.AxisIndex(a) < 0)
      return InvalidArgument(loc) << "unknown axis '" << a << "' of mesh @" << mesh;
    if (!used.insert(a).second)
      return InvalidArgument(loc) << "mesh axis '" << a << "' is used twice (" << where << ")";
    return Status::Ok();
  };
  for (const auto& axes : dims) {
    for (const std::string& a : axes) DISTIR_RETURN_IF_ERROR(use(a, "split"));
  }
  for (const std::string& a : partial) {
    if (m.AxisIndex(a) >= 0 && used.count(a) != 0)
      return InvalidArgument(loc) << "mesh axis '" << a << "' is both split and partial";
    DISTIR_RETURN_IF_ERROR(use(a, "partial"));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0 && !dims[d].empty())
      return InvalidArgument(loc) << "dim " << d << " of unknown extent cannot be split";
  }
  return ValidateOffsets(*this, m, shape);
}

std::string Sharding::ToString() const {
  std::ostringstream os;
  os << "<@" << mesh << ", [";
  for (size_t d = 0; d < dims.size(); ++d) {
    os << (d > 0 ? ", {" : "{");
    for (size_t i = 0; i < dims[d].size(); ++i) os << (i > 0 ? ", " : "") << dims[d][i];
    os << "}";
  }
  os << "]";
  if (!partial.empty()) {
    os << ", partial = " << ReductionKindName(partial_kind) << "[";
    for (size_t i = 0; i < partial.size(); ++i) os << (i > 0 ? ", " : "") << partial[i];
    os << "]";
  }
  if (!offsets.empty()) {
    os << ", offsets = [";
    for (size_t d = 0; d < offsets.size(); ++d) {
      os << (d > 0 ? ", {" : "{");
      for (size_t i = 0; i < offsets[d].size(); ++i) os << (i > 0 ? ", " : "") << offsets[d][i];
      os << "}";
    }
    os << "]";
  }
  os << ">";
  return os.str();
}

double LocalFraction(const Sharding& sharding, const Mesh& m) {
  double f = 1.0;
  for (const auto& axes : sharding.dims) {
    for (const std::string& a : axes) f /= static_cast<double>(m.AxisSize(a));
  }
  return f;
}

}  // namespace distir
