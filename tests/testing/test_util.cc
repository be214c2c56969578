#include "testing/test_util.h"

#include <cstdlib>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "support/check.h"

namespace distir::testing {

Module ParseOrDie(std::string_view text) {
  StatusOr<Module> m = ParseModule(text, "<test>");
  DISTIR_CHECK(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

Module ParseAndInferOrDie(std::string_view text) {
  Module m = ParseOrDie(text);
  Status verified = VerifyModule(m);
  DISTIR_CHECK(verified.ok()) << verified.ToString();
  Status inferred = InferTypes(m);
  DISTIR_CHECK(inferred.ok()) << inferred.ToString();
  return m;
}

std::string EntryValueType(const Module& m, const std::string& name) {
  const Value* v = m.entry()->LookupValue(name);
  return v == nullptr ? "<no value %" + name + ">" : v->type().ToString();
}

std::string SourcePath(const std::string& relative) {
  const char* root = std::getenv("DISTIR_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/" + relative;
}

}  // namespace distir::testing
