#include "sim/segment_composition.h"

#include <algorithm>
#include <limits>

namespace distir::sim {

ComposedTimes ReplayTimes(const SegmentedProgram& p, const KindOps& ops, int num_devices) {
  const auto n = static_cast<size_t>(num_devices);
  ComposedTimes out;
  out.compute.assign(n, 0);
  out.communication.assign(n, 0);
  std::vector<double> clock(n, 0);
  const int32_t* devices = ops.devices.data();
  for (int32_t k : p.segment_kind) {
    for (int32_t o = p.kind_begin[k]; o < p.kind_begin[k + 1]; ++o) {
      const int32_t* first = devices + ops.devices_begin[o];
      const int32_t* last = devices + ops.devices_begin[o + 1];
      double start = 0;
      for (const int32_t* d = first; d != last; ++d) start = std::max(start, clock[*d]);
      const double cost = ops.cost[o];
      const double end = start + cost;
      std::vector<double>& busy = ops.communication[o] != 0 ? out.communication : out.compute;
      for (const int32_t* d = first; d != last; ++d) {
        clock[*d] = end;
        busy[*d] += cost;
      }
    }
  }
  for (double c : clock) out.iteration_time_s = std::max(out.iteration_time_s, c);
  return out;
}

namespace {

struct LiveChange {
  int64_t pos;
  int64_t delta;
  int32_t device;
};

// A kind cut at the offsets where buffers that cross segments change live
// bytes: the largest local profile of each piece on each device.
struct KindPieces {
  std::vector<int32_t> cuts;     // piece starts, ascending, from 0
  std::vector<int32_t> devices;  // devices with local buffers
  std::vector<int64_t> max;      // [device index][piece]
};

// `cut`: per offset of kind k, nonzero where a piece starts.
KindPieces PiecesOf(const SegmentedProgram& p, int32_t k, const std::vector<char>& cut,
                    std::span<const int32_t> value_device, std::span<const int64_t> value_bytes,
                    std::vector<int32_t>& local) {
  KindPieces out;
  const int32_t n = p.KindSize(k);
  out.cuts.push_back(0);
  for (int32_t o = 1; o < static_cast<int32_t>(cut.size()); ++o) {
    if (cut[static_cast<size_t>(o)] != 0) out.cuts.push_back(o);
  }
  const size_t pieces = out.cuts.size();
  std::vector<std::vector<int64_t>> diff;  // per local device: +bytes at def, -bytes after death
  for (int32_t b = p.local_begin[k]; b < p.local_begin[k + 1]; ++b) {
    const SegmentedProgram::LocalBuffer& buf = p.local[static_cast<size_t>(b)];
    const int32_t d = value_device[static_cast<size_t>(buf.value)];
    if (local[d] < 0) {
      local[d] = static_cast<int32_t>(out.devices.size());
      out.devices.push_back(d);
      diff.emplace_back(static_cast<size_t>(n) + 1, 0);
    }
    std::vector<int64_t>& row = diff[static_cast<size_t>(local[d])];
    const int64_t bytes = value_bytes[static_cast<size_t>(buf.value)];
    row[static_cast<size_t>(buf.def)] += bytes;
    row[static_cast<size_t>(buf.death) + 1] -= bytes;
  }
  out.max.assign(out.devices.size() * pieces, 0);
  for (size_t j = 0; j < out.devices.size(); ++j) {
    int64_t live = 0;
    size_t piece = 0;
    for (int32_t o = 0; o < n; ++o) {
      while (piece + 1 < pieces && out.cuts[piece + 1] <= o) ++piece;
      live += diff[j][static_cast<size_t>(o)];
      int64_t& m = out.max[j * pieces + piece];
      m = std::max(m, live);
    }
  }
  for (int32_t d : out.devices) local[d] = -1;
  return out;
}

}  // namespace

std::vector<int64_t> ComposePeaks(const SegmentedProgram& p, std::span<const int32_t> value_device,
                                  std::span<const int64_t> value_bytes, int num_devices) {
  const auto n = static_cast<size_t>(num_devices);
  const size_t segments = p.segment_kind.size();
  std::vector<int64_t> start(segments + 1, 0);
  for (size_t s = 0; s < segments; ++s) start[s + 1] = start[s] + p.KindSize(p.segment_kind[s]);
  // The segment of a position; `segments` past the last op.
  auto segment_of = [&](int64_t pos) {
    return static_cast<size_t>(std::upper_bound(start.begin(), start.end(), pos) - start.begin() -
                               1);
  };
  std::vector<int64_t> live(n, 0);
  std::vector<LiveChange> changes;
  std::vector<uint32_t> in_segment;  // per change
  changes.reserve(p.buffers.size() * 2);
  in_segment.reserve(p.buffers.size() * 2);
  auto add = [&](int64_t pos, int64_t delta, int32_t d) {
    changes.push_back({pos, delta, d});
    in_segment.push_back(static_cast<uint32_t>(segment_of(pos)));
  };
  for (const SegmentedProgram::Buffer& b : p.buffers) {
    const int32_t d = value_device[static_cast<size_t>(b.value)];
    const int64_t bytes = value_bytes[static_cast<size_t>(b.value)];
    if (b.def == SegmentedProgram::kBeforeFirstOp) {
      live[static_cast<size_t>(d)] += bytes;
    } else {
      add(b.def, bytes, d);
    }
    if (b.death != SegmentedProgram::kResident) add(b.death + 1, -bytes, d);
  }
  std::vector<int64_t> peak = live;
  // The changes by segment (a counting sort), then by position within each.
  std::vector<uint32_t> first(segments + 2, 0);
  for (uint32_t s : in_segment) ++first[s + 1];
  for (size_t s = 0; s + 1 < first.size(); ++s) first[s + 1] += first[s];
  std::vector<LiveChange> sorted(changes.size());
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (size_t i = 0; i < changes.size(); ++i) sorted[fill[in_segment[i]]++] = changes[i];
  }
  // The offsets of each kind where changes fall: its pieces' starts.
  std::vector<std::vector<char>> cut(static_cast<size_t>(p.num_kinds()));
  for (size_t s = 0; s < segments; ++s) {
    auto* begin = sorted.data() + first[s];
    auto* end = sorted.data() + first[s + 1];
    if (end - begin > 1) {
      std::sort(begin, end, [](const LiveChange& x, const LiveChange& y) { return x.pos < y.pos; });
    }
    const auto k = static_cast<size_t>(p.segment_kind[s]);
    std::vector<char>& marks = cut[k];
    if (begin != end && marks.empty())
      marks.assign(static_cast<size_t>(p.KindSize(p.segment_kind[s])), 0);
    for (auto* c = begin; c != end; ++c) marks[static_cast<size_t>(c->pos - start[s])] = 1;
  }
  std::vector<KindPieces> pieces(static_cast<size_t>(p.num_kinds()));
  std::vector<char> built(static_cast<size_t>(p.num_kinds()), 0);
  std::vector<int32_t> local(n, -1);
  std::vector<int32_t> touched;
  for (size_t s = 0; s < segments; ++s) {
    const auto k = static_cast<size_t>(p.segment_kind[s]);
    if (!built[k]) {
      pieces[k] = PiecesOf(p, static_cast<int32_t>(k), cut[k], value_device, value_bytes, local);
      built[k] = 1;
    }
    const KindPieces& kp = pieces[k];
    const size_t count = kp.cuts.size();
    size_t next = first[s];
    for (size_t piece = 0; piece < count; ++piece) {
      // The changes at the piece's first op, then the live bytes there.
      const int64_t at = start[s] + kp.cuts[piece];
      touched.clear();
      for (; next < first[s + 1] && sorted[next].pos <= at; ++next) {
        live[static_cast<size_t>(sorted[next].device)] += sorted[next].delta;
        touched.push_back(sorted[next].device);
      }
      for (int32_t d : touched) {
        peak[static_cast<size_t>(d)] =
            std::max(peak[static_cast<size_t>(d)], live[static_cast<size_t>(d)]);
      }
      for (size_t j = 0; j < kp.devices.size(); ++j) {
        const auto d = static_cast<size_t>(kp.devices[j]);
        peak[d] = std::max(peak[d], live[d] + kp.max[j * count + piece]);
      }
    }
  }
  return peak;
}

}  // namespace distir::sim
