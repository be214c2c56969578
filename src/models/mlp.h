// The MLP training workload of the paper (Table 1: MLP 1B, 17B, 103B).
//
// BuildMlpTraining() produces one sequential training step as a DistIR module:
// n_layer square d x d layers (MatMul then Relu, no bias, input = hidden =
// output width, as in the original's examples/mlp.py), a mean-squared-error
// loss, the backward pass in reverse layer order and one optimizer op per
// weight. The parallel transforms (src/transforms) rewrite this function; they
// find layers, activations and gradients by the value names documented below
// and in docs/models.md, so those names are part of this file's contract.
// Named sizes live in model_zoo.h.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/device.h"
#include "ir/dtype.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

enum class MlpOptimizer {
  kSgd,   ///< w' = SGD(w, dw) {lr}
  kAdam,  ///< w', m', v' = Adam(w, dw, m, v) {beta1, beta2, epsilon, lr, step = 1}
};

/// Options for BuildMlpTraining(). The defaults are a tiny model for tests.
struct MlpOptions {
  int64_t n_layer = 4;        ///< number of d x d layers; >= 1
  int64_t d_model = 16;       ///< the width d of every layer (input, hidden and output); >= 1
  int64_t batch = 8;          ///< global batch size (rows of x and y); >= 1
  DType dtype = DType::kF32;  ///< of inputs, weights and optimizer state; a float type
  MlpOptimizer optimizer = MlpOptimizer::kSgd;
  double learning_rate = 0.01;  ///< the `lr` attribute; finite and >= 0
  double adam_beta1 = 0.9;      ///< Adam only; in [0, 1)
  double adam_beta2 = 0.999;    ///< Adam only; in [0, 1)
  double adam_epsilon = 1e-8;   ///< Adam only; > 0
  /// Device of every parameter (hence of every value), d0 by default. A
  /// default-constructed DeviceId() gives a device-generic function (no device
  /// anywhere; Constant-free, so nothing else changes).
  DeviceId device = DeviceId(0);
};

/// Builds one training step of the MLP as a module holding one function, @mlp.
///
/// Parameters, in order: x [batch, d], y [batch, d] (labels), w0 .. w{L-1}
/// [d, d], and with Adam m0 .. m{L-1} then v0 .. v{L-1} [d, d] (first and
/// second moments). Ops, in program order (L = n_layer):
///   forward   h{i} = MatMul(a{i-1}, w{i}); a{i} = Relu(h{i})    (a{-1} is x)
///   loss      loss = MSELoss(a{L-1}, y); da{L-1} = MSELossGrad(a{L-1}, y)
///   backward  for i = L-1 .. 0: dh{i} = ReluGrad(h{i}, da{i});
///             da{i-1}, dw{i} = MatMulGrad(a{i-1}, w{i}, dh{i})   (da{-1} is dx)
///   optimizer for i = 0 .. L-1: w{i}_new = SGD(w{i}, dw{i}), or
///             w{i}_new, m{i}_new, v{i}_new = Adam(w{i}, dw{i}, m{i}, v{i})
/// Returns loss, w0_new .. w{L-1}_new, then (Adam) m0_new .., v0_new ...
/// That is 5L + 2 ops. Result types are left unknown: run InferTypes
/// (interp/infer_types.h) to fill them. The function verifies.
///
/// Errors: InvalidArgument naming the option when n_layer, d_model or batch is
/// < 1, dtype is not a float type, a hyper-parameter is out of range, or the
/// sizes are too large (CheckMlpSizes).
StatusOr<Module> BuildMlpTraining(const MlpOptions& options);

/// Every check BuildMlpTraining() makes of `options` before it builds (the
/// errors listed there), without building. On an error, `*culprit` (when not
/// null) names the option blamed: the one out of range, "dtype",
/// "learning_rate", "optimizer" (an Adam hyper-parameter), or CheckMlpSizes'
/// culprit.
Status ValidateMlpOptions(const MlpOptions& options, std::string* culprit = nullptr);

/// Checks that the model's sizes are representable (models/model_size.h): every
/// tensor, and all of them together, at most kMaxModelBytes, and at most
/// kMaxModelOps ops. InvalidArgument naming the option to blame otherwise (also
/// stored in `*culprit` when not null: "d_model", "batch" or "n_layer").
/// BuildMlpTraining() checks this too. REQUIRES: every size >= 1.
Status CheckMlpSizes(const MlpOptions& options, std::string* culprit = nullptr);

/// Where the MLP's data and tensor parallelism go, as parameter rules for a
/// mesh with axes `dp` and `tp` (sharding/annotate.h, docs/transforms.md §12):
/// x and y split their batch over dp; Megatron pairs layers, the even ones
/// (and their Adam moments) column-parallel, the odd ones row-parallel, so
/// that a layer pair needs one all-reduce over tp in each direction.
std::vector<std::string> MlpShardingRules();

/// Number of weight elements (optimizer state and data excluded): n_layer * d^2.
int64_t MlpParameterCount(const MlpOptions& options);

/// Value names of the MLP (see BuildMlpTraining); `layer` is 0-based.
namespace mlp_names {
inline constexpr char kInput[] = "x";
inline constexpr char kLabels[] = "y";
inline constexpr char kLoss[] = "loss";
inline constexpr char kInputGrad[] = "dx";
std::string Weight(int64_t layer);             ///< "w3"
std::string PreActivation(int64_t layer);      ///< "h3"
std::string Activation(int64_t layer);         ///< "a3"
std::string PreActivationGrad(int64_t layer);  ///< "dh3"
std::string ActivationGrad(int64_t layer);     ///< "da3"
std::string WeightGrad(int64_t layer);         ///< "dw3"
std::string FirstMoment(int64_t layer);        ///< "m3"
std::string SecondMoment(int64_t layer);       ///< "v3"
/// The optimizer's output for a weight or state name: "w3" -> "w3_new".
std::string Updated(const std::string& name);
}  // namespace mlp_names

}  // namespace distir
