// A grid point's template for P pipeline stages, written from two built ones
// with two and four (per group of stages alike; docs/cost_model.md §3.7).
//
// A pipeline's middle stages are alike but for their devices: each runs its
// v chunks of n layers, receives from the stage before and sends to the
// stage after. The template of P stages (grid.h; one replica's, or its
// representatives') is the template of 2 stages with P - 2 middle stages
// inserted, each the ops of one middle stage on its own devices. Building it
// costs in proportion to its P v n layers (docs/cost_model.md §3.5); writing
// it from templates of 2 and 4 stages costs in proportion to 6 v n.
// Four, not three: a replica of T P devices must sit alike on the nodes for
// the template of one replica (search/representatives.h), which 3 T may not;
// the two middle stages of four are then inserted as one part, P - 2 even.
//
// The engine is TemplateFold (template_fold.h). Names, devices and tasks
// are read and written by stage: device d = (r P + s) T + t of replica r,
// stage s and tensor-parallel rank t (the world [dp, pp, tp]); chunk c = s +
// P k of round k holds layers c n .. c n + n - 1; a name's parts `s<k>` (a
// stage), its last part `d<N>` and its layer (after `prefix`) follow. The
// four-stage template's stages 0 and 3 are the two-stage one's 0 and 1; its
// stages 1 and 2 are inserted, and where a name of theirs stands for a
// neighbour of stage 0 or 3 (a transfer to or from it, named for the value
// sent) stage 1 reads as stage 1 and stage 2 as stage 0 (the neighbour across).
// Copy j (1 .. (P - 2) / 2) of the inserted stages 1 and 2 is stages 2j - 1
// and 2j, and their neighbours 2j - 2 and 2j + 1. Meshes and the devices the
// template keeps follow the same map. With Megatron's uneven split (v = 1,
// the first L mod P stages a layer longer) the stages form two groups of
// equal size, each folded so: the built templates have 2 and 4 stages per
// group, 4 and 8 in all.
//
// tests/unit/search/folded_template_test.cc checks that the written template
// prints as the built one, op for op, and simulates to the same results.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sharding/grid.h"
#include "sharding/template_fold.h"
#include "support/status_or.h"

namespace distir::sharding {

/// What the stage fold's names and devices depend on: T of the world
/// [dp, pp, tp], v chunks per stage, the layers per chunk of each group of
/// stages (one group where the layers split evenly; Megatron's uneven split
/// of L over P, v = 1, has the first L mod P stages one layer longer: two
/// groups), and the layers' name prefix (fold_layers.h LayerNamePrefix).
struct StageLayout {
  int64_t tp = 1;
  int64_t chunks = 1;
  std::vector<int64_t> layers{1};
  std::string prefix;
};

class StageFold {
 public:
  /// From `a` (2 stages per group) and `b` (4 per group) of the same grid
  /// point but for P. FailedPrecondition naming the first difference that is
  /// not two inserted middle stages per group.
  static StatusOr<StageFold> Learn(const GridTemplate& a, const GridTemplate& b,
                                   const StageLayout& layout);

  /// The template of `stages[g]` stages in group g (each even and >= 2, all
  /// equal) written from `b`: the template Learn was given as `b`, or one
  /// that differs from it in integers only. Its `part` is `b`'s.
  /// FailedPrecondition where `b` is not of that structure.
  StatusOr<GridTemplate> Write(const GridTemplate& b, const std::vector<int64_t>& stages) const;

 private:
  StageLayout layout_;
  TemplateFold fold_;
};

}  // namespace distir::sharding
