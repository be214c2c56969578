// ONNX tensors and element types as DistIR values (internal to distir_onnx).
//
// A TensorProto (an initializer, a Constant's value, ConstantOfShape's fill)
// becomes a DenseTensor: doubles in row-major order, whatever the stored type.
// Both storage forms of the protobuf are read: `raw_data` (little-endian bytes)
// and the typed repeated fields (float_data, int64_data, ...; f16, bf16 and
// bool live in int32_data). The element count is checked against the data
// before anything is allocated, so a corrupt or truncated file is an error,
// never a huge allocation.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dense_tensor.h"
#include "ir/dtype.h"
#include "onnx/onnx_pb.h"
#include "support/status_or.h"

namespace distir::onnx_import {

/// The DType of ONNX element type `elem_type` (TensorProto::DataType), or
/// nullopt for types DistIR has no dtype for (strings, unsigned, 8/16-bit ints).
std::optional<DType> DTypeFromOnnx(int32_t elem_type);

/// ONNX's name of an element type ("FLOAT", "UINT8"), for messages.
std::string OnnxTypeName(int32_t elem_type);

/// The DistIR dtype of ONNX element type `elem_type`, with every float type
/// replaced by `float_override` when it is set (the importer's --dtype).
/// InvalidArgument naming `what` when DistIR has no such dtype.
StatusOr<DType> ImportDType(int32_t elem_type, const std::optional<DType>& float_override,
                            const std::string& what);

/// The extents of `tensor`. InvalidArgument naming `what` for a negative extent
/// or more than 2^40 elements.
StatusOr<std::vector<int64_t>> TensorDims(const onnx::TensorProto& tensor, const std::string& what);

/// The contents of `tensor` as a DenseTensor of its dtype (with every float
/// dtype replaced by `float_override` when set, and the values rounded to it).
/// InvalidArgument naming `what` for external data, an unsupported type, or a
/// data size that does not match the shape.
StatusOr<DenseTensor> ReadTensor(const onnx::TensorProto& tensor,
                                 const std::optional<DType>& float_override,
                                 const std::string& what);

}  // namespace distir::onnx_import
