// The ranks' slices of a search as queues that idle ranks take from.
//
// The slices are balanced by estimated cost (grid_search.h), but estimates
// err, and ranks differ in speed: on a 2-core VM the second core ran the same
// search ~20 % slower and at times half as fast: with fixed slices the rank
// on it finished up to 1.9x after the other (GPT-2 175B grid, 2026-11-29;
// docs/cost_model.md §3.2). So a rank takes its own slice's units from the
// front, and once it has none left, takes the next unit from the front of
// the slice with the most estimated cost left, until every unit is taken.
// Every rank walks a slice from its front, largest first, so the last units
// taken anywhere are the smallest and the ranks finish within about one small
// unit of each other (list scheduling, largest first). Thieves once took the
// back unit (the smallest) instead: the owner's last unit was then one from
// the slice's middle, and on the GPT-2 1.6B grid the ranks finished 30-70 ms
// apart against 4-16 ms now (2026-11-30, two ranks, 0.85 s searches).
//
// Each slice has one 64-bit word in an MPI window on its own rank: the units
// taken from it. Taking is one MPI_Fetch_and_op (MPI_SUM) on that word, so
// no two takes get the same unit: each addition claims the position the word
// held before it (ClaimedPosition), and a claim past the units is void.
// Which rank evaluates a unit does not change its results (each
// configuration is evaluated on its own, deterministically).

#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace distir::search {

/// One rank's share of a search: units of work (each the indices of
/// configurations evaluated together, e.g. those sharing a template), in
/// the order the rank takes them, and each unit's estimated cost.
struct Slice {
  std::vector<std::vector<int64_t>> units;
  std::vector<double> costs;
};

/// The position in a slice of `n` units that an addition to its word claims,
/// given the word before it (the units taken): that count, or nullopt when it
/// is n or more (no unit left). Pure; exposed for tests.
std::optional<size_t> ClaimedPosition(uint64_t word_before, size_t n);

/// The units of `s` not yet taken by the word `word`, and their estimated cost.
struct UnitsLeft {
  size_t units = 0;
  double cost = 0;
};
UnitsLeft LeftOf(const Slice& s, uint64_t word);

class UnitQueue {
 public:
  /// Collective over `comm`: every rank passes the same slices (one per
  /// rank). With one rank (or MPI_COMM_NULL, ranks.h) no window is made.
  UnitQueue(std::vector<Slice> slices, MPI_Comm comm);
  /// Collective: frees the window.
  ~UnitQueue();
  UnitQueue(const UnitQueue&) = delete;
  UnitQueue& operator=(const UnitQueue&) = delete;

  struct Taken {
    const std::vector<int64_t>* unit = nullptr;  ///< configuration indices
    bool own = false;                            ///< from this rank's slice
  };
  /// The next unit this rank evaluates; nullopt once every unit of every
  /// slice is taken.
  std::optional<Taken> Next();
  /// The units no rank has taken yet, slice by slice (each slice's word read
  /// now, one atomic read each): for the progress lines of a rank that
  /// helps the others once its own slice is done.
  std::vector<const std::vector<int64_t>*> NotTaken();
  /// Every rank's slice, as the constructor got them.
  const std::vector<Slice>& slices() const { return slices_; }

 private:
  uint64_t Add(int target, uint64_t amount);
  std::optional<Taken> Steal();

  std::vector<Slice> slices_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  MPI_Win win_ = MPI_WIN_NULL;
  uint64_t* word_ = nullptr;  // this rank's word (the window's memory)
  size_t taken_alone_ = 0;    // one rank: units taken so far
};

}  // namespace distir::search
