// Timing a host-side operation for the calibrator: repeat, batch very short
// calls, keep the median (robust to the odd preemption on a shared machine).

#pragma once

#include <functional>

namespace distir::calibrate {

struct TimingOptions {
  int warmup = 1;       ///< untimed calls first (page faults, cache, BLAS setup)
  int min_samples = 5;  ///< at least this many timed samples
  int max_samples = 200;
  double min_total_s = 0.02;   ///< and keep sampling until this much time was measured
  double min_sample_s = 2e-5;  ///< calls are batched so that one sample takes at least this
};

/// Median seconds per call of `body`. A sample times `batch` consecutive calls
/// (batch chosen from the first call's duration so a sample lasts at least
/// min_sample_s) and divides by `batch`; clock overhead is thereby amortised
/// for calls of tens of nanoseconds.
double MedianSecondsPerCall(const std::function<void()>& body, const TimingOptions& options);

}  // namespace distir::calibrate
