#include "sharding/exchange_order.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <utility>

#include "sharding/segment_view.h"

namespace distir::sharding {
namespace {

// Each chain (physical stage) as a sequence of its tasks' ops with
// communication points between them.
struct Chain {
  std::vector<int64_t> steps;                  // its tasks' timesteps, in order
  // Per task g: its ops, in program order, ops[task_begin[g] .. task_begin[g + 1])
  // (one list: a segmented program's tasks are one op each, and K x stages of them).
  std::vector<size_t> ops;
  std::vector<size_t> task_begin;
  size_t num_tasks() const { return steps.size(); }
  bool TaskEmpty(size_t g) const { return task_begin[g] == task_begin[g + 1]; }
  size_t TaskFront(size_t g) const { return ops[task_begin[g]]; }
  void AppendTask(size_t g, std::vector<size_t>& out) const {
    out.insert(out.end(), ops.begin() + static_cast<std::ptrdiff_t>(task_begin[g]),
               ops.begin() + static_cast<std::ptrdiff_t>(task_begin[g + 1]));
  }
  std::vector<bool> point_after;               // per task: a communication point after it
  // Point g (before task g's ops; g = task count: after the last) holds the
  // Sends sends[point_begin[g] .. point_begin[g + 1]), by op index (one list,
  // as for the ops: a point per task).
  std::vector<size_t> point_begin;
  std::vector<size_t> sends;
  size_t PointSize(size_t g) const { return point_begin[g + 1] - point_begin[g]; }
};

// Rows of one list (CSR): `begin[g + 1]` holds row g's count on entry, its
// end on return; `items` is sized to hold every row. Returns each row's first
// slot, for the caller to fill rows in order.
std::vector<size_t> OpenRows(std::vector<size_t>& begin, std::vector<size_t>& items) {
  for (size_t g = 1; g < begin.size(); ++g) begin[g] += begin[g - 1];
  items.resize(begin.back());
  return std::vector<size_t>(begin.begin(), begin.end() - 1);
}

// The point index after task k: the first communication point at or after
// it (a point before task g has index g; after the last task, the count).
size_t PointAtOrAfter(const Chain& c, size_t k) {
  while (k < c.point_after.size() && !c.point_after[k]) ++k;
  return k + 1;
}

// The last communication point before task k.
size_t PointBefore(const Chain& c, size_t k) {
  while (k > 0 && !c.point_after[k - 1]) --k;
  return k;
}

template <typename View>
class Builder {
 public:
  Builder(const View& fn, const std::vector<std::optional<TaskTag>>& tasks,
          const std::vector<int64_t>& step, int64_t chains, bool interleaved)
      : fn_(fn), tasks_(tasks), step_(step), chains_(static_cast<size_t>(chains)) {
    Tasks(interleaved);
    Points();
  }
  std::optional<std::vector<size_t>> Merge();

 private:
  size_t ChainOf(size_t i) const { return chain_of_[i]; }
  // The index of op i's task in its chain (Tasks finds it once per op).
  size_t Slot(size_t i) const { return slot_[i]; }
  void Tasks(bool interleaved);
  void DenseSlots(size_t span);
  void SortedSlots();
  void Points();
  std::vector<int64_t> ChainOfDevices() const;
  void Enter(size_t c, std::deque<size_t>& ready);

  const View& fn_;
  const std::vector<std::optional<TaskTag>>& tasks_;
  const std::vector<int64_t>& step_;
  std::vector<Chain> chains_;
  std::vector<int8_t> members_;   // per op: the chains that hold it (a Send between two: 2)
  std::vector<int8_t> arrived_;   // per Send: the chains at the point that holds it
  std::vector<size_t> at_;        // per chain: the point it is at
  std::vector<size_t> pending_;   // per chain: Sends of that point not yet emitted
  std::vector<uint32_t> chain_of_;  // per task op: its task's stage mod the chains
  std::vector<uint32_t> slot_;      // per task op: Slot
  // Per Send: the chains that hold it, the lower first (-1: none).
  std::vector<std::array<int32_t, 2>> holders_;
  std::vector<size_t> order_;
};

// Each chain's timesteps and each task op's slot among them, with a table
// of the chains' timesteps in [0, span) (a schedule's timesteps are about
// 2 K v + 2 P, and the ops many more): no sort, no search per op.
template <typename View>
void Builder<View>::DenseSlots(size_t span) {
  const size_t n = fn_.num_ops();
  std::vector<uint32_t> at(span * chains_.size(), 0);  // 1 + the slot; 0: no task there
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] >= 0) at[chain_of_[i] * span + static_cast<size_t>(step_[i])] = 1;
  }
  for (size_t c = 0; c < chains_.size(); ++c) {
    std::vector<int64_t>& steps = chains_[c].steps;
    for (size_t t = 0; t < span; ++t) {
      uint32_t& x = at[c * span + t];
      if (x == 0) continue;
      steps.push_back(static_cast<int64_t>(t));
      x = static_cast<uint32_t>(steps.size());
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] >= 0) slot_[i] = at[chain_of_[i] * span + static_cast<size_t>(step_[i])] - 1;
  }
}

