#include "search/strategy.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace distir::search {

uint64_t SeededRandom::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int64_t SeededRandom::Below(int64_t n) {
  // Rejection keeps every value equally likely (no modulo bias).
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t x = Next();
  while (x >= limit) x = Next();
  return static_cast<int64_t>(x % range);
}

double SeededRandom::Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

std::vector<char> RandomPick(const std::vector<Config>& configs, int64_t budget, uint64_t seed) {
  std::vector<int64_t> valid;
  for (const Config& c : configs) {
    if (c.invalid.empty()) valid.push_back(c.index);
  }
  // A partial Fisher-Yates shuffle: the first `budget` places.
  SeededRandom random(seed);
  const auto take = static_cast<size_t>(std::min<int64_t>(budget, std::ssize(valid)));
  for (size_t i = 0; i < take; ++i) {
    const auto j = i + static_cast<size_t>(random.Below(static_cast<int64_t>(valid.size() - i)));
    std::swap(valid[i], valid[j]);
  }
  std::vector<char> picked(configs.size(), 0);
  for (size_t i = 0; i < take; ++i) picked[static_cast<size_t>(valid[i])] = 1;
  return picked;
}

namespace {

// The knobs two configurations may differ in, as numbers.
std::vector<int64_t> KnobsOf(const Config& c) {
  const ParallelOptions& o = c.options;
  return {c.batch,
          o.dp,
          o.tp,
          o.pp,
          o.virtual_stages,
          o.microbatches,
          c.micro_batch,
          static_cast<int64_t>(o.schedule),
          static_cast<int64_t>(o.recompute),
          o.zero_stage,
          o.sequence_parallel ? 1 : 0};
}

}  // namespace

Annealer::Annealer(const std::vector<Config>& configs, const Strategy& strategy,
                   std::vector<double> bounds)
    : configs_(configs), strategy_(strategy), random_(strategy.seed), bounds_(std::move(bounds)) {
  knobs_.reserve(configs.size());
  for (const Config& c : configs) knobs_.push_back(KnobsOf(c));
  evaluated_.assign(configs.size(), 0);
  // Configurations invalid at enumeration are never proposed.
  for (const Config& c : configs) {
    if (!c.invalid.empty()) evaluated_[static_cast<size_t>(c.index)] = 1;
  }
}

double Annealer::Score(const ConfigResult& r) {
  return r.status == ConfigStatus::kOk && r.fits ? r.throughput : 0.0;
}

bool Annealer::Neighbours(int64_t a, int64_t b) const {
  const std::vector<int64_t>& x = knobs_[static_cast<size_t>(a)];
  const std::vector<int64_t>& y = knobs_[static_cast<size_t>(b)];
  int differ = 0;
  for (size_t k = 0; k < x.size() && differ <= 2; ++k) differ += x[k] != y[k];
  return differ >= 1 && differ <= 2;
}

bool Annealer::Eligible(size_t i, const std::vector<char>& taken) const {
  if (evaluated_[i] || taken[i]) return false;
  return bounds_.empty() || !(bounds_[i] > 0 && bounds_[i] <= best_);
}

int64_t Annealer::RandomUnevaluated(const std::vector<char>& taken) {
  std::vector<int64_t> left;
  for (size_t i = 0; i < configs_.size(); ++i) {
    if (Eligible(i, taken)) left.push_back(static_cast<int64_t>(i));
  }
  if (left.empty()) return -1;
  return left[static_cast<size_t>(random_.Below(std::ssize(left)))];
}

double Annealer::Temperature() const {
  constexpr double kStart = 0.1, kEnd = 0.001;
  const double progress = static_cast<double>(evaluated_count_) /
                          static_cast<double>(std::max<int64_t>(strategy_.budget, 1));
  return kStart * std::pow(kEnd / kStart, std::min(progress, 1.0));
}

std::vector<int64_t> Annealer::Propose() {
  std::vector<int64_t> round;
  std::vector<char> taken(configs_.size(), 0);
  while (std::ssize(round) < kAnnealRound &&
         evaluated_count_ + std::ssize(round) < strategy_.budget) {
    // The last places of a round explore: a random configuration anywhere.
    std::vector<int64_t> near;
    if (current_ >= 0 && std::ssize(round) < kAnnealRound - kAnnealExplore) {
      for (size_t i = 0; i < configs_.size(); ++i) {
        if (Eligible(i, taken) && Neighbours(current_, static_cast<int64_t>(i)))
          near.push_back(static_cast<int64_t>(i));
      }
    }
    const int64_t next = near.empty() ? RandomUnevaluated(taken)
                                      : near[static_cast<size_t>(random_.Below(std::ssize(near)))];
    if (next < 0) break;
    taken[static_cast<size_t>(next)] = 1;
    round.push_back(next);
  }
  return round;
}

void Annealer::Take(const std::vector<ConfigResult>& results) {
  // The round's best (the first of equals) is the move; Metropolis decides it.
  const ConfigResult* move = nullptr;
  for (const ConfigResult& r : results) {
    evaluated_[static_cast<size_t>(r.index)] = 1;
    ++evaluated_count_;
    best_ = std::max(best_, Score(r));
    if (move == nullptr || Score(r) > Score(*move)) move = &r;
  }
  if (move == nullptr) return;
  const double s = Score(*move);
  // Better moves always; worse ones with probability exp(-relative loss / T).
  // From a configuration that does not fit, any.
  bool accept = current_ < 0 || s >= current_score_ || current_score_ <= 0;
  if (!accept) {
    const double loss = (current_score_ - s) / current_score_;
    accept = random_.Unit() < std::exp(-loss / Temperature());
  }
  if (accept) {
    current_ = move->index;
    current_score_ = s;
  }
}

}  // namespace distir::search
