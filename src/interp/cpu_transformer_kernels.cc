// Reference kernels of the fused transformer ops (docs/ir.md "Transformer
// ops"), in double: FlashAttention and its gradient (computed row by row from
// the log-sum-exp, as FlashAttention-2 does, so no s x s tensor is formed),
// Rope, LogSumExp, CrossEntropy and its gradient, and EmbeddingGrad. Each gradient is
// the adjoint of its forward kernel, checked by central differences in
// tests/unit/interp/cpu_transformer_ops_test.cc. Part of RegisterCpuKernels().

#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/cpu_kernels.h"

namespace distir::cpu {
namespace {

// Extents of q [b, h, s, d] and k/v [b, g, t, d]; query head `hh` reads
// key/value head hh / (h / g): consecutive query heads share a group, as
// Megatron's and HuggingFace's grouped-query attention lay them out.
struct Attention {
  int64_t b, h, s, d, g, t;
  double scale;
  bool causal;

  int64_t QRow(int64_t bi, int64_t hi, int64_t i) const { return ((bi * h + hi) * s + i) * d; }
  int64_t KRow(int64_t bi, int64_t hi, int64_t j) const {
    return ((bi * g + hi / (h / g)) * t + j) * d;
  }
  // Keys query i sees: all t, or with `causal` those j <= i.
  int64_t Keys(int64_t i) const { return causal ? std::min(t, i + 1) : t; }
};

Attention AttentionOf(const Op& op, const DenseTensor& q, const DenseTensor& k) {
  Attention a{q.shape[0], q.shape[1], q.shape[2], q.shape[3], k.shape[1], k.shape[2], 0, false};
  a.scale = op.GetFloat("scale", a.d > 0 ? 1 / std::sqrt(static_cast<double>(a.d)) : 1.0);
  a.causal = op.GetInt("causal", 0) != 0;
  return a;
}

double Dot(const double* x, const double* y, int64_t n) {
  double sum = 0;
  for (int64_t c = 0; c < n; ++c) sum += x[c] * y[c];
  return sum;
}

// o_i = sum_j softmax_j(scale q_i . k_j) v_j and lse_i = log sum_j exp(scale q_i . k_j).
Result FlashAttentionKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& q = in[0].tensor();
  const DenseTensor& k = in[1].tensor();
  const DenseTensor& v = in[2].tensor();
  const Attention a = AttentionOf(op, q, k);
  DenseTensor o{q.dtype, q.shape, std::vector<double>(q.values.size(), 0.0)};
  DenseTensor lse{DType::kF64, {a.b, a.h, a.s}, std::vector<double>(a.b * a.h * a.s)};
  std::vector<double> scores(static_cast<size_t>(a.t));
  for (int64_t bh = 0; bh < a.b * a.h; ++bh) {
    const int64_t bi = bh / a.h, hi = bh % a.h;
    for (int64_t i = 0; i < a.s; ++i) {
      const double* qi = q.values.data() + a.QRow(bi, hi, i);
      const int64_t keys = a.Keys(i);
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        scores[j] = a.scale * Dot(qi, k.values.data() + a.KRow(bi, hi, j), a.d);
        m = std::max(m, scores[j]);
      }
      for (int64_t j = 0; j < keys; ++j) sum += std::exp(scores[j] - m);
      const double l = keys > 0 ? m + std::log(sum) : m;
      lse.values[bh * a.s + i] = l;
      double* oi = o.values.data() + a.QRow(bi, hi, i);
      for (int64_t j = 0; j < keys; ++j) {
        const double p = std::exp(scores[j] - l);
        const double* vj = v.values.data() + a.KRow(bi, hi, j);
        for (int64_t c = 0; c < a.d; ++c) oi[c] += p * vj[c];
      }
    }
  }
  return Values{MakeResult(types[0], std::move(o)), MakeResult(types[1], std::move(lse))};
}

