// The factor rule of every op (factor_rule.h): one row per op in
// BuildFactorRule's table, built from a handful of shapes of rule
// (elementwise, contraction, reduction, reshape, ...). Adding an op to the
// IR means adding it to one of the lists below, or a builder of its own.

#include <algorithm>
#include <numeric>

#include "sharding/factor_rule.h"

namespace distir::sharding {

int FactorRule::AddFactor(int64_t size, bool need_replication) {
  Factor f;
  f.size = size;
  f.need_replication = need_replication;
  factors.push_back(f);
  return static_cast<int>(factors.size()) - 1;
}

bool FactorRule::IsPassThrough() const {
  for (int f = 0; f < static_cast<int>(factors.size()); ++f) {
    if (factors[f].need_replication) return false;
    for (const TensorFactors& r : results) {
      bool found = false;
      for (const auto& dim : r) found = found || std::find(dim.begin(), dim.end(), f) != dim.end();
      if (!found) return false;
    }
  }
  return true;
}

namespace {

using Shape = std::vector<int64_t>;

Shape ShapeOf(const Value* v) {
  const Type& t = v->type();
  return t.is_tensor() ? std::vector<int64_t>(t.shape()) : Shape{};
}

// One factor per dim of `shape`; dims of extent 1 get none.
TensorFactors OneFactorPerDim(FactorRule& rule, const Shape& shape) {
  TensorFactors tf(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) tf[d] = {rule.AddFactor(shape[d])};
  }
  return tf;
}

// numpy broadcasting: `operand` aligned to `result` from the right; a dim of
// the operand that equals the result's shares its factor, a 1 broadcasts.
TensorFactors Broadcast(const TensorFactors& result, const Shape& result_shape,
                        const Shape& operand) {
  TensorFactors tf(operand.size());
  size_t off = result_shape.size() - std::min(result_shape.size(), operand.size());
  for (size_t d = 0; d < operand.size() && d + off < result_shape.size(); ++d) {
    if (operand[d] == result_shape[d + off]) tf[d] = result[d + off];
  }
  return tf;
}

// Elementwise n-ary ops (with broadcasting) and unary ops.
FactorRule Elementwise(const Op& op, PartialFlow flow) {
  FactorRule rule;
  Shape out = ShapeOf(op.result(0));
  TensorFactors res = OneFactorPerDim(rule, out);
  for (const Value* in : op.inputs()) rule.operands.push_back(Broadcast(res, out, ShapeOf(in)));
  for (int i = 0; i < op.num_results(); ++i) rule.results.push_back(res);
  rule.partial_flow = flow;
  return rule;
}

// Dims >= `from` (or exactly `axes`) of the operand and the result cannot be
// sharded (Softmax, LayerNorm, Trilu): everything else passes through.
FactorRule ReplicateDims(const Op& op, const std::vector<int64_t>& axes) {
  FactorRule rule = Elementwise(op, PartialFlow::kNone);
  for (int64_t a : axes) {
    for (int f : rule.results[0][a]) rule.factors[f].need_replication = true;
  }
  return rule;
}

int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

FactorRule SoftmaxRule(const Op& op) {
  int64_t rank = ShapeOf(op.input(0)).size();
  return ReplicateDims(op, {NormAxis(op.GetInt("axis", -1), rank)});
}

FactorRule TriluRule(const Op& op) {
  int64_t rank = ShapeOf(op.input(0)).size();
  return ReplicateDims(op, Range(std::max<int64_t>(rank - 2, 0), rank));
}

// LayerNormalization(x, scale[, bias]) -> y[, mean, inv_std]: the normalized
// dims need replication; scale and bias map to them; the statistics keep the
// leading dims.
FactorRule LayerNormRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  int64_t axis = NormAxis(op.GetInt("axis", -1), static_cast<int64_t>(x.size()));
  TensorFactors xf = OneFactorPerDim(rule, x);
  for (size_t d = static_cast<size_t>(axis); d < x.size(); ++d) {
    for (int f : xf[d]) rule.factors[f].need_replication = true;
  }
  rule.operands.push_back(xf);
  Shape normalized(x.begin() + axis, x.end());
  TensorFactors nf(xf.begin() + axis, xf.end());
  for (int i = 1; i < op.num_inputs(); ++i)
    rule.operands.push_back(Broadcast(nf, normalized, ShapeOf(op.input(i))));
  rule.results.push_back(xf);
  TensorFactors stats = xf;
  for (size_t d = static_cast<size_t>(axis); d < x.size(); ++d) stats[d].clear();
  for (int i = 1; i < op.num_results(); ++i) rule.results.push_back(stats);
  return rule;
}

