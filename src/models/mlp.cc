#include "models/mlp.h"

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "models/model_size.h"
#include "support/checked_math.h"

namespace distir {

namespace mlp_names {
std::string Weight(int64_t layer) { return "w" + std::to_string(layer); }
std::string PreActivation(int64_t layer) { return "h" + std::to_string(layer); }
std::string Activation(int64_t layer) { return "a" + std::to_string(layer); }
std::string PreActivationGrad(int64_t layer) { return "dh" + std::to_string(layer); }
std::string ActivationGrad(int64_t layer) { return "da" + std::to_string(layer); }
std::string WeightGrad(int64_t layer) { return "dw" + std::to_string(layer); }
std::string FirstMoment(int64_t layer) { return "m" + std::to_string(layer); }
std::string SecondMoment(int64_t layer) { return "v" + std::to_string(layer); }
std::string Updated(const std::string& name) { return name + "_new"; }
}  // namespace mlp_names

namespace {

Status CheckMlpAtLeastOne(const char* option, int64_t value) {
  if (value >= 1) return Status::Ok();
  return InvalidArgument() << "mlp option " << option << " must be >= 1, got " << value;
}

Status CheckAdamOptions(const MlpOptions& o) {
  for (auto [option, value] :
       {std::pair{"adam_beta1", o.adam_beta1}, std::pair{"adam_beta2", o.adam_beta2}}) {
    if (!(value >= 0 && value < 1)) {
      return InvalidArgument() << "mlp option " << option << " must be in [0, 1), got " << value;
    }
  }
  if (!(o.adam_epsilon > 0) || !std::isfinite(o.adam_epsilon)) {
    return InvalidArgument() << "mlp option adam_epsilon must be finite and > 0, got "
                             << o.adam_epsilon;
  }
  return Status::Ok();
}

// The builder's checks of `o`; `culprit` names the option blamed.
Status ValidateOptions(const MlpOptions& o, std::string& culprit) {
  for (auto [option, value] : {std::pair{"n_layer", o.n_layer}, std::pair{"d_model", o.d_model},
                               std::pair{"batch", o.batch}}) {
    culprit = option;
    DISTIR_RETURN_IF_ERROR(CheckMlpAtLeastOne(option, value));
  }
  culprit = "dtype";
  if (!IsFloat(o.dtype)) {
    return InvalidArgument() << "mlp option dtype must be a float type, got " << DTypeName(o.dtype);
  }
  culprit = "learning_rate";
  if (!(o.learning_rate >= 0) || !std::isfinite(o.learning_rate)) {
    return InvalidArgument() << "mlp option learning_rate must be finite and >= 0, got "
                             << o.learning_rate;
  }
  culprit = "optimizer";
  if (o.optimizer == MlpOptimizer::kAdam) DISTIR_RETURN_IF_ERROR(CheckAdamOptions(o));
  return CheckMlpSizes(o, &culprit);
}

// The values of one build, indexed by layer.
struct MlpValues {
  Value* x = nullptr;
  Value* y = nullptr;
  std::vector<Value*> w, m, v;  // parameters
  std::vector<Value*> h, a;     // forward
  std::vector<Value*> dw;       // backward
};

void AddParams(const MlpOptions& o, FunctionBuilder& b, MlpValues& vals) {
  const Type batch_type = Type::Tensor(o.dtype, {o.batch, o.d_model}, o.device);
  const Type weight_type = Type::Tensor(o.dtype, {o.d_model, o.d_model}, o.device);
  vals.x = b.Param(mlp_names::kInput, batch_type);
  vals.y = b.Param(mlp_names::kLabels, batch_type);
  for (int64_t i = 0; i < o.n_layer; ++i)
    vals.w.push_back(b.Param(mlp_names::Weight(i), weight_type));
  if (o.optimizer != MlpOptimizer::kAdam) return;
  for (int64_t i = 0; i < o.n_layer; ++i) {
    vals.m.push_back(b.Param(mlp_names::FirstMoment(i), weight_type));
  }
  for (int64_t i = 0; i < o.n_layer; ++i) {
    vals.v.push_back(b.Param(mlp_names::SecondMoment(i), weight_type));
  }
}

void AddForward(const MlpOptions& o, FunctionBuilder& b, MlpValues& vals) {
  Value* in = vals.x;
  for (int64_t i = 0; i < o.n_layer; ++i) {
    vals.h.push_back(b.Add(OpKind::kMatMul, {in, vals.w[i]}, {}, mlp_names::PreActivation(i)));
    vals.a.push_back(b.Add(OpKind::kRelu, {vals.h[i]}, {}, mlp_names::Activation(i)));
    in = vals.a[i];
  }
}

// The loss, its gradient and the backward pass, last layer first. Returns the loss.
Value* AddLossAndBackward(const MlpOptions& o, FunctionBuilder& b, MlpValues& vals) {
  const int64_t last = o.n_layer - 1;
  Value* loss = b.Add(OpKind::kMSELoss, {vals.a[last], vals.y}, {}, mlp_names::kLoss);
  Value* da =
      b.Add(OpKind::kMSELossGrad, {vals.a[last], vals.y}, {}, mlp_names::ActivationGrad(last));
  vals.dw.assign(o.n_layer, nullptr);
  for (int64_t i = last; i >= 0; --i) {
    Value* dh = b.Add(OpKind::kReluGrad, {vals.h[i], da}, {}, mlp_names::PreActivationGrad(i));
    Value* in = i == 0 ? vals.x : vals.a[i - 1];
    const std::string din = i == 0 ? mlp_names::kInputGrad : mlp_names::ActivationGrad(i - 1);
    std::vector<Value*> grads =
        b.AddMulti(OpKind::kMatMulGrad, {in, vals.w[i], dh}, {}, {din, mlp_names::WeightGrad(i)});
    da = grads[0];
    vals.dw[i] = grads[1];
  }
  return loss;
}

AttrMap AdamAttrs(const MlpOptions& o) {
  return {{"beta1", o.adam_beta1},
          {"beta2", o.adam_beta2},
          {"epsilon", o.adam_epsilon},
          {"lr", o.learning_rate},
          {"step", int64_t{1}}};
}

// One optimizer op per weight, in layer order. Returns the values the function
// returns after the loss.
std::vector<Value*> AddOptimizer(const MlpOptions& o, FunctionBuilder& b, const MlpValues& vals) {
  std::vector<Value*> new_w, new_m, new_v;
  for (int64_t i = 0; i < o.n_layer; ++i) {
    const std::string w = mlp_names::Weight(i);
    if (o.optimizer == MlpOptimizer::kSgd) {
      new_w.push_back(b.Add(OpKind::kSGD, {vals.w[i], vals.dw[i]}, {{"lr", o.learning_rate}},
                            mlp_names::Updated(w)));
      continue;
    }
    std::vector<Value*> out =
        b.AddMulti(OpKind::kAdam, {vals.w[i], vals.dw[i], vals.m[i], vals.v[i]}, AdamAttrs(o),
                   {mlp_names::Updated(w), mlp_names::Updated(mlp_names::FirstMoment(i)),
                    mlp_names::Updated(mlp_names::SecondMoment(i))});
    new_w.push_back(out[0]);
    new_m.push_back(out[1]);
    new_v.push_back(out[2]);
  }
  new_w.insert(new_w.end(), new_m.begin(), new_m.end());
  new_w.insert(new_w.end(), new_v.begin(), new_v.end());
  return new_w;
}

}  // namespace

StatusOr<Module> BuildMlpTraining(const MlpOptions& options) {
  DISTIR_RETURN_IF_ERROR(ValidateMlpOptions(options));
  FunctionBuilder b("mlp");
  MlpValues vals;
  AddParams(options, b, vals);
  AddForward(options, b, vals);
  std::vector<Value*> returns = {AddLossAndBackward(options, b, vals)};
  std::vector<Value*> updated = AddOptimizer(options, b, vals);
  returns.insert(returns.end(), updated.begin(), updated.end());
  b.Return(std::move(returns));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> fn, std::move(b).Finish());
  Module module;
  module.AddFunction(std::move(fn));
  return module;
}

