// Helpers of the interp unit tests: infer a small program, read back a type.

#pragma once

#include <string>
#include <string_view>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "testing/test_util.h"

namespace distir::testing {

/// Parses `text`, verifies it when `verify`, infers types in `domain` and
/// returns the type of %`name` in the entry function as text, or
/// "error: <message>" when verification or inference fails.
inline std::string InferredType(std::string_view text, const std::string& name = "y",
                                InferDomain domain = InferDomain::kShape, bool verify = true) {
  Module m = ParseOrDie(text);
  if (verify) {
    Status verified = VerifyModule(m);
    if (!verified.ok()) return "verifier error: " + verified.message();
  }
  Status inferred = InferTypes(m, {domain});
  if (!inferred.ok()) return "error: " + inferred.message();
  const Value* v = m.entry()->LookupValue(name);
  return v == nullptr ? "no value %" + name : v->type().ToString();
}

/// The error message of inferring `text` (unverified: the rules must reject
/// what the verifier would also reject), or "ok".
inline std::string InferError(std::string_view text, InferDomain domain = InferDomain::kShape) {
  Module m = ParseOrDie(text);
  Status inferred = InferTypes(m, {domain});
  return inferred.ok() ? std::string("ok") : inferred.message();
}

/// Wraps `body` into `func @f(params) { body  return %y }`.
inline std::string Fn(std::string_view params, std::string_view body, std::string_view ret = "%y") {
  return "func @f(" + std::string(params) + ") {\n" + std::string(body) + "\n  return " +
         std::string(ret) + "\n}\n";
}

}  // namespace distir::testing
