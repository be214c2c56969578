#include "search/grid.h"

#include <cstdint>

#include "support/checked_math.h"

namespace distir::search {

std::vector<Config> EnumerateConfigs(const Experiment& e) {
  const SearchSpace& s = e.space;
  const bool training = e.model.family != ModelFamily::kGpt2Inference;
  std::vector<Config> out;
  auto add = [&](int64_t batch, int64_t d, int64_t t, int64_t p) {
    // A product past int64 is past world_size too.
    const int64_t world = CheckedProduct({d, t, p}).value_or(INT64_MAX);
    if (e.world_rule == WorldRule::kEqual ? world != e.world_size : world > e.world_size) return;
    const std::vector<int64_t> ks = p == 1 ? std::vector<int64_t>{1} : s.microbatches;
    for (int64_t k : ks) {
      const bool schedules_differ = p > 1 && k > 1;
      for (size_t si = 0; si < (schedules_differ ? s.schedule.size() : 1); ++si) {
        for (size_t ri = 0; ri < (training ? s.recompute.size() : 1); ++ri) {
          for (size_t zi = 0; zi < (training && d > 1 ? s.zero.size() : 1); ++zi) {
            Config c;
            c.index = static_cast<int64_t>(out.size());
            c.batch = batch;
            c.options.dp = d;
            c.options.tp = t;
            c.options.pp = p;
            c.options.microbatches = k;
            c.options.schedule = s.schedule[si];
            c.options.recompute = training && s.recompute[ri];
            c.options.zero_stage = training && d > 1 ? s.zero[zi] : 0;
            out.push_back(c);
          }
        }
      }
    }
  };
  for (int64_t batch : s.batch) {
    for (const MeshShape& m : s.meshes) add(batch, m.dp, m.tp, m.pp);
    for (int64_t d : s.dp) {
      for (int64_t t : s.tp) {
        for (int64_t p : s.pp) add(batch, d, t, p);
      }
    }
  }
  return out;
}

}  // namespace distir::search
