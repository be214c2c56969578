// Fusion of exported GELUs: an ONNX export before opset 20 writes GELU out
// as elementwise arithmetic around one Tanh (GPT-2's "gelu_new",
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))) or one Erf (PyTorch's
// exact GELU, 0.5 x (1 + erf(x / sqrt(2)))), 5 to 9 ops with their scalar
// constants. Each such group becomes one Gelu op (approximate = "tanh" for
// the Tanh form), so that the simulator costs one memory-bound kernel, as
// the frameworks run it, instead of one per op, and the sharding rules see
// one elementwise op.
//
// The match is structural and checked numerically, never by value names: a
// group is the Tanh or Erf with the Add/Sub/Mul/Div/Pow ops around it whose
// only non-constant input is one tensor x (other inputs are scalar
// Constants), whose intermediate values are read only inside the group, and
// whose one result y read outside has x's type. The group is fused only if,
// evaluated in double precision at 15 points in [-5, 5], it equals the
// GELU of its form within 1e-5 (relative, 1e-5 absolute near 0): the
// exporter's f32 constants (0.044714998, 0.7978846) are far closer than
// that, and the other form differs by up to 2e-4 (so a Tanh GELU never
// passes as an Erf one or the reverse).

#pragma once

#include <memory>
#include <string>

#include "ir/function.h"

namespace distir {

/// `fn` with every exported GELU group replaced by one Gelu op named as the
/// group's result (its type, location and sharding kept); the group's other
/// ops and the scalar Constants only they read are dropped. Returns null when
/// `fn` has no such group. REQUIRES: `fn`'s types are inferred.
std::unique_ptr<Function> FuseGelus(const Function& fn);

/// FuseGelus on function `function` of `m`, replacing it when a group was
/// fused (the pass `fuse-gelu` of `distir opt`); returns whether. REQUIRES:
/// no other function calls it.
bool FuseGelusIn(Module& m, const std::string& function);

}  // namespace distir