// LayerNormalizationGrad(x, scale, dy) -> dx, dscale, dbias and
// RMSNormalizationGrad(x, scale, dy) -> dx, dscale: dscale and dbias sum over
// the leading dims, so sharding those leaves them partial(sum).
FactorRule NormGradRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  int64_t axis = NormAxis(op.GetInt("axis", -1), static_cast<int64_t>(x.size()));
  TensorFactors xf = OneFactorPerDim(rule, x);
  for (size_t d = static_cast<size_t>(axis); d < x.size(); ++d) {
    for (int f : xf[d]) rule.factors[f].need_replication = true;
  }
  Shape normalized(x.begin() + axis, x.end());
  TensorFactors nf(xf.begin() + axis, xf.end());
  rule.operands = {xf, Broadcast(nf, normalized, ShapeOf(op.input(1))), xf};
  rule.results = {xf};
  for (int r = 1; r < op.num_results(); ++r)
    rule.results.push_back(Broadcast(nf, normalized, ShapeOf(op.result(r))));
  return rule;
}

// MatMul with numpy semantics: A[..., m, k] x B[..., k, n] -> C[..., m, n]
// (a rank-1 operand has no m or n). Batch dims broadcast from the right.
struct MatMulFactors {
  TensorFactors a, b, c;
};

MatMulFactors MatMulShape(FactorRule& rule, const Shape& a, const Shape& b, const Shape& c) {
  MatMulFactors mf;
  size_t batch = c.size() - (a.size() > 1 ? 1 : 0) - (b.size() > 1 ? 1 : 0);
  Shape cb(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(batch));
  TensorFactors bf = OneFactorPerDim(rule, cb);
  int k = rule.AddFactor(a.back());
  mf.c = bf;
  int m = -1, n = -1;
  if (a.size() > 1) {
    m = a[a.size() - 2] == 1 ? -1 : rule.AddFactor(a[a.size() - 2]);
    mf.c.push_back(m < 0 ? std::vector<int>{} : std::vector<int>{m});
  }
  if (b.size() > 1) {
    n = b.back() == 1 ? -1 : rule.AddFactor(b.back());
    mf.c.push_back(n < 0 ? std::vector<int>{} : std::vector<int>{n});
  }
  auto dim = [](int f) { return f < 0 ? std::vector<int>{} : std::vector<int>{f}; };
  auto batch_of = [&](const Shape& s, size_t own) {
    Shape sb(s.begin(), s.end() - static_cast<std::ptrdiff_t>(own));
    return Broadcast(bf, cb, sb);
  };
  if (a.size() > 1) {
    mf.a = batch_of(a, 2);
    mf.a.push_back(dim(m));
  }
  mf.a.push_back(dim(a.back() == 1 ? -1 : k));
  if (b.size() > 1) {
    mf.b = batch_of(b, 2);
    mf.b.push_back(dim(b[b.size() - 2] == 1 ? -1 : k));
    mf.b.push_back(dim(n));
  } else {
    mf.b.push_back(dim(k));
  }
  return mf;
}

