// Timing a host-side operation for the calibrator: repeat, batch short calls
// into samples of a chosen length, keep the median sample.
//
// The sample length is the time scale the cost is meant for. `distir run`
// times whole iterations (5-100 ms) and keeps their median, so on a machine
// whose cores are shared with other work an op's cost is its *sustained* time,
// preemptions by the other work included: a 20 us kernel timed alone runs at
// full speed between preemptions, but a thousand of them in an iteration get
// only the share of the core the scheduler gives this rank. Samples of several
// milliseconds measure that share; microsecond samples measure the idle core.

#pragma once

#include <functional>
#include <vector>

namespace distir::calibrate {

struct TimingOptions {
  int warmup = 2;       ///< untimed calls first (page faults, cache, BLAS setup)
  int min_samples = 5;  ///< at least this many timed samples
  int max_samples = 200;
  double min_total_s = 0.02;   ///< and keep sampling until this much time was measured
  double min_sample_s = 2e-5;  ///< calls are batched so that one sample takes at least this
  double warmup_s = 0;         ///< and also keep warming up (untimed) for at least this long
};

/// Median seconds per call of `body`. A sample times `batch` consecutive calls
/// (batch chosen from the first call's duration so a sample lasts at least
/// min_sample_s) and divides by `batch`; clock overhead is thereby amortised
/// for calls of tens of nanoseconds.
double MedianSecondsPerCall(const std::function<void()>& body, const TimingOptions& options);

/// The median of `samples` (of an even count, the upper middle one: always a
/// measured value). REQUIRES: `samples` non-empty.
double MedianSample(std::vector<double> samples);

}  // namespace distir::calibrate
