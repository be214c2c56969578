// The ONNX importer: an ONNX model (opsets 13..17) as a DistIR function.
//
// The graph becomes one function whose parameters are, in order, the graph's
// data inputs (the inputs that are not initializers) and then its float
// initializers (the weights), with their ONNX names sanitised to DistIR
// identifiers (SanitizeName). Every node becomes the DistIR op of the same name
// (docs/onnx.md has the table), in the graph's order; the graph's outputs are
// the returned values. Small integer initializers (shape and index constants,
// at most kMaxConcreteElements elements) become Constant ops, so that the
// mixed abstract/concrete interpreter resolves the shape computations they
// feed. Constant nodes stay Constant ops; an Identity of an initializer (how
// exporters spell deduplicated weights) is folded: its output names the same
// parameter. Nothing else is folded; shape subgraphs (Shape, Gather, Concat,
// Reshape, Range, ...) stay ops and are resolved by type inference.
//
// Dynamic dimensions (dim_param, or missing) of a data input must be bound by
// ImportOptions::input_shapes; the importer then runs type inference with the
// mixed domain (interp/infer_types.h) and requires every value of the function
// to come out with a static shape. The result is verified and fully typed.
//
// Errors name the file and the ONNX entity (node, input, initializer, output):
// "model.onnx: node '/h.0/Foo' (Foo): error: ONNX op Foo (opset 17) is not
// supported; supported ops: Add, Cast, ...". A file that is not a valid
// protobuf (truncated, corrupt, not ONNX) is one clear error; no input makes
// the importer crash (tests/unit/importers/onnx_fuzz_test.cc).

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/dense_tensor.h"
#include "ir/device.h"
#include "ir/dtype.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir::onnx_import {

struct ImportOptions {
  /// Shapes of data inputs, by ONNX input name: every extent of the input
  /// (the rank must match the declared one, and static extents must agree).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// When set, every float tensor (inputs, weights, constants, Cast targets)
  /// gets this dtype instead (e.g. f16 for the paper's fp16 models).
  std::optional<DType> float_dtype;
  /// Device of every parameter and Constant; DeviceId() gives a device-generic
  /// function. d0, as the model builders (src/models) place theirs.
  DeviceId device = DeviceId(0);
  /// Name of the function; "" takes the file's stem, sanitised ("main" when
  /// that is empty).
  std::string function_name;
  /// Read the initializers' contents into ImportedModel::weights (the CLI and
  /// the search need only their shapes).
  bool load_weights = false;
};

struct ImportedModel {
  /// One function, verified, every value typed with a static shape.
  Module module;
  /// ONNX names of the data inputs: the first inputs.size() parameters.
  std::vector<std::string> inputs;
  /// ONNX names of the weights (float initializers), parallel to the remaining
  /// parameters.
  std::vector<std::string> weight_names;
  /// With ImportOptions::load_weights, the weights' contents, parallel to
  /// weight_names (with float_dtype applied); empty otherwise.
  std::vector<DenseTensor> weights;
};

/// Imports the ONNX model serialised in `bytes`; `path` names it in errors and,
/// by its stem, the function.
StatusOr<ImportedModel> ImportOnnx(std::string_view bytes, const std::string& path,
                                   const ImportOptions& options = {});

/// Reads and imports the file at `path`. NotFound when it cannot be opened;
/// InvalidArgument when it is not a regular file (a device, directory or FIFO is
/// refused before anything is read) or is larger than protobuf's 2 GiB.
StatusOr<ImportedModel> ImportOnnxFile(const std::string& path, const ImportOptions& options = {});

/// Parses an --input binding "NAME=2x16" (extents separated by 'x', each a
/// non-negative integer) into the name and the extents.
StatusOr<std::pair<std::string, std::vector<int64_t>>> ParseInputBinding(std::string_view text);

/// An ONNX name as a DistIR identifier ([A-Za-z0-9_.]+): '/' and ':' become
/// '.', any other character outside the set becomes '_', and leading and
/// trailing '.' are dropped ("/h.0/attn/MatMul_output_0" ->
/// "h.0.attn.MatMul_output_0", "onnx::MatMul_254" -> "onnx..MatMul_254").
/// "v" when nothing is left. Collisions are resolved by the function
/// (".1", ".2" suffixes).
std::string SanitizeName(std::string_view name);

}  // namespace distir::onnx_import