// The same for timesteps too sparse for a table: sorted, then searched.
template <typename View>
void Builder<View>::SortedSlots() {
  const size_t n = fn_.num_ops();
  // A task's ops mostly come together: the repeats are dropped as they come,
  // the rest by the sort.
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0) continue;
    std::vector<int64_t>& steps = chains_[ChainOf(i)].steps;
    if (steps.empty() || steps.back() != step_[i]) steps.push_back(step_[i]);
  }
  for (Chain& c : chains_) {
    std::sort(c.steps.begin(), c.steps.end());
    c.steps.erase(std::unique(c.steps.begin(), c.steps.end()), c.steps.end());
  }
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0) continue;
    const std::vector<int64_t>& s = chains_[ChainOf(i)].steps;
    slot_[i] = static_cast<uint32_t>(std::lower_bound(s.begin(), s.end(), step_[i]) - s.begin());
  }
}

// Each chain's tasks in timestep order with their ops, and its points.
template <typename View>
void Builder<View>::Tasks(bool interleaved) {
  const size_t n = fn_.num_ops();
  chain_of_.assign(n, 0);
  int64_t last_step = -1;
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0) continue;
    chain_of_[i] = static_cast<uint32_t>(static_cast<size_t>(tasks_[i]->stage) % chains_.size());
    last_step = std::max(last_step, step_[i]);
  }
  slot_.assign(n, 0);
  const auto span = static_cast<size_t>(last_step + 1);
  if (span * chains_.size() <= 4 * n + 1024) {
    DenseSlots(span);
  } else {
    SortedSlots();
  }
  for (Chain& c : chains_) {
    c.task_begin.assign(c.steps.size() + 1, 0);
    c.point_after.assign(c.steps.size(), true);
    c.point_begin.assign(c.steps.size() + 2, 0);
  }
  // Each task's ops: counted, then placed (program order within a task).
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0 || fn_.IsSend(i)) continue;
    ++chains_[ChainOf(i)].task_begin[slot_[i] + 1];
  }
  std::vector<std::vector<size_t>> next(chains_.size());
  for (size_t c = 0; c < chains_.size(); ++c)
    next[c] = OpenRows(chains_[c].task_begin, chains_[c].ops);
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0 || fn_.IsSend(i)) continue;
    const size_t c = ChainOf(i);
    chains_[c].ops[next[c][slot_[i]]++] = i;
  }
  if (!interleaved) return;
  // Interleaved: no point between a forward and the backward right after it.
  for (Chain& c : chains_) {
    for (size_t k = 0; k + 1 < c.num_tasks(); ++k) {
      if (c.TaskEmpty(k) || c.TaskEmpty(k + 1)) continue;
      const TaskPhase a = tasks_[c.TaskFront(k)]->phase;
      const TaskPhase b = tasks_[c.TaskFront(k + 1)]->phase;
      if (a == TaskPhase::kForward && b == TaskPhase::kBackward) c.point_after[k] = false;
    }
  }
}

// The chain of each device that an op of a task (not a Send) writes, by
// device id (-1: none); the first such op decides.
template <typename View>
std::vector<int64_t> Builder<View>::ChainOfDevices() const {
  std::vector<int64_t> chain;
  for (size_t i = 0; i < fn_.num_ops(); ++i) {
    if (step_[i] < 0 || fn_.IsSend(i)) continue;
    fn_.ForEachResultDevice(i, [&](int32_t d) {
      if (d >= static_cast<int32_t>(chain.size())) chain.resize(static_cast<size_t>(d) + 1, -1);
      if (chain[static_cast<size_t>(d)] < 0)
        chain[static_cast<size_t>(d)] = static_cast<int64_t>(ChainOf(i));
    });
  }
  return chain;
}

