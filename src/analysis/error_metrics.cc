#include "analysis/error_metrics.h"

#include <algorithm>
#include <cmath>

namespace distir::analysis {
namespace {

Status CheckPairs(const std::vector<double>& predicted, const std::vector<double>& actual,
                  const char* metric) {
  if (predicted.size() != actual.size()) {
    return InvalidArgument() << metric << " needs paired samples, got " << predicted.size()
                             << " predicted and " << actual.size() << " actual values";
  }
  if (predicted.empty()) return InvalidArgument() << metric << " needs at least 1 pair, got 0";
  return Status::Ok();
}

size_t ArgMax(const std::vector<double>& v) {
  // max_element returns the first of equal maxima, so ties go to the lower index.
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

StatusOr<double> MeanAbsolutePercentageError(const std::vector<double>& predicted,
                                             const std::vector<double>& actual) {
  DISTIR_RETURN_IF_ERROR(CheckPairs(predicted, actual, "MAPE"));
  double sum = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == 0) {
      return InvalidArgument() << "MAPE is undefined: actual value " << i << " is 0";
    }
    sum += std::abs(predicted[i] - actual[i]) / std::abs(actual[i]);
  }
  return 100.0 * sum / static_cast<double>(actual.size());
}

StatusOr<Top1Agreement> CompareTop1(const std::vector<double>& predicted,
                                    const std::vector<double>& actual) {
  DISTIR_RETURN_IF_ERROR(CheckPairs(predicted, actual, "top-1 agreement"));
  Top1Agreement result;
  result.predicted_best = ArgMax(predicted);
  result.actual_best = ArgMax(actual);
  result.match = result.predicted_best == result.actual_best;
  return result;
}

}  // namespace distir::analysis
