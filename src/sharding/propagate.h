// Sharding propagation: from a few annotated values to a sharding on every
// value of a global-view program (docs/transforms.md "Sharding").
//
// Sources are the shardings written on parameters and Shard ops:
//   - a parameter's `<...>` and a Shard op's sharding state a requirement;
//     `hint = 1` makes the Shard op a hint, which a requirement overrides;
//   - a Shard op without `for_users` states the sharding of its operand
//     (the producer must produce it); with `for_users = 1` only its users see
//     it, and the operand may be laid out otherwise (a reshard point).
// Propagation runs each op's factor rule (factor_rule.h) forward and
// backward to a fixpoint, first through pass-through ops only, then through
// contractions and reductions too (Shardy's op priority). Per factor the
// strongest source wins (requirement, then hint, then inferred); at equal
// strength a longer compatible axis list extends a shorter one, and a real
// conflict goes to the choice that reshards the fewest bytes, then to the
// larger tensor, then to an operand over a result (forward over backward).
// Shardings only grow; required ones never change.
//
// The result: every value of the function carries a sharding (replicated
// where nothing reached it), every op result the one its op produces
// (partial over the axes of its sharded reduction factors, or of the partial
// operands it is linear in), and a Shard op with `for_users = 1` before each
// operand that an op needs laid out otherwise. Materialisation
// (materialize.h) turns those Shard ops into collectives.

#pragma once

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Propagates the shardings of `fn` (a function of `module`; its types are
/// inferred here). A function without any sharding is left unchanged.
/// Errors (InvalidArgument, located): two requirements on one value that
/// differ (both named), a sharding on a non-tensor or a value without a
/// static shape, several meshes in one function (cross-mesh transfers are
/// not supported yet), an op without a sharding rule (a call, a tuple, a
/// per-device collective), a partial of max/min meeting a sum.
Status PropagateShardings(Module& module, std::string function);

}  // namespace distir::sharding
