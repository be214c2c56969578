// From microbenchmark timings to a hardware profile: the fits of `distir
// calibrate` (derivations in docs/calibration.md).
//
//   MatMul (the dtype the models run in, f32 on CPU):
//       t = intercept + per_flop * flops + per_byte * bytes  -> device.matmul_regression
//   peak_flops.<dtype> = the best FLOP rate the MatMul sweep reached in that dtype
//   Add (run by the executor, executor_benchmarks.h): t = L + bytes / B
//                                          -> kernel_launch_overhead L, dram_bandwidth B
//   Gelu: t = L' + flops / V               -> vector_flops V
//   Send, AllReduce, AllGather, jointly, the ring model of docs/cost_model.md §2.6:
//       t = L_c + steps * alpha + bus_bytes / B_link
//       (Send: 1 step, bus S; AllReduce: 2(n-1), 2(n-1)/n S; AllGather: n-1, (n-1)/n S)
//                                          -> collectives.launch_overhead L_c,
//                                             intra_node.latency alpha, .bandwidth B_link
//   MatMul again, when the base profile has a device.gemm section (the tiled
//   model): its max_efficiency, by a one-dimensional fit (gemm_fit.h)
// Every linear fit is non-negative least squares on relative error (linear_fit.h).
// Whatever the measurements cannot tell (no communication on one rank; no f16
// MatMul on a CPU) keeps the base profile's value, and a note says so.

#pragma once

#include <string>
#include <vector>

#include "calibrate/linear_fit.h"
#include "calibrate/measurement.h"
#include "sim/hardware_profile.h"
#include "support/status_or.h"

namespace distir::calibrate {

/// The fit quality of one op type (for a joint fit, on that op's samples).
struct OpFitReport {
  std::string op;  ///< "MatMul f32", "Add", "Gelu", "Send", "AllReduce", "AllGather"
  FitQuality quality;
};

struct CalibrationFit {
  sim::HardwareProfile profile;    ///< the base profile with the fitted values in place
  std::vector<OpFitReport> fits;   ///< one per op type that was fitted
  std::vector<std::string> notes;  ///< what was not measured and kept from the base
};

/// Fits `measurements` (compute and communication together) onto `base`.
/// Every float dtype with MatMul samples gets a regression of its own
/// (device.matmul_regression.<dtype>); `matmul_dtype` ("f32") must be among
/// them. The tiled GEMM model's efficiency (a base with device.gemm) is fitted
/// to the MatMuls of `tiled_dtype`, or of `matmul_dtype` when it is empty.
/// Errors (InvalidArgument): no MatMul samples of that dtype, no Add or Gelu
/// samples, or a fit whose rate coefficient is 0 (the time did not grow with the
/// work, so no bandwidth or FLOP rate follows), naming the op.
StatusOr<CalibrationFit> FitProfile(const std::vector<Measurement>& measurements,
                                    sim::HardwareProfile base, const std::string& matmul_dtype,
                                    const std::string& tiled_dtype = "");

/// The dtype whose MatMuls fit the tiled GEMM model when the user named none:
/// bf16 if any were measured, else f16, else `fallback`. The model describes
/// tensor-core kernels, and its efficiency, a fraction of each dtype's peak,
/// fitted to f32 CUDA-core products (the --matmul-dtype default) would say
/// nothing of them.
std::string DefaultTiledDtype(const std::vector<Measurement>& measurements,
                              const std::string& fallback);

/// A single-node profile to calibrate onto when no --base is given:
/// `devices` devices of `device_name` with `memory_bytes` each, joined by
/// `link_name`, ring all-reduce; every rate and latency is a placeholder that
/// FitProfile overwrites (or notes as kept).
sim::HardwareProfile DefaultBaseProfile(const std::string& name, const std::string& device_name,
                                        int devices, int64_t memory_bytes,
                                        const std::string& link_name);

}  // namespace distir::calibrate