// FlashAttention-2's backward (Dao 2023, Algorithm 2) without tiling: with
// P_ij = exp(scale q_i . k_j - lse_i) and D_i = do_i . o_i,
//   dv_j += P_ij do_i,  dS_ij = P_ij (do_i . v_j - D_i),
//   dq_i += scale dS_ij k_j,  dk_j += scale dS_ij q_i;
// dk and dv sum over the query heads of their group.
Result FlashAttentionGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& q = in[0].tensor();
  const DenseTensor& k = in[1].tensor();
  const DenseTensor& v = in[2].tensor();
  const DenseTensor& o = in[3].tensor();
  const DenseTensor& lse = in[4].tensor();
  const DenseTensor& dout = in[5].tensor();
  const Attention a = AttentionOf(op, q, k);
  DenseTensor dq{q.dtype, q.shape, std::vector<double>(q.values.size(), 0.0)};
  DenseTensor dk{k.dtype, k.shape, std::vector<double>(k.values.size(), 0.0)};
  DenseTensor dv{v.dtype, v.shape, std::vector<double>(v.values.size(), 0.0)};
  for (int64_t bh = 0; bh < a.b * a.h; ++bh) {
    const int64_t bi = bh / a.h, hi = bh % a.h;
    for (int64_t i = 0; i < a.s; ++i) {
      const int64_t qr = a.QRow(bi, hi, i);
      const double* qi = q.values.data() + qr;
      const double* doi = dout.values.data() + qr;
      const double di = Dot(doi, o.values.data() + qr, a.d);
      for (int64_t j = 0; j < a.Keys(i); ++j) {
        const int64_t kr = a.KRow(bi, hi, j);
        const double p =
            std::exp(a.scale * Dot(qi, k.values.data() + kr, a.d) - lse.values[bh * a.s + i]);
        const double ds = p * (Dot(doi, v.values.data() + kr, a.d) - di);
        for (int64_t c = 0; c < a.d; ++c) {
          dv.values[kr + c] += p * doi[c];
          dq.values[qr + c] += a.scale * ds * k.values[kr + c];
          dk.values[kr + c] += a.scale * ds * qi[c];
        }
      }
    }
  }
  return Values{MakeResult(types[0], std::move(dq)), MakeResult(types[1], std::move(dk)),
                MakeResult(types[2], std::move(dv))};
}

// Rotary embedding, rotate-half layout (GPT-NeoX, HuggingFace LLaMA, Megatron's
// default): with x1 = x[..., :d/2], x2 = x[..., d/2:] and cos/sin [s, d/2],
// y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin. A rotation per pair, so the
// gradient is the inverse rotation: Rope(dy, cos, -sin).
Result RopeKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  const std::vector<double>& cs = in[1].tensor().values;
  const std::vector<double>& sn = in[2].tensor().values;
  const int64_t s = x.shape[x.shape.size() - 2], d = x.shape.back(), half = d / 2;
  const int64_t outer = Product(x.shape, 0, x.shape.size() - 2);
  DenseTensor y{x.dtype, x.shape, std::vector<double>(x.values.size())};
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < s; ++p) {
      const int64_t row = (o * s + p) * d;
      for (int64_t c = 0; c < half; ++c) {
        const double x1 = x.values[row + c], x2 = x.values[row + half + c];
        const double cosine = cs[p * half + c], sine = sn[p * half + c];
        y.values[row + c] = x1 * cosine - x2 * sine;
        y.values[row + half + c] = x2 * cosine + x1 * sine;
      }
    }
  }
  return One(MakeResult(types[0], std::move(y)));
}

// log sum_c exp(row[c]), stably.
double LogSumExp(const double* row, int64_t n) {
  double m = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t c = 0; c < n; ++c) m = std::max(m, row[c]);
  for (int64_t c = 0; c < n; ++c) sum += std::exp(row[c] - m);
  return m + std::log(sum);
}

// The tokens of CrossEntropy(logits [..., V], labels [...][, lse [...]]) and
// their denominator: the `denominator` attribute (a microbatch of a larger
// batch divides by the global token count) or the token count. With `lse`
// (the log-sum-exp of each token's whole row) and `vocab_start` the logits
// are the columns [vocab_start, vocab_start + V) of a vocabulary split across
// devices: labels outside them are another piece's (Megatron's
// vocab-parallel loss). Without `vocab_start` they are the whole vocabulary.
struct Tokens {
  int64_t n = 0;
  int64_t vocab = 0;
  int64_t vocab_start = 0;
  bool piece = false;  // `vocab_start` given: labels beyond the columns are others'
  double denominator = 1;
  Shape labels;
  const std::vector<double>* lse = nullptr;

  bool Here(int64_t r) const { return labels[r] >= vocab_start && labels[r] < vocab_start + vocab; }
  double Lse(int64_t r, const double* row) const {
    return lse != nullptr ? (*lse)[r] : LogSumExp(row, vocab);
  }
};

