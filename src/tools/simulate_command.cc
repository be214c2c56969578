// distir simulate FILE --hardware PROFILE.yaml [--trace OUT.json] [--json] [-o OUT] [--batch N]
// distir simulate --model NAME [--batch N] [--dp D --tp T --pp P --microbatches K
//                 --schedule gpipe|1f1b --recompute --zero S] --hardware PROFILE.yaml
//                 [--trace OUT.json] [--json] [-o OUT] [--emit-ir OUT.distir]
// distir simulate --megatron-args "LINE" [--world-size N] --hardware PROFILE.yaml [...]

#include <boost/program_options.hpp>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "models/megatron_args.h"
#include "models/model_zoo.h"
#include "models/transformer_sharding.h"
#include "search/evaluator.h"
#include "search/memory_estimate.h"
#include "search/model_grid.h"
#include "search/step_metrics.h"
#include "sharding/distribute.h"
#include "sharding/grid.h"
#include "sim/chrome_trace.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "support/checked_math.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct SimulateFlags {
  std::string input;
  std::string hardware;
  std::string trace;
  bool json = false;
  int64_t batch = 0;  // 0: the simulator's default (with --model: the model's)
  // Model mode: build a named model and distribute it.
  std::string model;
  // --megatron-args: the model read from a Megatron launch line instead.
  std::optional<ModelSpec> megatron;
  std::string schedule = "1f1b";
  bool recompute = false;  // --recompute: parallel.recompute is kFull
  std::string emit_ir;
  std::string output = "-";  // where the summary or the JSON goes
  ParallelOptions parallel;
  int64_t max_memory = 0;  // bytes; 0: no limit
  // Transformer models: stage transfers by Megatron's scatter-gather (off with
  // --megatron-args' --no-scatter-gather-tensors-in-pipeline).
  bool scatter_gather = true;
};

// Names in the JSON come from the input (the profile's, the function's): invalid
// UTF-8 in them is replaced rather than thrown as json::type_error (issue 20).
std::string DumpJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The knobs of model mode, for --json; virtual_stages only when interleaved,
// so that other JSON stays as it was.
nlohmann::json KnobsJson(const SimulateFlags& f) {
  const ParallelOptions& o = f.parallel;
  nlohmann::json j = {{"model", f.model},
                      {"dp", o.dp},
                      {"tp", o.tp},
                      {"pp", o.pp},
                      {"microbatches", o.microbatches},
                      {"schedule", std::string(ScheduleName(o.schedule))},
                      {"recompute", o.recompute != RecomputeKind::kNone},
                      {"zero_stage", o.zero_stage}};
  if (o.virtual_stages != 1) j["virtual_stages"] = o.virtual_stages;
  if (o.sequence_parallel) j["sequence_parallel"] = true;
  return j;
}

// The device that communicated most (the first of them): the one the
// summary's overlap line describes. REQUIRES: r.devices is not empty.
const sim::DeviceResult& MostCommunication(const sim::SimulationResult& r) {
  const sim::DeviceResult* best = &r.devices.front();
  for (const sim::DeviceResult& d : r.devices) {
    if (d.communication_s > best->communication_s) best = &d;
  }
  return *best;
}

// Only with a communication stream, so that the JSON of one-stream profiles
// stays as it was: the overlap figures of the simulation.
void AddOverlapJson(const sim::SimulationResult& r, nlohmann::json& j) {
  if (!r.comm_stream) return;
  j["comm_stream"] = true;
  j["single_stream_time_s"] = r.single_stream_time_s;
  j["overlap_saved_s"] = r.single_stream_time_s - r.iteration_time_s;
  for (const sim::DeviceResult& d : r.devices) {
    nlohmann::json& dev = j["devices"][d.device.ToString()];
    dev["busy_s"] = d.compute_s + d.communication_s - d.overlapped_s;
    dev["overlapped_s"] = d.overlapped_s;
    dev["exposed_communication_s"] = d.ExposedCommunicationS();
  }
}

nlohmann::json KindsJson(const sim::MemoryByKind& bytes) {
  nlohmann::json j = nlohmann::json::object();
  for (int k = 0; k < sim::kNumMemoryKinds; ++k) {
    j[std::string(sim::MemoryKindName(static_cast<sim::MemoryKind>(k)))] = bytes[k];
  }
  return j;
}

