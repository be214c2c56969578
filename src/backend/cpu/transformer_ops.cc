// Host loops of the fused transformer ops, in the formulas of the reference
// kernels (interp/cpu_transformer_kernels.cc); sums are kept in double.

#include "backend/cpu/transformer_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace distir::backend {
namespace {

using Views = std::span<const TensorView>;

StatusBuilder CannotRun(const Op& op) {
  return Unimplemented(op.loc()) << "the CPU backend cannot run " << op.Name() << ": ";
}

// q [b, h, s, d], k/v [b, g, t, d]; query head hh reads key/value head hh / (h / g).
struct Attention {
  int64_t b = 0, h = 0, s = 0, d = 0, g = 1, t = 0;
  double scale = 1;
  bool causal = false;

  int64_t QRow(int64_t bh, int64_t i) const { return (bh * s + i) * d; }
  int64_t KRow(int64_t bh, int64_t j) const {
    const int64_t bi = bh / h, hi = bh % h;
    return ((bi * g + hi / (h / g)) * t + j) * d;
  }
  int64_t Keys(int64_t i) const { return causal ? std::min(t, i + 1) : t; }
};

Attention AttentionOf(const Op& op, const TensorView& q, const TensorView& k) {
  Attention a;
  a.b = q.shape[0], a.h = q.shape[1], a.s = q.shape[2], a.d = q.shape[3];
  a.g = k.shape[1], a.t = k.shape[2];
  a.scale = op.GetFloat("scale", a.d > 0 ? 1 / std::sqrt(static_cast<double>(a.d)) : 1.0);
  a.causal = op.GetInt("causal", 0) != 0;
  return a;
}

template <typename T>
double Dot(const T* x, const T* y, int64_t n) {
  double sum = 0;
  for (int64_t c = 0; c < n; ++c) sum += static_cast<double>(x[c]) * static_cast<double>(y[c]);
  return sum;
}

template <typename T>
void FlashAttention(const Attention& a, const T* q, const T* k, const T* v, T* o, T* lse) {
  std::vector<double> scores(static_cast<size_t>(a.t)), acc(static_cast<size_t>(a.d));
  for (int64_t bh = 0; bh < a.b * a.h; ++bh) {
    for (int64_t i = 0; i < a.s; ++i) {
      const T* qi = q + a.QRow(bh, i);
      const int64_t keys = a.Keys(i);
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        scores[j] = a.scale * Dot(qi, k + a.KRow(bh, j), a.d);
        m = std::max(m, scores[j]);
      }
      for (int64_t j = 0; j < keys; ++j) sum += std::exp(scores[j] - m);
      const double l = keys > 0 ? m + std::log(sum) : m;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < keys; ++j) {
        const double p = std::exp(scores[j] - l);
        const T* vj = v + a.KRow(bh, j);
        for (int64_t c = 0; c < a.d; ++c) acc[c] += p * static_cast<double>(vj[c]);
      }
      for (int64_t c = 0; c < a.d; ++c) o[a.QRow(bh, i) + c] = static_cast<T>(acc[c]);
      lse[bh * a.s + i] = static_cast<T>(l);
    }
  }
}

// The operands of FlashAttentionGrad; dk and dv sum over many rows, so all
// three gradients are accumulated in double and stored at the end.
template <typename T>
struct AttentionGradArgs {
  const T *q, *k, *v, *o, *lse, *dout;
  T *dq, *dk, *dv;
};

template <typename T>
void FlashAttentionGrad(const Attention& a, const AttentionGradArgs<T>& x) {
  const auto nq = static_cast<size_t>(a.b * a.h * a.s * a.d);
  const auto nk = static_cast<size_t>(a.b * a.g * a.t * a.d);
  std::vector<double> dq(nq, 0.0), dk(nk, 0.0), dv(nk, 0.0);
  for (int64_t bh = 0; bh < a.b * a.h; ++bh) {
    for (int64_t i = 0; i < a.s; ++i) {
      const int64_t qr = a.QRow(bh, i);
      const double di = Dot(x.dout + qr, x.o + qr, a.d);
      for (int64_t j = 0; j < a.Keys(i); ++j) {
        const int64_t kr = a.KRow(bh, j);
        const double p = std::exp(a.scale * Dot(x.q + qr, x.k + kr, a.d) -
                                  static_cast<double>(x.lse[bh * a.s + i]));
        const double ds = a.scale * p * (Dot(x.dout + qr, x.v + kr, a.d) - di);
        for (int64_t c = 0; c < a.d; ++c) {
          dv[kr + c] += p * static_cast<double>(x.dout[qr + c]);
          dq[qr + c] += ds * static_cast<double>(x.k[kr + c]);
          dk[kr + c] += ds * static_cast<double>(x.q[qr + c]);
        }
      }
    }
  }
  for (size_t i = 0; i < nq; ++i) x.dq[i] = static_cast<T>(dq[i]);
  for (size_t i = 0; i < nk; ++i) x.dk[i] = static_cast<T>(dk[i]);
  for (size_t i = 0; i < nk; ++i) x.dv[i] = static_cast<T>(dv[i]);
}

