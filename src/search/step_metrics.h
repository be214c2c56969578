// What a transformer training step's simulation says beyond time and memory:
// the memory kind of each of its values (for the simulator's breakdown) and
// tokens/s, model TFLOP/s per GPU and MFU (docs/cost_model.md §7). Shared by
// `distir simulate` and `distir search`, which stores them in results.h5
// (docs/results_format.md).

#pragma once

#include <cstdint>

#include "io/results_file.h"
#include "models/transformer.h"
#include "search/experiment.h"
#include "sim/hardware_profile.h"
#include "sim/memory_kind.h"
#include "sim/simulator.h"

namespace distir::search {

/// True when the experiment's configurations are transformer training steps
/// (a zoo transformer, not an ONNX import): their rows carry StepFigures.
bool RecordsStepFigures(const Experiment& e);

/// The memory kind of a value of BuildTransformerTraining()'s step, from its
/// role (models/transformer_metrics.h): weights, gradients, optimizer state,
/// activations, inputs, other.
sim::MemoryKind TransformerMemoryKind(const Value& v);

/// Throughput figures of one step.
struct StepMetrics {
  int64_t tokens = 0;      ///< tokens per step (batch x seq_length)
  double model_flops = 0;  ///< per step, without recomputation
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  ///< model FLOP/s per device, in TFLOP/s
  double peak_tflops = 0;     ///< the profile's matrix peak for the compute dtype
  double mfu = 0;             ///< model FLOP/s / (devices x peak)
};

/// The figures of `r`, a simulation of the step `o` describes (its batch the
/// global batch) on `hw`; the devices are those of `r`. Zero rates for a
/// time of 0.
StepMetrics TransformerStepMetrics(const TransformerOptions& o, const sim::HardwareProfile& hw,
                                   const sim::SimulationResult& r);

/// The row figures of a results file: the metrics and the kinds at the peak
/// of the device with the largest peak (all zero when `r` has no kinds).
io::StepFigures StepFiguresOf(const StepMetrics& m, const sim::SimulationResult& r);

/// Communication not hidden behind compute on the device where it is largest.
double MaxExposedCommunicationS(const sim::SimulationResult& r);

}  // namespace distir::search
