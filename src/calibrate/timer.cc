#include "calibrate/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace distir::calibrate {
namespace {

double Seconds(const std::function<void()>& body, int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double MedianSecondsPerCall(const std::function<void()>& body, const TimingOptions& options) {
  for (int i = 0; i < options.warmup; ++i) body();
  // Bring the core out of any idle state and the caches into their working state.
  const auto warm_until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.warmup_s);
  while (std::chrono::steady_clock::now() < warm_until) body();
  const double first = std::max(Seconds(body, 1), 1e-9);
  const int batch = static_cast<int>(std::clamp(std::ceil(options.min_sample_s / first), 1.0, 1e6));
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < options.max_samples &&
         (static_cast<int>(samples.size()) < options.min_samples || total < options.min_total_s)) {
    const double s = Seconds(body, batch);
    total += s;
    samples.push_back(s / batch);
  }
  return MedianSample(std::move(samples));
}

double MedianSample(std::vector<double> samples) {
  std::nth_element(samples.begin(), samples.begin() + static_cast<long>(samples.size() / 2),
                   samples.end());
  return samples[samples.size() / 2];
}

}  // namespace distir::calibrate
