// The IR verifier: the structural invariants every function must keep.
//
// Checked: SSA (each value defined once, before use, in its own function); op
// arity and attributes against the registry (required present, kinds right, no
// unknown names); calls name an earlier function with matching arity, and a
// device-generic callee gets arguments that share one device; a device-generic
// function mentions no device anywhere; compute ops take inputs on one device;
// communication ops take inputs on distinct devices, with one output per input
// where the op is all-to-all shaped, and Send changes device. Shape and dtype
// rules are the shape domain's (interp/); the verifier only uses types already
// known. Transforms run it on what they build.

#pragma once

#include "ir/function.h"
#include "support/status.h"

namespace distir {

/// Verifies `fn` in the context of `module` (for calls; may be null when `fn`
/// has no calls). Returns the first violation with the op's location.
Status VerifyFunction(const Function& fn, const Module* module);

/// Verifies every function of `module` in order.
Status VerifyModule(const Module& module);

}  // namespace distir