StatusOr<Tokens> TokensOf(const Op& op, Args in) {
  Tokens t;
  t.vocab = in[0].tensor().shape.back();
  t.labels = Ints(in[1]);
  t.n = static_cast<int64_t>(t.labels.size());
  if (in.size() == 3) t.lse = &in[2].tensor().values;
  t.vocab_start = op.GetInt("vocab_start", 0);
  t.piece = op.FindAttr("vocab_start") != nullptr;
  const int64_t denominator = op.GetInt("denominator", std::max<int64_t>(t.n, 1));
  if (denominator < 1) {
    return InvalidArgument(op.loc())
           << op.Name() << " denominator must be >= 1, got " << denominator;
  }
  t.denominator = static_cast<double>(denominator);
  for (int64_t r = 0; r < t.n; ++r) {
    if (t.labels[r] < 0 || (!t.piece && t.labels[r] >= t.vocab)) {
      return InvalidArgument(op.loc()) << op.Name() << " label " << t.labels[r] << " of token " << r
                                       << " is outside the vocabulary [0, " << t.vocab << ")";
    }
  }
  return t;
}

// log sum_c exp(x[c]) over the last dim: the rows of a [..., n] tensor.
Result LogSumExpKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const DenseTensor& x = in[0].tensor();
  const int64_t n = x.shape.back();
  DenseTensor y{DType::kF64, types[0].shape(), {}};
  for (int64_t r = 0; r < y.NumElements(); ++r)
    y.values.push_back(LogSumExp(x.values.data() + r * n, n));
  return One(MakeResult(types[0], std::move(y)));
}

// sum over tokens of (logsumexp(logits_r) - logits_r[label_r]) / denominator,
// over the tokens whose label is in this piece of the vocabulary (all of
// them without `lse`).
Result CrossEntropyKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(Tokens t, TokensOf(op, in));
  const std::vector<double>& logits = in[0].tensor().values;
  double sum = 0;
  for (int64_t r = 0; r < t.n; ++r) {
    if (!t.Here(r)) continue;
    const double* row = logits.data() + r * t.vocab;
    sum += t.Lse(r, row) - row[t.labels[r] - t.vocab_start];
  }
  return One(MakeResult(types[0], DenseTensor{DType::kF64, {}, {sum / t.denominator}}));
}

// scale (softmax(logits_r) - onehot(label_r)) / denominator; `scale` is the
// loss gradient (1 by default; the loss scale under fp16 loss scaling).
Result CrossEntropyGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(Tokens t, TokensOf(op, in));
  const double factor = op.GetFloat("scale", 1.0) / t.denominator;
  DenseTensor dl = in[0].tensor();
  for (int64_t r = 0; r < t.n; ++r) {
    double* row = dl.values.data() + r * t.vocab;
    const double lse = t.Lse(r, row);
    for (int64_t c = 0; c < t.vocab; ++c) row[c] = factor * std::exp(row[c] - lse);
    if (t.Here(r)) row[t.labels[r] - t.vocab_start] -= factor;
  }
  return One(MakeResult(types[0], std::move(dl)));
}

// dW[ids[r], :] += dy[r, :]: the adjoint of Gather(W, ids) {axis = 0}.
Result EmbeddingGradKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  const Shape ids = Ints(in[0]);
  const DenseTensor& dy = in[1].tensor();
  const int64_t rows = op.GetInt("num_rows", 0), width = dy.shape.back();
  DenseTensor dw{dy.dtype, {rows, width}, std::vector<double>(rows * width, 0.0)};
  for (size_t r = 0; r < ids.size(); ++r) {
    if (ids[r] < 0 || ids[r] >= rows) {
      return InvalidArgument(op.loc()) << "EmbeddingGrad id " << ids[r] << " at " << r
                                       << " is outside [0, num_rows = " << rows << ")";
    }
    for (int64_t c = 0; c < width; ++c) {
      dw.values[ids[r] * width + c] += dy.values[static_cast<int64_t>(r) * width + c];
    }
  }
  return One(MakeResult(types[0], std::move(dw)));
}

}  // namespace

void RegisterTransformerKernels(CpuDomain& domain) {
  domain.Register(OpKind::kFlashAttention, FlashAttentionKernel);
  domain.Register(OpKind::kFlashAttentionGrad, FlashAttentionGradKernel);
  domain.Register(OpKind::kRope, RopeKernel);
  domain.Register(OpKind::kLogSumExp, LogSumExpKernel);
  domain.Register(OpKind::kCrossEntropy, CrossEntropyKernel);
  domain.Register(OpKind::kCrossEntropyGrad, CrossEntropyGradKernel);
  domain.Register(OpKind::kEmbeddingGrad, EmbeddingGradKernel);
}

}  // namespace distir::cpu
