#include "sim/memory_kind.h"

namespace distir::sim {

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kWeights: return "weights";
    case MemoryKind::kGradients: return "gradients";
    case MemoryKind::kOptimizerState: return "optimizer_state";
    case MemoryKind::kActivations: return "activations";
    case MemoryKind::kInputs: return "inputs";
    case MemoryKind::kOther: return "other";
  }
  return "other";
}

}  // namespace distir::sim
