// The op registry: what the IR knows about each primitive op.
//
// OpKind is generated from op_kinds.def, so the printer, parser, verifier and
// every domain's rule table agree on the set of ops. The registry holds, per
// kind, the text name, the input and output arity and the attribute specs; it
// says nothing about shapes, costs or kernels (those live in their domains:
// interp/, sim/, backend/). kCall is the one non-primitive kind: a call of
// another function of the module (`@f(...)` in the text).

#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/attribute.h"

namespace distir {

enum class OpKind {
#define DISTIR_OP(name, min_in, max_in, min_out, max_out, cls, attrs) k##name,
#include "ir/op_kinds.def"
#undef DISTIR_OP
  kCall,
};

/// Broad role of an op; the simulator's trace categories follow it.
enum class OpClass { kCompute, kShape, kCommunication, kCall };

/// Arity bound meaning "any number".
inline constexpr int kVariadic = -1;

struct AttrSpec {
  std::string_view name;
  AttrType type;
  bool required;
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int min_inputs;
  int max_inputs;   ///< kVariadic for no upper bound
  int min_outputs;
  int max_outputs;  ///< kVariadic for no upper bound
  OpClass op_class;
  std::vector<AttrSpec> attrs;  ///< sorted by name

  /// The spec of attribute `name`, or nullptr when the op takes no such attribute.
  /// Besides its own, every op may carry `task = [stage, microbatch, phase]`:
  /// the pipeline task it belongs to (sharding/pipeline_task.h). Executors and
  /// cost rules ignore it; the pipeline passes write it and order ops by it.
  const AttrSpec* FindAttr(std::string_view name) const;
};

/// Registry entry of `kind`. REQUIRES: kind != OpKind::kCall.
const OpInfo& GetOpInfo(OpKind kind);

/// Text name of a kind ("MatMul"); "call" for kCall.
std::string_view OpKindName(OpKind kind);

/// The primitive kind named `name` (case-sensitive), or nullopt.
std::optional<OpKind> LookupOpKind(std::string_view name);

/// Every primitive op, in op_kinds.def order (for listings and tests).
const std::vector<OpInfo>& AllOps();

/// True for ops that move data between devices (Send and the collectives).
bool IsCommunication(OpKind kind);

/// True for the global-view collectives over mesh axes (MeshAllReduce, ...),
/// which exist only before partitioning (docs/ir.md §9).
bool IsMeshCollective(OpKind kind);

}  // namespace distir
