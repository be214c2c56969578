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
      if (last == first + 1) {
        // One device (most compute ops): the loops below without loops.
        const auto d = static_cast<size_t>(*first);
        const double cost = ops.cost[o];
        clock[d] = std::max(0.0, clock[d]) + cost;
        (ops.communication[o] != 0 ? out.communication : out.compute)[d] += cost;
        continue;
      }
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
  int8_t kind;
};

// Bytes by kind of two sets of buffers together.
MemoryByKind AddByKind(MemoryByKind a, const MemoryByKind& b) {
  for (size_t k = 0; k < a.size(); ++k) a[k] += b[k];
  return a;
}

// One piece of a kind on one device: the largest local live bytes, and
// (with kinds) the local bytes by kind where that largest first occurs, and
// each kind's own largest.
struct Piece {
  int64_t max = std::numeric_limits<int64_t>::min();
  MemoryByKind at_max{};
  MemoryByKind kind_max = Lowest();

  static MemoryByKind Lowest() {
    MemoryByKind m;
    m.fill(std::numeric_limits<int64_t>::min());
    return m;
  }
};

// A kind cut at the offsets where buffers that cross segments change live
// bytes: its local profile's pieces on each device.
struct KindPieces {
  std::vector<int32_t> cuts;     // piece starts, ascending, from 0
  std::vector<int32_t> devices;  // devices with local buffers or kind changes
  std::vector<Piece> pieces;     // [device index][piece]
  std::vector<int64_t> net;      // per device: live bytes after the segment minus before
  std::vector<MemoryByKind> net_by_kind;
};

// `cut`: per offset of kind k, nonzero where a piece starts (may be empty).
KindPieces PiecesOf(const SegmentedProgram& p, int32_t k, const std::vector<char>& cut,
                    const MemoryTables& values, std::vector<int32_t>& local) {
  KindPieces out;
  const int32_t n = p.KindSize(k);
  out.cuts.push_back(0);
  for (int32_t o = 1; o < static_cast<int32_t>(cut.size()); ++o) {
    if (cut[static_cast<size_t>(o)] != 0) out.cuts.push_back(o);
  }
  const size_t count = out.cuts.size();
  // Per local device: (offset, bytes, kind) changes: +bytes at the
  // allocating op, -bytes after the last reader.
  struct Change {
    int32_t offset;
    int64_t delta;
    int8_t kind;
  };
  std::vector<std::vector<Change>> changes;
  auto list_of = [&](size_t v) -> std::vector<Change>& {
    const int32_t d = values.device[v];
    if (local[d] < 0) {
      local[d] = static_cast<int32_t>(out.devices.size());
      out.devices.push_back(d);
      changes.emplace_back();
    }
    return changes[static_cast<size_t>(local[d])];
  };
  auto kind_of = [&](size_t v) -> int8_t { return values.kind.empty() ? 0 : values.kind[v]; };
  for (int32_t b = p.local_begin[k]; b < p.local_begin[k + 1]; ++b) {
    const SegmentedProgram::LocalBuffer& buf = p.local[static_cast<size_t>(b)];
    const auto v = static_cast<size_t>(buf.value);
    std::vector<Change>& list = list_of(v);
    list.push_back({buf.def, values.bytes[v], kind_of(v)});
    list.push_back({buf.death + 1, -values.bytes[v], kind_of(v)});
  }
  for (int32_t c = p.change_begin[k]; c < p.change_begin[k + 1]; ++c) {
    const SegmentedProgram::KindChange& change = p.changes[static_cast<size_t>(c)];
    const auto v = static_cast<size_t>(change.value);
    if (change.alloc) {
      list_of(v).push_back({change.offset, values.bytes[v], kind_of(v)});
    } else {
      list_of(v).push_back({change.offset + 1, -values.bytes[v], kind_of(v)});
    }
  }
  out.pieces.assign(out.devices.size() * count, Piece{});
  out.net.assign(out.devices.size(), 0);
  out.net_by_kind.assign(out.devices.size(), MemoryByKind{});
  for (size_t j = 0; j < out.devices.size(); ++j) {
    std::vector<Change>& list = changes[j];
    std::stable_sort(list.begin(), list.end(),
                     [](const Change& x, const Change& y) { return x.offset < y.offset; });
    int64_t live = 0;
    MemoryByKind by_kind{};
    size_t piece = 0, next = 0;
    for (int32_t o = 0; o < n; ++o) {
      while (piece + 1 < count && out.cuts[piece + 1] <= o) ++piece;
      if (next == list.size() || list[next].offset != o) {
        if (o > 0 && out.cuts[piece] != o) continue;  // nothing changes here
      }
      for (; next < list.size() && list[next].offset == o; ++next) {
        live += list[next].delta;
        by_kind[static_cast<size_t>(list[next].kind)] += list[next].delta;
      }
      Piece& at = out.pieces[j * count + piece];
      if (live > at.max) {
        at.max = live;
        at.at_max = by_kind;
      }
      for (size_t q = 0; q < by_kind.size(); ++q)
        at.kind_max[q] = std::max(at.kind_max[q], by_kind[q]);
    }
    // Frees after the kind's last op change only what the segment leaves.
    for (; next < list.size(); ++next) {
      live += list[next].delta;
      by_kind[static_cast<size_t>(list[next].kind)] += list[next].delta;
    }
    out.net[j] = live;
    out.net_by_kind[j] = by_kind;
  }
  for (int32_t d : out.devices) local[d] = -1;
  return out;
}

