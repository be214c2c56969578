#include "interp/infer_types.h"

#include "interp/interpreter.h"
#include "interp/mixed_domain.h"
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
    if (!Refines(annotated, inferred)) {
      return InvalidArgument(op.loc())
             << "type of " << r->Ref() << " is annotated as " << annotated.ToString()
             << " but inferred as " << inferred.ToString();
    }
    v = ValueTraits<V>::FromType(annotated);
  }
  return Status::Ok();
}

template <typename V>
Status InferFunction(const Module& module, Function& fn, const Domain<V>& domain) {
  std::vector<V> args;
  args.reserve(fn.num_params());
  for (const std::unique_ptr<Value>& p : fn.params()) {
    args.push_back(ValueTraits<V>::FromType(p->type()));
  }
  std::vector<V> values;
  // Each op's result types are stored as soon as they are checked, while the
  // op and its results are still in cache (a separate pass over a big program
  // would miss the cache again on every op); a failing op keeps its types.
  return Interpreter<V>(module, domain)
      .Run(fn, args, values, [](const Op& op, std::vector<V>& vals) {
        if (AnyAnnotated(op)) DISTIR_RETURN_IF_ERROR(CheckAnnotations(op, vals));
        for (const std::unique_ptr<Value>& r : op.results()) {
          r->set_type(ValueTraits<V>::TypeOf(vals[r->id()]));
        }
        return Status::Ok();
      });
}

}  // namespace

Status InferTypes(Module& module, const InferOptions& options) {
  for (const std::unique_ptr<Function>& fn : module.functions()) {
    if (options.domain == InferDomain::kShape) {
      DISTIR_RETURN_IF_ERROR(InferFunction(module, *fn, DefaultShapeDomain()));
    } else {
      DISTIR_RETURN_IF_ERROR(InferFunction(module, *fn, DefaultMixedDomain()));
    }
  }
  return Status::Ok();
}

}  // namespace distir
