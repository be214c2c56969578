// Fitting a non-negative linear cost model t = sum_j c_j * f_j to timings, and
// judging the fit.
//
// Every calibrated cost in a hardware profile is linear in a few features of an
// op (1 for a fixed overhead, FLOPs, bytes, ring steps): see docs/calibration.md.
// The timings span orders of magnitude (a 16x16 MatMul and a 1024^3 one), so the
// fit minimises *relative* error: each row is divided by its measured time
// before the NNLS solve (nnls.h), and each column is scaled to unit norm so that
// a FLOP column of 1e9 and an intercept column of 1 are equally well conditioned.

#pragma once

#include <cstddef>
#include <vector>

#include "support/status_or.h"

namespace distir::calibrate {

/// How well a fitted model predicts the timings it was fitted to.
struct FitQuality {
  size_t n = 0;                      ///< samples
  double r2 = 0;                     ///< 1 - SS_res / SS_tot, on the times themselves
  double median_relative_error = 0;  ///< median of |predicted - measured| / measured
  double max_relative_error = 0;
};

struct LinearFit {
  std::vector<double> coefficients;  ///< one per feature, every one >= 0
  FitQuality quality;
};

/// Fits times[i] ~ sum_j c_j * features[i][j] with c >= 0, minimising the sum of
/// squared relative errors. Errors (InvalidArgument): no samples, rows of
/// different lengths, a time <= 0, or a non-finite value. A feature column that
/// is all zero gets coefficient 0.
StatusOr<LinearFit> FitNonNegative(const std::vector<std::vector<double>>& features,
                                   const std::vector<double>& times);

/// The quality of `coefficients` on (features, times) (also for a subset of the
/// samples a model was fitted to, e.g. one op type of a joint fit).
/// REQUIRES: every row has coefficients.size() entries; times are > 0.
FitQuality EvaluateFit(const std::vector<double>& coefficients,
                       const std::vector<std::vector<double>>& features,
                       const std::vector<double>& times);

}  // namespace distir::calibrate
