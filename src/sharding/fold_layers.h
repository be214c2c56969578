// A grid point's template for n layers per model chunk, written from two
// built ones with two and three (docs/cost_model.md §3.6).
//
// A transformer's layers are alike, and so are their ops in a partitioned
// template (grid.h): a template of L = n C layers (C = P v model chunks of n
// contiguous layers) is the template of 2 C layers with n - 2 copies of a
// middle layer's ops in each chunk. Building it costs in proportion to L
// (docs/cost_model.md §3.5); writing it from templates of 2 C and 3 C layers
// costs in proportion to 5 C (3 C for another micro-batch of the family).
// Two and three, not one and two: a chunk's first layer holds the stage's
// setup ops and its last layer's backward starts from the received gradient
// and ends with gradients sent for the update, so only a middle layer's ops
// are those of every layer between.
//
// Learn finds, in the template `b` of 3 C layers, the parameters, ops and
// returned values of the template `a` of 2 C layers (chunk c's first and last
// layers 3c and 3c + 2 read as `a`'s 2c and 2c + 1): each of `a`'s is the
// first of `b`'s named as it after the previous match, or named by the
// middle layer where a laid-out value takes the next layer's name (the
// sequence-parallel all-gather of layer l + 1's input gradient, which layer
// l's backward runs) and no later one is named as it exactly. The rest of
// `b` is *inserted*: the middle layers. Each matched op must equal its
// counterpart (kind, attributes, result types and shardings) and read what
// it reads, except where it reads an inserted value Y in place of X: a chain
// through the middle layer (a layer's input to its output, a gradient from
// the layer above to the one below, a weight to its update). Anything else
// refuses (FailedPrecondition), and the caller builds the template.
//
// Write then emits `b` with each run of inserted ops (consecutive) n - 2
// times: copy j of a chain reads copy j - 1's Y where the
// middle layer reads X (the first copy reads X), and the matched reader of Y
// reads the last copy's; backward runs, and chains whose Y a backward op
// computes, count the copies from the last, as the backward pass walks the
// layers down. Names follow the layers: `b`'s layer 3c + r in copy j is
// layer c n + j + r - 1; matched, c n, c n + n - 1, or (r = 1) c n + 1.
//
// Two templates cannot tell a value every middle layer reads (none in these
// models) from a chain's X; tests/unit/search/folded_template_test.cc checks
// that the written template prints as the built one, op for op, and
// simulates to the same results, over grids of gpt-tiny and llama-tiny.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sharding/grid.h"
#include "sharding/template_fold.h"
#include "support/status_or.h"

namespace distir::sharding {

/// Where a name carries its layer: `prefix`, decimal digits (at most 9), '.'
/// (the digits at [begin, end)); layer -1 where it does not.
struct LayerRef {
  int64_t layer = -1;
  size_t begin = 0, end = 0;
};
LayerRef LayerOf(std::string_view name, std::string_view prefix);

/// The literal prefix of a layer pattern of the form `^NAME\.([0-9]+)\.`
/// (models/transformer.h kTransformerLayerPattern: "layers."), else "".
std::string LayerNamePrefix(const std::string& layer_pattern);

/// What a template of 3 C layers adds to one of 2 C, learned once; it then
/// writes the template of n C layers from any template of 3 C layers of the
/// same structure (another micro-batch of the family).
class LayerFold {
 public:
  /// From `a` (2 C layers, two per chunk) and `b` (3 C), their layers'
  /// values named `prefix` + index + ".". FailedPrecondition naming the first
  /// difference that is not an inserted middle layer.
  static StatusOr<LayerFold> Learn(const GridTemplate& a, const GridTemplate& b,
                                   const std::string& prefix);

  /// The template of n C layers (n >= 2) written from `b`: the template
  /// Learn was given as `b`, or one that differs from it in integers only
  /// (the same ops reading the same value ids). FailedPrecondition where `b`
  /// is not of that structure.
  StatusOr<GridTemplate> Write(const GridTemplate& b, int64_t n) const;

 private:
  std::string prefix_;
  TemplateFold fold_;
};

}  // namespace distir::sharding