// Only with a memory classifier (transformer models), so that other JSON
// stays as it was: each device's bytes per kind at its peak, and per kind.
void AddMemoryKindsJson(const sim::SimulationResult& r, nlohmann::json& j) {
  for (const sim::DeviceResult& d : r.devices) {
    if (!d.memory_at_peak || !d.peak_memory_by_kind) continue;
    nlohmann::json& dev = j["devices"][d.device.ToString()];
    dev["memory_at_peak_by_kind"] = KindsJson(*d.memory_at_peak);
    dev["peak_memory_by_kind"] = KindsJson(*d.peak_memory_by_kind);
  }
}

nlohmann::json ResultJson(const Function& fn, const sim::HardwareProfile& hw,
                          const sim::SimulationResult& r) {
  nlohmann::json per_device = nlohmann::json::object();
  nlohmann::json devices = nlohmann::json::object();
  for (const sim::DeviceResult& d : r.devices) {
    std::string name = d.device.ToString();
    per_device[name] = d.peak_memory_bytes;
    devices[name] = {{"compute_s", d.compute_s},
                     {"communication_s", d.communication_s},
                     {"busy_s", d.compute_s + d.communication_s},
                     {"idle_s", d.idle_s},
                     {"peak_memory_bytes", d.peak_memory_bytes}};
  }
  nlohmann::json j = {{"function", "@" + fn.name()},
                      {"hardware", hw.name},
                      {"iteration_time_s", r.iteration_time_s},
                      {"batch_size", r.batch_size},
                      {"throughput", r.throughput},
                      {"peak_memory_bytes", r.PeakMemoryBytes()},
                      {"peak_memory_bytes_per_device", per_device},
                      {"memory_capacity_bytes", r.memory_capacity_bytes},
                      {"fits_in_memory", r.fits_in_memory},
                      {"num_ops", r.num_ops},
                      {"num_devices", r.devices.size()},
                      {"devices", devices}};
  AddOverlapJson(r, j);
  AddMemoryKindsJson(r, j);
  return j;
}

// "512 B", "6.19 KiB", "1.50 GiB".
std::string Bytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  std::ostringstream os;
  if (unit == 0) {
    os << bytes << " B";
  } else {
    os << std::fixed << std::setprecision(2) << value << " " << kUnits[unit];
  }
  return os.str();
}

std::string Millis(double seconds) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << seconds * 1e3 << " ms";
  return os.str();
}

// Two lines on what the communication stream did: how much of the busiest
// communicator's communication was hidden, and the time against one stream.
void PrintOverlap(const sim::SimulationResult& r, std::ostream& os) {
  if (!r.comm_stream || r.devices.empty()) return;
  const sim::DeviceResult& d = MostCommunication(r);
  const double saved = r.single_stream_time_s - r.iteration_time_s;
  std::ostringstream percent;
  percent << std::fixed << std::setprecision(1)
          << (r.single_stream_time_s > 0 ? 100 * saved / r.single_stream_time_s : 0.0);
  os << "communication   " << Millis(d.communication_s) << " on " << d.device.ToString()
     << ", of which exposed " << Millis(d.ExposedCommunicationS()) << " (overlapped "
     << Millis(d.overlapped_s) << ")\n"
     << "one stream      " << Millis(r.single_stream_time_s) << ": overlap saved " << Millis(saved)
     << " (" << percent.str() << " %)\n";
}

// With a memory classifier: per device, the bytes of each kind at the peak
// and each kind's own peak.
void PrintMemoryKinds(const sim::SimulationResult& r, std::ostream& os) {
  for (const sim::DeviceResult& d : r.devices) {
    if (!d.memory_at_peak || !d.peak_memory_by_kind) continue;
    os << "\nmemory of " << d.device.ToString() << " by kind   at peak       own peak\n";
    for (int k = 0; k < sim::kNumMemoryKinds; ++k) {
      os << "  " << std::setw(20) << sim::MemoryKindName(static_cast<sim::MemoryKind>(k))
         << std::setw(14) << Bytes((*d.memory_at_peak)[k]) << Bytes((*d.peak_memory_by_kind)[k])
         << "\n";
    }
  }
}

