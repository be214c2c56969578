// Cost rules of the compute and shape ops (docs/cost_model.md, "Compute ops").
//
// Every rule sees only the op's input and result types, which CostModel has
// checked to be known and static. Bytes are counted from the real types of all
// operands (a broadcast operand moves its own size), which fixes the Python
// original's habit of costing only the first operand.

#include <cstdint>
#include <optional>

#include "sim/attention_model.h"
#include "sim/cost_model.h"
#include "sim/gemm_model.h"

namespace distir::sim {
namespace {

int64_t InputBytes(const Op& op, int first = 0) {
  int64_t total = 0;
  for (int i = first; i < op.num_inputs(); ++i) total += op.input(i)->type().SizeInBytes();
  return total;
}

int64_t ResultBytes(const Op& op) {
  int64_t total = 0;
  for (const auto& r : op.results()) total += r->type().SizeInBytes();
  return total;
}

int64_t Elements(const Type& type) { return type.is_tuple() ? 0 : type.NumElements(); }

// The last extent of a tensor (1 for rank 0 and scalars).
int64_t LastExtent(const Type& type) {
  if (!type.is_tensor() || type.rank() == 0) return 1;
  return type.shape().back();
}

DType DTypeOf(const Type& type) { return type.is_tuple() ? DType::kF32 : type.dtype(); }

StatusOr<double> Free(const Op&, const HardwareProfile&) { return 0.0; }

// Which tensor's element count the FLOPs are proportional to.
enum class PerElementOf { kFirstInput, kFirstResult };

// One streaming kernel: reads every input, writes every result, and does
// kFlops floating-point operations per element (a transcendental counts one).
template <int kFlops, PerElementOf kOf>
StatusOr<double> Streaming(const Op& op, const HardwareProfile& hw) {
  const Type& t = kOf == PerElementOf::kFirstInput ? op.input(0)->type() : op.result(0)->type();
  double flops = static_cast<double>(kFlops) * static_cast<double>(Elements(t));
  double bytes = static_cast<double>(InputBytes(op) + ResultBytes(op));
  return RooflineTime(hw.device, bytes, flops);
}

// Sum, Max, Min of k inputs: k - 1 operations per result element.
StatusOr<double> Variadic(const Op& op, const HardwareProfile& hw) {
  double flops = static_cast<double>(op.num_inputs() - 1) *
                 static_cast<double>(Elements(op.result(0)->type()));
  double bytes = static_cast<double>(InputBytes(op) + ResultBytes(op));
  return RooflineTime(hw.device, bytes, flops);
}

// Gather and Slice read only what they write (plus their index inputs): the
// data input is touched where the result comes from, not in full.
StatusOr<double> Indexing(const Op& op, const HardwareProfile& hw) {
  double bytes = static_cast<double>(2 * ResultBytes(op) + InputBytes(op, 1));
  return RooflineTime(hw.device, bytes, 0);
}

// The product count of a MatMul's result type given its matrix extents m x n:
// 1 for a plain matrix product, the broadcast batch otherwise.
double BatchOf(const Type& result, double m, double n) {
  const double mn = m * n;
  return mn > 0 ? static_cast<double>(Elements(result)) / mn : 0;
}

// MatMul(a, b) as the GPU executor runs it (gpu_ops.cc): a matrix b folds the
// batch of a into its rows, one GEMM of (batch·M) x N; a batched b makes a
// strided-batched GEMM of `batch` M x N products. Rank-1 operands are promoted
// as numpy does ([K] -> [1, K] on the left, [K, 1] on the right).
GemmShape MatMulShape(const Type& a, const Type& b, const Type& result) {
  GemmShape s;
  s.k = static_cast<double>(LastExtent(a));
  s.m = a.rank() >= 2 ? static_cast<double>(a.shape()[a.rank() - 2]) : 1;
  s.n = b.rank() >= 2 ? static_cast<double>(LastExtent(b)) : 1;
  s.batch = BatchOf(result, s.m, s.n);
  if (b.rank() <= 2) {
    s.m *= s.batch;
    s.batch = s.batch > 0 ? 1 : 0;
  }
  return s;
}

// MatMul(a, b) with numpy batching: every result element is a K-long dot
// product, 2K FLOPs (multiply and add), K = the last extent of a.
double MatMulFlops(const Op& op) {
  return 2.0 * static_cast<double>(Elements(op.result(0)->type())) *
         static_cast<double>(LastExtent(op.input(0)->type()));
}

StatusOr<double> MatMul(const Op& op, const HardwareProfile& hw) {
  const Type& a = op.input(0)->type();
  const Type& y = op.result(0)->type();
  double flops = MatMulFlops(op);
  double bytes = static_cast<double>(InputBytes(op) + ResultBytes(op));
  return GemmKernelTime(hw.device, DTypeOf(a), MatMulShape(a, op.input(1)->type(), y), flops,
                        bytes);
}

// Gemm(A, B, C?) = alpha * op(A) op(B) + beta * C as one cuBLAS call: the result
// is M x N and K = |A| / M whatever transA says; the epilogue adds M·N FLOPs
// when C is given (the tiled model folds it into its per-wave overhead).
double GemmFlops(const Op& op) {
  const Type& y = op.result(0)->type();
  double mn = static_cast<double>(Elements(y));
  double m = y.is_tensor() && y.rank() > 0 ? static_cast<double>(y.shape()[0]) : 1;
  double k = m > 0 ? static_cast<double>(Elements(op.input(0)->type())) / m : 0;
  return 2.0 * mn * k + (op.num_inputs() == 3 ? mn : 0);
}

StatusOr<double> Gemm(const Op& op, const HardwareProfile& hw) {
  const Type& a = op.input(0)->type();
  const Type& y = op.result(0)->type();
  double mn = static_cast<double>(Elements(y));
  double m = y.is_tensor() && y.rank() > 0 ? static_cast<double>(y.shape()[0]) : 1;
  double k = m > 0 ? static_cast<double>(Elements(a)) / m : 0;
  double flops = GemmFlops(op);
  double bytes = static_cast<double>(InputBytes(op) + ResultBytes(op));
  GemmShape shape{1, m, m > 0 ? mn / m : 0, k};
  return GemmKernelTime(hw.device, DTypeOf(a), shape, flops, bytes);
}

// MatMulGrad(x, w, dy) -> (dx, dw) is two GEMMs: dx = dy·wᵀ and dw = xᵀ·dy.
// With x [..., M, K] and dy [..., M, N], each is 2·|x|·N FLOPs (per GEMM;
// the op does two). For a matrix w (the GPU executor's case) x's rows are
// flattened: dx is (rows x K) by N and dw is (K x N) by rows; a batched w
// makes both strided-batched.
double MatMulGradFlops(const Op& op) {
  return 2.0 * static_cast<double>(Elements(op.input(0)->type())) *
         static_cast<double>(LastExtent(op.input(2)->type()));
}

StatusOr<double> MatMulGrad(const Op& op, const HardwareProfile& hw) {
  const Type& x = op.input(0)->type();
  const Type& w = op.input(1)->type();
  const Type& dy = op.input(2)->type();
  double flops = MatMulGradFlops(op);
  double dx_bytes =
      static_cast<double>(dy.SizeInBytes() + w.SizeInBytes() + op.result(0)->type().SizeInBytes());
  const Type& dw = op.result(1)->type();
  double dw_bytes = static_cast<double>(x.SizeInBytes() + dy.SizeInBytes() + dw.SizeInBytes());
  // A weight gradient in another dtype than x (f32 from half operands) is
  // Megatron's gradient accumulation fusion: the GEMM adds into the f32 main
  // grad (beta = 1), reading it as well (docs/cost_model.md §2.2).
  if (dw.is_tensor() && x.is_tensor() && dw.dtype() != x.dtype())
    dw_bytes += static_cast<double>(dw.SizeInBytes());
  const double k = static_cast<double>(LastExtent(x));
  const double n = static_cast<double>(LastExtent(dy));
  const double batch = BatchOf(w, k, n);
  const double rows = batch > 0 && k > 0 ? static_cast<double>(Elements(x)) / k / batch : 0;
  DType dtype = DTypeOf(x);
  return GemmKernelTime(hw.device, dtype, GemmShape{batch, rows, k, n}, flops, dx_bytes) +
         GemmKernelTime(hw.device, dtype, GemmShape{batch, k, n, rows}, flops, dw_bytes);
}

void RegisterElementwise(CostRuleTable& t) {
  constexpr PerElementOf kOut = PerElementOf::kFirstResult;
  // One operation per result element.
  for (OpKind k :
       {OpKind::kAdd,   OpKind::kSub,  OpKind::kMul,      OpKind::kDiv,  OpKind::kPow,
        OpKind::kEqual, OpKind::kLess, OpKind::kWhere,    OpKind::kNot,  OpKind::kNeg,
        OpKind::kSqrt,  OpKind::kExp,  OpKind::kErf,      OpKind::kTanh, OpKind::kSin,
        OpKind::kCos,   OpKind::kRelu, OpKind::kReluGrad, OpKind::kCast, OpKind::kTrilu}) {
    t.Register(k, Streaming<1, kOut>);
  }
  for (OpKind k : {OpKind::kSum, OpKind::kMax, OpKind::kMin}) t.Register(k, Variadic);
  // Gelu = 0.5·x·(1 + erf(x/√2)): scale, erf, add, two multiplies.
  t.Register(OpKind::kGelu, Streaming<5, kOut>);
  // GeluGrad = dy·(Φ(x) + x·φ(x)): Gelu's five plus exp, square, three more.
  t.Register(OpKind::kGeluGrad, Streaming<10, kOut>);
  // Sigmoid = 1/(1 + exp(−x)): exp, add, divide.
  t.Register(OpKind::kSigmoid, Streaming<3, kOut>);
  // SigmoidGrad(y, dy) = dy·y·(1 − y): subtract, two multiplies.
  t.Register(OpKind::kSigmoidGrad, Streaming<3, kOut>);
}

void RegisterNormalizations(CostRuleTable& t) {
  constexpr PerElementOf kIn = PerElementOf::kFirstInput;
  // Softmax: max, subtract, exp, sum, divide per element.
  t.Register(OpKind::kSoftmax, Streaming<5, kIn>);
  // SoftmaxGrad(dy, y) = y·(dy − Σ dy·y): multiply, sum, subtract, multiply.
  t.Register(OpKind::kSoftmaxGrad, Streaming<4, kIn>);
  // LayerNorm: mean, centre, square, variance sum, normalise, scale, shift, (rsqrt amortised).
  t.Register(OpKind::kLayerNormalization, Streaming<8, kIn>);
  t.Register(OpKind::kLayerNormalizationGrad, Streaming<10, kIn>);
  // RMSNorm = x·r·scale, r = 1/√(mean(x²) + ε): square, sum, normalise, scale (rsqrt amortised).
  t.Register(OpKind::kRMSNormalization, Streaming<4, kIn>);
  // RMSNormalizationGrad: r recomputed (square, sum), x̂ = x·r, g = dy·scale, Σ g·x̂ (2),
  // dscale's Σ dy·x̂ (2), dx = r·(g − x̂·mean(g·x̂)) (3).
  t.Register(OpKind::kRMSNormalizationGrad, Streaming<11, kIn>);
  t.Register(OpKind::kReduceMean, Streaming<1, kIn>);
  t.Register(OpKind::kReduceSum, Streaming<1, kIn>);
}

void RegisterTraining(CostRuleTable& t) {
  constexpr PerElementOf kIn = PerElementOf::kFirstInput;
  // MSELoss(p, y) = Σ(p − y)²/n: subtract, square, accumulate per element of p;
  // reads p and y (the Python original costed only y).
  t.Register(OpKind::kMSELoss, Streaming<3, kIn>);
  // MSELossGrad(p, y) = 2(p − y)/n: subtract, scale; reads p and y, writes dp.
  t.Register(OpKind::kMSELossGrad, Streaming<2, kIn>);
  // SGD(w, dw): w − lr·dw reads w and dw and writes w (3 passes over |w|).
  t.Register(OpKind::kSGD, Streaming<2, kIn>);
  // Adam(w, dw, m, v): m, v moment updates (7), bias corrections (2), the
  // update (3); reads w, dw, m, v and writes w, m, v (7 passes).
  t.Register(OpKind::kAdam, Streaming<12, kIn>);
}

// FlashAttention(q [b, h, s, d], k/v [b, g, t, d]): two GEMMs per head, S =
// Q K^T and O = P V, 2·s·t·d FLOPs each: 4·b·h·s·t·d, half of it under a
// causal mask (Dao et al. 2022 §3.1; FlashAttention-2, Dao 2023, §4.1). The
// softmax's exponentials are not counted (the papers' convention). Tiles stay
// in SRAM, so the bytes are the inputs read once and the outputs written once.
double AttentionFlops(const Op& op) {
  const Type& q = op.input(0)->type();
  const Type& k = op.input(1)->type();
  if (q.rank() != 4 || k.rank() != 4) return 0;
  const double flops = 4.0 * static_cast<double>(Elements(q)) * static_cast<double>(k.shape()[2]);
  return op.GetInt("causal", 0) != 0 ? flops / 2 : flops;
}

// FlashAttention-2's backward recomputes S and P and runs five GEMMs (S, dV,
// dP, dQ, dK) to the forward's two: 2.5x the forward FLOPs (Dao 2023, §4.1).
double AttentionGradFlops(const Op& op) { return 2.5 * AttentionFlops(op); }

// The kernel's shape for the tiled attention model: every (batch, query head)
// pair is a head of its own, whatever key/value head it shares.
AttentionShape AttentionShapeOf(const Op& op) {
  const Type& q = op.input(0)->type();
  const Type& k = op.input(1)->type();
  AttentionShape a;
  if (q.rank() != 4 || k.rank() != 4) return a;
  a.heads = static_cast<double>(q.shape()[0]) * static_cast<double>(q.shape()[1]);
  a.queries = static_cast<double>(q.shape()[2]);
  a.keys = static_cast<double>(k.shape()[2]);
  a.head_dim = static_cast<double>(q.shape()[3]);
  a.causal = op.GetInt("causal", 0) != 0;
  a.backward = op.kind() == OpKind::kFlashAttentionGrad;
  return a;
}

StatusOr<double> FlashAttention(const Op& op, const HardwareProfile& hw) {
  const double flops =
      op.kind() == OpKind::kFlashAttention ? AttentionFlops(op) : AttentionGradFlops(op);
  const double bytes = static_cast<double>(InputBytes(op) + ResultBytes(op));
  return AttentionKernelTime(hw.device, DTypeOf(op.input(0)->type()), AttentionShapeOf(op), flops,
                             bytes);
}

// EmbeddingGrad(ids, dy) -> dW: zero-fill dW, then one add per element of dy
// into the rows the ids name (read-modify-write: dy's size read and written
// again in dW).
StatusOr<double> EmbeddingGrad(const Op& op, const HardwareProfile& hw) {
  const double dy = static_cast<double>(op.input(1)->type().SizeInBytes());
  const double bytes = static_cast<double>(InputBytes(op) + ResultBytes(op)) + 2 * dy;
  return RooflineTime(hw.device, bytes, static_cast<double>(Elements(op.input(1)->type())));
}

// CrossEntropy per logit: max, subtract, exp, sum (the label's logit is one
// read per token); reads the logits once. Given each token's log-sum-exp (a
// third operand) it only reads the label's logit, the label and the lse per
// token and subtracts.
StatusOr<double> CrossEntropy(const Op& op, const HardwareProfile& hw) {
  if (op.num_inputs() == 2) return Streaming<4, PerElementOf::kFirstInput>(op, hw);
  const Type& logits = op.input(0)->type();
  const double tokens = static_cast<double>(Elements(op.input(1)->type()));
  const double bytes = static_cast<double>(InputBytes(op, 1) + ResultBytes(op)) +
                       tokens * static_cast<double>(ByteWidth(logits.dtype()));
  return RooflineTime(hw.device, bytes, 2 * tokens);
}

// CrossEntropyGrad per logit: the log-sum-exp again (4) unless given, then
// exp, subtract, scale (3).
StatusOr<double> CrossEntropyGrad(const Op& op, const HardwareProfile& hw) {
  if (op.num_inputs() == 2) return Streaming<7, PerElementOf::kFirstInput>(op, hw);
  return Streaming<3, PerElementOf::kFirstInput>(op, hw);
}

void RegisterTransformer(CostRuleTable& t) {
  constexpr PerElementOf kIn = PerElementOf::kFirstInput;
  constexpr PerElementOf kOut = PerElementOf::kFirstResult;
  t.Register(OpKind::kFlashAttention, FlashAttention);
  t.Register(OpKind::kFlashAttentionGrad, FlashAttention);
  // Rope: y1 = x1·cos − x2·sin, y2 = x2·cos + x1·sin: two multiplies and an add
  // per element.
  t.Register(OpKind::kRope, Streaming<3, kOut>);
  // LogSumExp per element: max, subtract, exp, sum.
  t.Register(OpKind::kLogSumExp, Streaming<4, kIn>);
  t.Register(OpKind::kCrossEntropy, CrossEntropy);
  t.Register(OpKind::kCrossEntropyGrad, CrossEntropyGrad);
  t.Register(OpKind::kEmbeddingGrad, EmbeddingGrad);
}

// Mesh collectives act on global-view values, which live on no device: the
// program must be partitioned into per-device ops before it can be timed.
StatusOr<double> GlobalViewOnly(const Op& op, const HardwareProfile& /*hw*/) {
  return FailedPrecondition(op.loc()) << op.Name()
                                      << " is a global-view (sharded) op: partition the "
                                         "program into per-device ops before simulating it";
}

void RegisterDataMovement(CostRuleTable& t) {
  constexpr PerElementOf kOut = PerElementOf::kFirstResult;
  for (OpKind k : {OpKind::kTranspose, OpKind::kConcat, OpKind::kSplit, OpKind::kExpand,
                   OpKind::kConstantOfShape, OpKind::kRange}) {
    t.Register(k, Streaming<0, kOut>);
  }
  t.Register(OpKind::kGather, Indexing);
  t.Register(OpKind::kSlice, Indexing);
  // Metadata only: no kernel runs (views, shape queries, tuples, host constants).
  for (OpKind k :
       {OpKind::kShape, OpKind::kReshape, OpKind::kUnsqueeze, OpKind::kSqueeze, OpKind::kConstant,
        OpKind::kTuple, OpKind::kUnpackTuple, OpKind::kIdentity, OpKind::kShard}) {
    t.Register(k, Free);
  }
  for (OpKind k : {OpKind::kMeshAllReduce, OpKind::kMeshReduceScatter, OpKind::kMeshAllGather,
                   OpKind::kMeshAllToAll, OpKind::kMeshSlice, OpKind::kMeshTransfer}) {
    t.Register(k, GlobalViewOnly);
  }
}

}  // namespace

std::optional<double> MatrixOpFlops(const Op& op) {
  if (op.is_call()) return std::nullopt;
  switch (op.kind()) {
    case OpKind::kMatMul:
      return MatMulFlops(op);
    case OpKind::kGemm:
      return GemmFlops(op);
    case OpKind::kMatMulGrad:
      return 2 * MatMulGradFlops(op);
    case OpKind::kFlashAttention:
      return AttentionFlops(op);
    case OpKind::kFlashAttentionGrad:
      return AttentionGradFlops(op);
    default:
      return std::nullopt;
  }
}

void RegisterComputeCostRules(CostRuleTable& table) {
  RegisterElementwise(table);
  RegisterNormalizations(table);
  RegisterTraining(table);
  RegisterDataMovement(table);
  RegisterTransformer(table);
  table.Register(OpKind::kMatMul, MatMul);
  table.Register(OpKind::kGemm, Gemm);
  table.Register(OpKind::kMatMulGrad, MatMulGrad);
}

}  // namespace distir::sim
