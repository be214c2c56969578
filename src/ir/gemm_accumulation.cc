#include "ir/gemm_accumulation.h"

namespace distir {

bool IsFusedWeightGradient(const Value& v) {
  const Op* op = v.def();
  return op != nullptr && op->kind() == OpKind::kMatMulGrad && v.index() == 1 &&
         op->FindAttr("dw_dtype") != nullptr;
}

bool IsGemmAccumulation(const Op& op) {
  return op.kind() == OpKind::kAdd && op.GetInt(kGemmAccumulateAttr, 0) != 0;
}

}  // namespace distir
