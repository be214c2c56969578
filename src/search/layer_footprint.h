// What each layer of a sequential transformer-training step holds on the
// devices of its pipeline stage: its parameters, and the forward buffers its
// backward reads (the saved activations). The activation part of the memory
// lower bound of pruning (memory_bound.h) multiplies these by the layers and
// microbatches a pipeline rank holds at its first backward op.
//
// Found from the dataflow of the sequential program, as the distribution's
// passes find it (never from sizes the model claims):
//   - forward ops: those the loss is computed from (sharding/microbatch.h
//     ForwardOps); backward ops: the other ops that depend on a batch input,
//     update ops (optimizer ops and what reads their results) apart;
//   - the layer of a forward op as the stage assignment finds it
//     (sharding/stages.h): the latest layer of the weights it reads (none
//     when it reads only weights outside the layers), else the latest layer
//     of its operands;
//   - a buffer (the value that allocates it, through views and in-place
//     updates: ir/op_alias.h) written by a forward op of layer l is saved for
//     layer l's backward when a backward op that the stage assignment puts on
//     layer l's stage reads it: one that reads a weight of layer l (the
//     latest it reads), or reads no layer's weight and only forward values
//     of layer l. Such a buffer lives on that stage from its forward op to
//     its backward reader, whatever else the distribution does with it;
//   - with selective recomputation the buffers that ops marked
//     `recompute = 1` write are recomputed in the backward instead
//     (sharding/recompute.h): not saved. Full recomputation keeps only the
//     layers' inputs, which come from the layer before: nothing counted.
// Every per-layer figure is the least over the layers, so that any layer a
// rank holds has at least that much.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir::search {

struct LayerFootprint {
  int64_t layers = 0;  ///< L: the layers found (groups of the pattern's weights)
  int64_t batch = 0;   ///< B: the sequential program's global batch (its inputs' dim 0)
  /// Parameter bytes of one layer (the least over layers): its weights, and
  /// the optimizer state of its weights (f32 master weights, Adam moments).
  double weights = 0;
  double optimizer_state = 0;
  /// Bytes of the forward buffers one layer's backward reads, at batch B
  /// (the least over layers): without recomputation, and with selective
  /// recomputation.
  double saved = 0;
  double saved_selective = 0;
};

/// The footprint of the sequential transformer-training step `seq`
/// (models/transformer.h names; typed), its batch inputs named by
/// `batch_params` and its weights grouped into layers by `layer_pattern`'s
/// first capture group (a regular expression searched in parameter names, as
/// the stage assignment groups them). Errors: those of ForwardOps; a bad
/// pattern; no layer found.
StatusOr<LayerFootprint> LayerFootprintOf(const Function& seq,
                                          const std::vector<std::string>& batch_params,
                                          const std::string& layer_pattern);

}  // namespace distir::search
