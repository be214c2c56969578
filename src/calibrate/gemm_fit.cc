#include "calibrate/gemm_fit.h"

#include <charconv>
#include <limits>
#include <optional>

#include "sim/gemm_model.h"
#include "support/check.h"

namespace distir::calibrate {
namespace {

// "256x1024x4096NT" -> {1, 256, 1024, 4096}: the benchmarks' shape names
// (m x n x k, then the layout letters, which the model ignores).
std::optional<sim::GemmShape> ParseShape(const std::string& name) {
  double dims[3] = {0, 0, 0};
  const char* p = name.data();
  const char* end = name.data() + name.size();
  for (int i = 0; i < 3; ++i) {
    int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || v < 0) return std::nullopt;
    dims[i] = static_cast<double>(v);
    p = next;
    if (i < 2 && (p == end || *p++ != 'x')) return std::nullopt;
  }
  return sim::GemmShape{1, dims[0], dims[1], dims[2]};
}

struct Sample {
  sim::GemmShape shape;
  double bytes;
  double time_s;
};

double SquaredRelativeError(const sim::HardwareProfile& hw, DType dtype,
                            const std::vector<Sample>& samples) {
  double total = 0;
  for (const Sample& s : samples) {
    const double t =
        sim::EstimateTiledGemm(hw.device, *hw.device.gemm, dtype, s.shape, s.bytes).time_s;
    const double e = (t - s.time_s) / s.time_s;
    total += e * e;
  }
  return total;
}

}  // namespace

StatusOr<FitQuality> FitGemmEfficiency(const std::vector<Measurement>& measurements,
                                       const std::string& dtype, sim::HardwareProfile& profile) {
  DISTIR_CHECK(profile.device.gemm.has_value()) << "FitGemmEfficiency needs a device.gemm section";
  const std::optional<DType> type = ParseDType(dtype);
  if (!type)
    return InvalidArgument() << "calibration of the tiled GEMM model: unknown dtype '" << dtype
                             << "'";
  std::vector<Sample> samples;
  for (const Measurement& m : measurements) {
    if (m.op != "MatMul" || m.dtype != dtype || !(m.time_s > 0)) continue;
    const std::optional<sim::GemmShape> shape = ParseShape(m.shape);
    if (!shape) {
      return InvalidArgument() << "calibration of the tiled GEMM model: MatMul shape '" << m.shape
                               << "' is not MxNxK";
    }
    samples.push_back({*shape, m.bytes, m.time_s});
  }
  if (samples.empty()) {
    return InvalidArgument() << "calibration has no MatMul " << dtype
                             << " measurements for the tiled GEMM model";
  }
  // The error is not convex in the efficiency where the memory bound takes
  // over, so a grid (1000 points, each a pass over ~100 samples) beats a
  // descent that could stop at a kink.
  sim::GemmTiling& g = *profile.device.gemm;
  double best = 1, best_error = std::numeric_limits<double>::infinity();
  for (int i = 10; i <= 1000; ++i) {
    g.max_efficiency = i / 1000.0;
    const double error = SquaredRelativeError(profile, *type, samples);
    if (error < best_error) {
      best_error = error;
      best = g.max_efficiency;
    }
  }
  g.max_efficiency = best;
  // The quality, through EvaluateFit on one feature (the prediction) with coefficient 1.
  std::vector<std::vector<double>> predicted;
  std::vector<double> times;
  for (const Sample& s : samples) {
    predicted.push_back(
        {sim::EstimateTiledGemm(profile.device, g, *type, s.shape, s.bytes).time_s});
    times.push_back(s.time_s);
  }
  return EvaluateFit({1.0}, predicted, times);
}

}  // namespace distir::calibrate
