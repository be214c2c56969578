// The canonical text form of DistIR.
//
// The printer is deterministic: one op per line, attributes sorted by name,
// types printed for every result whose type is known, two-space indentation,
// one blank line between functions. parser.h accepts exactly this text, so
// Print(Parse(Print(m))) == Print(m); every test sees the IR through this form.
// The grammar is in docs/ir.md.

#pragma once

#include <string>

#include "ir/function.h"

namespace distir {

/// Text of one op line without indentation or newline, e.g.
/// `%y = MatMul(%x, %w) : tensor<8x16xf32, d0>`.
std::string PrintOp(const Op& op);

/// Text of a function, ending with "}\n".
std::string PrintFunction(const Function& fn);

/// Text of every function of `module`, separated by blank lines.
std::string PrintModule(const Module& module);

}  // namespace distir