FactorRule MatMulRule(const Op& op) {
  FactorRule rule;
  MatMulFactors mf =
      MatMulShape(rule, ShapeOf(op.input(0)), ShapeOf(op.input(1)), ShapeOf(op.result(0)));
  rule.operands = {mf.a, mf.b};
  rule.results = {mf.c};
  rule.partial_flow = PartialFlow::kAny;
  return rule;
}

// MatMulGrad(A, B, dC) -> dA = dC B^T, dB = A^T dC: every factor is summed
// over for the gradient that lacks it (n for dA, m for dB; a broadcast batch
// for the smaller operand).
FactorRule MatMulGradRule(const Op& op) {
  FactorRule rule;
  MatMulFactors mf =
      MatMulShape(rule, ShapeOf(op.input(0)), ShapeOf(op.input(1)), ShapeOf(op.input(2)));
  rule.operands = {mf.a, mf.b, mf.c};
  rule.results = {mf.a, mf.b};
  rule.partial_flow = PartialFlow::kNone;
  return rule;
}

// Gemm(A, B[, C]) = alpha op(A) op(B) + beta C. A sharded k leaves the result
// partial; the bias must then be added once per reduction group, not once
// per device: partition gives C only to the group's first device (MLIR's
// init-once rule, SHARDING.md G26), so C itself must not be partial.
FactorRule GemmRule(const Op& op) {
  FactorRule rule;
  Shape a = ShapeOf(op.input(0));
  Shape b = ShapeOf(op.input(1));
  bool ta = op.GetInt("transA", 0) != 0;
  bool tb = op.GetInt("transB", 0) != 0;
  int m = rule.AddFactor(ta ? a[1] : a[0]);
  int k = rule.AddFactor(ta ? a[0] : a[1]);
  int n = rule.AddFactor(tb ? b[0] : b[1]);
  rule.operands.push_back(ta ? TensorFactors{{k}, {m}} : TensorFactors{{m}, {k}});
  rule.operands.push_back(tb ? TensorFactors{{n}, {k}} : TensorFactors{{k}, {n}});
  TensorFactors c = {{m}, {n}};
  if (op.num_inputs() == 3)
    rule.operands.push_back(Broadcast(c, ShapeOf(op.result(0)), ShapeOf(op.input(2))));
  rule.results = {c};
  // Linear in A and B (alpha scales), but not in A and C together.
  rule.partial_flow = op.num_inputs() == 3 ? PartialFlow::kNone : PartialFlow::kAny;
  return rule;
}

// ReduceSum/ReduceMean over `axes` (all when absent), keepdims or not. A
// reduced dim sharded leaves the sum partial; a mean is not a sum of local
// means, so ReduceMean's reduced dims need replication.
FactorRule ReduceRule(const Op& op, bool is_sum) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  std::vector<int64_t> axes;
  if (const Attribute* a = op.FindAttr("axes")) axes = a->AsInts();
  if (axes.empty() && op.num_inputs() < 2) axes = Range(0, static_cast<int64_t>(x.size()));
  for (int64_t& a : axes) a = NormAxis(a, static_cast<int64_t>(x.size()));
  TensorFactors xf = OneFactorPerDim(rule, x);
  rule.operands.push_back(xf);
  if (op.num_inputs() > 1) rule.operands.push_back(TensorFactors(ShapeOf(op.input(1)).size()));
  bool keep = op.GetInt("keepdims", 1) != 0;
  TensorFactors out;
  for (size_t d = 0; d < x.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!reduced)
      out.push_back(xf[d]);
    else if (keep)
      out.emplace_back();
    if (reduced) {
      for (int f : xf[d]) rule.factors[f].reducible = is_sum;
    }
  }
  rule.results = {out};
  rule.partial_flow = is_sum ? PartialFlow::kFirst : PartialFlow::kNone;
  return rule;
}

