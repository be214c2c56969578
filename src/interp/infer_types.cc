#include "interp/infer_types.h"

#include "interp/interpreter.h"
#include "interp/mixed_domain.h"
#include "interp/prefetch.h"
#include "interp/shape_domain.h"

namespace distir {
namespace {

// True when `annotated` is `inferred` with some dynamic extents made static.
bool Refines(const Type& annotated, const Type& inferred) {
  if (annotated.kind() != inferred.kind()) return false;
  if (inferred.is_tuple()) {
    const std::vector<Type>& a = annotated.elements();
    const std::vector<Type>& b = inferred.elements();
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Refines(a[i], b[i])) return false;
    }
    return true;
  }
  if (!inferred.is_tensor()) return annotated == inferred;
  if (annotated.dtype() != inferred.dtype() || annotated.device() != inferred.device() ||
      annotated.rank() != inferred.rank()) {
    return false;
  }
  for (int64_t i = 0; i < inferred.rank(); ++i) {
    const int64_t want = annotated.shape()[i];
    const int64_t got = inferred.shape()[i];
    if (got != want && got != kDynamicDim) return false;
  }
  return true;
}

// True when a result of `op` has an annotated type (CheckAnnotations has work).
bool AnyAnnotated(const Op& op) {
  for (const std::unique_ptr<Value>& r : op.results()) {
    if (!r->type().is_unknown()) return true;
  }
  return false;
}

Status AnnotationMismatch(const Op& op, const Value& r, const Type& inferred) {
  return InvalidArgument(op.loc()) << "type of " << r.Ref() << " is annotated as "
                                   << r.type().ToString() << " but inferred as "
                                   << inferred.ToString();
}

// Checks the annotated result types of `op` against `values`; an annotation
// that refines dynamic extents replaces the inferred value, so that later ops
// see the static shape.
template <typename V>
Status CheckAnnotations(const Op& op, std::vector<V>& values) {
  for (const std::unique_ptr<Value>& r : op.results()) {
    const Type& annotated = r->type();
    if (annotated.is_unknown()) continue;
    V& v = values[r->id()];
    const Type& inferred = ValueTraits<V>::TypeOf(v);
    if (annotated == inferred) continue;
    if (!Refines(annotated, inferred)) return AnnotationMismatch(op, *r, inferred);
    v = ValueTraits<V>::FromType(annotated);
  }
  return Status::Ok();
}

template <typename V>
Status InferFunction(const Module& module, Function& fn, const Domain<V>& domain,
                     CallMemo<V>& memo) {
  std::vector<V> args;
  args.reserve(fn.num_params());
  for (const std::unique_ptr<Value>& p : fn.params()) {
    args.push_back(ValueTraits<V>::FromType(p->type()));
  }
  std::vector<V> values;
  // Each op's result types are stored as soon as they are checked, while the
  // op and its results are still in cache (a separate pass over a big program
  // would miss the cache again on every op); a failing op keeps its types.
  return Interpreter<V>(module, domain, &memo)
      .Run(fn, args, values, [](const Op& op, std::vector<V>& vals) {
        if (AnyAnnotated(op)) DISTIR_RETURN_IF_ERROR(CheckAnnotations(op, vals));
        for (const std::unique_ptr<Value>& r : op.results()) {
          r->set_type(ValueTraits<V>::TypeOf(vals[r->id()]));
        }
        return Status::Ok();
      });
}

// ---- the direct pass
//
// While no value is concrete, the mixed domain applies the shape rules to the
// arguments' types (its fallback), and so does the shape domain. Inference can
// then read each op's argument types from the IR and store its result types
// there, with no side table of values and no copy of each type into one: this
// pass, a third faster than the interpreter on big programs (sim_bench).
//
// It stops at the first op for which the mixed domain would do more than the
// shape rules, and returns kInterpreterNeeded: a call (its callee may compute
// concrete values) or, in the mixed domain, an op with a rule that applies to
// abstract arguments (Constant, Shape: the sources of concrete values). The
// interpreter then redoes the whole function. The types this pass stored are
// the ones the interpreter infers for the same ops, so they pass its checks
// of annotations.

enum class DirectOutcome { kDone, kInterpreterNeeded };

// Checks `inferred` against the annotated type of `r` (if any) and stores it;
// an annotation that refines dynamic extents is kept instead.
Status StoreResultType(const Op& op, Value& r, Type inferred) {
  const Type& annotated = r.type();
  if (annotated.is_unknown() || annotated == inferred) {
    r.set_type(std::move(inferred));
    return Status::Ok();
  }
  if (!Refines(annotated, inferred)) return AnnotationMismatch(op, r, inferred);
  return Status::Ok();
}

StatusOr<DirectOutcome> InferDirect(Function& fn, const MixedDomain* mixed) {
  const ShapeDomain& shapes = DefaultShapeDomain();
  std::vector<const Type*> arg_ptrs;  // reused for every op
  arg_ptrs.reserve(8);
  const std::vector<std::unique_ptr<Op>>& ops = fn.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    PrefetchOps(ops, i);
    const Op& op = *ops[i];
    if (op.is_call() || (mixed != nullptr && !mixed->FallsBackOnAbstract(op))) {
      return DirectOutcome::kInterpreterNeeded;
    }
    arg_ptrs.clear();
    for (const Value* in : op.inputs()) arg_ptrs.push_back(&in->type());
    StatusOr<std::vector<Type>> results =
        shapes.Apply(op, ArgList<Type>(arg_ptrs.data(), static_cast<int>(arg_ptrs.size())));
    if (!results.ok()) return std::move(results).status();
    for (int r = 0; r < op.num_results(); ++r) {
      DISTIR_RETURN_IF_ERROR(StoreResultType(op, *op.result(r), std::move((*results)[r])));
    }
  }
  return DirectOutcome::kDone;
}

template <typename V>
Status InferFunctionFast(const Module& module, Function& fn, const Domain<V>& domain,
                         const MixedDomain* mixed, CallMemo<V>& memo) {
  DISTIR_ASSIGN_OR_RETURN(DirectOutcome outcome, InferDirect(fn, mixed));
  if (outcome == DirectOutcome::kDone) return Status::Ok();
  return InferFunction(module, fn, domain, memo);
}

// Every function is inferred on its own, and calls re-interpret their callees:
// without a memo shared by all functions, a chain of N functions each calling
// the previous one would take N^2/2 op visits. Functions are inferred in
// definition order, so a callee's types are final before any call of it runs.
template <typename V>
Status InferAll(Module& module, const Domain<V>& domain, const MixedDomain* mixed) {
  CallMemo<V> memo;
  for (const std::unique_ptr<Function>& fn : module.functions()) {
    DISTIR_RETURN_IF_ERROR(InferFunctionFast(module, *fn, domain, mixed, memo));
  }
  return Status::Ok();
}

}  // namespace

Status InferTypes(Module& module, const InferOptions& options) {
  if (options.domain == InferDomain::kShape) {
    return InferAll(module, DefaultShapeDomain(), nullptr);
  }
  const MixedDomain& mixed = DefaultMixedDomain();
  return InferAll(module, mixed, &mixed);
}

}  // namespace distir