Status ValidateMlpOptions(const MlpOptions& options, std::string* culprit) {
  std::string blamed;
  Status valid = ValidateOptions(options, blamed);
  if (!valid.ok() && culprit != nullptr) *culprit = blamed;
  return valid;
}

Status CheckMlpSizes(const MlpOptions& o, std::string* culprit) {
  const std::string dtype(DTypeName(o.dtype));
  const int64_t width = ByteWidth(o.dtype);
  // Per layer: w, dw, w_new (Adam: and m, v, m_new, v_new); h, a, dh, da; then
  // x, y, the loss and the last da, counted as four more activations.
  const int64_t weights_per_layer = o.optimizer == MlpOptimizer::kAdam ? 7 : 3;
  const std::optional<int64_t> layers4 = CheckedMul(4, o.n_layer);
  ModelSizeCheck check("mlp");
  check.AddTensors(CheckedMul(weights_per_layer, o.n_layer), {o.d_model, o.d_model}, width,
                   "a d_model x d_model weight of " + dtype, "d_model", o.d_model);
  check.AddTensors(layers4 ? CheckedAdd(*layers4, 4) : std::nullopt, {o.batch, o.d_model}, width,
                   "a batch x d_model activation of " + dtype, "batch", o.batch);
  const std::optional<int64_t> ops5 = CheckedMul(5, o.n_layer);  // 5L + 2 ops
  return check.Finish(ops5 ? CheckedAdd(*ops5, 2) : std::nullopt, "n_layer", o.n_layer, culprit);
}

std::vector<std::string> MlpShardingRules() {
  return {"x=[{dp}, {}]", "y=[{dp}, {}]", "[wmv]*[02468]=[{}, {tp}]", "[wmv]*[13579]=[{tp}, {}]"};
}

int64_t MlpParameterCount(const MlpOptions& options) {
  return options.n_layer * options.d_model * options.d_model;
}

}  // namespace distir
