#include "search/evaluator.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <span>
#include <sstream>

#include "interp/infer_types.h"
#include "ir/clone.h"
#include "models/model_size.h"
#include "models/transformer_metrics.h"
#include "models/transformer_sharding.h"
#include "search/memory_bound.h"
#include "search/memory_estimate.h"
#include "search/model_grid.h"
#include "search/step_metrics.h"
#include "search/throughput_bound.h"
#include "sharding/annotate.h"
#include "sharding/grid.h"
#include "sharding/replicate.h"
#include "sim/work_floor.h"
#include "support/byte_size.h"
#include "support/checked_math.h"

namespace distir::search {
namespace {

// The trace and memory timelines of `r` into `out`, each event labelled by `label`.
template <typename Label>
void RecordTrace(const sim::SimulationResult& r, Label label, io::TraceRecord& out) {
  for (const sim::TraceEvent& ev : r.trace) {
    out.device.push_back(ev.device.value());
    out.start_s.push_back(ev.start_s);
    out.end_s.push_back(ev.end_s);
    out.category.push_back(ev.category == sim::TraceCategory::kCompute ? 0 : 1);
    out.label.push_back(label(ev));
  }
  for (const sim::DeviceResult& d : r.devices) {
    for (const sim::MemoryPoint& p : d.memory_timeline) {
      out.memory_device.push_back(d.device.value());
      out.memory_time_s.push_back(p.time_s);
      out.memory_bytes.push_back(p.bytes);
    }
  }
}

}  // namespace

const char* StatusName(ConfigStatus status) {
  switch (status) {
    case ConfigStatus::kOk:
      return "ok";
    case ConfigStatus::kInvalid:
      return "invalid";
    case ConfigStatus::kError:
      return "error";
    case ConfigStatus::kTooLarge:
      return "too-large";
    case ConfigStatus::kPruned:
      return "pruned";
    case ConfigStatus::kSkipped:
      return "skipped";
  }
  return "?";
}

const char* EvaluationName(Evaluation evaluation) {
  switch (evaluation) {
    case Evaluation::kNone:
      return "";
    case Evaluation::kFull:
      return "full";
    case Evaluation::kOneReplica:
      return "one-replica";
    case Evaluation::kExpanded:
      return "expanded";
    case Evaluation::kOneReplicaExpanded:
      return "one-replica expanded";
    case Evaluation::kRepresentativesExpanded:
      return "representatives expanded";
  }
  return "?";
}

bool SimulatesOneReplica(const Experiment& e, const Config& c) {
  const ParallelOptions& o = c.options;
  if (e.model_file || e.model.family != ModelFamily::kGpt2Inference) return false;
  // A batch that D x K does not divide is invalid; the whole program says why.
  if (o.dp <= 1 || c.batch % o.dp != 0 || (c.batch / o.dp) % o.microbatches != 0) return false;
  return ReplicasSitAlike(o.tp * o.pp, e.hardware.devices_per_node);
}

StatusOr<sharding::ExpandedGrid> ExpandedRepresentatives(
    const Function& seq, const sharding::GridOptions& grid,
    const std::vector<sharding::ParamRule>& rules, const ParallelOptions& o, int devices_per_node,
    Representatives& used) {
  std::vector<Representatives> ways = RepresentativesOf(o, devices_per_node);
  for (;;) {
    DISTIR_ASSIGN_OR_RETURN(sharding::GridTemplate t,
                            sharding::DistributedTemplateOfFirst(seq, grid, rules, PartsOf(ways)));
    const auto way = static_cast<size_t>(t.part);
    StatusOr<ExpandedProgram> x =
        sharding::ExpandTemplate(t, grid, t.part >= 0 ? &ways[way].keep : nullptr);
    // A way whose copies cannot be cut out: the template again without it.
    if (t.part >= 0 && x.status().code() == StatusCode::kFailedPrecondition) {
      ways.erase(ways.begin() + t.part);
      continue;
    }
    DISTIR_RETURN_IF_ERROR(x.status());
    used = t.part >= 0 ? std::move(ways[way]) : Representatives{};
    return sharding::ExpandedGrid{std::move(t.module), std::move(x).value()};
  }
}

double EstimatedCost(const Experiment& e, const Config& c) {
  const int64_t layers = e.model.family == ModelFamily::kMlpTraining ? e.model.mlp.n_layer
                         : e.model.family == ModelFamily::kGpt2Inference
                             ? e.model.gpt.n_layer
                             : e.model.transformer.num_layers;
  const ParallelOptions& o = c.options;
  const int dpn = e.hardware.devices_per_node;
  // In double: the knobs come from the experiment and their product may not fit in int64.
  const double stack = static_cast<double>(layers) + 2;
  const double k = static_cast<double>(o.microbatches);
  if (o.zero_stage > 1 || e.hardware.overlap.comm_stream) {
    const int64_t replicas = SimulatesOneReplica(e, c) ? 1 : o.dp;
    return static_cast<double>(replicas) * static_cast<double>(o.tp) * k * stack;
  }
  const bool one_replica = SimulatesOneReplica(e, c) || !ReplicaZeroDevices(o, dpn).empty();
  const double ranks = o.tp > 2 && ReplicasSitAlike(o.tp, dpn) ? 3 : static_cast<double>(o.tp);
  const double built = (one_replica ? 1 : static_cast<double>(o.dp)) * ranks;
  const double segments =
      k * static_cast<double>(o.pp) * static_cast<double>(std::max<int64_t>(o.virtual_stages, 1));
  return stack * (1 + built) * (1 + 1e-4 * segments);
}

Status CheckDistributionSize(const Function& seq, const ParallelOptions& o, bool one_replica) {
  if (!CheckedMul(o.dp, o.microbatches)) {
    return InvalidArgument() << "D*K = " << o.dp << " x " << o.microbatches
                             << " does not fit in 64 bits (D*K must be at most the batch)";
  }
  const double replicas = one_replica ? 1.0 : static_cast<double>(o.dp);
  const double ops = replicas * static_cast<double>(o.tp) * static_cast<double>(o.microbatches) *
                     static_cast<double>(seq.ops().size());
  if (ops > static_cast<double>(kMaxModelOps)) {
    std::ostringstream os;
    os << std::setprecision(3) << ops;
    return ResourceExhausted() << "the distributed program would have about " << os.str()
                               << " ops (" << (one_replica ? "T*K" : "D*T*K") << " times the "
                               << seq.ops().size()
                               << " ops of the sequential model), more than the " << kMaxModelOps
                               << " the simulator accepts";
  }
  return Status::Ok();
}

// The programs have no calls, so the cost model needs no module.
Evaluator::Evaluator(const Experiment& e, EvaluatorOptions options)
    : e_(e), options_(options), costs_(e.hardware, nullptr) {}

StatusOr<const Function*> Evaluator::Sequential(int64_t batch, int64_t layers) {
  const std::pair<int64_t, int64_t> key{batch, layers};
  auto it = sequential_.find(key);
  if (it == sequential_.end()) {
    ModelSpec spec = WithBatch(e_.model, batch);
    if (layers > 0) spec.transformer.num_layers = layers;
    // An imported model is typed by the importer, with the batch bound to B.
    DISTIR_ASSIGN_OR_RETURN(
        Module m, e_.model_file ? LoadModelFile(*e_.model_file, batch) : BuildModel(spec));
    if (!e_.model_file) DISTIR_RETURN_IF_ERROR(InferTypes(m));
    it = sequential_.emplace(key, std::move(m)).first;
  }
  return it->second.entry();
}

StatusOr<Evaluator::Point> Evaluator::PointOf(const Config& c) {
  if (!c.invalid.empty()) return InvalidArgument() << c.invalid;  // known at enumeration
  Point p;
  DISTIR_ASSIGN_OR_RETURN(p.seq, Sequential(c.batch));
  p.o = c.options;
  p.o.num_devices = e_.world_rule == WorldRule::kEqual ? e_.world_size : 0;
  p.one_replica = options_.replica_symmetry && SimulatesOneReplica(e_, c);
  return p;
}

ConfigResult Evaluator::Evaluate(const Config& c) {
  ConfigResult r;
  r.index = c.index;
  StatusOr<Point> p = PointOf(c);
  if (p.ok() && Prune(*p->seq, p->o, r)) return r;
  const Status checked = p.ok() ? CheckPoint(*p->seq, p->o, p->one_replica) : p.status();
  if (!checked.ok()) {
    r.status = ConfigStatus::kInvalid;
    r.reason = checked.message();
    return r;
  }
  if (!RejectTooLarge(*p->seq, p->o, p->one_replica, r, !TemplateKey(c).empty()))
    SimulateSharded(c, *p->seq, r);
  return r;
}

Status Evaluator::Validate(const Config& c) {
  DISTIR_ASSIGN_OR_RETURN(const Point p, PointOf(c));
  return CheckPoint(*p.seq, p.o, p.one_replica);
}

double Evaluator::PredictedCost(const Config& c) {
  StatusOr<Point> p = PointOf(c);
  if (!p.ok()) return 0;
  ConfigResult unused;
  if (Prune(*p->seq, p->o, unused) || !CheckPoint(*p->seq, p->o, p->one_replica).ok() ||
      RejectTooLarge(*p->seq, p->o, p->one_replica, unused, !TemplateKey(c).empty()))
    return 0;
  return EstimatedCost(e_, c);
}

double Evaluator::ThroughputBound(const Config& c) {
  if (!c.invalid.empty()) return 0;
  auto it = work_floor_.find(c.batch);
  if (it == work_floor_.end()) {
    StatusOr<const Function*> seq = Sequential(c.batch);
    std::optional<double> floor;
    if (seq.ok()) floor = sim::WorkFloorS(**seq, e_.hardware);
    it = work_floor_.emplace(c.batch, floor).first;
  }
  return it->second ? ThroughputUpperBound(*it->second, c.batch, c.options) : 0;
}

Status Evaluator::CheckPoint(const Function& seq, const ParallelOptions& o,
                             bool one_replica) const {
  Status size = CheckDistributionSize(seq, o, one_replica);
  if (size.code() == StatusCode::kInvalidArgument) return size;
  DISTIR_ASSIGN_OR_RETURN(const std::vector<sharding::ParamRule>* rules, CheckSharded(o, 1));
  const sharding::GridOptions grid = Grid(o);
  const SequentialFacts& facts = FactsOf(seq, *rules);
  DISTIR_RETURN_IF_ERROR(sharding::CheckGridPoint(seq, grid, facts.batch));
  // Stages that do not fit the layers: refused before building the template
  // (64 ms each for GPT-3 175B), in the words the build would use.
  if (facts.layers.has_value())
    DISTIR_RETURN_IF_ERROR(sharding::CheckPipelineChunks(seq, grid, *facts.layers));
  return size;
}

const Evaluator::SequentialFacts& Evaluator::FactsOf(
    const Function& seq, const std::vector<sharding::ParamRule>& rules) const {
  auto [it, added] = facts_.try_emplace({&seq, &rules});
  if (added) {
    SequentialFacts& f = it->second;
    f.batch = sharding::BatchParams(seq, rules);
    // Grid() takes the layer pattern from here, the same at every grid point.
    StatusOr<int64_t> n = sharding::PipelineLayers(seq, f.batch, e_.sharding.layer_pattern);
    if (n.ok()) f.layers = *n;
  }
  return it->second;
}

sharding::GridOptions Evaluator::Grid(const ParallelOptions& o) const {
  return GridOptionsOf(e_.sharding, o);
}

bool Evaluator::Prune(const Function& seq, const ParallelOptions& o, ConfigResult& r) const {
  if (e_.memory_limit_bytes <= 0 || e_.model.family != ModelFamily::kTransformerTraining ||
      o.dp < 1 || o.tp < 1 || o.pp < 1)
    return false;
  const int64_t bound = MemoryLowerBound(seq, o);
  const std::optional<LayerFootprint>& footprint = FootprintOf(seq);
  const int64_t activations = footprint.has_value() ? ActivationLowerBound(*footprint, o) : 0;
  if (std::max(bound, activations) <= e_.memory_limit_bytes) return false;
  r.status = ConfigStatus::kPruned;
  r.fits = false;
  // The larger bound decides, with its reason.
  const bool by_parameters = bound >= activations;
  r.peak_memory_bytes = by_parameters ? bound : activations;
  const std::string need = FormatByteSize(static_cast<double>(r.peak_memory_bytes));
  r.reason = by_parameters
                 ? "its parameters and weight gradients alone need at least " + need +
                       " on some GPU (weights, their gradients, master weights and Adam moments "
                       "of one stage over T, ZeRO-sharded over D)"
                 : "the GPUs of one pipeline stage need at least " + need +
                       " at its first backward op (its layers' parameters, and the activations "
                       "kept for the backward of every forward run before it)";
  r.reason += ", above memory_limit " + FormatByteSize(static_cast<double>(e_.memory_limit_bytes));
  return true;
}

const std::optional<LayerFootprint>& Evaluator::FootprintOf(const Function& seq) const {
  auto [it, added] = footprints_.try_emplace(&seq);
  if (added && !e_.sharding.layer_pattern.empty()) {
    std::vector<std::string> batch;
    for (const auto& p : seq.params()) {
      if (ClassifyTransformerValue(*p) == TransformerValueRole::kInput) batch.push_back(p->name());
    }
    StatusOr<LayerFootprint> f = LayerFootprintOf(seq, batch, e_.sharding.layer_pattern);
    if (f.ok()) it->second = *f;
  }
  return it->second;
}

bool Evaluator::RejectTooLarge(const Function& seq, const ParallelOptions& o, bool one_replica,
                               ConfigResult& r, bool expanded) const {
  const double ops = EstimateProgramOps(seq, o, one_replica);
  double bytes = EstimateMemoryBytes(ops, /*with_trace=*/false);
  if (expanded) {
    ParallelOptions one = o;
    one.microbatches = 1;
    // With replica 0 standing for all (ReplicaZeroDevices), its template and
    // copies only. Priced for all T ranks even where tensor-parallel ranks 0
    // and 1 would stand for them (RepresentativesOf): that way is refused at
    // partition time where a piece is uneven over tp, and replica 0 built
    // instead, so pricing it would let through what replica 0 exceeds.
    const bool replica_zero =
        options_.replica_symmetry && !ReplicaZeroDevices(o, e_.hardware.devices_per_node).empty();
    const double built = replica_zero ? static_cast<double>(o.dp) : 1.0;
    const double copies = ops / built;
    const double template_ops = EstimateProgramOps(seq, one, one_replica) / built;
    // From kinds of segments where they apply; where they do not,
    // SimulateTemplate checks the copies' estimate before writing them.
    bytes = options_.composed_segments
                ? EstimateSegmentedMemoryBytes(copies, template_ops,
                                               static_cast<double>(seq.ops().size()))
                : EstimateExpandedMemoryBytes(copies, template_ops);
  }
  Status fits = CheckMemoryEstimate(bytes, ops, options_.max_memory_bytes);
  if (fits.ok()) return false;
  r.status = ConfigStatus::kTooLarge;
  r.reason = fits.message();
  return true;
}

// The world-size and tensor-parallel rules of the sharding path; its
// parameter rules.
StatusOr<const std::vector<sharding::ParamRule>*> Evaluator::CheckSharded(const ParallelOptions& o,
                                                                          int64_t replicas) const {
  const int64_t devices = replicas * o.dp * o.tp * o.pp;
  if (e_.world_rule == WorldRule::kEqual ? devices != e_.world_size : devices > e_.world_size)
    return InvalidArgument() << "D*T*P = " << devices << " does not fit world_size "
                             << e_.world_size;
  // The sharding path can split heads unevenly (per-rank programs); Megatron
  // cannot, so the built-in GPT-2 and transformers keep its rule.
  DISTIR_RETURN_IF_ERROR(CheckTpDivides(o.tp, e_.sharding.tp_divisor, e_.sharding.tp_divisor_name));
  DISTIR_ASSIGN_OR_RETURN(const std::vector<sharding::ParamRule>* rules,
                          Rules(o.sequence_parallel));
  // An axis no rule names would only replicate the whole model over it.
  if (o.dp * replicas > 1 && !sharding::RulesUseAxis(*rules, "dp"))
    return InvalidArgument() << "D = " << o.dp * replicas
                             << " but no sharding rule splits a tensor over dp (an imported "
                                "model's data inputs need a batch dimension B)";
  if (o.tp > 1 && !sharding::RulesUseAxis(*rules, "tp"))
    return InvalidArgument() << "T = " << o.tp
                             << " but no sharding rule splits a tensor over tp: tensor "
                                "parallelism needs rules naming the weights (sharding:)";
  return rules;
}

StatusOr<Module> Evaluator::Sharded(const Function& seq, const ParallelOptions& o,
                                    int64_t replicas) const {
  DISTIR_ASSIGN_OR_RETURN(const std::vector<sharding::ParamRule>* rules, CheckSharded(o, replicas));
  return sharding::DistributedCopy(seq, Grid(o), *rules);
}

StatusOr<const std::vector<sharding::ParamRule>*> Evaluator::Rules(bool sequence_parallel) const {
  if (sequence_parallel) {
    if (!sp_rules_.has_value())
      sp_rules_.emplace(sharding::ParseParamRules(RuleTextsOf(e_.sharding, true)));
    if (!sp_rules_->ok()) return sp_rules_->status();
    return &**sp_rules_;
  }
  if (!rules_.has_value())
    rules_.emplace(sharding::ParseParamRules(RuleTextsOf(e_.sharding, false)));
  if (!rules_->ok()) return rules_->status();
  return &**rules_;
}

std::pair<ParallelOptions, int64_t> Evaluator::ShardedPoint(const Config& c) const {
  ParallelOptions o = c.options;
  if (options_.replica_symmetry && SimulatesOneReplica(e_, c)) {
    const int64_t batch = c.batch / o.dp;
    o.dp = 1;
    return {o, batch};
  }
  return {o, c.batch};
}

void Evaluator::SimulateSharded(const Config& c, const Function& seq, ConfigResult& r) {
  // Replica symmetry: where the replicas never
  // communicate (inference), one replica of batch / D on the first T*P
  // devices stands for all D.
  auto [o, batch] = ShardedPoint(c);
  const Function* program = &seq;
  const int64_t replicas = c.options.dp / o.dp;
  if (batch != c.batch) {
    StatusOr<const Function*> one = Sequential(batch);
    if (!one.ok()) {
      r.status = ConfigStatus::kError;
      r.reason = one.status().message();
      return;
    }
    program = *one;
  }
  if (SimulateExpandedInto(c, *program, o, replicas, r)) return;
  StatusOr<Module> m = Sharded(*program, o, replicas);
  if (!m.ok()) {
    r.status = m.status().code() == StatusCode::kInvalidArgument ? ConfigStatus::kInvalid
                                                                 : ConfigStatus::kError;
    r.reason = m.status().message();
    return;
  }
  RecordSimulation(*m, *m->entry(), c.batch, replicas, r);
}

std::string Evaluator::TemplateKey(const Config& c) const {
  if (!options_.expanded_microbatches || e_.hardware.overlap.comm_stream || !c.invalid.empty())
    return "";
  auto [o, batch] = ShardedPoint(c);
  if (!sharding::ExpandsFromTemplate(sharding::GridOf(o))) return "";
  std::ostringstream key;
  key << "dp" << o.dp << " tp" << o.tp << " pp" << o.pp << " vpp" << o.virtual_stages << ' '
      << ScheduleName(o.schedule) << " recompute" << static_cast<int>(o.recompute) << " zero"
      << o.zero_stage << " sp" << o.sequence_parallel;
  // With K = 1 the template is the program, named without microbatches.
  if (o.microbatches == 1) key << " k1";
  // Grid points whose batch K does not divide are invalid; they share nothing.
  if (batch % o.microbatches != 0) key << " batch" << batch << '/' << o.microbatches;
  return key.str();
}

int64_t Evaluator::MicroBatchOf(const Config& c) const {
  auto [o, batch] = ShardedPoint(c);
  return o.microbatches > 0 && batch % o.microbatches == 0 ? batch / o.microbatches : 0;
}

bool Evaluator::SimulateExpandedInto(const Config& c, const Function& program,
                                     const ParallelOptions& o, int64_t replicas, ConfigResult& r) {
  const std::string key = TemplateKey(c);
  if (key.empty()) return false;
  StatusOr<const std::vector<sharding::ParamRule>*> rules = CheckSharded(o, replicas);
  if (!rules.ok()) return false;  // the full path reports it
  const TemplatePoint point{c, program, o, Grid(o), **rules, replicas};
  // Training replicas, and tensor-parallel ranks, that sit alike on the
  // nodes: a few stand for all (representatives.h, docs/cost_model.md §3.2),
  // their template built alone; the first way whose part can be cut out,
  // and last the whole template. A way refused when expanding is dropped and
  // the template built again for the others.
  std::vector<Representatives> ways;
  if (options_.replica_symmetry) ways = RepresentativesOf(o, e_.hardware.devices_per_node);
  // A part refused is refused for this micro-batch.
  const int64_t micro = MicroBatchOf(c);
  const std::string refusal = key + " mb" + std::to_string(micro);
  for (;;) {
    std::erase_if(ways, [&](const Representatives& w) {
      return refused_parts_.count(refusal + WayKey(w)) != 0;
    });
    if (std::optional<bool> done = SimulateTemplateInto(point, ways, key, micro, r)) return *done;
  }
}

std::string Evaluator::WayKey(const Representatives& w) {
  return " part tp" + std::to_string(w.tp) + (w.last_apart ? "+last" : "") + " replica" +
         std::to_string(w.replica);
}

std::optional<bool> Evaluator::SimulateTemplateInto(const TemplatePoint& p,
                                                    const std::vector<Representatives>& ways,
                                                    const std::string& key, int64_t micro,
                                                    ConfigResult& r) {
  auto fail = [&](const Status& s) {
    r.status =
        s.code() == StatusCode::kInvalidArgument ? ConfigStatus::kInvalid : ConfigStatus::kError;
    r.reason = s.message();
    return true;
  };
  std::string family = key;
  for (const Representatives& w : ways) family += WayKey(w);
  if (Status s = NextTemplate(p, ways, family, micro); !s.ok()) {
    // FailedPrecondition: the template cannot say the program.
    if (s.code() == StatusCode::kFailedPrecondition) return false;
    return fail(s);
  }
  const Representatives* reps =
      template_->part >= 0 ? &ways[static_cast<size_t>(template_->part)] : nullptr;
  const std::vector<char>* keep = reps != nullptr ? &reps->keep : nullptr;
  Status unexpanded;
  StatusOr<sim::SimulationResult> simulated =
      SimulateTemplate(p.grid, keep, p.config.batch, unexpanded);
  if (!unexpanded.ok()) {
    // FailedPrecondition: the copies cannot be written, or not the part's.
    if (unexpanded.code() == StatusCode::kFailedPrecondition) {
      if (reps == nullptr) return false;
      refused_parts_.insert(key + " mb" + std::to_string(micro) + WayKey(*reps));
      return std::nullopt;
    }
    if (unexpanded.code() == StatusCode::kResourceExhausted) {
      r.status = ConfigStatus::kTooLarge;
      r.reason = unexpanded.message();
      return true;
    }
    return fail(unexpanded);
  }
  if (simulated.ok() && reps != nullptr)
    *simulated = AllDevices(std::move(*simulated), *reps, p.o.dp * p.o.pp * p.o.tp);
  Record(std::move(simulated), p.config.batch, p.replicas, /*expanded=*/true, r);
  if (reps != nullptr && r.evaluation == Evaluation::kExpanded) {
    r.evaluation =
        reps->tp > 0 ? Evaluation::kRepresentativesExpanded : Evaluation::kOneReplicaExpanded;
  }
  return true;
}

Status Evaluator::NextTemplate(const TemplatePoint& p, const std::vector<Representatives>& ways,
                               const std::string& family, int64_t micro) {
  if (template_.has_value() && template_family_ == family && template_micro_ == micro &&
      micro > 0) {
    // The checks that depend on K, which building the template ran for its own K.
    return sharding::CheckGridPoint(p.program, p.grid, FactsOf(p.program, p.rules).batch);
  }
  if (family_.key != family) {
    family_ = Family();
    family_.key = family;
  }
  if (family_.scaling.has_value() && !family_.refused &&
      std::min(family_.first_micro, family_.second_micro) < micro &&
      micro < std::max(family_.first_micro, family_.second_micro)) {
    StatusOr<sharding::GridTemplate> written = family_.scaling->Retype(*family_.first, micro);
    if (written.ok()) {
      DISTIR_RETURN_IF_ERROR(
          sharding::CheckGridPoint(p.program, p.grid, FactsOf(p.program, p.rules).batch));
      template_ = std::move(written).value();
      template_family_ = family;
      template_micro_ = micro;
      ++templates_written_;
      return Status::Ok();
    }
    // Not c * m at this micro-batch (an uneven split): built below.
  }
  // The family's first template is kept to write the others from.
  const bool learn = options_.retyped_templates && micro > 0 && !family_.refused;
  if (learn && !family_.first.has_value() && template_.has_value() && template_family_ == family &&
      template_micro_ > 0) {
    family_.first = std::move(template_);
    family_.first_micro = template_micro_;
  }
  template_.reset();
  template_family_.clear();
  StatusOr<sharding::GridTemplate> built = BuildTemplate(p, ways);
  if (!built.ok()) return built.status();
  template_ = std::move(built).value();
  template_family_ = family;
  template_micro_ = micro;
  if (learn && family_.first.has_value() && !family_.scaling.has_value() &&
      family_.first_micro != micro) {
    StatusOr<sharding::MicrobatchScaling> scaling =
        sharding::MicrobatchScaling::Learn(*family_.first, family_.first_micro, *template_, micro);
    if (scaling.ok()) {
      family_.scaling = std::move(scaling).value();
      family_.second_micro = micro;
    } else {
      family_.refused = true;
      family_.first.reset();
    }
  }
  return Status::Ok();
}

StatusOr<sharding::GridTemplate> Evaluator::BuildTemplate(
    const TemplatePoint& p, const std::vector<Representatives>& ways) {
  if (std::vector<std::pair<int64_t, int64_t>> groups = StageGroups(p);
      !groups.empty() && !family_.stage_fold_refused) {
    StatusOr<sharding::GridTemplate> folded = StageFoldedTemplate(p, ways, groups);
    if (folded.ok()) {
      ++templates_folded_;
      return folded;
    }
    family_.stage_fold_refused = true;
    family_.stage_fold.reset();
  }
  if (const int64_t n = FoldedLayersPerChunk(p); n > 0 && !family_.fold_refused) {
    StatusOr<sharding::GridTemplate> folded = FoldedTemplate(p, ways, n);
    if (folded.ok()) {
      ++templates_folded_;
      return folded;
    }
    // Whatever the fold or its small builds refuse, the whole build decides.
    family_.fold_refused = true;
    family_.fold.reset();
  }
  return sharding::DistributedTemplateOfFirst(p.program, p.grid, p.rules, PartsOf(ways));
}

int64_t Evaluator::FoldedLayersPerChunk(const TemplatePoint& p) const {
  if (options_.folded_layers <= 1 || e_.model_file ||
      e_.model.family != ModelFamily::kTransformerTraining ||
      sharding::LayerNamePrefix(p.grid.layer_pattern).empty())
    return 0;
  const int64_t chunks = p.grid.pp * std::max<int64_t>(p.grid.virtual_stages, 1);
  const int64_t layers = e_.model.transformer.num_layers;
  if (chunks < 1 || layers % chunks != 0) return 0;
  const int64_t n = layers / chunks;
  return n >= options_.folded_layers ? n : 0;
}

std::vector<std::pair<int64_t, int64_t>> Evaluator::StageGroups(const TemplatePoint& p) const {
  const int64_t stages = p.grid.pp;
  if (options_.folded_stages < 4 || stages < options_.folded_stages || e_.model_file ||
      e_.model.family != ModelFamily::kTransformerTraining ||
      sharding::LayerNamePrefix(p.grid.layer_pattern).empty())
    return {};
  const int64_t v = std::max<int64_t>(p.grid.virtual_stages, 1);
  const int64_t layers = e_.model.transformer.num_layers;
  // Interleaving runs K a multiple of the stages: of 4 for the larger small
  // one (one group: the split of an interleaved pipeline is even).
  if (v > 1 && p.grid.microbatches % 4 != 0) return {};
  std::vector<std::pair<int64_t, int64_t>> groups;
  if (layers % (stages * v) == 0) {
    if (stages % 2 != 0) return {};
    groups = {{stages, layers / (stages * v)}};
  } else {
    // Megatron's uneven split (v = 1): the first L mod P stages a layer
    // longer, folded as two groups of as many stages.
    const int64_t longer = layers % stages;
    if (v > 1 || 2 * longer != stages || longer % 2 != 0) return {};
    groups = {{longer, layers / stages + 1}, {longer, layers / stages}};
  }
  // The layers built for a family's first micro-batch: 2 + 4 stages per
  // group (each written from 2 and 3 layers per chunk where the layer fold
  // nests), against the layer fold's 2 C + 3 C (or all of them).
  int64_t by_stages = 0;
  if (NestsLayerFolds(groups)) {
    by_stages = 30 * v;
  } else {
    for (const auto& [count, n] : groups) by_stages += 6 * v * n;
  }
  const int64_t by_layers = FoldedLayersPerChunk(p) > 0 ? 5 * stages * v : layers;
  if (by_stages >= by_layers) return {};
  return groups;
}

StatusOr<sharding::GridTemplate> Evaluator::StageFoldedTemplate(
    const TemplatePoint& p, const std::vector<Representatives>& ways,
    const std::vector<std::pair<int64_t, int64_t>>& groups) {
  const int64_t v = std::max<int64_t>(p.grid.virtual_stages, 1);
  const int64_t batch = ShardedPoint(p.config).second;
  const bool nests = NestsLayerFolds(groups);
  // The template of the same grid point with `per_group` stages per group,
  // for the same ways.
  auto small = [&](int64_t per_group) -> StatusOr<sharding::GridTemplate> {
    ParallelOptions o = p.o;
    o.pp = per_group * static_cast<int64_t>(groups.size());
    int64_t layers = 0;
    for (const auto& [count, n] : groups) layers += per_group * v * n;
    std::vector<Representatives> all;
    if (options_.replica_symmetry) all = RepresentativesOf(o, e_.hardware.devices_per_node);
    std::vector<Representatives> same;
    for (const Representatives& w : ways) {
      auto it = std::find_if(all.begin(), all.end(), [&](const Representatives& x) {
        return x.tp == w.tp && x.last_apart == w.last_apart && (x.replica > 0) == (w.replica > 0);
      });
      if (it == all.end()) return FailedPrecondition() << "no such way with " << o.pp << " stages";
      same.push_back(*it);
    }
    sharding::GridOptions grid = p.grid;
    grid.pp = o.pp;
    const int index = per_group == 2 ? 0 : 1;
    if (nests && !family_.small_fold_refused[index]) {
      StatusOr<sharding::GridTemplate> written = LayerFolded(
          family_.small_folds[index], p, grid, PartsOf(same), per_group * v, groups[0].second);
      if (written.ok()) {
        ++small_templates_folded_;
        return written;
      }
      // Whatever the layer fold or its builds refuse, the whole build decides.
      family_.small_fold_refused[index] = true;
      family_.small_folds[index].reset();
    }
    DISTIR_ASSIGN_OR_RETURN(const Function* seq, Sequential(batch, layers));
    return sharding::DistributedTemplateOfFirst(*seq, grid, p.rules, PartsOf(same));
  };
  std::vector<int64_t> stages;
  for (const auto& [count, n] : groups) stages.push_back(count);
  DISTIR_ASSIGN_OR_RETURN(sharding::GridTemplate b, small(4));
  StatusOr<sharding::GridTemplate> written = FailedPrecondition() << "not learned";
  // Another micro-batch of the family: the same ops, other integers (else
  // learned again: the partitioner chooses some ops by size).
  if (family_.stage_fold.has_value()) written = family_.stage_fold->Write(b, stages);
  if (!written.ok()) {
    DISTIR_ASSIGN_OR_RETURN(sharding::GridTemplate a, small(2));
    sharding::StageLayout layout;
    for (const MeshAxis& axis : p.grid.axes) {
      if (axis.name == "tp") layout.tp = axis.size;
    }
    layout.chunks = v;
    layout.layers.clear();
    for (const auto& [count, n] : groups) layout.layers.push_back(n);
    layout.prefix = sharding::LayerNamePrefix(p.grid.layer_pattern);
    DISTIR_ASSIGN_OR_RETURN(sharding::StageFold fold, sharding::StageFold::Learn(a, b, layout));
    family_.stage_fold = std::move(fold);
    written = family_.stage_fold->Write(b, stages);
    DISTIR_RETURN_IF_ERROR(written.status());
  }
  // The part the search simulates must be the one the whole build would keep.
  if (written->part >= 0 && (static_cast<size_t>(written->part) >= ways.size() ||
                             written->keep_device != ways[static_cast<size_t>(written->part)].keep))
    return FailedPrecondition() << "the written template keeps other devices";
  return written;
}

bool Evaluator::NestsLayerFolds(const std::vector<std::pair<int64_t, int64_t>>& groups) const {
  return options_.folded_layers > 1 && groups.size() == 1 &&
         groups[0].second >= options_.folded_layers;
}

StatusOr<sharding::GridTemplate> Evaluator::LayerFolded(std::optional<sharding::LayerFold>& fold,
                                                        const TemplatePoint& p,
                                                        const sharding::GridOptions& grid,
                                                        std::vector<sharding::DevicePart> parts,
                                                        int64_t chunks, int64_t n) {
  const int64_t batch = ShardedPoint(p.config).second;
  DISTIR_ASSIGN_OR_RETURN(const Function* three, Sequential(batch, 3 * chunks));
  DISTIR_ASSIGN_OR_RETURN(sharding::GridTemplate b,
                          sharding::DistributedTemplateOfFirst(*three, grid, p.rules, parts));
  if (fold.has_value()) {
    // Another micro-batch of the family: the same ops, other integers.
    StatusOr<sharding::GridTemplate> written = fold->Write(b, n);
    if (written.ok()) return written;
  }
  DISTIR_ASSIGN_OR_RETURN(const Function* two, Sequential(batch, 2 * chunks));
  DISTIR_ASSIGN_OR_RETURN(sharding::GridTemplate a, sharding::DistributedTemplateOfFirst(
                                                        *two, grid, p.rules, std::move(parts)));
  DISTIR_ASSIGN_OR_RETURN(
      sharding::LayerFold learned,
      sharding::LayerFold::Learn(a, b, sharding::LayerNamePrefix(p.grid.layer_pattern)));
  fold = std::move(learned);
  return fold->Write(b, n);
}

StatusOr<sharding::GridTemplate> Evaluator::FoldedTemplate(const TemplatePoint& p,
                                                           const std::vector<Representatives>& ways,
                                                           int64_t n) {
  return LayerFolded(family_.fold, p, p.grid, PartsOf(ways), e_.model.transformer.num_layers / n,
                     n);
}

StatusOr<sim::SimulationResult> Evaluator::SimulateTemplate(const sharding::GridOptions& grid,
                                                            const std::vector<char>* keep,
                                                            int64_t batch, Status& unexpanded) {
  const Module& m = template_->module;
  const sim::SimulateOptions so = SearchSimulateOptions(batch);
  if (options_.composed_segments) {
    // Where the kinds cannot be written or composed, the copies say why.
    StatusOr<std::optional<SegmentedProgram>> x = sharding::SegmentTemplate(*template_, grid, keep);
    if (x.ok() && x->has_value()) {
      StatusOr<sim::SimulationResult> composed =
          sim::SimulateSegmented(m, *m.entry(), **x, costs_, so);
      if (composed.ok() || composed.status().code() != StatusCode::kUnimplemented) return composed;
    }
  }
  if (options_.composed_segments) {
    // Estimated before building as kinds of segments: the copies' own
    // estimate (at most K copies of every template op) before writing them.
    const auto template_ops = static_cast<double>(m.entry()->ops().size());
    const double copies = template_ops * static_cast<double>(grid.microbatches);
    unexpanded = CheckMemoryEstimate(EstimateExpandedMemoryBytes(copies, template_ops), copies,
                                     options_.max_memory_bytes);
    if (!unexpanded.ok()) return unexpanded;
  }
  StatusOr<ExpandedProgram> x = sharding::ExpandTemplate(*template_, grid, keep);
  if (!x.ok()) {
    unexpanded = x.status();
    return x.status();
  }
  return sim::SimulateExpanded(m, *m.entry(), *x, costs_, so);
}

sim::SimulateOptions Evaluator::SearchSimulateOptions(int64_t batch) const {
  sim::SimulateOptions so;
  so.batch_size = batch;  // the global batch: throughput = batch / iteration time
  so.record_trace = false;
  so.record_memory_timeline = false;
  if (RecordsStepFigures(e_)) so.memory_kind = TransformerMemoryKind;
  return so;
}

void Evaluator::RecordSimulation(const Module& module, const Function& program, int64_t batch,
                                 int64_t replicas, ConfigResult& r) {
  Record(sim::Simulate(module, program, costs_, SearchSimulateOptions(batch)), batch, replicas,
         /*expanded=*/false, r);
}

void Evaluator::Record(StatusOr<sim::SimulationResult> sim, int64_t batch, int64_t replicas,
                       bool expanded, ConfigResult& r) {
  r.evaluation = replicas > 1
                     ? (expanded ? Evaluation::kOneReplicaExpanded : Evaluation::kOneReplica)
                     : (expanded ? Evaluation::kExpanded : Evaluation::kFull);
  if (!sim.ok()) {
    // ResourceExhausted: an op's time or size is beyond what the cost model
    // represents (cost_model.h); the configuration, not the simulator, is at fault.
    r.status = sim.status().code() == StatusCode::kResourceExhausted ? ConfigStatus::kInvalid
                                                                     : ConfigStatus::kError;
    r.reason = sim.status().message();
    return;
  }
  if (!std::isfinite(sim->iteration_time_s) || !std::isfinite(sim->throughput)) {
    std::ostringstream os;
    os << "the simulated iteration time is not finite (" << sim->iteration_time_s
       << " s, throughput " << sim->throughput
       << " samples/s): the hardware profile's rates are too low or its overheads too high "
          "for this configuration";
    r.status = ConfigStatus::kInvalid;
    r.reason = os.str();
    return;
  }
  r.iteration_time_s = sim->iteration_time_s;
  r.throughput = sim->throughput;
  r.peak_memory_bytes = sim->PeakMemoryBytes();
  r.fits = e_.memory_limit_bytes == 0 || r.peak_memory_bytes <= e_.memory_limit_bytes;
  r.num_ops = sim->num_ops * replicas;
  r.exposed_communication_s = MaxExposedCommunicationS(*sim);
  if (RecordsStepFigures(e_)) {
    const TransformerOptions o = WithBatch(e_.model, batch).transformer;
    r.step = StepFiguresOf(TransformerStepMetrics(o, e_.hardware, *sim), *sim);
  }
}

Status Evaluator::Trace(const Config& c, io::TraceRecord& out) {
  if (!c.invalid.empty()) return InvalidArgument() << c.invalid;
  DISTIR_ASSIGN_OR_RETURN(const Function* seq, Sequential(c.batch));
  ParallelOptions o = c.options;
  o.num_devices = e_.world_rule == WorldRule::kEqual ? e_.world_size : 0;
  // The trace is of the whole program, without replica symmetry.
  const double ops = EstimateProgramOps(*seq, o, /*one_replica=*/false);
  DISTIR_RETURN_IF_ERROR(CheckMemoryEstimate(EstimateMemoryBytes(ops, /*with_trace=*/true), ops,
                                             options_.max_memory_bytes));
  if (std::optional<Status> traced = TraceExpanded(c, *seq, o, out)) return *traced;
  DISTIR_ASSIGN_OR_RETURN(Module program, Sharded(*seq, o));
  const Function* traced = program.entry();
  sim::SimulateOptions so;
  so.batch_size = c.batch;
  DISTIR_ASSIGN_OR_RETURN(sim::SimulationResult r, sim::Simulate(program, *traced, costs_, so));
  RecordTrace(
      r, [&](const sim::TraceEvent& ev) { return sim::TraceLabel(*traced, ev); }, out);
  return Status::Ok();
}

std::optional<Status> Evaluator::TraceExpanded(const Config& c, const Function& seq,
                                               const ParallelOptions& o, io::TraceRecord& out) {
  if (TemplateKey(c).empty()) return std::nullopt;
  StatusOr<const std::vector<sharding::ParamRule>*> rules = CheckSharded(o, 1);
  if (!rules.ok()) return std::nullopt;  // the built path reports it
  const sharding::GridOptions grid = Grid(o);
  StatusOr<sharding::GridTemplate> t = sharding::DistributedTemplate(seq, grid, **rules);
  if (!t.ok()) return std::nullopt;
  StatusOr<ExpandedProgram> x = sharding::ExpandTemplate(*t, grid);
  if (!x.ok()) return std::nullopt;
  const Function& tmpl = *t->module.entry();
  const std::optional<std::vector<std::string>> names =
      sharding::CopyNames(tmpl, grid.microbatches, t->local, *x);
  if (!names.has_value()) return std::nullopt;
  sim::SimulateOptions so;
  so.batch_size = c.batch;
  StatusOr<sim::SimulationResult> r = sim::SimulateExpanded(t->module, tmpl, *x, costs_, so);
  if (!r.ok()) return r.status();
  // TraceLabel's label of the built op: its kind (a sum is an Add) and its
  // first result.
  RecordTrace(
      *r,
      [&](const sim::TraceEvent& ev) {
        const int32_t op = x->op[static_cast<size_t>(ev.op)];
        std::string label = op == ExpandedProgram::kSum
                                ? std::string(OpKindName(OpKind::kAdd))
                                : tmpl.ops()[static_cast<size_t>(op)]->Name();
        const std::span<const int32_t> results = x->Results(ev.op);
        if (results.empty()) return label;
        const std::string& name = (*names)[static_cast<size_t>(results[0])];
        return label + (name.empty() ? " _" : " %" + name);
      },
      out);
  return Status::Ok();
}

}  // namespace distir::search
