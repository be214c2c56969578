#include "search/unit_queue.h"

#include <utility>

#include "search/ranks.h"

namespace distir::search {
std::optional<size_t> ClaimedPosition(uint64_t word_before, size_t n) {
  if (word_before >= n) return std::nullopt;
  return static_cast<size_t>(word_before);
}

UnitsLeft LeftOf(const Slice& s, uint64_t word) {
  UnitsLeft left;
  for (size_t i = word; i < s.units.size(); ++i) {
    ++left.units;
    left.cost += s.costs[i];
  }
  return left;
}

UnitQueue::UnitQueue(std::vector<Slice> slices, MPI_Comm comm)
    : slices_(std::move(slices)), comm_(comm) {
  rank_ = RankIn(comm_);
  size_ = SizeOf(comm_);
  if (size_ == 1) return;
  MPI_Win_allocate(sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, comm_, &word_, &win_);
  MPI_Win_lock_all(0, win_);
  // Every word is zero before any rank adds to one: the store made visible
  // to the window (MPI_Win_sync, for MPI's separate memory model), then a
  // barrier.
  *word_ = 0;
  MPI_Win_sync(win_);
  MPI_Barrier(comm_);
}

UnitQueue::~UnitQueue() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

uint64_t UnitQueue::Add(int target, uint64_t amount) {
  uint64_t before = 0;
  MPI_Fetch_and_op(&amount, &before, MPI_UINT64_T, target, 0, MPI_SUM, win_);
  MPI_Win_flush(target, win_);
  return before;
}

std::optional<UnitQueue::Taken> UnitQueue::Next() {
  const Slice& mine = slices_[static_cast<size_t>(rank_)];
  if (size_ == 1) {
    if (taken_alone_ >= mine.units.size()) return std::nullopt;
    return Taken{&mine.units[taken_alone_++], true};
  }
  if (std::optional<size_t> at = ClaimedPosition(Add(rank_, 1), mine.units.size()))
    return Taken{&mine.units[*at], true};
  return Steal();
}

std::vector<const std::vector<int64_t>*> UnitQueue::NotTaken() {
  std::vector<const std::vector<int64_t>*> left;
  for (int r = 0; r < size_; ++r) {
    const Slice& s = slices_[static_cast<size_t>(r)];
    for (size_t i = size_ == 1 ? taken_alone_ : Add(r, 0); i < s.units.size(); ++i)
      left.push_back(&s.units[i]);
  }
  return left;
}

std::optional<UnitQueue::Taken> UnitQueue::Steal() {
  for (;;) {
    // The rank with the most estimated cost left, then the most units left
    // (ties: the lowest rank); each word read by adding 0.
    int victim = -1;
    double most_cost = 0;
    size_t most_units = 0;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const UnitsLeft left = LeftOf(slices_[static_cast<size_t>(r)], Add(r, 0));
      if (left.units == 0) continue;
      if (victim < 0 || left.cost > most_cost ||
          (left.cost == most_cost && left.units > most_units)) {
        victim = r;
        most_cost = left.cost;
        most_units = left.units;
      }
    }
    if (victim < 0) return std::nullopt;
    const Slice& theirs = slices_[static_cast<size_t>(victim)];
    if (std::optional<size_t> at = ClaimedPosition(Add(victim, 1), theirs.units.size()))
      return Taken{&theirs.units[*at], false};
    // Another rank took the last one first: look again.
  }
}

}  // namespace distir::search