void PrintSummary(const Function& fn, const sim::HardwareProfile& hw,
                  const sim::SimulationResult& r, std::ostream& os) {
  os << "@" << fn.name() << " on " << hw.name << ": " << r.num_ops << " ops, " << r.devices.size()
     << " devices\n"
     << "iteration time  " << Millis(r.iteration_time_s) << "\n";
  PrintOverlap(r, os);
  os << "throughput      " << r.throughput << " samples/s (batch " << r.batch_size << ")\n"
     << "peak memory     " << Bytes(r.PeakMemoryBytes()) << " (capacity "
     << Bytes(r.memory_capacity_bytes) << " per device"
     << (r.fits_in_memory ? ", fits" : ", DOES NOT FIT") << ")\n\n";
  os << std::left << std::setw(8) << "device" << std::setw(14) << "compute" << std::setw(14)
     << "comm";
  if (r.comm_stream) os << std::setw(14) << "exposed";
  os << std::setw(14) << "idle"
     << "peak memory\n";
  for (const sim::DeviceResult& d : r.devices) {
    os << std::setw(8) << d.device.ToString() << std::setw(14) << Millis(d.compute_s)
       << std::setw(14) << Millis(d.communication_s);
    if (r.comm_stream) os << std::setw(14) << Millis(d.ExposedCommunicationS());
    os << std::setw(14) << Millis(d.idle_s) << Bytes(d.peak_memory_bytes) << "\n";
  }
  PrintMemoryKinds(r, os);
}

// A result whose time is not finite would print as null in the JSON and
// nonsense in the summary: an error instead (the cost model already rejects a
// non-finite op; the sums of many finite ones can still overflow).
Status CheckFinite(const sim::SimulationResult& r, const sim::HardwareProfile& hw) {
  if (std::isfinite(r.iteration_time_s) && std::isfinite(r.throughput)) return Status::Ok();
  return ResourceExhausted() << "the simulated iteration time is not finite (" << r.iteration_time_s
                             << " s): hardware profile '" << hw.name
                             << "' has rates too low or overheads too high for this program";
}

// The summary or the JSON, to stdout or (atomically) to -o FILE.
int WriteResult(const SimulateFlags& f, const std::string& text) {
  Status written = WriteOutputAtomically(f.output, text);
  return written.ok() ? kExitOk : ReportError(written);
}

StatusOr<sim::HardwareProfile> LoadProfile(const std::string& path, std::string* text) {
  DISTIR_ASSIGN_OR_RETURN(*text, ReadInput(path));
  return sim::ParseHardwareProfile(*text, path);
}

// The model of model mode: from --megatron-args, or --model's with --batch applied.
StatusOr<ModelSpec> SpecOf(const SimulateFlags& f) {
  if (f.megatron) return *f.megatron;
  DISTIR_ASSIGN_OR_RETURN(ModelSpec spec, LookupModel(f.model));
  return f.batch > 0 ? WithBatch(spec, f.batch) : spec;
}

// The spec of a transformer-training model, whose step gets the memory
// breakdown and the throughput metrics.
std::optional<ModelSpec> TransformerSpec(const SimulateFlags& f) {
  StatusOr<ModelSpec> spec = SpecOf(f);
  if (!spec.ok() || spec->family != ModelFamily::kTransformerTraining) return std::nullopt;
  return *spec;
}

// The one-device step of a transformer, simulated as built.
bool OneDeviceStep(const ParallelOptions& o) {
  // Each degree, not their product: that may not fit in 64 bits (CheckWorld says so).
  return o.dp == 1 && o.tp == 1 && o.pp == 1 && o.microbatches == 1 &&
         o.recompute == RecomputeKind::kNone && o.zero_stage == 0;
}

// Device ids are int32: D*T*P past that (or past int64) has no devices.
Status CheckWorld(const ParallelOptions& o, const sim::HardwareProfile& hw) {
  const std::optional<int64_t> world = CheckedProduct({o.dp, o.tp, o.pp});
  const int64_t devices = hw.NumDevices().value_or(INT32_MAX);
  if (!world || *world > std::min<int64_t>(devices, INT32_MAX)) {
    return InvalidArgument() << "D*T*P = " << o.dp << " x " << o.tp << " x " << o.pp
                             << " needs more devices than " << hw.name << " has ("
                             << (hw.NumDevices() ? std::to_string(devices) : "at most 2^31 - 1")
                             << ")";
  }
  return Status::Ok();
}

