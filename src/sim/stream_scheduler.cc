#include "sim/stream_scheduler.h"

#include <algorithm>
#include <queue>

#include "support/check.h"

namespace distir::sim {
namespace {

constexpr int kCompute = 0;
constexpr int kComm = 1;

// A running op's progress: `remaining` seconds of full-speed work as of time
// `since`, done at `rate`. A rate changes only when another stream of one of
// its devices starts or stops, so the op's end is known until then.
struct Running {
  double remaining = 0;
  double since = 0;
  double rate = 1;
  int32_t contended = 0;  // its devices whose other stream is busy
  int32_t version = 0;    // bumps on each rate change: older heap entries are stale
};

struct HeapEntry {
  double end;
  int32_t op;
  int32_t version;
  // Earliest end first; at a tie, program order (deterministic).
  bool operator>(const HeapEntry& o) const { return end != o.end ? end > o.end : op > o.op; }
};

// A discrete-event simulation in time order: ops start when their last
// predecessor (a dependence, or the previous op of one of their streams) ends.
class TwoStreams {
 public:
  TwoStreams(const StreamOps& ops, const OverlapSpec& overlap) : ops_(ops), overlap_(overlap) {}

  StreamSchedule Run() &&;

 private:
  int NumOps() const { return static_cast<int>(ops_.cost.size()); }
  int StreamOf(int op) const { return ops_.comm[op] != 0 ? kComm : kCompute; }
  std::span<const int32_t> Devices(int op) const {
    return ops_.devices.subspan(ops_.devices_begin[op],
                                ops_.devices_begin[op + 1] - ops_.devices_begin[op]);
  }
  double SlowRate(int op) const {
    double s = StreamOf(op) == kComm ? overlap_.comm_slowdown : overlap_.compute_slowdown;
    return 1.0 / (1.0 + s);
  }
  void BuildGraph();
  void AddEdge(int32_t from, int32_t to, std::vector<int32_t>& out_degree);
  void Start(int op, double t);
  void Finish(int op, double t);
  void Contend(int op, int delta, double t);
  void Push(int op);

  const StreamOps& ops_;
  const OverlapSpec& overlap_;
  StreamSchedule out_;
  std::vector<int32_t> pending_;     // per op: predecessors not yet ended
  std::vector<int32_t> succ_begin_;  // CSR of successors
  std::vector<int32_t> succ_;
  std::vector<Running> running_;
  std::vector<int32_t> busy_[2];    // per stream, per device: running op or -1
  std::vector<double> both_since_;  // per device: when both streams last became busy
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<>> heap_;
};

// Predecessors of op i: its dependences, and on each of its devices the
// previous op of its stream. Edges are counted first, then filled (CSR).
void TwoStreams::BuildGraph() {
  const int n = NumOps();
  std::vector<std::pair<int32_t, int32_t>> edges;
  edges.reserve(ops_.deps.size() + ops_.devices.size());
  std::vector<int32_t> last[2] = {std::vector<int32_t>(ops_.num_devices, -1),
                                  std::vector<int32_t>(ops_.num_devices, -1)};
  for (int i = 0; i < n; ++i) {
    for (int32_t k = ops_.deps_begin[i]; k < ops_.deps_begin[i + 1]; ++k) {
      DISTIR_CHECK(ops_.deps[k] < i) << "op " << i << " depends on a later op";
      edges.emplace_back(ops_.deps[k], i);
    }
    for (int32_t d : Devices(i)) {
      int32_t& prev = last[StreamOf(i)][d];
      if (prev >= 0) edges.emplace_back(prev, i);
      prev = i;
    }
  }
  pending_.assign(n, 0);
  succ_begin_.assign(n + 1, 0);
  for (const auto& [from, to] : edges) ++succ_begin_[from + 1], ++pending_[to];
  for (int i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(edges.size());
  std::vector<int32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (const auto& [from, to] : edges) succ_[fill[from]++] = to;
}

void TwoStreams::Push(int op) {
  const Running& r = running_[op];
  heap_.push({r.since + r.remaining / r.rate, op, r.version});
}

// One device of `op` gained (delta 1) or lost (-1) a busy other stream at `t`:
// the op's rate follows, its progress so far is booked at the old rate.
void TwoStreams::Contend(int op, int delta, double t) {
  Running& r = running_[op];
  r.contended += delta;
  const double rate = r.contended > 0 ? SlowRate(op) : 1.0;
  if (rate == r.rate) return;
  r.remaining = std::max(0.0, r.remaining - (t - r.since) * r.rate);
  r.since = t;
  r.rate = rate;
  ++r.version;
  Push(op);
}

void TwoStreams::Start(int op, double t) {
  out_.start[op] = t;
  const int stream = StreamOf(op);
  Running& r = running_[op];
  r.remaining = ops_.cost[op];
  r.since = t;
  for (int32_t d : Devices(op)) {
    busy_[stream][d] = op;
    const int32_t other = busy_[1 - stream][d];
    if (other < 0) continue;
    both_since_[d] = t;
    ++r.contended;
    Contend(other, +1, t);
  }
  r.rate = r.contended > 0 ? SlowRate(op) : 1.0;
  Push(op);
}

void TwoStreams::Finish(int op, double t) {
  out_.end[op] = t;
  const int stream = StreamOf(op);
  for (int32_t d : Devices(op)) {
    busy_[stream][d] = -1;
    const int32_t other = busy_[1 - stream][d];
    if (other < 0) continue;
    out_.overlapped_s[d] += t - both_since_[d];
    Contend(other, -1, t);
  }
  for (int32_t k = succ_begin_[op]; k < succ_begin_[op + 1]; ++k) {
    if (--pending_[succ_[k]] == 0) Start(succ_[k], t);
  }
}

StreamSchedule TwoStreams::Run() && {
  const int n = NumOps();
  out_.start.assign(n, 0);
  out_.end.assign(n, 0);
  out_.overlapped_s.assign(ops_.num_devices, 0);
  running_.assign(n, Running{});
  busy_[kCompute].assign(ops_.num_devices, -1);
  busy_[kComm].assign(ops_.num_devices, -1);
  both_since_.assign(ops_.num_devices, 0);
  BuildGraph();
  for (int i = 0; i < n; ++i) {
    if (pending_[i] == 0) Start(i, 0);
  }
  while (!heap_.empty()) {
    const HeapEntry top = heap_.top();
    heap_.pop();
    if (top.version != running_[top.op].version) continue;
    running_[top.op].version = -1;  // ended: any later entry of it is stale
    Finish(top.op, top.end);
  }
  return std::move(out_);
}

}  // namespace

StreamSchedule ScheduleTwoStreams(const StreamOps& ops, const OverlapSpec& overlap) {
  return TwoStreams(ops, overlap).Run();
}

}  // namespace distir::sim