// lse is f32 for f32 (and, through f32 copies, f16/bf16) and f64 for f64, so
// it is always of the compute type T here.
template <typename T>
StatusOr<CpuKernel> PlanFlashAttention(const Op& op, Views in, Views out) {
  const Attention a = AttentionOf(op, in[0], in[1]);
  const TensorView q = in[0], k = in[1], v = in[2];
  if (op.kind() == OpKind::kFlashAttention) {
    const TensorView o = out[0], lse = out[1];
    if (lse.dtype != q.dtype) return CannotRun(op) << "an lse of another dtype than q";
    return CpuKernel([=] {
      FlashAttention<T>(a, q.as<T>(), k.as<T>(), v.as<T>(), o.as<T>(), lse.as<T>());
      return Status::Ok();
    });
  }
  if (in[4].dtype != q.dtype) return CannotRun(op) << "an lse of another dtype than q";
  const AttentionGradArgs<T> args{q.as<T>(),      k.as<T>(),      v.as<T>(),
                                  in[3].as<T>(),  in[4].as<T>(),  in[5].as<T>(),
                                  out[0].as<T>(), out[1].as<T>(), out[2].as<T>()};
  return CpuKernel([=] {
    FlashAttentionGrad<T>(a, args);
    return Status::Ok();
  });
}

// y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin over the halves of the last axis.
template <typename T, typename C>
void Rope(int64_t outer, int64_t s, int64_t d, const T* x, const C* cs, const C* sn, T* y) {
  const int64_t half = d / 2;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < s; ++p) {
      const int64_t row = (o * s + p) * d;
      for (int64_t c = 0; c < half; ++c) {
        const double x1 = x[row + c], x2 = x[row + half + c];
        const double cosine = cs[p * half + c], sine = sn[p * half + c];
        y[row + c] = static_cast<T>(x1 * cosine - x2 * sine);
        y[row + half + c] = static_cast<T>(x2 * cosine + x1 * sine);
      }
    }
  }
}

template <typename T>
StatusOr<CpuKernel> PlanRope(const Op& op, Views in, Views out) {
  const TensorView x = in[0], cs = in[1], sn = in[2], y = out[0];
  if (cs.dtype != x.dtype) return CannotRun(op) << "cos and sin of another dtype than x";
  const int64_t d = x.shape.back(), s = x.shape[x.rank() - 2];
  const int64_t outer = s * d > 0 ? x.num_elements() / (s * d) : 0;
  return CpuKernel([=] {
    Rope<T, T>(outer, s, d, x.as<T>(), cs.as<T>(), sn.as<T>(), y.as<T>());
    return Status::Ok();
  });
}

double LogSumExp(const auto* row, int64_t n) {
  double m = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t c = 0; c < n; ++c) m = std::max(m, static_cast<double>(row[c]));
  for (int64_t c = 0; c < n; ++c) sum += std::exp(static_cast<double>(row[c]) - m);
  return m + std::log(sum);
}

// The label of every token, range-checked: in [0, vocab), or only >= 0 for a
// piece of a split vocabulary (`piece`: other labels are other pieces').
Status CheckLabels(const SourceLoc& loc, const std::string& name, const int64_t* labels, int64_t n,
                   int64_t vocab, bool piece) {
  for (int64_t r = 0; r < n; ++r) {
    if (labels[r] < 0 || (!piece && labels[r] >= vocab)) {
      return InvalidArgument(loc) << name << " label " << labels[r] << " of token " << r
                                  << " is outside the vocabulary [0, " << vocab << ")";
    }
  }
  return Status::Ok();
}

// LogSumExp(x [..., n]) -> [...].
template <typename T>
StatusOr<CpuKernel> PlanLogSumExp(Views in, Views out) {
  const TensorView x = in[0], y = out[0];
  const int64_t n = x.shape.back(), rows = y.num_elements();
  return CpuKernel([=]() -> Status {
    for (int64_t r = 0; r < rows; ++r)
      y.as<T>()[r] = static_cast<T>(LogSumExp(x.as<T>() + r * n, n));
    return Status::Ok();
  });
}

