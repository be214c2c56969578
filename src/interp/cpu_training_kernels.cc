// CPU kernels of the training ops: gradients, the MSE loss and the SGD and
// Adam optimizers. Each gradient is the adjoint of its forward kernel (checked
// by central differences in tests/unit/interp/cpu_grad_test.cc). Conventions
// the transforms must keep (docs/ir.md, "Reference executor"): MSELoss is the
// mean over all elements, so MSELossGrad is 2 (p - y) / N with N the element
// count of p; SGD's lr defaults to 0.01; Adam's defaults are lr 0.001,
// beta1 0.9, beta2 0.999, epsilon 1e-8, step 1.

#include <cmath>
#include <numbers>

#include "interp/cpu_kernels.h"

namespace distir::cpu {
namespace {

// MatMulGrad(x, w, dy) = (dy w^T, x^T dy) for y = MatMul(x, w). With batch
// broadcasting, each gradient is summed over the batch dims its operand was
// broadcast along, so it has its operand's shape.
Result MatMulGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor x = PromoteForMatMul(in[0].tensor(), true);
  const DenseTensor w = PromoteForMatMul(in[1].tensor(), false);
  DenseTensor dy = in[2].tensor();
  dy.shape = BroadcastShapes(Shape(x.shape.begin(), x.shape.end() - 2),
                             Shape(w.shape.begin(), w.shape.end() - 2));
  dy.shape.push_back(x.shape[x.shape.size() - 2]);
  dy.shape.push_back(w.shape.back());
  DenseTensor dx = SumToShape(BatchedMatMul(dy, false, w, true), x.shape);
  DenseTensor dw = SumToShape(BatchedMatMul(x, true, dy, false), w.shape);
  dx.shape = in[0].tensor().shape;
  dw.shape = in[1].tensor().shape;
  return Values{MakeResult(types[0], std::move(dx)), MakeResult(types[1], std::move(dw))};
}

// Elementwise f'(x) * dy for the activation gradients.
template <typename Derivative>
Result ActivationGrad(const Op& op, Args in, Derivative derivative) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  DenseTensor dx = in[1].tensor();
  for (size_t i = 0; i < dx.values.size(); ++i) dx.values[i] *= derivative(x.values[i]);
  return One(MakeResult(types[0], std::move(dx)));
}

Result ReluGradKernel(const Op& op, Args in) {
  return ActivationGrad(op, in, [](double x) { return x > 0 ? 1.0 : 0.0; });
}

// d/dx of Gelu: exact Phi(x) + x phi(x); tanh form 0.5 (1 + t) + 0.5 x (1 - t^2) u'
// with t = tanh(u), u = c (x + 0.044715 x^3), c = sqrt(2 / pi).
Result GeluGradKernel(const Op& op, Args in) {
  const Attribute* a = op.FindAttr("approximate");
  const std::string mode = a == nullptr ? "none" : a->AsString();
  if (mode == "tanh") {
    return ActivationGrad(op, in, [](double x) {
      const double c = std::sqrt(2 / std::numbers::pi);
      const double t = std::tanh(c * (x + 0.044715 * x * x * x));
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
    });
  }
  if (mode != "none") {
    return InvalidArgument(op.loc()) << "GeluGrad approximate must be \"none\" or \"tanh\", "
                                        "got \""
                                     << mode << "\"";
  }
  return ActivationGrad(op, in, [](double x) {
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    return 0.5 * (1 + std::erf(x / std::numbers::sqrt2)) + x * pdf;
  });
}

// SigmoidGrad(y, dy) = dy y (1 - y), y = Sigmoid(x) the forward's output:
// sigma' = sigma (1 - sigma) needs no exp. SiLU x sigma(x), which LLaMA's
// SwiGLU computes as Mul(x, Sigmoid(x)), differentiates with it and Mul/Add.
Result SigmoidGradKernel(const Op& op, Args in) {
  return ActivationGrad(op, in, [](double y) { return y * (1 - y); });
}

// dx = y (dy - sum_axis(dy y)) for y = Softmax(x) along `axis`.
Result SoftmaxGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& y = in[0].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", -1), y.shape.size()));
  const AxisSplit s = SplitAround(y.shape, axis);
  DenseTensor dx = in[1].tensor();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t k = 0; k < s.stride; ++k) {
      const int64_t base = o * s.extent * s.stride + k;
      double dot = 0;
      for (int64_t i = 0; i < s.extent; ++i) {
        dot += dx.values[base + i * s.stride] * y.values[base + i * s.stride];
      }
      for (int64_t i = 0; i < s.extent; ++i) {
        double& v = dx.values[base + i * s.stride];
        v = y.values[base + i * s.stride] * (v - dot);
      }
    }
  }
  return One(MakeResult(types[0], std::move(dx)));
}