// MSELoss(pred, target) -> scalar: the sum over every element, divided by a
// constant, so every sharded factor leaves the loss partial(sum).
FactorRule LossRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  TensorFactors xf = OneFactorPerDim(rule, x);
  rule.operands = {xf, Broadcast(xf, x, ShapeOf(op.input(1)))};
  rule.results = {TensorFactors(ShapeOf(op.result(0)).size())};
  return rule;
}

FactorRule TransposeRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  TensorFactors xf = OneFactorPerDim(rule, x);
  std::vector<int64_t> perm(x.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (const Attribute* a = op.FindAttr("perm")) perm = a->AsInts();
  TensorFactors out;
  for (int64_t p : perm) out.push_back(xf[p]);
  rule.operands = {xf};
  rule.results = {out};
  rule.partial_flow = PartialFlow::kFirst;
  return rule;
}

// Ops whose extra operands are shapes, indices or bounds (replicated).
void MarkShapeOperands(const Op& op, FactorRule& rule, int first_shape_operand) {
  rule.shardable.assign(op.num_inputs(), true);
  for (int i = first_shape_operand; i < op.num_inputs(); ++i) {
    rule.shardable[i] = false;
    if (static_cast<int>(rule.operands.size()) <= i) rule.operands.resize(i + 1);
    rule.operands[i] = TensorFactors(ShapeOf(op.input(i)).size());
  }
}

// Reshape, Squeeze, Unsqueeze: operand 0 -> result 0 by the factorisation.
FactorRule ReshapeRule(const Op& op) {
  FactorRule rule;
  rule.operands.resize(1);
  rule.results.resize(1);
  AddReshapeFactors(ShapeOf(op.input(0)), ShapeOf(op.result(0)), rule);
  MarkShapeOperands(op, rule, 1);
  rule.partial_flow = PartialFlow::kFirst;
  return rule;
}

// Gather(data, indices, axis): index dims and the other data dims pass
// through; the gathered dim of data is summed over (absent from the result):
// a table split by rows gives a partial result, each device looking up the
// ids in its range and zeroing the others (Megatron's vocab-parallel
// embedding, golden G31; partition.cc's EmitMaskedGather).
FactorRule GatherRule(const Op& op) {
  FactorRule rule;
  Shape data = ShapeOf(op.input(0));
  Shape idx = ShapeOf(op.input(1));
  int64_t axis = NormAxis(op.GetInt("axis", 0), static_cast<int64_t>(data.size()));
  TensorFactors df = OneFactorPerDim(rule, data);
  TensorFactors inf = OneFactorPerDim(rule, idx);
  TensorFactors out(df.begin(), df.begin() + axis);
  out.insert(out.end(), inf.begin(), inf.end());
  out.insert(out.end(), df.begin() + axis + 1, df.end());
  rule.operands = {df, inf};
  rule.results = {out};
  rule.partial_flow = PartialFlow::kFirst;
  return rule;
}

// Concat and Split along `axis`: the axis needs replication, the other dims
// are shared by every operand and result.
FactorRule ConcatSplitRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.kind() == OpKind::kConcat ? op.result(0) : op.input(0));
  int64_t axis = NormAxis(op.GetInt("axis", 0), static_cast<int64_t>(x.size()));
  TensorFactors shared = OneFactorPerDim(rule, x);
  shared[axis].clear();
  auto with_axis = [&](const Value* v) {
    TensorFactors tf = shared;
    int64_t e = ShapeOf(v)[axis];
    if (e != 1) tf[axis] = {rule.AddFactor(e, true)};
    return tf;
  };
  // Split's operand 1 (the piece sizes, when given) is a shape, with no axis.
  const bool split = op.kind() == OpKind::kSplit;
  for (int i = 0; i < op.num_inputs(); ++i) {
    const Value* in = op.input(i);
    rule.operands.push_back(split && i > 0 ? TensorFactors(ShapeOf(in).size()) : with_axis(in));
  }
  for (const auto& r : op.results()) rule.results.push_back(with_axis(r.get()));
  if (split) MarkShapeOperands(op, rule, 1);
  rule.partial_flow = op.kind() == OpKind::kConcat ? PartialFlow::kAll : PartialFlow::kFirst;
  return rule;
}

