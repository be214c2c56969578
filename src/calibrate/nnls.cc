#include "calibrate/nnls.h"

#include <vector>

namespace distir::calibrate {
namespace {

// Unconstrained least squares on the columns in `passive`; zero elsewhere.
Eigen::VectorXd SolvePassive(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                             const std::vector<bool>& passive) {
  std::vector<Eigen::Index> cols;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    if (passive[static_cast<size_t>(j)]) cols.push_back(j);
  }
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t i = 0; i < cols.size(); ++i) sub.col(static_cast<Eigen::Index>(i)) = a.col(cols[i]);
  // Complete orthogonal decomposition: the minimum-norm solution even when the
  // passive columns are rank deficient.
  Eigen::VectorXd s_sub = sub.completeOrthogonalDecomposition().solve(b);
  Eigen::VectorXd s = Eigen::VectorXd::Zero(a.cols());
  for (size_t i = 0; i < cols.size(); ++i) s(cols[i]) = s_sub(static_cast<Eigen::Index>(i));
  return s;
}

// Inner loop of Lawson-Hanson: step from x towards s until the passive solution
// is strictly positive, dropping the variables that hit zero.
Eigen::VectorXd FeasibleStep(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, Eigen::VectorXd x,
                             std::vector<bool>& passive, double tol) {
  for (Eigen::Index guard = 0; guard <= 3 * a.cols(); ++guard) {
    Eigen::VectorXd s = SolvePassive(a, b, passive);
    double alpha = 1.0;
    bool feasible = true;
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      if (!passive[static_cast<size_t>(j)] || s(j) > tol) continue;
      feasible = false;
      alpha = std::min(alpha, x(j) / (x(j) - s(j)));
    }
    if (feasible) return s;
    x += alpha * (s - x);
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      if (passive[static_cast<size_t>(j)] && x(j) <= tol) {
        passive[static_cast<size_t>(j)] = false;
        x(j) = 0;
      }
    }
  }
  return x;
}

}  // namespace

StatusOr<NnlsResult> SolveNnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  if (a.rows() != b.size()) {
    return InvalidArgument() << "NNLS: the matrix has " << a.rows()
                             << " rows but the right-hand side " << b.size() << " entries";
  }
  if (a.rows() == 0 || a.cols() == 0) return InvalidArgument() << "NNLS: empty system";
  if (!a.allFinite() || !b.allFinite()) return InvalidArgument() << "NNLS: non-finite entry";
  const Eigen::Index n = a.cols();
  // Tolerance on the dual (gradient) test, relative to the problem's scale.
  const double tol = 10 * std::numeric_limits<double>::epsilon() * a.norm() * b.norm() *
                     static_cast<double>(std::max(a.rows(), n));
  NnlsResult result;
  result.x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<size_t>(n), false);
  for (; result.iterations < 3 * n + 10; ++result.iterations) {
    Eigen::VectorXd w = a.transpose() * (b - a * result.x);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<size_t>(j)] && w(j) > tol && (best < 0 || w(j) > w(best))) best = j;
    }
    if (best < 0) break;  // Kuhn-Tucker conditions hold: optimal.
    passive[static_cast<size_t>(best)] = true;
    result.x = FeasibleStep(a, b, result.x, passive, 0.0);
  }
  result.residual_norm = (a * result.x - b).norm();
  return result;
}

}  // namespace distir::calibrate