// Gradients of y = (x - mean) r * scale + bias over the dims >= axis, with
// r = 1 / sqrt(var + epsilon) recomputed from x. With xh = (x - mean) r and
// g = dy * scale, per row: dx = r (g - mean(g) - xh mean(g xh)); dscale and
// dbias sum dy xh and dy over the rows (and over any dims scale broadcasts along).
Result LayerNormGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  const DenseTensor& dy = in[2].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", -1), x.shape.size()));
  const double epsilon = op.GetFloat("epsilon", 1e-5);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  const int64_t inner = ShapeNumElements(normalized);
  const double count = static_cast<double>(inner);
  const std::vector<int64_t> is = BroadcastIndex(in[1].tensor().shape, normalized);
  DenseTensor dx{x.dtype, x.shape, std::vector<double>(x.values.size())};
  DenseTensor dscale{x.dtype, normalized, std::vector<double>(inner, 0.0)};
  DenseTensor dbias = dscale;
  std::vector<double> xh(inner), g(inner);
  for (int64_t o = 0; o < Product(x.shape, 0, axis); ++o) {
    const int64_t row = o * inner;
    double mu = 0, var = 0, mean_g = 0, mean_gxh = 0;
    for (int64_t i = 0; i < inner; ++i) mu += x.values[row + i] / count;
    for (int64_t i = 0; i < inner; ++i) var += std::pow(x.values[row + i] - mu, 2) / count;
    const double r = 1 / std::sqrt(var + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      xh[i] = (x.values[row + i] - mu) * r;
      g[i] = dy.values[row + i] * in[1].tensor().values[is[i]];
      mean_g += g[i] / count;
      mean_gxh += g[i] * xh[i] / count;
      dscale.values[i] += dy.values[row + i] * xh[i];
      dbias.values[i] += dy.values[row + i];
    }
    for (int64_t i = 0; i < inner; ++i) dx.values[row + i] = r * (g[i] - mean_g - xh[i] * mean_gxh);
  }
  const Shape& scale_shape = in[1].tensor().shape;
  return Values{MakeResult(types[0], std::move(dx)),
                MakeResult(types[1], SumToShape(dscale, scale_shape)),
                MakeResult(types[2], SumToShape(dbias, scale_shape))};
}

// Gradients of y = x r * scale over the dims >= axis, r = 1 / sqrt(mean(x^2) +
// epsilon) recomputed from x. With xh = x r and g = dy * scale, per row:
// dx = r (g - xh mean(g xh)); dscale sums dy xh over the rows (and over any
// dims scale broadcasts along). LayerNormGradKernel without the centring.
Result RMSNormGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  const DenseTensor& dy = in[2].tensor();
  DISTIR_ASSIGN_OR_RETURN(int64_t axis,
                          shape::NormalizeAxis(op, op.GetInt("axis", -1), x.shape.size()));
  const double epsilon = op.GetFloat("epsilon", 1e-5);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  const int64_t inner = ShapeNumElements(normalized);
  const double count = static_cast<double>(inner);
  const std::vector<int64_t> is = BroadcastIndex(in[1].tensor().shape, normalized);
  DenseTensor dx{x.dtype, x.shape, std::vector<double>(x.values.size())};
  DenseTensor dscale{x.dtype, normalized, std::vector<double>(inner, 0.0)};
  std::vector<double> xh(inner);
  for (int64_t o = 0; o < Product(x.shape, 0, axis); ++o) {
    const int64_t row = o * inner;
    double mean_square = 0, mean_gxh = 0;
    for (int64_t i = 0; i < inner; ++i) mean_square += std::pow(x.values[row + i], 2) / count;
    const double r = 1 / std::sqrt(mean_square + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      xh[i] = x.values[row + i] * r;
      mean_gxh += dy.values[row + i] * in[1].tensor().values[is[i]] * xh[i] / count;
      dscale.values[i] += dy.values[row + i] * xh[i];
    }
    for (int64_t i = 0; i < inner; ++i) {
      const double g = dy.values[row + i] * in[1].tensor().values[is[i]];
      dx.values[row + i] = r * (g - xh[i] * mean_gxh);
    }
  }
  return Values{MakeResult(types[0], std::move(dx)),
                MakeResult(types[1], SumToShape(dscale, in[1].tensor().shape))};
}

