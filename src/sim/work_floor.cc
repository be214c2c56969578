#include "sim/work_floor.h"

#include <limits>

#include "sim/cost_model.h"

namespace distir::sim {
namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// FLOPs per second at `peak` x `efficiency`; unbounded where that is 0 (the
// cost model then gives the op no compute time).
double RateOf(double peak, double efficiency) {
  const double rate = peak * efficiency;
  return rate > 0 ? rate : kUnbounded;
}

// MatMulKernelTime's ceiling: the regression's 1 / per_flop, or the peak.
std::optional<double> KernelRate(const DeviceSpec& device, DType dtype) {
  if (const MatMulRegression* r = device.RegressionFor(dtype)) {
    if (r->intercept_s < 0 || r->per_flop_s < 0 || r->per_byte_s < 0) return std::nullopt;
    return r->per_flop_s > 0 ? 1 / r->per_flop_s : kUnbounded;
  }
  return RateOf(device.MatrixFlops(dtype), 1);
}

DType OperandDType(const Op& op) {
  const Type& t = op.input(0)->type();
  return t.is_tensor() ? t.dtype() : DType::kF32;
}

}  // namespace

std::optional<double> MatrixRateCeiling(const Op& op, const DeviceSpec& device) {
  if (op.is_call()) return std::nullopt;
  const DType dtype = OperandDType(op);
  switch (op.kind()) {
    case OpKind::kMatMul:
    case OpKind::kGemm:
    case OpKind::kMatMulGrad:
      if (device.gemm.has_value())
        return RateOf(device.MatrixFlops(dtype), device.gemm->max_efficiency);
      return KernelRate(device, dtype);
    case OpKind::kFlashAttention:
    case OpKind::kFlashAttentionGrad:
      if (device.attention.has_value() && device.gemm.has_value()) {
        const double efficiency = op.kind() == OpKind::kFlashAttention
                                      ? device.attention->max_efficiency
                                      : device.attention->backward_max_efficiency;
        return RateOf(device.MatrixFlops(dtype), efficiency);
      }
      return KernelRate(device, dtype);
    default:
      return std::nullopt;
  }
}

double BoundedMatrixFlops(const Op& op) {
  const std::optional<double> flops = MatrixOpFlops(op);
  if (!flops) return 0;
  if (op.kind() != OpKind::kGemm || op.num_inputs() != 3) return *flops;
  const Type& y = op.result(0)->type();
  return *flops - (y.is_tensor() ? static_cast<double>(y.NumElements()) : 0);
}

bool IsSplitInvariantStreaming(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow:
    case OpKind::kWhere:
    case OpKind::kNeg:
    case OpKind::kSqrt:
    case OpKind::kExp:
    case OpKind::kErf:
    case OpKind::kTanh:
    case OpKind::kRelu:
    case OpKind::kReluGrad:
    case OpKind::kGelu:
    case OpKind::kGeluGrad:
    case OpKind::kSigmoid:
    case OpKind::kSigmoidGrad:
    case OpKind::kSoftmax:
    case OpKind::kSoftmaxGrad:
    case OpKind::kLayerNormalization:
    case OpKind::kLayerNormalizationGrad:
    case OpKind::kRMSNormalization:
    case OpKind::kRMSNormalizationGrad:
    case OpKind::kRope:
    case OpKind::kAdam:
    case OpKind::kSGD:
      return true;
    default:
      return false;
  }
}

std::optional<double> WorkFloorS(const Function& fn, const HardwareProfile& hw) {
  std::optional<double> seconds = MatrixWorkFloorS(fn, hw.device);
  if (!seconds) return std::nullopt;
  CostModel costs(hw, nullptr);
  for (const auto& op : fn.ops()) {
    if (!IsSplitInvariantStreaming(op->kind())) continue;  // a call is none of them
    StatusOr<double> t = costs.OpCost(*op);
    if (t.ok()) *seconds += *t;  // an op without a cost adds nothing: a lower floor
  }
  return seconds;
}

std::optional<double> MatrixWorkFloorS(const Function& fn, const DeviceSpec& device) {
  double seconds = 0;
  for (const auto& op : fn.ops()) {
    if (!MatrixOpFlops(*op)) continue;
    const std::optional<double> rate = MatrixRateCeiling(*op, device);
    if (!rate) return std::nullopt;
    seconds += BoundedMatrixFlops(*op) / *rate;
  }
  return seconds;
}

}  // namespace distir::sim