// A transformer step without --trace and --emit-ir, as the search simulates
// it: copies of its one-microbatch template (docs/cost_model.md §3.2), the
// same figures as the built program without building the IR of K
// microbatches. nullopt where it is built whole instead (one device, a
// profile with overlap.comm_stream, ZeRO 2/3, or the template cannot say it).
using MaybeExpanded = StatusOr<std::optional<sharding::ExpandedGrid>>;
MaybeExpanded NotExpanded() { return std::optional<sharding::ExpandedGrid>(); }

StatusOr<std::optional<sharding::ExpandedGrid>> ExpandedTransformer(const SimulateFlags& f,
                                                                    const sim::HardwareProfile& hw,
                                                                    search::Representatives& used) {
  if (!f.trace.empty() || !f.emit_ir.empty() || hw.overlap.comm_stream) return NotExpanded();
  DISTIR_ASSIGN_OR_RETURN(ModelSpec spec, SpecOf(f));
  const ParallelOptions& o = f.parallel;
  if (spec.family != ModelFamily::kTransformerTraining || OneDeviceStep(o)) return NotExpanded();
  DISTIR_ASSIGN_OR_RETURN(search::ModelGrid grid, search::ModelGridOf(spec, o, f.scatter_gather));
  if (!sharding::ExpandsFromTemplate(grid.grid)) return NotExpanded();
  DISTIR_ASSIGN_OR_RETURN(Module seq, BuildModel(spec));
  DISTIR_RETURN_IF_ERROR(InferTypes(seq));
  DISTIR_RETURN_IF_ERROR(CheckWorld(o, hw));
  const double ops = search::EstimateProgramOps(*seq.entry(), o, /*one_replica=*/false);
  ParallelOptions one = o;
  one.microbatches = 1;
  // With replica 0 standing for all, its template and copies only.
  const std::vector<char> keep = search::ReplicaZeroDevices(o, hw.devices_per_node);
  const double built = keep.empty() ? 1.0 : static_cast<double>(o.dp);
  const double bytes = search::EstimateExpandedMemoryBytes(
      ops / built, search::EstimateProgramOps(*seq.entry(), one, /*one_replica=*/false) / built);
  if (Status fits = search::CheckMemoryEstimate(bytes, ops, f.max_memory); !fits.ok()) {
    return fits.Prefix(f.model + " " + DescribeParallelOptions(o) + " is too large: it ");
  }
  // A few devices stand for all where they sit alike (the search's rule),
  // built alone; where their part cannot be cut out, the whole program.
  StatusOr<sharding::ExpandedGrid> x = search::ExpandedRepresentatives(
      *seq.entry(), grid.grid, grid.rules, o, hw.devices_per_node, used);
  if (!x.ok() && x.status().code() == StatusCode::kFailedPrecondition) return NotExpanded();
  if (!x.ok()) return x.status();
  return std::optional<sharding::ExpandedGrid>(std::move(x).value());
}

// Model mode: the named model at the requested batch, distributed by the
// sharding path; one device without microbatches, recomputation or ZeRO
// simulates the sequential model as built.
StatusOr<Module> BuildDistributed(const SimulateFlags& f, const sim::HardwareProfile& hw) {
  DISTIR_ASSIGN_OR_RETURN(ModelSpec spec, SpecOf(f));
  const ParallelOptions& o = f.parallel;
  DISTIR_ASSIGN_OR_RETURN(search::ModelGrid grid, search::ModelGridOf(spec, o, f.scatter_gather));
  DISTIR_ASSIGN_OR_RETURN(Module seq, BuildModel(spec));
  DISTIR_RETURN_IF_ERROR(InferTypes(seq));
  if (OneDeviceStep(o)) return seq;
  DISTIR_RETURN_IF_ERROR(CheckWorld(o, hw));
  // The transformer steps are sized by the estimate below alone (their
  // expansion, not D*T*K copies of the model, is what is built).
  if (spec.family != ModelFamily::kTransformerTraining)
    DISTIR_RETURN_IF_ERROR(search::CheckDistributionSize(*seq.entry(), o, false));
  // Refused before it is built: building it could get the process killed.
  const double ops = search::EstimateProgramOps(*seq.entry(), o, /*one_replica=*/false);
  const double bytes = search::EstimateMemoryBytes(ops, /*with_trace=*/false) +
                       (f.trace.empty() ? 0.0 : ops * search::kStreamedTraceMemoryBytesPerOp);
  if (Status fits = search::CheckMemoryEstimate(bytes, ops, f.max_memory); !fits.ok()) {
    return fits.Prefix(f.model + " " + DescribeParallelOptions(o) + " is too large: it ");
  }
  return sharding::DistributedCopy(*seq.entry(), grid.grid, grid.rules);
}