// The live bytes of one device as the segments are swept, and their peaks.
class DeviceMemory {
 public:
  DeviceMemory(size_t devices, bool kinds)
      : kinds_(kinds), live_(devices, 0), by_kind_(kinds ? devices : 0, MemoryByKind{}) {}

  void Change(const LiveChange& c) {
    const auto d = static_cast<size_t>(c.device);
    live_[d] += c.delta;
    if (kinds_) by_kind_[d][static_cast<size_t>(c.kind)] += c.delta;
  }
  /// What a segment left on device d: its kind's net changes.
  void Shift(size_t d, int64_t delta, const MemoryByKind& by_kind) {
    live_[d] += delta;
    if (kinds_) by_kind_[d] = AddByKind(by_kind_[d], by_kind);
  }
  /// Starts the peaks at the live bytes before the first op.
  void StartPeaks(ComposedMemory& out) const {
    out.peak = live_;
    if (!kinds_) return;
    out.at_peak = by_kind_;
    out.peak_by_kind = by_kind_;
  }
  /// Device d's live bytes plus a piece's local bytes, as a candidate peak.
  void Offer(size_t d, const Piece& piece, ComposedMemory& out) const {
    const int64_t now = live_[d] + piece.max;
    if (now > out.peak[d]) {
      out.peak[d] = now;
      if (kinds_) out.at_peak[d] = AddByKind(by_kind_[d], piece.at_max);
    }
    if (!kinds_) return;
    for (size_t q = 0; q < piece.kind_max.size(); ++q) {
      out.peak_by_kind[d][q] = std::max(out.peak_by_kind[d][q], by_kind_[d][q] + piece.kind_max[q]);
    }
  }

 private:
  bool kinds_;
  std::vector<int64_t> live_;
  std::vector<MemoryByKind> by_kind_;
};

}  // namespace

ComposedMemory ComposePeaks(const SegmentedProgram& p, const MemoryTables& values,
                            int num_devices) {
  const auto n = static_cast<size_t>(num_devices);
  const bool kinds = !values.kind.empty();
  const size_t segments = p.segment_kind.size();
  std::vector<int64_t> start(segments + 1, 0);
  for (size_t s = 0; s < segments; ++s) start[s + 1] = start[s] + p.KindSize(p.segment_kind[s]);
  // The segment of a position; `segments` past the last op.
  auto segment_of = [&](int64_t pos) {
    return static_cast<size_t>(std::upper_bound(start.begin(), start.end(), pos) - start.begin() -
                               1);
  };
  DeviceMemory memory(n, kinds);
  std::vector<LiveChange> changes;
  std::vector<uint32_t> in_segment;  // per change
  changes.reserve(p.buffers.size() * 2);
  in_segment.reserve(p.buffers.size() * 2);
  for (const SegmentedProgram::Buffer& b : p.buffers) {
    const auto v = static_cast<size_t>(b.value);
    const int32_t d = values.device[v];
    const int64_t bytes = values.bytes[v];
    const int8_t kind = kinds ? values.kind[v] : 0;
    if (b.def == SegmentedProgram::kBeforeFirstOp) {
      memory.Change({0, bytes, d, kind});
    } else if (b.def != SegmentedProgram::kInKind) {
      changes.push_back({b.def, bytes, d, kind});
      in_segment.push_back(static_cast<uint32_t>(segment_of(b.def)));
    }
    if (b.death != SegmentedProgram::kResident && b.death != SegmentedProgram::kInKind) {
      changes.push_back({b.death + 1, -bytes, d, kind});
      in_segment.push_back(static_cast<uint32_t>(segment_of(b.death + 1)));
    }
  }
  ComposedMemory out;
  memory.StartPeaks(out);
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
      std::stable_sort(begin, end,
                       [](const LiveChange& x, const LiveChange& y) { return x.pos < y.pos; });
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
  const Piece none{0, MemoryByKind{}, MemoryByKind{}};  // no local bytes
  for (size_t s = 0; s < segments; ++s) {
    const auto k = static_cast<size_t>(p.segment_kind[s]);
    if (!built[k]) {
      pieces[k] = PiecesOf(p, static_cast<int32_t>(k), cut[k], values, local);
      built[k] = 1;
    }
    const KindPieces& kp = pieces[k];
    const size_t count = kp.cuts.size();
    size_t next = first[s];
    for (size_t piece = 0; piece < count; ++piece) {
      // The changes at the piece's first op, then the live bytes there.
      const int64_t at = start[s] + kp.cuts[piece];
      for (; next < first[s + 1] && sorted[next].pos <= at; ++next) memory.Change(sorted[next]);
      for (size_t c = next; c > first[s] && sorted[c - 1].pos == at; --c)
        memory.Offer(static_cast<size_t>(sorted[c - 1].device), none, out);
      for (size_t j = 0; j < kp.devices.size(); ++j)
        memory.Offer(static_cast<size_t>(kp.devices[j]), kp.pieces[j * count + piece], out);
    }
    for (size_t j = 0; j < kp.devices.size(); ++j)
      memory.Shift(static_cast<size_t>(kp.devices[j]), kp.net[j], kp.net_by_kind[j]);
  }
  return out;
}

}  // namespace distir::sim
