// A reader of numpy's .npy files (format 1.0/2.0, little-endian, C order), for
// the torch outputs saved next to the ONNX fixtures (scripts/export_onnx.py).
// Element types: <f4, <f8, <i4, <i8 and |b1; the values become a DenseTensor.

#pragma once

#include <string>

#include "ir/dense_tensor.h"
#include "support/status_or.h"

namespace distir::testing {

/// Reads the .npy file at `path`. InvalidArgument naming the file when it is
/// not a .npy of a supported type, NotFound when it cannot be read.
StatusOr<DenseTensor> ReadNpy(const std::string& path);

}  // namespace distir::testing