// Slice, Expand: dims whose extent changes need replication (a shifted or
// broadcast window); dims kept whole pass through.
FactorRule WindowRule(const Op& op) {
  FactorRule rule;
  Shape in = ShapeOf(op.input(0));
  Shape out = ShapeOf(op.result(0));
  TensorFactors of = OneFactorPerDim(rule, out);
  TensorFactors inf = Broadcast(of, out, in);
  for (size_t d = 0; d < in.size() && op.kind() == OpKind::kSlice; ++d) {
    if (in[d] != out[d]) {
      for (int f : of[d]) rule.factors[f].need_replication = true;
      if (in[d] != 1) inf[d] = {rule.AddFactor(in[d], true)};
    }
  }
  rule.operands = {inf};
  rule.results = {of};
  MarkShapeOperands(op, rule, 1);
  rule.partial_flow = PartialFlow::kFirst;
  return rule;
}

// Ops without tensor operands (Constant, Range, ConstantOfShape, Shape): the
// result may take any sharding (a local slice of a replicated value).
FactorRule SourceRule(const Op& op) {
  FactorRule rule;
  for (const Value* in : op.inputs()) rule.operands.push_back(TensorFactors(ShapeOf(in).size()));
  rule.shardable.assign(op.num_inputs(), false);
  for (const auto& r : op.results())
    rule.results.push_back(OneFactorPerDim(rule, ShapeOf(r.get())));
  return rule;
}

// A factor of `size`, or none (-1) for an extent of 1.
int FactorOf(FactorRule& rule, int64_t size, bool need_replication = false) {
  return size == 1 ? -1 : rule.AddFactor(size, need_replication);
}

// The dim made of `factors` (major first), skipping the absent (-1) ones.
std::vector<int> Dim(std::initializer_list<int> factors) {
  std::vector<int> dim;
  for (int f : factors) {
    if (f >= 0) dim.push_back(f);
  }
  return dim;
}

// FlashAttention(q [b, h, s, d], k, v [b, g, t, d]) -> o [b, h, s, d], lse
// [b, h, s] and FlashAttentionGrad(q, k, v, o, lse, do) -> dq, dk, dv. The
// query heads are h = g x r (r = h / g query heads per key/value head, major
// g), so a split of g splits q's and k's heads together, and a split of r
// splits only q's: then dk and dv, which sum over a group's query heads,
// are partial(sum). The batch passes through; the sequence and head width
// (softmax and contraction) need replication.
FactorRule FlashAttentionRule(const Op& op) {
  FactorRule rule;
  Shape q = ShapeOf(op.input(0));
  Shape k = ShapeOf(op.input(1));
  const int64_t g = k[1];
  const int b = FactorOf(rule, q[0]);
  const int fg = FactorOf(rule, g);
  const int fr = FactorOf(rule, g > 0 ? q[1] / g : 1);
  const int s = FactorOf(rule, q[2], true);
  const int t = FactorOf(rule, k[2], true);
  const int d = FactorOf(rule, q[3], true);
  const TensorFactors qf = {Dim({b}), Dim({fg, fr}), Dim({s}), Dim({d})};
  const TensorFactors kf = {Dim({b}), Dim({fg}), Dim({t}), Dim({d})};
  const TensorFactors lse = {Dim({b}), Dim({fg, fr}), Dim({s})};
  if (op.kind() == OpKind::kFlashAttention) {
    rule.operands = {qf, kf, kf};
    rule.results = {qf, lse};
  } else {
    rule.operands = {qf, kf, kf, qf, lse, qf};
    rule.results = {qf, kf, kf};
  }
  return rule;
}