nlohmann::json MetricsJson(const search::StepMetrics& m) {
  return {{"tokens_per_step", m.tokens},          {"model_flops_per_step", m.model_flops},
          {"tokens_per_s", m.tokens_per_s},       {"tflops_per_gpu", m.tflops_per_gpu},
          {"peak_tflops_per_gpu", m.peak_tflops}, {"mfu", m.mfu}};
}

// The most idle GPU (pipeline bubble and waits) and the GPU whose
// communication is most exposed, each with its share of the iteration.
struct StepIdle {
  const sim::DeviceResult* idle = nullptr;
  const sim::DeviceResult* exposed = nullptr;
};
StepIdle IdleAndExposed(const sim::SimulationResult& r) {
  StepIdle s;
  for (const sim::DeviceResult& d : r.devices) {
    if (s.idle == nullptr || d.idle_s > s.idle->idle_s) s.idle = &d;
    if (s.exposed == nullptr || d.ExposedCommunicationS() > s.exposed->ExposedCommunicationS())
      s.exposed = &d;
  }
  return s;
}

void AddIdleJson(const sim::SimulationResult& r, nlohmann::json& metrics) {
  const StepIdle s = IdleAndExposed(r);
  if (s.idle == nullptr || r.iteration_time_s <= 0) return;
  metrics["idle_fraction"] = s.idle->idle_s / r.iteration_time_s;
  metrics["exposed_communication_s"] = s.exposed->ExposedCommunicationS();
}

void PrintIdle(const sim::SimulationResult& r, std::ostream& os) {
  const StepIdle s = IdleAndExposed(r);
  if (s.idle == nullptr || r.iteration_time_s <= 0) return;
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "idle            " << Millis(s.idle->idle_s)
       << " on " << s.idle->device.ToString() << ": " << 100 * s.idle->idle_s / r.iteration_time_s
       << " % of the step (pipeline bubble and waits; the most idle GPU)\n"
       << "exposed comm    " << Millis(s.exposed->ExposedCommunicationS()) << " on "
       << s.exposed->device.ToString() << ": "
       << 100 * s.exposed->ExposedCommunicationS() / r.iteration_time_s
       << " % of the step (communication not hidden behind compute)\n";
  os << line.str();
}

void PrintMetrics(const search::StepMetrics& m, std::ostream& os) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "tokens/s        " << m.tokens_per_s << " ("
       << m.tokens << " tokens per step)\n"
       << std::setprecision(3) << "model FLOPs     " << m.model_flops / 1e12
       << " TFLOP per step (3 x forward matrix FLOPs, no recomputation)\n"
       << std::setprecision(1) << "TFLOP/s/GPU     " << m.tflops_per_gpu << " (MFU " << 100 * m.mfu
       << " % of " << m.peak_tflops << " TFLOP/s peak)\n";
  os << line.str();
}