// CrossEntropy and its gradient; a third operand gives each token's
// log-sum-exp over the whole vocabulary; with `vocab_start` the logits are
// the columns [vocab_start, vocab_start + V) of a split vocabulary, and only
// the tokens whose label falls there take their label's term.
template <typename T>
StatusOr<CpuKernel> PlanCrossEntropy(const Op& op, Views in, Views out) {
  const TensorView logits = in[0], labels = in[1], y = out[0];
  if (labels.dtype != DType::kI64) return CannotRun(op) << "labels that are not i64";
  const int64_t n = labels.num_elements(), vocab = logits.shape.back();
  const int64_t denominator = op.GetInt("denominator", std::max<int64_t>(n, 1));
  if (denominator < 1) {
    return InvalidArgument(op.loc())
           << op.Name() << " denominator must be >= 1, got " << denominator;
  }
  const double scale = op.GetFloat("scale", 1.0) / static_cast<double>(denominator);
  const bool loss = op.kind() == OpKind::kCrossEntropy;
  const bool given_lse = in.size() == 3;
  const bool piece = op.FindAttr("vocab_start") != nullptr;  // of a split vocabulary
  const TensorView lse_in = given_lse ? in[2] : TensorView{};
  const int64_t start = op.GetInt("vocab_start", 0);
  const SourceLoc loc = op.loc();
  const std::string name = op.Name();
  return CpuKernel([=]() -> Status {
    const T* l = logits.as<T>();
    const int64_t* lab = labels.as<int64_t>();
    DISTIR_RETURN_IF_ERROR(CheckLabels(loc, name, lab, n, vocab, piece));
    double sum = 0;
    for (int64_t r = 0; r < n; ++r) {
      const T* row = l + r * vocab;
      const double lse = given_lse ? static_cast<double>(lse_in.as<T>()[r]) : LogSumExp(row, vocab);
      const int64_t label = lab[r] - start;  // in [0, vocab) when this piece holds it
      const bool here = label >= 0 && label < vocab;
      if (loss) {
        if (here) sum += lse - static_cast<double>(row[label]);
        continue;
      }
      T* dl = y.as<T>() + r * vocab;
      for (int64_t c = 0; c < vocab; ++c) {
        const double p = std::exp(static_cast<double>(row[c]) - lse);
        dl[c] = static_cast<T>(scale * (p - (c == label ? 1.0 : 0.0)));
      }
    }
    if (loss) *y.as<T>() = static_cast<T>(sum * scale);
    return Status::Ok();
  });
}

template <typename T>
StatusOr<CpuKernel> PlanEmbeddingGrad(const Op& op, Views in, Views out) {
  const TensorView ids = in[0], dy = in[1], dw = out[0];
  if (ids.dtype != DType::kI64) return CannotRun(op) << "ids that are not i64";
  const int64_t n = ids.num_elements(), width = dw.shape[1], rows = dw.shape[0];
  const SourceLoc loc = op.loc();
  return CpuKernel([=]() -> Status {
    std::vector<double> acc(static_cast<size_t>(rows * width), 0.0);
    const int64_t* id = ids.as<int64_t>();
    for (int64_t r = 0; r < n; ++r) {
      if (id[r] < 0 || id[r] >= rows) {
        return InvalidArgument(loc) << "EmbeddingGrad id " << id[r] << " at " << r
                                    << " is outside [0, num_rows = " << rows << ")";
      }
      for (int64_t c = 0; c < width; ++c) acc[id[r] * width + c] += dy.as<T>()[r * width + c];
    }
    for (size_t i = 0; i < acc.size(); ++i) dw.as<T>()[i] = static_cast<T>(acc[i]);
    return Status::Ok();
  });
}

}  // namespace

bool IsTransformerOp(OpKind kind) {
  switch (kind) {
    case OpKind::kFlashAttention:
    case OpKind::kFlashAttentionGrad:
    case OpKind::kRope:
    case OpKind::kLogSumExp:
    case OpKind::kCrossEntropy:
    case OpKind::kCrossEntropyGrad:
    case OpKind::kEmbeddingGrad:
      return true;
    default:
      return false;
  }
}

template <typename T>
StatusOr<CpuKernel> PlanTransformerOp(const Op& op, Views in, Views out) {
  switch (op.kind()) {
    case OpKind::kFlashAttention:
    case OpKind::kFlashAttentionGrad:
      return PlanFlashAttention<T>(op, in, out);
    case OpKind::kRope:
      return PlanRope<T>(op, in, out);
    case OpKind::kLogSumExp:
      return PlanLogSumExp<T>(in, out);
    case OpKind::kCrossEntropy:
    case OpKind::kCrossEntropyGrad:
      return PlanCrossEntropy<T>(op, in, out);
    case OpKind::kEmbeddingGrad:
      return PlanEmbeddingGrad<T>(op, in, out);
    default:
      return CannotRun(op) << "not a transformer op";
  }
}

template StatusOr<CpuKernel> PlanTransformerOp<float>(const Op&, Views, Views);
template StatusOr<CpuKernel> PlanTransformerOp<double>(const Op&, Views, Views);

}  // namespace distir::backend
