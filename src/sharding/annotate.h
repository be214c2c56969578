// Annotation: a grid point of the search as a mesh and shardings.
//
// A distribution is a mesh (named axes and sizes: dp, tp, ...) plus rules
// that say how parameters are laid out on it: `x=[{dp}, {}]` splits the batch
// of the input x over dp, `w*[02468]=[{}, {tp}]` makes the even layers'
// weights column-parallel (Megatron). AnnotateMesh declares the mesh in the
// module and writes those shardings on the function's parameters; propagation
// (propagate.h) then decides every other value. Models say where their tensor
// parallelism goes with such rules (models/*.h), users in YAML; the program
// is never recognised by its value names.

#pragma once

#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/mesh.h"
#include "support/glob.h"
#include "support/status_or.h"

namespace distir::sharding {

/// Parameters (or op results) whose name matches `pattern` (a glob: *, ?, [...]) get `dims`:
/// per dim, the mesh axes that split it.
/// `PATTERN@users=[...]` (for_users) lays out an op result as its users read
/// it, not as its producer writes it: a Shard {for_users = 1} after it, so a
/// row-parallel product may stay partial and be reduce-scattered into that
/// layout (Megatron's sequence parallelism), where a plain rule would make
/// the producer itself compute it so.
struct ParamRule {
  GlobPattern pattern;  ///< of parameter or value names
  std::vector<std::vector<std::string>> dims;
  std::string text;  ///< as written, for messages
  bool for_users = false;
  /// `[...], partial = sum[tp]`: op results only; a row-parallel product
  /// left unreduced, which its users' rule then reduce-scatters.
  std::vector<std::string> partial;
};

/// The first rule that is not for_users whose pattern matches parameter or
/// value name `name`, or nullptr.
const ParamRule* MatchRule(const std::vector<ParamRule>& rules, const std::string& name);

/// The first for_users rule whose pattern matches value name `name`, or nullptr.
const ParamRule* MatchUsersRule(const std::vector<ParamRule>& rules, const std::string& name);

/// Whether some rule splits a dim over mesh axis `axis` (or leaves a value
/// partial over it).
bool RulesUseAxis(const std::vector<ParamRule>& rules, const std::string& axis);

/// Parses "PATTERN=[{dp}, {}]" and "PATTERN@users=[...]". InvalidArgument
/// naming the rule otherwise.
StatusOr<ParamRule> ParseParamRule(const std::string& text);

/// ParseParamRule of each text, in order; the first error.
StatusOr<std::vector<ParamRule>> ParseParamRules(const std::vector<std::string>& texts);

/// Parses "dp=2,tp=4" into mesh axes (sizes >= 1, names unique).
StatusOr<std::vector<MeshAxis>> ParseMeshAxes(const std::string& text);

/// Declares `mesh @<mesh_name>` with the axes of `axes` larger than 1 (an axis
/// of size 1 splits nothing) and gives each parameter of `function` the first
/// rule it matches, dropping axes the mesh does not have. Parameters no rule
/// matches are left to propagation; when no parameter gets an axis at all,
/// every parameter is annotated replicated so that the program is still a
/// (one-device or replicated) global-view program. Errors: a rule whose dim
/// count differs from a matching parameter's rank (naming both), a rule that
/// matches no parameter or value, a mesh name already declared.
///
/// A rule may also name an op's result (e.g. a transformer's
/// `output_layer.weight_t`, the transposed weight its LM head reads): a Shard op after it
/// then requires that layout of its producer, and every user reads the Shard.
/// A for_users rule names op results only and adds a Shard {for_users = 1}
/// (after the plain rule's Shard when both match). A rule that matches a
/// parameter applies to parameters only; every rule must match something.
Status AnnotateMesh(Module& module, std::string function, const std::vector<MeshAxis>& axes,
                    const std::vector<ParamRule>& rules, const std::string& mesh_name = "mesh");

}  // namespace distir::sharding
