// Parsing the DistIR text form (grammar in docs/ir.md).
//
// The parser accepts exactly what printer.h prints, plus comments (`// ...` to
// end of line), free whitespace, and result types left out (to be inferred).
// It checks what only the text can tell: syntax, SSA (no redefinition, no use
// before definition), op names, arity and attribute names and kinds against the
// registry, calls of functions defined earlier. Device and type rules are the
// verifier's and the interpreter's (verifier.h, interp/). Errors carry
// `file:line:col` of the offending token and a message in house style.

#pragma once

#include <string>
#include <string_view>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

/// Parses a whole module from `text`; `filename` is used in error locations.
/// The Status of a failure carries the location of the first error.
StatusOr<Module> ParseModule(std::string_view text, const std::string& filename = "<input>");

/// Parses a sharding such as "<@mesh, [{dp}, {}], partial = sum[tp]>" (the
/// attribute form; docs/ir.md §9). Not checked against any mesh.
StatusOr<Sharding> ParseShardingText(std::string_view text,
                                     const std::string& filename = "<sharding>");

/// Parses a type such as "tensor<8x16xf32, d0>". For tests and tools.
StatusOr<Type> ParseType(std::string_view text);

}  // namespace distir
