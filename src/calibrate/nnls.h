// Non-negative least squares: min ||A x - b||_2 subject to x >= 0.
//
// The calibrator fits cost-model coefficients that are physical rates and
// latencies (seconds per FLOP, per byte, per message); a negative one would be a
// fit artefact that makes large ops cheaper, so the fit is constrained. This is
// the active-set algorithm of Lawson and Hanson, "Solving Least Squares
// Problems" (1974), chapter 23, on dense Eigen matrices; linear_fit.h adds the
// column scaling and row weighting the calibration data needs.

#pragma once

#include <Eigen/Dense>

#include "support/status_or.h"

namespace distir::calibrate {

struct NnlsResult {
  Eigen::VectorXd x;         ///< the solution, every entry >= 0
  double residual_norm = 0;  ///< ||A x - b||_2
  int iterations = 0;        ///< outer iterations (variables freed)
};

/// Solves min ||a x - b|| with x >= 0. Columns of very different magnitudes
/// are fine only up to the conditioning of a; scale them first (linear_fit.h).
/// Errors (InvalidArgument): a.rows() != b.size(), no rows or columns, or a
/// non-finite entry. The result is exact (up to rounding) when the
/// unconstrained least-squares solution is already non-negative.
StatusOr<NnlsResult> SolveNnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

}  // namespace distir::calibrate
