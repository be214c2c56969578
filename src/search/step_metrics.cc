#include "search/step_metrics.h"

#include <algorithm>
#include <string_view>

#include "models/transformer_metrics.h"

namespace distir::search {

// results.h5 names the kinds as the simulator does, in its order.
static_assert(io::kNumMemoryKindColumns == sim::kNumMemoryKinds);

bool RecordsStepFigures(const Experiment& e) {
  return e.model.family == ModelFamily::kTransformerTraining && !e.model_file;
}

sim::MemoryKind TransformerMemoryKind(const Value& v) {
  switch (ClassifyTransformerValue(v)) {
    case TransformerValueRole::kWeight:
      return sim::MemoryKind::kWeights;
    case TransformerValueRole::kGradient:
      return sim::MemoryKind::kGradients;
    case TransformerValueRole::kOptimizerState:
      return sim::MemoryKind::kOptimizerState;
    case TransformerValueRole::kActivation:
      return sim::MemoryKind::kActivations;
    case TransformerValueRole::kInput:
      return sim::MemoryKind::kInputs;
    case TransformerValueRole::kOther:
      return sim::MemoryKind::kOther;
  }
  return sim::MemoryKind::kOther;
}

StepMetrics TransformerStepMetrics(const TransformerOptions& o, const sim::HardwareProfile& hw,
                                   const sim::SimulationResult& r) {
  StepMetrics m;
  m.tokens = TransformerTokensPerStep(o);
  m.model_flops = TransformerModelFlops(o);
  m.peak_tflops = hw.device.MatrixFlops(o.params_dtype) / 1e12;
  const double devices = static_cast<double>(std::max<size_t>(r.devices.size(), 1));
  if (r.iteration_time_s <= 0) return m;
  m.tokens_per_s = static_cast<double>(m.tokens) / r.iteration_time_s;
  m.tflops_per_gpu = m.model_flops / r.iteration_time_s / devices / 1e12;
  m.mfu = m.peak_tflops > 0 ? m.tflops_per_gpu / m.peak_tflops : 0;
  return m;
}

io::StepFigures StepFiguresOf(const StepMetrics& m, const sim::SimulationResult& r) {
  io::StepFigures f;
  f.tokens_per_s = m.tokens_per_s;
  f.tflops_per_gpu = m.tflops_per_gpu;
  f.mfu = m.mfu;
  const sim::DeviceResult* peak = nullptr;
  for (const sim::DeviceResult& d : r.devices) {
    if (peak == nullptr || d.peak_memory_bytes > peak->peak_memory_bytes) peak = &d;
  }
  if (peak != nullptr && peak->memory_at_peak.has_value()) {
    std::copy(peak->memory_at_peak->begin(), peak->memory_at_peak->end(), f.memory_at_peak.begin());
  }
  return f;
}

double MaxExposedCommunicationS(const sim::SimulationResult& r) {
  double most = 0;
  for (const sim::DeviceResult& d : r.devices) most = std::max(most, d.ExposedCommunicationS());
  return most;
}

}  // namespace distir::search
