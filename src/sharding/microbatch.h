// Microbatches: one training step as K passes over slices of the batch
// (docs/transforms.md §12.7).
//
// SplitMicrobatches rewrites a global-view function (annotated or not) so
// that its batch inputs arrive as K microbatches and every op that depends
// on them runs once per microbatch; gradients add up across microbatches
// before the optimizer runs once. The classes of ops, found from the
// dataflow (never from names):
//   - update: an optimizer op (SGD, Adam), every op that reads an update
//     op's result, and every op reading no batch input whose results only
//     update ops read (AdamW's decayed master copy); run once, after every
//     microbatch;
//   - per microbatch: an op that depends on a batch input and is not an
//     update; cloned K times. Among these, forward ops are those a returned
//     per-microbatch value (the loss, an inference output) is computed from;
//     the others are backward ops;
//   - setup: the rest (it reads no batch input); run once, first.
// A per-microbatch value that an update op reads, or a returned scalar (the
// loss), is the sum of its K microbatch values (an Add chain, accumulated as
// each microbatch finishes, named like the value). A returned per-microbatch
// tensor is returned K times, once per microbatch, like the inputs.
// MSELoss and MSELossGrad keep the global batch's element count as their
// `denominator`, so the sum of the microbatch losses and gradients is the
// step's.
//
// Batch input `x` [B, ...] becomes parameters `x.mb0` .. `x.mb<K-1>`, each
// [B/K, ...] with x's sharding (microbatch m is rows [m B/K, (m+1) B/K) of
// x); other values of microbatch m get the suffix `.mb<m>`. Every op gets a
// `task` attribute (pipeline_task.h): stage 0, its microbatch (-1 for setup
// and update ops) and its phase. K = 1 tags the ops and renames nothing.
//
// With `first_only`, only microbatch 0 is emitted (x.mb0 of [B/K, ...]) and
// nothing is summed: the update reads microbatch 0's values. That template
// goes through the later passes once and replicate.h repeats it.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir::sharding {

/// Splits `function` of `module` into `microbatches` microbatches of its
/// parameters `batch_params` (split along dim 0). Returns the names of the
/// microbatch parameters, every batch parameter's K in turn.
/// Errors (InvalidArgument): K < 1; no batch parameter; a name that is not a
/// tensor parameter of rank >= 1; a batch whose size K does not divide
/// (naming it and K); a value to sum that is not a tensor; a call.
/// `first_only`: emit the template of microbatch 0 only (see above).
/// `sum_addends`: an Add of two per-microbatch values that only update ops
/// read runs once per step on the two operands' sums (pipelined programs: a
/// tied weight's gradient addends, computed on different stages, meet once).
StatusOr<std::vector<std::string>> SplitMicrobatches(Module& module, std::string function,
                                                     int64_t microbatches,
                                                     const std::vector<std::string>& batch_params,
                                                     bool first_only = false,
                                                     bool sum_addends = false);

/// The ops of `fn` that SplitMicrobatches tags forward (by op index),
/// without splitting: the per-microbatch ops a returned per-microbatch value
/// is computed from. `batch_params` as for SplitMicrobatches. Errors: those
/// of the batch inputs (a name that is no parameter, no batch dimension).
StatusOr<std::vector<bool>> ForwardOps(const Function& fn,
                                       const std::vector<std::string>& batch_params);

}  // namespace distir::sharding
