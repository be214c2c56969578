// Shape rules of the fused transformer ops (docs/ir.md "Transformer ops"):
// FlashAttention and its gradient (grouped-query attention: g key/value heads
// shared by h query heads, g dividing h), Rope, the cross-entropy loss and its
// gradient, and EmbeddingGrad (the scatter-add adjoint of an embedding
// Gather). Statistics and losses are kept in the accumulation type: f32, or
// f64 when the inputs are f64. Part of RegisterShapeRules().

#include <string>

#include "interp/shape_util.h"

namespace distir::shape {
namespace {

// f32 for every float type but f64 (flash attention's softmax statistics and
// the loss are accumulated in f32 whatever the compute dtype, as Megatron does).
DType AccumulationType(DType dtype) { return dtype == DType::kF64 ? DType::kF64 : DType::kF32; }

Status RequireRank(const Op& op, const Type& t, std::string_view name, int64_t rank) {
  if (t.rank() == rank) return Status::Ok();
  return InvalidArgument(op.loc())
         << OpName(op) << " " << name << " must have rank " << rank << ", got " << t.ToString();
}

Status RequireFloat(const Op& op, const Type& t, std::string_view name) {
  if (IsFloat(t.dtype())) return Status::Ok();
  return InvalidArgument(op.loc())
         << OpName(op) << " " << name << " must be a float tensor, got " << t.ToString();
}

Status RequireIntegral(const Op& op, const Type& t, std::string_view name) {
  if (IsIntegral(t.dtype())) return Status::Ok();
  return InvalidArgument(op.loc())
         << OpName(op) << " " << name << " must be an integer tensor, got " << t.ToString();
}

Status DimMismatch(const Op& op, std::string_view what, int64_t a, int64_t b) {
  return InvalidArgument(op.loc()) << OpName(op) << " " << what << " differ: " << a << " and " << b;
}

// q [b, h, s, d], k and v [b, g, t, d] with g dividing h; the types of (o, lse).
StatusOr<Types> AttentionTypes(const Op& op, const Type& q, const Type& k, const Type& v) {
  DISTIR_RETURN_IF_ERROR(RequireFloat(op, q, "q"));
  for (auto [t, name] : {std::pair{&q, "q"}, std::pair{&k, "k"}, std::pair{&v, "v"}}) {
    DISTIR_RETURN_IF_ERROR(RequireRank(op, *t, name, 4));
  }
  DISTIR_RETURN_IF_ERROR(RequireLike(op, v, "v", k, "k"));
  if (k.dtype() != q.dtype()) {
    return InvalidArgument(op.loc()) << OpName(op) << " k must have the dtype of q, got "
                                     << k.ToString() << " and " << q.ToString();
  }
  const Shape& qs = ShapeOf(q);
  const Shape& ks = ShapeOf(k);
  if (!DimsFit(qs[0], ks[0])) return DimMismatch(op, "batch sizes of q and k", qs[0], ks[0]);
  if (!DimsFit(qs[3], ks[3])) return DimMismatch(op, "head widths of q and k", qs[3], ks[3]);
  const int64_t h = qs[1], g = ks[1];
  if (h != kDynamicDim && g != kDynamicDim && (g == 0 ? h != 0 : h % g != 0)) {
    return InvalidArgument(op.loc()) << OpName(op) << " key/value heads must divide the query "
                                     << "heads (grouped-query attention), got " << h
                                     << " query heads and " << g << " key/value heads";
  }
  const Type lse = q.WithShape(Shape{qs[0], qs[1], qs[2]}).WithDType(AccumulationType(q.dtype()));
  return Types{q, lse};
}

// FlashAttention(q, k, v) -> (o [b, h, s, d], lse [b, h, s]).
Result InferFlashAttention(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  return AttentionTypes(op, in[0], in[1], in[2]);
}

// FlashAttentionGrad(q, k, v, o, lse, do) -> (dq, dk, dv).
Result InferFlashAttentionGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_ASSIGN_OR_RETURN(Types forward, AttentionTypes(op, in[0], in[1], in[2]));
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[3], "o", forward[0], "q"));
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[4], "lse", forward[1], "the forward's lse"));
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[5], "do", forward[0], "q"));
  return Types{in[0], in[1], in[2]};
}