int SimulateModel(const SimulateFlags& f, const sim::HardwareProfile& hw) {
  search::Representatives reps;
  StatusOr<std::optional<sharding::ExpandedGrid>> expanded = ExpandedTransformer(f, hw, reps);
  if (!expanded.ok()) return ReportError(expanded.status());
  StatusOr<Module> built =
      expanded->has_value() ? std::move((*expanded)->module) : BuildDistributed(f, hw);
  if (!built.ok()) return ReportError(built.status());
  Module& m = *built;
  if (!f.emit_ir.empty()) {
    Status written = WriteOutputAtomically(f.emit_ir, PrintModule(m));
    if (!written.ok()) return ReportError(written);
  }
  sim::SimulateOptions options;
  options.batch_size = BatchOf(*SpecOf(f));
  options.record_trace = !f.trace.empty();
  options.record_memory_timeline = !f.trace.empty();
  std::optional<ModelSpec> spec = TransformerSpec(f);
  if (spec) {
    options.memory_kind = search::TransformerMemoryKind;
  }
  sim::CostModel costs(hw, &m);
  StatusOr<sim::SimulationResult> result =
      expanded->has_value()
          ? sim::SimulateExpanded(m, *m.entry(), (*expanded)->program, costs, options)
          : sim::Simulate(m, *m.entry(), costs, options);
  if (!result.ok()) return ReportError(result.status());
  if (expanded->has_value() && !(*expanded)->program.keep_device.empty())
    *result =
        search::AllDevices(std::move(*result), reps, f.parallel.dp * f.parallel.pp * f.parallel.tp);
  if (Status finite = CheckFinite(*result, hw); !finite.ok()) return ReportError(finite);
  if (!f.trace.empty()) {
    Status written = WriteOutputAtomically(f.trace, [&](std::ostream& out) {
      sim::WriteChromeTrace(*m.entry(), *result, hw, out);
    });
    if (!written.ok()) return ReportError(written);
  }
  std::ostringstream text;
  if (f.json) {
    nlohmann::json j = ResultJson(*m.entry(), hw, *result);
    j.update(KnobsJson(f));
    if (spec) {
      j["metrics"] = MetricsJson(search::TransformerStepMetrics(spec->transformer, hw, *result));
      AddIdleJson(*result, j["metrics"]);
    }
    text << DumpJson(j) << "\n";
  } else {
    text << f.model << " " << DescribeParallelOptions(f.parallel) << "\n";
    PrintSummary(*m.entry(), hw, *result, text);
    if (spec) {
      text << "\n";
      PrintMetrics(search::TransformerStepMetrics(spec->transformer, hw, *result), text);
      PrintIdle(*result, text);
    }
  }
  return WriteResult(f, text.str());
}

// --megatron-args LINE [--world-size N]: the model and distribution of a
// Megatron launch line (parallel sizes, microbatches of the global batch,
// full recomputation, the distributed optimizer); what the simulator does not
// model yet is refused by name, options it ignores are named in one warning
// line on stderr.
std::optional<int> ReadMegatronArgs(const std::string& line, std::optional<int64_t> world_size,
                                    SimulateFlags& f) {
  StatusOr<MegatronArgs> args = ParseMegatronArgs(line);
  if (!args.ok()) return ReportError(args.status());
  if (!args->unmodelled.empty()) {
    std::cerr << "distir simulate: warning: megatron options not modelled (ignored):";
    for (size_t i = 0; i < args->unmodelled.size(); ++i) {
      std::cerr << (i ? ", " : " ") << args->unmodelled[i];
    }
    std::cerr << "\n";
  }
  // The launcher's world size; default: the product of the parallel sizes.
  const int64_t world = world_size.value_or(args->ModelParallelSize());
  StatusOr<MegatronDistribution> d = MegatronDistributionOf(*args, world);
  if (!d.ok()) return ReportError(d.status());
  ModelSpec spec;
  spec.name = "megatron";
  spec.family = ModelFamily::kTransformerTraining;
  spec.transformer = args->transformer;
  spec.transformer.batch = d->global_batch;
  f.parallel.dp = d->dp;
  f.parallel.tp = d->tp;
  f.parallel.pp = d->pp;
  f.parallel.virtual_stages = d->virtual_stages;
  f.parallel.microbatches = d->microbatches;
  f.parallel.recompute = !d->recompute            ? RecomputeKind::kNone
                         : d->recompute_selective ? RecomputeKind::kSelective
                                                  : RecomputeKind::kFull;
  f.parallel.sequence_parallel = d->sequence_parallel;
  f.parallel.zero_stage = d->zero_stage;
  f.scatter_gather = d->scatter_gather;
  f.megatron = spec;
  f.model = spec.name;
  return std::nullopt;
}

