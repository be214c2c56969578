#include "calibrate/linear_fit.h"

#include <algorithm>
#include <cmath>

#include "calibrate/nnls.h"

namespace distir::calibrate {
namespace {

Status CheckSamples(const std::vector<std::vector<double>>& features,
                    const std::vector<double>& times) {
  if (features.empty() || features.size() != times.size()) {
    return InvalidArgument() << "fit needs one time per sample and at least one sample, got "
                             << features.size() << " samples and " << times.size() << " times";
  }
  for (size_t i = 0; i < features.size(); ++i) {
    if (features[i].size() != features[0].size()) {
      return InvalidArgument() << "fit sample " << i << " has " << features[i].size()
                               << " features, sample 0 has " << features[0].size();
    }
    if (!(times[i] > 0) || !std::isfinite(times[i])) {
      return InvalidArgument() << "fit sample " << i << " has time " << times[i]
                               << "; times must be positive";
    }
  }
  return Status::Ok();
}

double Predict(const std::vector<double>& c, const std::vector<double>& f) {
  double t = 0;
  for (size_t j = 0; j < c.size(); ++j) t += c[j] * f[j];
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

StatusOr<LinearFit> FitNonNegative(const std::vector<std::vector<double>>& features,
                                   const std::vector<double>& times) {
  DISTIR_RETURN_IF_ERROR(CheckSamples(features, times));
  const auto rows = static_cast<Eigen::Index>(features.size());
  const auto cols = static_cast<Eigen::Index>(features[0].size());
  Eigen::MatrixXd a(rows, cols);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(rows);  // t_i / t_i: relative error
  for (Eigen::Index i = 0; i < rows; ++i) {
    for (Eigen::Index j = 0; j < cols; ++j) {
      a(i, j) =
          features[static_cast<size_t>(i)][static_cast<size_t>(j)] / times[static_cast<size_t>(i)];
    }
  }
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < cols; ++j) {
    if (scale(j) == 0) scale(j) = 1;  // an all-zero feature: coefficient 0 either way
    a.col(j) /= scale(j);
  }
  DISTIR_ASSIGN_OR_RETURN(NnlsResult solved, SolveNnls(a, b));
  LinearFit fit;
  for (Eigen::Index j = 0; j < cols; ++j) fit.coefficients.push_back(solved.x(j) / scale(j));
  fit.quality = EvaluateFit(fit.coefficients, features, times);
  return fit;
}

FitQuality EvaluateFit(const std::vector<double>& coefficients,
                       const std::vector<std::vector<double>>& features,
                       const std::vector<double>& times) {
  FitQuality q;
  q.n = times.size();
  if (q.n == 0) return q;
  double mean = 0;
  for (double t : times) mean += t;
  mean /= static_cast<double>(q.n);
  double ss_res = 0, ss_tot = 0;
  std::vector<double> rel;
  for (size_t i = 0; i < q.n; ++i) {
    const double p = Predict(coefficients, features[i]);
    ss_res += (p - times[i]) * (p - times[i]);
    ss_tot += (times[i] - mean) * (times[i] - mean);
    rel.push_back(std::abs(p - times[i]) / times[i]);
  }
  // One sample, or identical times: R^2 is undefined; report a perfect fit as 1.
  q.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  q.median_relative_error = Median(rel);
  q.max_relative_error = *std::max_element(rel.begin(), rel.end());
  return q;
}

}  // namespace distir::calibrate
