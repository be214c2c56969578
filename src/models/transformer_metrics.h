// What a transformer training step holds and computes, from its options and
// its value names: the role of each value in memory (weights, gradients,
// optimizer state, activations, inputs), for the simulator's memory breakdown
// (sim/memory_kind.h maps the roles to kinds in the tool), and the model
// FLOPs of one step, for tokens/s, TFLOP/s and MFU. The names are those
// docs/models.md lists for BuildTransformerTraining() (transformer.h);
// docs/cost_model.md derives the FLOPs.

#pragma once

#include <cstdint>
#include <string_view>

#include "ir/value.h"
#include "models/transformer.h"

namespace distir {

enum class TransformerValueRole {
  kWeight,          ///< a parameter ending in .weight/.bias, or its update `<w>.new`
  kGradient,        ///< `<w>.grad` (and .lookup/.output parts), `<w>.main_grad*`, `<w>.l2`
  kOptimizerState,  ///< `.master`, `.exp_avg`, `.exp_avg_sq` (and `.new`), `<w>.decayed`
  kActivation,      ///< any other op result (activation gradients included)
  kInput,           ///< the tokens and labels parameters
  kOther,           ///< Constant results (positions, RoPE tables, optimizer scalars)
};

/// The role of `v` in a function built by BuildTransformerTraining(), or in
/// its distributed program, from its name and whether it is a parameter or a
/// Constant. The components the distribution appends (`.d3`, `.mb1`, `.s0`,
/// `.to`, `.sum2`, `.zero`, `.step`, `.1`) are ignored. Names outside the
/// convention are activations (op results) or inputs (parameters).
TransformerValueRole ClassifyTransformerValue(const Value& v);

/// The same from the name alone: `is_param` for a function parameter,
/// `is_constant` for the result of a Constant op.
TransformerValueRole ClassifyTransformerValueName(std::string_view name, bool is_param,
                                                  bool is_constant);

/// Model FLOPs of one training step without recomputation (forward 1x,
/// backward 2x: 3x the forward matrix FLOPs): per token and layer
/// 2 [H (h + 2g) d + h d H + m H F] + 4 s h d (m = 2 GPT, 3 LLaMA; causal
/// attention counted in full, as Megatron and PaLM count it), plus 2 H V for
/// the LM head; times 3 b s. For GPT (g = h, F = 4H) this is Narayanan et al.
/// 2021's 72 b s L H^2 (1 + s/(6H) + V/(12 L H)). Element-wise ops, norms and
/// the embedding lookup are not counted. REQUIRES: the options validate.
double TransformerModelFlops(const TransformerOptions& options);

/// Tokens of one training step: batch x seq_length.
int64_t TransformerTokensPerStep(const TransformerOptions& options);

}  // namespace distir
