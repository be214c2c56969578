#include "interp/shape_domain.h"

namespace distir {

const ShapeDomain& DefaultShapeDomain() {
  // Built on first use (thread-safe), never destroyed: no static-initialization
  // or destruction-order dependence.
  static const ShapeDomain* const kDomain = [] {
    auto* domain = new ShapeDomain();
    RegisterShapeRules(*domain);
    return domain;
  }();
  return *kDomain;
}

}  // namespace distir
