// Rendering a Status for a human, ninja/clang style:
//
//   model.distir:4:12: error: undefined value %x
//     %y = Relu(%x)
//               ^
//
// The source excerpt is added when the caller still has the text the location
// points into; otherwise the output is Status::ToString().

#pragma once

#include <string>
#include <string_view>

#include "support/status.h"

namespace distir {

/// Renders `status` as "loc: error: message", then, when `source` is not empty
/// and the location has a line, that line of `source` and a caret under the
/// column, then the notes. REQUIRES: !status.ok().
std::string RenderDiagnostic(const Status& status, std::string_view source = {});

/// Line `line` (1-based) of `text` without its newline; empty when out of range.
std::string_view LineOf(std::string_view text, int line);

}  // namespace distir
