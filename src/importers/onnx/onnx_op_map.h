// The ONNX op table of the importer (internal to distir_onnx).
//
// Every supported ONNX op type maps to the DistIR op of the same name (the IR's
// op set follows ONNX, src/ir/op_kinds.def). ConvertNode turns one NodeProto
// into that op's kind and attributes: ONNX attributes are converted to the
// kinds the op registry declares (Cast's integer `to` becomes a dtype), the
// value forms of Constant (value, value_float, value_ints, ...) become one
// tensor, and an attribute DistIR does not know is an error unless it holds
// ONNX's default. docs/onnx.md has the table and the per-op notes.

#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/attribute.h"
#include "ir/device.h"
#include "ir/op_registry.h"
#include "onnx/onnx_pb.h"
#include "support/status_or.h"

namespace distir::onnx_import {

/// Oldest and newest opset of the default ONNX domain the importer reads.
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 17;

struct NodeContext {
  int64_t opset = kMaxOpset;
  std::optional<DType> float_dtype;  ///< --dtype: every float type becomes this
  DeviceId device;                   ///< Constants are placed here (none: device-generic)
};

struct ConvertedOp {
  OpKind kind = OpKind::kIdentity;
  AttrMap attrs;
};

/// The DistIR op for `node`. Unimplemented (naming the node, its op type and
/// the opset, and listing the supported ops) for an op type outside the table
/// or of another domain; InvalidArgument for bad or unsupported attributes.
StatusOr<ConvertedOp> ConvertNode(const onnx::NodeProto& node, const NodeContext& ctx);

/// "Add, Cast, Concat, ...": the supported ONNX op types, sorted.
std::string SupportedOps();

/// "node '/h.0/attn/MatMul' (MatMul)", or "node #12 (MatMul)" when unnamed.
std::string NodeLabel(const onnx::NodeProto& node, int index);

}  // namespace distir::onnx_import