// Rope(x [..., s, d], cos [s, d/2], sin [s, d/2]): every dim of x but the
// rotated one passes through; cos and sin follow x's sequence dim.
FactorRule RopeRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  TensorFactors xf = OneFactorPerDim(rule, x);
  for (int f : xf.back()) rule.factors[f].need_replication = true;
  const TensorFactors table = {xf[x.size() - 2], Dim({FactorOf(rule, x.back() / 2, true)})};
  rule.operands = {xf, table, table};
  rule.results = {xf};
  return rule;
}

// LogSumExp(x [..., n]) -> [...]: the leading dims pass through; the last
// is reduced with kind logsumexp (pieces of a split row combine as
// log(sum exp(piece))), so a vocabulary split leaves the result partial.
FactorRule LogSumExpRule(const Op& op) {
  FactorRule rule;
  Shape x = ShapeOf(op.input(0));
  TensorFactors xf = OneFactorPerDim(rule, x);
  for (int f : xf.back()) rule.factors[f].reduction = ReductionKind::kLogSumExp;
  rule.operands = {xf};
  rule.results = {TensorFactors(xf.begin(), xf.end() - 1)};
  return rule;
}

// CrossEntropy(logits [..., V], labels [...][, lse [...]]) -> loss and
// CrossEntropyGrad -> dlogits: the token dims pass through to dlogits and are
// summed over by the loss (partial(sum), like MSELoss: a `denominator` of the
// global token count makes the partial losses sum to the global mean).
// Without lse the vocabulary needs replication (the log-sum-exp is not a
// sum). Given each token's lse, a piece of the vocabulary holds the label
// term of the tokens whose label falls in it (partition.cc sets its
// `vocab_start`), so V is summed over by the loss and passes through to
// dlogits: Megatron's vocab-parallel cross-entropy.
FactorRule CrossEntropyRule(const Op& op) {
  FactorRule rule;
  Shape logits = ShapeOf(op.input(0));
  TensorFactors lf = OneFactorPerDim(rule, logits);
  const bool given_lse = op.num_inputs() == 3;
  if (!given_lse) {
    for (int f : lf.back()) rule.factors[f].need_replication = true;
  }
  const TensorFactors tokens(lf.begin(), lf.end() - 1);
  rule.operands = {lf, tokens};
  if (given_lse) rule.operands.push_back(tokens);
  if (op.kind() == OpKind::kCrossEntropy) {
    rule.results = {TensorFactors(ShapeOf(op.result(0)).size())};
  } else {
    rule.results = {lf};
  }
  return rule;
}

// EmbeddingGrad(ids [...], dy [..., d]) -> dW [num_rows, d]: the token dims
// are summed over (partial(sum)); d passes through; the rows may be split
// (a VocabParallelEmbedding's table): each device scatters the ids its rows
// hold, the others masked (partition.cc's EmitMaskedEmbeddingGrad). dW is
// linear in dy, so a partial dy gives a partial dW (kAny; the ids are never
// partial): the position embedding's gradient, summed over a batch split
// over dp, is then reduced with the weight gradients after the microbatches
// are accumulated, as Megatron reduces it, not all-reduced in every
// microbatch before the scatter.
FactorRule EmbeddingGradRule(const Op& op) {
  FactorRule rule;
  Shape dy = ShapeOf(op.input(1));
  TensorFactors df = OneFactorPerDim(rule, dy);
  const int rows = FactorOf(rule, ShapeOf(op.result(0))[0], false);
  rule.operands = {TensorFactors(df.begin(), df.end() - 1), df};
  rule.results = {{Dim({rows}), df.back()}};
  rule.partial_flow = PartialFlow::kAny;
  return rule;
}

bool IsIn(OpKind k, std::initializer_list<OpKind> kinds) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

