#include "models/transformer_metrics.h"

#include "ir/op.h"

namespace distir {
namespace {

// Inlined: a few of these run for every value of every simulated template.
inline bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

// `<w>.master`, `<w>.exp_avg`, `<w>.exp_avg_sq`, their `.new`, and the
// AdamW-decayed master `<w>.decayed`.
bool IsOptimizerState(std::string_view name) {
  if (EndsWith(name, ".new")) name.remove_suffix(4);
  return EndsWith(name, ".master") || EndsWith(name, ".exp_avg") ||
         EndsWith(name, ".exp_avg_sq") || EndsWith(name, ".decayed");
}

bool IsWeightName(std::string_view name) {
  return EndsWith(name, ".weight") || EndsWith(name, ".bias");
}

// A weight's gradient, not an activation's: the gradient of a name ending in
// .weight/.bias, its parts (the tied embedding's .lookup and .output), its
// f32 copy and the decay term added to it. That is, the name holds
// `.weight.grad`, `.bias.grad` or `.main_grad`, or ends in `.l2`: each
// `grad` in it is tried once against the three (the search classifies every
// value of every simulated template; one scan, not three).
bool IsWeightGradient(std::string_view name) {
  if (EndsWith(name, ".l2")) return true;
  for (size_t at = name.find("grad"); at != std::string_view::npos;
       at = name.find("grad", at + 1)) {
    const std::string_view before = name.substr(0, at);
    if (EndsWith(before, ".weight.") || EndsWith(before, ".bias.") || EndsWith(before, ".main_"))
      return true;
  }
  return false;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A component the distribution passes append to a value's name without
// changing what it holds: a device (`.d3`), a microbatch (`.mb1`), a stage
// (`.s0`, `.to.s1`), a partial sum (`.sum2`), a ZeRO shard (`.zero`, and its
// `.step` slice), a uniquifying number (`.1`).
bool IsDecoration(std::string_view c) {
  if (c.empty()) return false;
  switch (c[0]) {
    case 'z':
      return c == "zero";
    case 't':
      return c == "to";
    case 'd':
      return AllDigits(c.substr(1));
    case 'm':
      return c.size() > 2 && c[1] == 'b' && AllDigits(c.substr(2));
    case 's':
      return c == "step" || AllDigits(c.substr(1)) ||
             (c.size() > 3 && c.substr(0, 3) == "sum" && AllDigits(c.substr(3)));
    default:
      return AllDigits(c);
  }
}

// `name` without its trailing decorations: `layers.0.mlp.fc1.weight.grad.zero.d3`
// is the gradient `layers.0.mlp.fc1.weight.grad`.
std::string_view StripDecorations(std::string_view name) {
  while (true) {
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || !IsDecoration(name.substr(dot + 1))) return name;
    name = name.substr(0, dot);
  }
}

}  // namespace

TransformerValueRole ClassifyTransformerValueName(std::string_view name, bool is_param,
                                                  bool is_constant) {
  name = StripDecorations(name);
  if (IsOptimizerState(name)) return TransformerValueRole::kOptimizerState;
  if (IsWeightGradient(name)) return TransformerValueRole::kGradient;
  if (is_param) {
    return IsWeightName(name) ? TransformerValueRole::kWeight : TransformerValueRole::kInput;
  }
  if (is_constant) return TransformerValueRole::kOther;
  // The updated compute-dtype weight `<w>.new`, cast from the new master.
  if (EndsWith(name, ".new") && IsWeightName(name.substr(0, name.size() - 4))) {
    return TransformerValueRole::kWeight;
  }
  return TransformerValueRole::kActivation;
}

TransformerValueRole ClassifyTransformerValue(const Value& v) {
  const bool is_constant = !v.is_param() && v.def()->kind() == OpKind::kConstant;
  return ClassifyTransformerValueName(v.name(), v.is_param(), is_constant);
}

double TransformerModelFlops(const TransformerOptions& options) {
  const TransformerOptions o = ResolveTransformerOptions(options);
  const double H = static_cast<double>(o.hidden_size);
  const double h = static_cast<double>(o.num_attention_heads);
  const double g = static_cast<double>(o.num_query_groups);
  const double d = H / h;
  const double F = static_cast<double>(o.ffn_hidden_size);
  const double s = static_cast<double>(o.seq_length);
  const double V = static_cast<double>(o.vocab_size);
  const double mlp_matrices = o.variant == TransformerVariant::kLlama ? 3 : 2;
  const double layer = 2 * (H * (h + 2 * g) * d + h * d * H + mlp_matrices * H * F) + 4 * s * h * d;
  const double per_token = static_cast<double>(o.num_layers) * layer + 2 * H * V;
  return 3 * per_token * static_cast<double>(TransformerTokensPerStep(o));
}

int64_t TransformerTokensPerStep(const TransformerOptions& options) {
  return options.batch * options.seq_length;
}

}  // namespace distir
