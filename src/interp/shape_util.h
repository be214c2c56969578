// Shape arithmetic shared by the shape rules and the mixed rules.
//
// Pure functions over extents (kDynamicDim for "?") that implement ONNX's
// conventions: negative axes, numpy broadcasting, Reshape's 0 and -1, Slice's
// clamping. Errors name the op and are located at it, so both rule files report
// the same messages whether the arguments were abstract or concrete.
// Internal to src/interp.

#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "interp/shape_domain.h"
#include "ir/op.h"
#include "support/status_or.h"

namespace distir::shape {

using Shape = Dims;

/// "MatMul" for a primitive op: the name used at the start of messages.
inline std::string_view OpName(const Op& op) { return OpKindName(op.kind()); }

/// True when the extents can be equal: equal, or one of them dynamic.
inline bool DimsFit(int64_t a, int64_t b) { return a == b || a == kDynamicDim || b == kDynamicDim; }

/// True when the shapes have one rank and fitting extents.
bool ShapesFit(const Shape& a, const Shape& b);

/// `axis` in [-rank, rank) made non-negative; otherwise
/// "axis 3 is out of range for rank-2 input of Concat".
StatusOr<int64_t> NormalizeAxis(const Op& op, int64_t axis, int64_t rank);

/// Every axis normalized; duplicates are an error.
StatusOr<Shape> NormalizeAxes(const Op& op, const Shape& axes, int64_t rank);

/// Numpy broadcast of two shapes. A dynamic extent against 1 stays dynamic;
/// against a known n > 1 it becomes n (it must be n or 1 to be valid).
StatusOr<Shape> Broadcast(const Op& op, const Shape& a, const Shape& b);

/// True when `from` broadcasts to exactly `to` (ONNX unidirectional broadcasting).
bool BroadcastsTo(const Shape& from, const Shape& to);

/// Reshape's output shape for `target` (0 copies the input extent unless
/// `allow_zero`, one -1 is inferred). Checks the element count when static.
StatusOr<Shape> ReshapeShape(const Op& op, const Shape& in, const Shape& target, bool allow_zero);

/// Unsqueeze: inserts 1s at `axes` (relative to the output rank).
StatusOr<Shape> UnsqueezeShape(const Op& op, const Shape& in, const Shape& axes);

/// Squeeze: removes `axes` (each must have extent 1), or with `all_ones` every
/// extent equal to 1 (dynamic extents are kept).
StatusOr<Shape> SqueezeShape(const Op& op, const Shape& in, const Shape& axes, bool all_ones);

/// ReduceMean/ReduceSum: `axes` reduced (all when `reduce_all`), kept as 1s
/// when `keep_dims`.
StatusOr<Shape> ReduceShape(const Op& op, const Shape& in, const Shape& axes, bool reduce_all,
                            bool keep_dims);

/// One dimension of a resolved Slice: elements start, start+step, ... (count of them).
struct SliceDim {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;  ///< kDynamicDim when the input extent is dynamic
};

/// Resolves ONNX Slice on a tensor of shape `in`: `axes` empty means 0..n-1,
/// `steps` empty means all 1. Every dimension of `in` gets a SliceDim.
StatusOr<std::vector<SliceDim>> ResolveSlice(const Op& op, const Shape& in, const Shape& starts,
                                             const Shape& ends, const Shape& axes,
                                             const Shape& steps);

/// Extents of the `num_parts` outputs of Split along an axis of `extent`:
/// equal parts when `sizes` is null (error unless divisible), else `sizes`.
StatusOr<Shape> SplitSizes(const Op& op, int64_t extent, int num_parts, const Shape* sizes);

/// `extent` / `parts` for collectives that shard an axis; error unless divisible.
StatusOr<int64_t> DivideExtent(const Op& op, int64_t extent, int64_t parts, int64_t axis);

/// Length of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
StatusOr<int64_t> RangeLength(const Op& op, double start, double limit, double delta);

// ---- helpers of the rule files (shape_rules.cc, comm_shape_rules.cc, mixed_rules.cc)

using Args = ArgList<Type>;
using Types = std::vector<Type>;
using Result = StatusOr<Types>;

/// The shape of a tensor, or the empty shape of a scalar (a rank-0 operand).
const Shape& ShapeOf(const Type& t);

/// A one-element result list.
Result One(Type t);

/// "MatMul input 1 must be a tensor, got tuple<...>".
Status NotATensor(const Op& op, int index, const Type& t);

/// Every input is a tensor (or, with `allow_scalar`, also a scalar).
Status RequireTensors(const Op& op, Args in, bool allow_scalar = false);

/// The device all inputs share (none in device-generic functions), else
/// "MatMul inputs are on different devices (d0 and d1)".
StatusOr<DeviceId> SharedDevice(const Op& op, Args in);

/// RequireTensors + SharedDevice: the prelude of every compute rule.
StatusOr<DeviceId> CheckCompute(const Op& op, Args in, bool allow_scalar = false);

/// Inputs [begin, end) have one dtype.
Status SameDTypes(const Op& op, Args in, int begin, int end);

/// `got` has the dtype and a fitting shape of `expected`, e.g.
/// "ReluGrad dy must match x: expected ..., got ...".
Status RequireLike(const Op& op, const Type& got, std::string_view got_name, const Type& expected,
                   std::string_view expected_name);

/// "Concat requires attribute 'axis'".
Status MissingAttr(const Op& op, std::string_view name);

/// The int attribute `name`, or MissingAttr.
StatusOr<int64_t> RequiredInt(const Op& op, const std::string& name);

/// Static length of a 1-D shape-like input `t` at position `index`.
StatusOr<int64_t> StaticLength(const Op& op, const Type& t, int index);

/// Result type of ONNX MatMul (numpy matmul: batched, broadcast over leading dims).
StatusOr<Type> MatMulType(const Op& op, const Type& a, const Type& b);

/// Concatenation of the tensors `in` along `axis` (devices ignored): dtypes
/// equal, other extents fitting.
StatusOr<Shape> ConcatShape(const Op& op, Args in, int64_t axis);

/// Rule groups registered by RegisterShapeRules(), defined in comm_shape_rules.cc.
void RegisterTrainingShapeRules(ShapeDomain& domain);
void RegisterCommunicationShapeRules(ShapeDomain& domain);
/// The fused transformer ops' rules, defined in transformer_shape_rules.cc.
void RegisterTransformerShapeRules(ShapeDomain& domain);

}  // namespace distir::shape