StatusOr<FactorRule> BuildRule(const Op& op) {
  using K = OpKind;
  K k = op.kind();
  if (IsIn(k, {K::kAdd, K::kSub, K::kSum})) return Elementwise(op, PartialFlow::kAll);
  if (IsIn(k, {K::kMul, K::kIdentity, K::kNeg, K::kCast, K::kShard}))
    return Elementwise(op, PartialFlow::kAny);
  if (k == K::kDiv) return Elementwise(op, PartialFlow::kFirst);
  if (IsIn(k, {K::kMax, K::kMin})) {
    FactorRule rule = Elementwise(op, PartialFlow::kAll);
    rule.flow_kind = k == K::kMax ? ReductionKind::kMax : ReductionKind::kMin;
    return rule;
  }
  if (IsIn(k, {K::kPow,  K::kEqual,    K::kLess,     K::kWhere,       K::kNot,
               K::kSqrt, K::kExp,      K::kRelu,     K::kGelu,        K::kErf,
               K::kTanh, K::kReluGrad, K::kGeluGrad, K::kMSELossGrad, K::kSGD,
               K::kAdam, K::kSigmoid,  K::kSin,      K::kCos,         K::kSigmoidGrad}))
    return Elementwise(op, PartialFlow::kNone);
  if (IsIn(k, {K::kSoftmax, K::kSoftmaxGrad})) return SoftmaxRule(op);
  if (k == K::kTrilu) return TriluRule(op);
  if (k == K::kLayerNormalization) return LayerNormRule(op);
  if (k == K::kRMSNormalization) return LayerNormRule(op);
  if (IsIn(k, {K::kLayerNormalizationGrad, K::kRMSNormalizationGrad})) return NormGradRule(op);
  if (IsIn(k, {K::kFlashAttention, K::kFlashAttentionGrad})) return FlashAttentionRule(op);
  if (k == K::kRope) return RopeRule(op);
  if (k == K::kLogSumExp) return LogSumExpRule(op);
  if (IsIn(k, {K::kCrossEntropy, K::kCrossEntropyGrad})) return CrossEntropyRule(op);
  if (k == K::kEmbeddingGrad) return EmbeddingGradRule(op);
  if (k == K::kMatMul) return MatMulRule(op);
  if (k == K::kMatMulGrad) return MatMulGradRule(op);
  if (k == K::kGemm) return GemmRule(op);
  if (IsIn(k, {K::kReduceSum, K::kReduceMean})) return ReduceRule(op, k == K::kReduceSum);
  if (k == K::kMSELoss) return LossRule(op);
  if (k == K::kTranspose) return TransposeRule(op);
  if (IsIn(k, {K::kReshape, K::kSqueeze, K::kUnsqueeze})) return ReshapeRule(op);
  if (k == K::kGather) return GatherRule(op);
  if (IsIn(k, {K::kConcat, K::kSplit})) return ConcatSplitRule(op);
  if (IsIn(k, {K::kSlice, K::kExpand})) return WindowRule(op);
  if (IsIn(k, {K::kConstant, K::kConstantOfShape, K::kRange, K::kShape})) return SourceRule(op);
  return Unimplemented(op.loc()) << "no sharding rule for " << op.Name()
                                 << ": it cannot appear in a global-view (sharded) program";
}

}  // namespace

StatusOr<FactorRule> BuildFactorRule(const Op& op) {
  for (const Value* v : op.inputs()) {
    if (!v->type().is_tensor() || !v->type().HasStaticShape())
      return InvalidArgument(op.loc())
             << op.Name() << " operand " << v->Ref()
             << " needs a static tensor type to be sharded, got " << v->type();
  }
  for (const auto& r : op.results()) {
    if (!r->type().is_tensor() || !r->type().HasStaticShape())
      return InvalidArgument(op.loc())
             << op.Name() << " result " << r->Ref()
             << " needs a static tensor type to be sharded, got " << r->type();
  }
  DISTIR_ASSIGN_OR_RETURN(FactorRule rule, BuildRule(op));
  if (rule.shardable.empty()) rule.shardable.assign(op.num_inputs(), true);
  rule.operands.resize(op.num_inputs());
  return rule;
}

}  // namespace distir::sharding
