// Calibrating the tiled GEMM model (sim/gemm_model.h): fits
// device.gemm.max_efficiency to the MatMul timings of `distir calibrate`.
//
// The tiled model is not linear in its parameter (its time is
// waves · (wave FLOPs / (efficiency · peak) + overhead) against a memory bound),
// so it gets its own one-dimensional fit instead of the NNLS of linear_fit.h:
// the efficiency that minimises the squared relative error over the sweep, as
// the linear fits do (docs/calibration.md §2). Tile shape, SM count and the
// per-wave overhead are kept from the base profile: they describe the kernels,
// and one sweep of square-ish shapes cannot tell them apart from the efficiency.
// So are the peaks (FitProfile does not replace them by the best measured rate
// when the base has a gemm section): the efficiency is a fraction of the
// datasheet peak, and it cannot exceed 1.

#pragma once

#include <string>
#include <vector>

#include "calibrate/linear_fit.h"
#include "calibrate/measurement.h"
#include "sim/hardware_profile.h"
#include "support/status_or.h"

namespace distir::calibrate {

/// Sets `profile.device.gemm->max_efficiency` to the value in [0.01, 1] (on a
/// grid of step 0.001) whose tiled model best predicts the MatMul measurements
/// of `dtype`, with the profile's peak for that dtype, its DRAM bandwidth and
/// launch overhead as they stand (fit those first). Returns the fit quality.
/// REQUIRES: profile.device.gemm has a value.
/// Errors (InvalidArgument): no MatMul measurements of `dtype`, a shape that is
/// not "MxNxK..." (what the benchmarks write), or an unknown dtype name.
StatusOr<FitQuality> FitGemmEfficiency(const std::vector<Measurement>& measurements,
                                       const std::string& dtype, sim::HardwareProfile& profile);

}  // namespace distir::calibrate