// Each Send into the sender's point after its task and the receiver's point
// before the first task that reads it.
template <typename View>
void Builder<View>::Points() {
  const size_t n = fn_.num_ops();
  // The (chain, slot) of every task op that reads a Send's result, by Send.
  std::vector<int32_t> send_of(static_cast<size_t>(fn_.num_values()), -1);
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] >= 0 && fn_.IsSend(i)) send_of[fn_.SendResult(i)] = static_cast<int32_t>(i);
  }
  // The chain each Send goes to, where that is another chain (else -1).
  const std::vector<int64_t> device_chain = ChainOfDevices();
  std::vector<int64_t> to_chain(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0 || !fn_.IsSend(i)) continue;
    const int32_t to = fn_.SendTarget(i);
    const int64_t r =
        to >= 0 && to < static_cast<int32_t>(device_chain.size()) ? device_chain[to] : -1;
    if (r >= 0 && static_cast<size_t>(r) != ChainOf(i)) to_chain[i] = r;
  }
  // The first slot of that chain whose task reads each Send's result.
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> first_read(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0) continue;
    fn_.ForEachInput(i, [&](int32_t v) {
      const int32_t s = send_of[v];
      if (s >= 0 && to_chain[static_cast<size_t>(s)] == static_cast<int64_t>(ChainOf(i)))
        first_read[static_cast<size_t>(s)] = std::min(first_read[static_cast<size_t>(s)], Slot(i));
    });
  }
  // Each Send's point in its sender's chain and, where another chain
  // receives it, in the receiver's: counted, then listed by op index.
  members_.assign(n, 0);
  holders_.assign(n, {-1, -1});
  std::vector<std::array<size_t, 2>> point(n);
  for (size_t i = 0; i < n; ++i) {
    if (step_[i] < 0) continue;
    members_[i] = 1;
    if (!fn_.IsSend(i)) continue;
    const size_t c = ChainOf(i);
    point[i][0] = PointAtOrAfter(chains_[c], Slot(i));
    ++chains_[c].point_begin[point[i][0] + 1];
    holders_[i][0] = static_cast<int32_t>(c);
    if (to_chain[i] < 0) continue;
    const auto r = static_cast<size_t>(to_chain[i]);
    // No task there reads it: after the last.
    const size_t first = std::min(chains_[r].steps.size(), first_read[i]);
    point[i][1] = PointBefore(chains_[r], first);
    ++chains_[r].point_begin[point[i][1] + 1];
    holders_[i][1] = static_cast<int32_t>(r);
    members_[i] = 2;
  }
  std::vector<std::vector<size_t>> next(chains_.size());
  for (size_t c = 0; c < chains_.size(); ++c)
    next[c] = OpenRows(chains_[c].point_begin, chains_[c].sends);
  for (size_t i = 0; i < n; ++i) {
    if (!fn_.IsSend(i)) continue;  // no holders: nothing to list or order
    for (int h = 0; h < members_[i]; ++h) {
      const auto c = static_cast<size_t>(holders_[i][static_cast<size_t>(h)]);
      chains_[c].sends[next[c][point[i][static_cast<size_t>(h)]]++] = i;
    }
    if (holders_[i][1] >= 0 && holders_[i][1] < holders_[i][0])
      std::swap(holders_[i][0], holders_[i][1]);
  }
}

// Chain c enters its next point: its Sends count the arrival, those both
// chains have reached become ready; a point without pending Sends is passed
// at once (with the task after it).
template <typename View>
void Builder<View>::Enter(size_t c, std::deque<size_t>& ready) {
  Chain& ch = chains_[c];
  while (true) {
    const size_t g = at_[c];
    pending_[c] = ch.PointSize(g);
    for (size_t k = ch.point_begin[g]; k < ch.point_begin[g + 1]; ++k) {
      const size_t s = ch.sends[k];
      if (++arrived_[s] == members_[s]) ready.push_back(s);
    }
    if (pending_[c] > 0 || g == ch.num_tasks()) return;
    ch.AppendTask(g, order_);
    ++at_[c];
  }
}

template <typename View>
std::optional<std::vector<size_t>> Builder<View>::Merge() {
  const size_t n = fn_.num_ops();
  order_.reserve(n);
  arrived_.assign(n, 0);
  at_.assign(chains_.size(), 0);
  pending_.assign(chains_.size(), 0);
  std::deque<size_t> ready;
  for (size_t c = 0; c < chains_.size(); ++c) Enter(c, ready);
  while (!ready.empty()) {
    const size_t s = ready.front();
    ready.pop_front();
    order_.push_back(s);
    for (const int32_t held : holders_[s]) {
      if (held < 0) break;
      const auto c = static_cast<size_t>(held);
      if (--pending_[c] > 0) continue;
      // The point is complete: run the task after it and go on.
      Chain& ch = chains_[c];
      if (at_[c] < ch.num_tasks()) {
        ch.AppendTask(at_[c], order_);
        ++at_[c];
        Enter(c, ready);
      }
    }
  }
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) total += members_[i] > 0 ? 1 : 0;
  if (order_.size() != total) return std::nullopt;  // stages wait for each other
  return std::move(order_);
}

}  // namespace

template <typename View>
std::optional<std::vector<size_t>> ExchangeOrder(const View& fn,
                                                 const std::vector<std::optional<TaskTag>>& tasks,
                                                 const std::vector<int64_t>& step, int64_t chains,
                                                 bool interleaved) {
  if (chains < 1) return std::nullopt;
  return Builder<View>(fn, tasks, step, chains, interleaved).Merge();
}

template std::optional<std::vector<size_t>> ExchangeOrder(
    const FunctionOrderView&, const std::vector<std::optional<TaskTag>>&,
    const std::vector<int64_t>&, int64_t, bool);
template std::optional<std::vector<size_t>> ExchangeOrder(
    const ExpandedOrderView&, const std::vector<std::optional<TaskTag>>&,
    const std::vector<int64_t>&, int64_t, bool);
template std::optional<std::vector<size_t>> ExchangeOrder(
    const SegmentOrderView&, const std::vector<std::optional<TaskTag>>&,
    const std::vector<int64_t>&, int64_t, bool);

}  // namespace distir::sharding