int RunSimulateOn(const SimulateFlags& f) {
  std::string yaml;
  StatusOr<sim::HardwareProfile> hw = LoadProfile(f.hardware, &yaml);
  if (!hw.ok()) return ReportError(hw.status(), yaml);
  if (!f.model.empty()) return SimulateModel(f, *hw);
  StatusOr<std::string> text = ReadInput(f.input);
  if (!text.ok()) return ReportError(text.status());
  StatusOr<Module> parsed = ParseModule(*text, DisplayName(f.input));
  if (!parsed.ok()) return ReportError(parsed.status(), *text);
  Module m = std::move(parsed).value();
  if (m.entry() == nullptr) {
    return ReportError(InvalidArgument(SourceLoc{DisplayName(f.input), 0, 0, ""})
                       << "the module has no function to simulate");
  }
  Status status = VerifyModule(m);
  if (status.ok()) status = InferTypes(m);
  // Again with every type known: a Shard of a value whose type was not written
  // is only checked against its sharding now (see RunOptOn).
  if (status.ok()) status = VerifyModule(m);
  // A global-view program (meshes and shardings, docs/ir.md §9) is
  // distributed first: the simulator times its per-device program.
  std::optional<int64_t> global_batch;
  if (status.ok() && sharding::IsGlobalView(m, m.entry()->name())) {
    const Value* first = m.entry()->num_params() > 0 ? m.entry()->param(0) : nullptr;
    if (first != nullptr && first->type().is_tensor() && first->type().rank() > 0)
      global_batch = first->type().shape()[0];
    status = sharding::DistributeGlobalView(m, m.entry()->name());
  }
  if (!status.ok()) return ReportError(status, *text);
  sim::SimulateOptions options;
  if (global_batch.has_value()) options.batch_size = *global_batch;
  if (f.batch > 0) options.batch_size = f.batch;
  options.record_trace = !f.trace.empty();
  options.record_memory_timeline = !f.trace.empty();
  StatusOr<sim::SimulationResult> result = sim::Simulate(m, *m.entry(), *hw, options);
  if (!result.ok()) return ReportError(result.status(), *text);
  if (Status finite = CheckFinite(*result, *hw); !finite.ok()) return ReportError(finite);
  if (!f.trace.empty()) {
    Status written = WriteOutputAtomically(f.trace, [&](std::ostream& out) {
      sim::WriteChromeTrace(*m.entry(), *result, *hw, out);
    });
    if (!written.ok()) return ReportError(written);
  }
  std::ostringstream out;
  if (f.json) {
    out << DumpJson(ResultJson(*m.entry(), *hw, *result)) << "\n";
  } else {
    PrintSummary(*m.entry(), *hw, *result, out);
  }
  return WriteResult(f, out.str());
}

}  // namespace