// Rope(x [..., s, d], cos [s, d/2], sin [s, d/2]) -> like x.
Result InferRope(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(RequireFloat(op, in[0], "x"));
  DISTIR_RETURN_IF_ERROR(RequireFloat(op, in[1], "cos"));
  DISTIR_RETURN_IF_ERROR(RequireLike(op, in[2], "sin", in[1], "cos"));
  if (in[0].rank() < 2) {
    return InvalidArgument(op.loc())
           << "Rope x must have rank >= 2 ([..., s, d]), got " << in[0].ToString();
  }
  DISTIR_RETURN_IF_ERROR(RequireRank(op, in[1], "cos", 2));
  const Shape& x = ShapeOf(in[0]);
  const Shape& c = ShapeOf(in[1]);
  const int64_t s = x[x.size() - 2], d = x.back();
  if (d != kDynamicDim && d % 2 != 0) {
    return InvalidArgument(op.loc())
           << "Rope x must have an even last extent (rotated pairs), got " << d;
  }
  if (!DimsFit(s, c[0])) return DimMismatch(op, "sequence lengths of x and cos", s, c[0]);
  if (d != kDynamicDim && !DimsFit(d / 2, c[1])) {
    return DimMismatch(op, "half head width of x and the width of cos", d / 2, c[1]);
  }
  return One(in[0]);
}

// logits [..., V] and labels [...] (integers); the loss type (rank 0).
StatusOr<Type> CrossEntropyLossType(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(RequireFloat(op, in[0], "logits"));
  DISTIR_RETURN_IF_ERROR(RequireIntegral(op, in[1], "labels"));
  if (in[0].rank() < 1) {
    return InvalidArgument(op.loc()) << OpName(op) << " logits must have rank >= 1 ([..., vocab]), "
                                     << "got " << in[0].ToString();
  }
  DISTIR_RETURN_IF_ERROR(RequireRank(op, in[1], "labels", in[0].rank() - 1));
  const Shape& logits = ShapeOf(in[0]);
  const Shape& labels = ShapeOf(in[1]);
  if (!ShapesFit(Shape(logits.begin(), logits.end() - 1), labels)) {
    return InvalidArgument(op.loc())
           << OpName(op) << " labels must have the shape of logits "
           << "without the vocabulary dim, got " << in[1].ToString() << " for " << in[0].ToString();
  }
  if (in.size() == 3) {
    DISTIR_RETURN_IF_ERROR(RequireFloat(op, in[2], "lse"));
    if (!ShapesFit(labels, ShapeOf(in[2]))) {
      return InvalidArgument(op.loc()) << OpName(op) << " lse must have the shape of labels, got "
                                       << in[2].ToString() << " for " << in[1].ToString();
    }
  }
  return in[0].WithShape(Shape{}).WithDType(AccumulationType(in[0].dtype()));
}

// LogSumExp(x [..., n]) -> [...], in x's accumulation type (f32 for 16-bit x).
Result InferLogSumExp(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(RequireFloat(op, in[0], "x"));
  if (in[0].rank() < 1) {
    return InvalidArgument(op.loc())
           << OpName(op) << " x must have rank >= 1, got " << in[0].ToString();
  }
  const Shape& x = ShapeOf(in[0]);
  return One(
      in[0].WithShape(Shape(x.begin(), x.end() - 1)).WithDType(AccumulationType(in[0].dtype())));
}

Result InferCrossEntropy(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(Type loss, CrossEntropyLossType(op, in));
  return One(loss);
}

Result InferCrossEntropyGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CrossEntropyLossType(op, in).status());
  return One(in[0]);
}

// EmbeddingGrad(ids [...], dy [..., d]) {num_rows} -> dW [num_rows, d].
Result InferEmbeddingGrad(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(CheckCompute(op, in).status());
  DISTIR_RETURN_IF_ERROR(RequireIntegral(op, in[0], "ids"));
  DISTIR_RETURN_IF_ERROR(RequireFloat(op, in[1], "dy"));
  DISTIR_ASSIGN_OR_RETURN(int64_t rows, RequiredInt(op, "num_rows"));
  if (rows < 0) {
    return InvalidArgument(op.loc()) << "EmbeddingGrad num_rows must be >= 0, got " << rows;
  }
  DISTIR_RETURN_IF_ERROR(RequireRank(op, in[1], "dy", in[0].rank() + 1));
  const Shape& dy = ShapeOf(in[1]);
  if (!ShapesFit(Shape(dy.begin(), dy.end() - 1), ShapeOf(in[0]))) {
    return InvalidArgument(op.loc())
           << "EmbeddingGrad dy must have the shape of ids plus the "
           << "embedding width, got " << in[1].ToString() << " for " << in[0].ToString();
  }
  return One(in[1].WithShape(Shape{rows, dy.back()}));
}

}  // namespace

void RegisterTransformerShapeRules(ShapeDomain& domain) {
  domain.Register(OpKind::kFlashAttention, InferFlashAttention);
  domain.Register(OpKind::kFlashAttentionGrad, InferFlashAttentionGrad);
  domain.Register(OpKind::kRope, InferRope);
  domain.Register(OpKind::kLogSumExp, InferLogSumExp);
  domain.Register(OpKind::kCrossEntropy, InferCrossEntropy);
  domain.Register(OpKind::kCrossEntropyGrad, InferCrossEntropyGrad);
  domain.Register(OpKind::kEmbeddingGrad, InferEmbeddingGrad);
}

}  // namespace distir::shape