// mean((p - y)^2) as a rank-0 tensor.
// N of MSELoss/MSELossGrad: the `denominator` attribute when present (a
// microbatch of a larger batch divides by the global element count, so that
// microbatch losses and gradients sum to the full batch's), else the element
// count of p.
double Denominator(const Op& op, size_t elements) {
  return static_cast<double>(op.GetInt("denominator", static_cast<int64_t>(elements)));
}

Result MSELossKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& p = in[0].tensor();
  const DenseTensor& y = in[1].tensor();
  double sum = 0;
  for (size_t i = 0; i < p.values.size(); ++i) sum += std::pow(p.values[i] - y.values[i], 2);
  const double n = Denominator(op, p.values.size());
  return One(MakeResult(types[0], DenseTensor{p.dtype, {}, {p.values.empty() ? 0.0 : sum / n}}));
}

// 2 (p - y) / N, N the number of elements: the gradient of MSELoss.
Result MSELossGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DenseTensor dp = in[0].tensor();
  const DenseTensor& y = in[1].tensor();
  const double n = Denominator(op, dp.values.size());
  for (size_t i = 0; i < dp.values.size(); ++i) dp.values[i] = 2 * (dp.values[i] - y.values[i]) / n;
  return One(MakeResult(types[0], std::move(dp)));
}

Result SGDKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const double lr = op.GetFloat("lr", 0.01);
  DenseTensor w = in[0].tensor();
  const DenseTensor& dw = in[1].tensor();
  for (size_t i = 0; i < w.values.size(); ++i) w.values[i] -= lr * dw.values[i];
  return One(MakeResult(types[0], std::move(w)));
}

// Adam (Kingma and Ba, Algorithm 1) at step t = `step`:
//   m' = b1 m + (1 - b1) dw,  v' = b2 v + (1 - b2) dw^2,
//   w' = w - lr (m' / (1 - b1^t)) / (sqrt(v' / (1 - b2^t)) + epsilon).
// Results: (w', m', v').
Result AdamKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const double lr = op.GetFloat("lr", 0.001);
  const double b1 = op.GetFloat("beta1", 0.9);
  const double b2 = op.GetFloat("beta2", 0.999);
  const double epsilon = op.GetFloat("epsilon", 1e-8);
  const int64_t step = op.GetInt("step", 1);
  if (step < 1) {
    return InvalidArgument(op.loc()) << "Adam step must be >= 1, got " << step;
  }
  const double c1 = 1 - std::pow(b1, static_cast<double>(step));
  const double c2 = 1 - std::pow(b2, static_cast<double>(step));
  DenseTensor w = in[0].tensor();
  DenseTensor m = in[2].tensor();
  DenseTensor v = in[3].tensor();
  const std::vector<double>& dw = in[1].tensor().values;
  for (size_t i = 0; i < w.values.size(); ++i) {
    m.values[i] = b1 * m.values[i] + (1 - b1) * dw[i];
    v.values[i] = b2 * v.values[i] + (1 - b2) * dw[i] * dw[i];
    w.values[i] -= lr * (m.values[i] / c1) / (std::sqrt(v.values[i] / c2) + epsilon);
  }
  return Values{MakeResult(types[0], std::move(w)), MakeResult(types[1], std::move(m)),
                MakeResult(types[2], std::move(v))};
}

}  // namespace

void RegisterTrainingKernels(CpuDomain& domain) {
  domain.Register(OpKind::kMatMulGrad, MatMulGradKernel);
  domain.Register(OpKind::kReluGrad, ReluGradKernel);
  domain.Register(OpKind::kGeluGrad, GeluGradKernel);
  domain.Register(OpKind::kSigmoidGrad, SigmoidGradKernel);
  domain.Register(OpKind::kSoftmaxGrad, SoftmaxGradKernel);
  domain.Register(OpKind::kLayerNormalizationGrad, LayerNormGradKernel);
  domain.Register(OpKind::kRMSNormalizationGrad, RMSNormGradKernel);
  domain.Register(OpKind::kMSELoss, MSELossKernel);
  domain.Register(OpKind::kMSELossGrad, MSELossGradKernel);
  domain.Register(OpKind::kSGD, SGDKernel);
  domain.Register(OpKind::kAdam, AdamKernel);
}

}  // namespace distir::cpu