int RunSimulate(int argc, char** argv) {
  SimulateFlags f;
  std::string max_memory;
  std::string megatron_args;
  int64_t world_size = 0;
  po::options_description desc(
      "usage: distir simulate FILE --hardware PROFILE.yaml [options]\n"
      "       distir simulate --model NAME [--batch N] [--dp D] [--tp T] [--pp P]\n"
      "                       [--microbatches K] [--schedule gpipe|1f1b] [--recompute]\n"
      "                       [--zero 1|2|3] --hardware PROFILE.yaml [options]\n"
      "       distir simulate --megatron-args \"LINE\" [--world-size N] --hardware PROFILE.yaml\n\n"
      "Parses FILE ('-' for stdin), verifies it, infers types and simulates one\n"
      "iteration of its entry function (the last one) on the hardware profile:\n"
      "iteration time, throughput, busy time and peak memory per device (with a\n"
      "profile's overlap.comm_stream also the exposed communication and the time\n"
      "with one stream per device).\n"
      "With --model, builds the named model (docs/models.md) and distributes it\n"
      "over D x T x P devices with K microbatches (docs/transforms.md) instead.\n"
      "Transformer-training models also get tokens/s, TFLOP/s per GPU, MFU, the\n"
      "most idle GPU's idle share, the largest exposed communication and memory\n"
      "by kind (docs/cost_model.md §4.4, §7).\n\noptions");
  desc.add_options()("help,h", "print this help")("hardware", po::value(&f.hardware),
                                                  "hardware profile (configs/hardware/*.yaml)")(
      "trace", po::value(&f.trace), "write a Chrome trace (Perfetto, chrome://tracing) here")(
      "json", po::bool_switch(&f.json), "print one JSON object instead of the summary")(
      "output,o", po::value(&f.output)->default_value("-"),
      "write the summary (or the JSON) to this file instead of stdout, atomically")(
      "batch", po::value(&f.batch),
      "samples per iteration for the throughput (default: leading extent of the first "
      "parameter; with --model: the model's global batch)")(
      "model", po::value(&f.model), "simulate this built-in model instead of FILE")(
      "megatron-args", po::value(&megatron_args),
      "simulate the transformer of this Megatron-LM launch line (pasted, quoted) instead of "
      "FILE; options not modelled are named in a warning")(
      "world-size", po::value(&world_size),
      "with --megatron-args: devices as the launcher gives them (default: the product of "
      "the parallel sizes)")("dp", po::value(&f.parallel.dp), "data-parallel degree D (default 1)")(
      "tp", po::value(&f.parallel.tp), "tensor-parallel degree T (default 1)")(
      "pp", po::value(&f.parallel.pp), "pipeline-parallel degree P (default 1)")(
      "microbatches", po::value(&f.parallel.microbatches), "microbatches K (default 1)")(
      "schedule", po::value(&f.schedule), "pipeline schedule: gpipe or 1f1b (default)")(
      "recompute", po::bool_switch(&f.recompute), "recompute activations (training)")(
      "zero", po::value(&f.parallel.zero_stage), "ZeRO stage 1, 2 or 3 (training, D > 1)")(
      "emit-ir", po::value(&f.emit_ir), "write the distributed module's text here")(
      "max-memory", po::value(&max_memory),
      "with --model: refuse, before building it, a configuration whose program distir "
      "estimates to need more memory than SIZE to build and simulate (e.g. 16GiB; 'none': "
      "no limit; default: 80% of this machine's memory)")("input", po::value(&f.input),
                                                          "input file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("simulate", argc, argv, desc, vm)) return *stop;
  const bool megatron_mode = vm.count("megatron-args") != 0;
  const bool model_mode = !f.model.empty() || megatron_mode;
  StatusOr<PipelineSchedule> schedule = ParseSchedule(f.schedule);
  if (schedule.ok()) f.parallel.schedule = *schedule;
  if (f.recompute) f.parallel.recompute = RecomputeKind::kFull;
  const bool model_flags = vm.count("dp") || vm.count("tp") || vm.count("pp") ||
                           vm.count("microbatches") || vm.count("schedule") || f.recompute ||
                           vm.count("zero") || vm.count("emit-ir");
  const char* missing =
      megatron_mode && !f.model.empty() ? "give either --model or --megatron-args, not both"
      : megatron_mode && vm.count("batch")
          ? "--batch does not apply to --megatron-args (give --micro-batch-size in the line)"
      : megatron_mode && (vm.count("dp") || vm.count("tp") || vm.count("pp") ||
                          vm.count("microbatches") || f.recompute || vm.count("zero"))
          ? "the launch line gives the distribution: "
            "--dp/--tp/--pp/--microbatches/--recompute/--zero do not apply to --megatron-args"
      : vm.count("world-size") && !megatron_mode  ? "--world-size needs --megatron-args"
      : vm.count("world-size") && world_size <= 0 ? "--world-size must be positive"
      : model_mode && !f.input.empty()            ? "give either FILE or --model, not both"
      : !model_mode && f.input.empty()            ? "missing input FILE (or --model NAME)"
      : !model_mode && model_flags
          ? "--dp/--tp/--pp/--microbatches/--schedule/--recompute/--zero/--emit-ir need --model"
      : !schedule.ok()                    ? "--schedule must be gpipe or 1f1b"
      : f.hardware.empty()                ? "missing --hardware PROFILE.yaml"
      : vm.count("batch") && f.batch <= 0 ? "--batch must be positive"
                                          : nullptr;
  if (missing != nullptr) {
    std::cerr << "distir simulate: " << missing << " (see --help)\n";
    return kExitUsage;
  }
  StatusOr<int64_t> limit =
      max_memory.empty() ? search::DefaultMaxMemory(1) : search::ParseMaxMemory(max_memory);
  if (!limit.ok()) {
    std::cerr << "distir simulate: " << limit.status().message() << " (see --help)\n";
    return kExitUsage;
  }
  f.max_memory = *limit;
  if (megatron_mode) {
    std::optional<int64_t> world;
    if (vm.count("world-size")) world = world_size;
    if (std::optional<int> stop = ReadMegatronArgs(megatron_args, world, f)) return *stop;
  }
  return RunSimulateOn(f);
}

}  // namespace distir::tools
