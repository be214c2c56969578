#include "search/grid.h"

#include <cstdint>

#include "models/model_zoo.h"
#include "search/megatron_knobs.h"
#include "support/checked_math.h"

namespace distir::search {
namespace {

// The K of each listed value at (batch, D, P): space.microbatches, where
// P = 1 runs K = 1 only; or space.micro_batch, K = batch / (D micro_batch)
// at every P (Megatron's gradient accumulation at P = 1), 0 with the reason
// where it does not divide.
struct KChoice {
  int64_t k = 1;
  int64_t micro_batch = 0;
  std::string invalid;
};

std::vector<KChoice> KChoices(const SearchSpace& s, int64_t batch, int64_t d, int64_t p) {
  std::vector<KChoice> out;
  if (s.micro_batch.empty()) {
    for (int64_t k : p == 1 ? std::vector<int64_t>{1} : s.microbatches)
      out.push_back({k, MicroBatchOf(batch, d, k), ""});
    return out;
  }
  for (int64_t mb : s.micro_batch) {
    StatusOr<int64_t> k = MicrobatchesOfMicroBatch(batch, d, mb);
    out.push_back({k.ok() ? *k : 0, mb, k.ok() ? "" : k.status().message()});
  }
  return out;
}

// The v of each listed value at P: space.virtual_stages, or L / (P N) of
// space.num_layers_per_virtual_pipeline_stage (0 with the reason where it
// does not divide); P = 1 runs v = 1 only (no pipeline to interleave).
struct VChoice {
  int64_t v = 1;
  std::string invalid;
};

std::vector<VChoice> VChoices(const SearchSpace& s, int64_t layers, int64_t p) {
  if (p == 1) return {VChoice{}};
  std::vector<VChoice> out;
  if (s.chunk_layers.empty()) {
    for (int64_t v : s.virtual_stages) out.push_back({v, ""});
    return out;
  }
  for (int64_t n : s.chunk_layers) {
    StatusOr<int64_t> v = VirtualStagesOfChunkLayers(layers, p, n);
    out.push_back({v.ok() ? *v : 0, v.ok() ? "" : v.status().message()});
  }
  return out;
}

}  // namespace

std::vector<Config> EnumerateConfigs(const Experiment& e) {
  const SearchSpace& s = e.space;
  const bool training = e.model.family != ModelFamily::kGpt2Inference;
  std::vector<Config> out;
  auto add = [&](int64_t batch, int64_t d, int64_t t, int64_t p) {
    // A product past int64 is past world_size too.
    const int64_t world = CheckedProduct({d, t, p}).value_or(INT64_MAX);
    if (e.world_rule == WorldRule::kEqual ? world != e.world_size : world > e.world_size) return;
    for (const VChoice& v : VChoices(s, ModelLayers(e.model), p)) {
      for (const KChoice& k : KChoices(s, batch, d, p)) {
        const bool schedules_differ = p > 1 && k.k > 1;
        for (size_t si = 0; si < (schedules_differ ? s.schedule.size() : 1); ++si) {
          for (size_t ri = 0; ri < (training ? s.recompute.size() : 1); ++ri) {
            for (size_t zi = 0; zi < (training && d > 1 ? s.zero.size() : 1); ++zi) {
              // Sequence parallelism splits over tp: at T = 1 there is nothing to split
              // (Megatron turns it off), so only T > 1 searches it.
              for (size_t qi = 0; qi < (t > 1 ? s.sequence_parallel.size() : 1); ++qi) {
                Config c;
                c.index = static_cast<int64_t>(out.size());
                c.batch = batch;
                c.micro_batch = k.micro_batch;
                c.invalid = !k.invalid.empty() ? k.invalid : v.invalid;
                c.options.dp = d;
                c.options.tp = t;
                c.options.pp = p;
                c.options.virtual_stages = v.v;
                c.options.microbatches = k.k;
                c.options.schedule = s.schedule[si];
                c.options.recompute = training ? s.recompute[ri] : RecomputeKind::kNone;
                c.options.zero_stage = training && d > 1 ? s.zero[zi] : 0;
                c.options.sequence_parallel = t > 1 && s.sequence_parallel[qi];
                out.push_back(c);
              }
            }
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
