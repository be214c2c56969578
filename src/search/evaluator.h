// Evaluating one configuration: build (once per batch), validate, parallelize,
// simulate.

#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/results_file.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "search/layer_footprint.h"
#include "search/representatives.h"
#include "sharding/annotate.h"
#include "sharding/fold_layers.h"
#include "sharding/fold_stages.h"
#include "sharding/grid.h"
#include "sharding/retype_template.h"
#include "sim/cost_model.h"
#include "sim/simulator.h"

namespace distir::search {

enum class ConfigStatus : int8_t {
  kOk = 0,  ///< simulated
  /// The transform rejects it, or it is beyond what the simulator represents
  /// (model sizes, D*K or op counts past their limits, a time that is not
  /// finite); `reason` says which rule. Never ranked.
  kInvalid = 1,
  kError = 2,  ///< simulation failed; `reason` has the message
  /// Not built: distir's own memory to build and simulate it is estimated
  /// above EvaluatorOptions::max_memory_bytes (memory_estimate.h); `reason`
  /// has the estimate and the limit. Never ranked.
  kTooLarge = 3,
  /// Not built: a lower bound of its peak memory (memory_bound.h) is above
  /// the experiment's memory_limit, so it cannot fit and would never be
  /// ranked; `peak_memory_bytes` holds the bound, `reason` says it.
  kPruned = 4,
  /// Not evaluated: the experiment's strategy (random, anneal) did not pick
  /// it within its budget; `reason` names the strategy. Never ranked.
  kSkipped = 5,
};

/// "ok", "invalid", "error", "too-large", "pruned", "skipped".
const char* StatusName(ConfigStatus status);

/// How a configuration was simulated (docs/results_format.md, column
/// `evaluation`): its whole program, one data-parallel replica standing for
/// all (replica symmetry, docs/cost_model.md §3), copies of a one-microbatch
/// template (§3.2), or both; kNone when nothing was simulated (invalid,
/// pruned, too-large, or an error before simulating).
enum class Evaluation : int8_t {
  kNone = 0,
  kFull = 1,
  kOneReplica = 2,
  kExpanded = 3,
  kOneReplicaExpanded = 4,
  /// Replica 0's tensor-parallel ranks 0 and 1 standing for all
  /// (representatives.h), copies of the template.
  kRepresentativesExpanded = 5,
};

/// "", "full", "one-replica", "expanded", "one-replica expanded".
const char* EvaluationName(Evaluation evaluation);

struct ConfigResult {
  int64_t index = 0;
  ConfigStatus status = ConfigStatus::kOk;
  std::string reason;
  double iteration_time_s = 0;
  double throughput = 0;          ///< samples/s
  int64_t peak_memory_bytes = 0;  ///< the maximum over devices
  bool fits = false;              ///< peak <= the memory limit
  int64_t num_ops = 0;
  double exposed_communication_s = 0;  ///< step_metrics.h MaxExposedCommunicationS
  io::StepFigures step;                ///< transformer training models only
  Evaluation evaluation = Evaluation::kNone;
};

/// True when `c` is simulated as one data-parallel replica of batch / D
/// (docs/cost_model.md, "Replica symmetry"): an inference model (no gradient
/// all-reduce, so the D replicas never communicate), D > 1 dividing the batch,
/// and replicas of T*P devices that sit alike on the nodes (T*P divides the
/// node size or the node size divides T*P). The replicas then run the same ops
/// at the same costs on disjoint devices, so every device's clock and memory
/// are those of replica 0's twin: the iteration time and peak memory are equal
/// bit for bit, and the op count is D times one replica's.
bool SimulatesOneReplica(const Experiment& e, const Config& c);

/// Relative cost of simulating `c`, for load balancing. Built whole (ZeRO 2
/// and 3, a profile with overlap.comm_stream): the program's op count,
/// D T K (layers + 2), without D when one replica stands for all. From a
/// template of one microbatch (the search's usual way): building it, its
/// global view and then its B devices per stage that stand for all (1 or T
/// ranks, or 3 where T > 2, of replica 0 where it stands for all;
/// representatives.h), (layers + 2)(1 + B), and a little more with the K P v
/// segments of each device, (1 + 10^-4 K P v). A configuration that reuses
/// the template of another costs a fraction of that (AssignUnits).
double EstimatedCost(const Experiment& e, const Config& c);

/// Rejects a distribution of `seq` that the simulator cannot represent, before
/// it is built: D*K beyond int64 (InvalidArgument: the transform
/// would divide by it), and a program of more than kMaxModelOps ops, estimated
/// as D T K times the ops of `seq` (without D when `one_replica`)
/// (ResourceExhausted). Messages state the numbers; no location.
Status CheckDistributionSize(const Function& seq, const ParallelOptions& o, bool one_replica);

struct EvaluatorOptions {
  /// Simulate one replica where SimulatesOneReplica() allows; off only to test
  /// that it changes nothing.
  bool replica_symmetry = true;
  /// On the sharding path, simulate a pipelined grid point as copies of its
  /// one-microbatch template (sharding::DistributedExpansion,
  /// sim::SimulateExpanded) where it is built from one: the same simulation
  /// without building the IR of K microbatches. Off: `distir search
  /// --exact-full`, the program built and simulated whole.
  bool expanded_microbatches = true;
  /// With expanded_microbatches: simulate the copies from kinds of segments
  /// (sharding::SegmentTemplate, sim::SimulateSegmented): the same results,
  /// bit for bit, without the copies' values and buffer plan.
  /// Off: `distir search --op-by-op`, the copies simulated op by op.
  bool composed_segments = true;
  /// With expanded_microbatches: the template of a grid point whose family
  /// (TemplateKey) has been built at two other micro-batches is written from
  /// them (sharding::MicrobatchScaling), not built: the same template, op for
  /// op. Off only to test that it changes nothing.
  bool retyped_templates = true;
  /// With expanded_microbatches, on transformer-training models: the template
  /// of a grid point with at least this many layers per model chunk (L / (P v))
  /// is written from templates of two and three layers per chunk
  /// (sharding::LayerFold), not built for all L: the same template, op for op.
  /// 0: always built (`distir search --built-layers`).
  int64_t folded_layers = 5;
  /// The same for pipelines of at least this many stages (groups of an even
  /// number of stages alike): the template written from templates of 2 and 4
  /// stages per group (sharding::StageFold), where that builds fewer layers
  /// than the layer fold. 0: never.
  int64_t folded_stages = 8;
  /// Configurations whose estimated memory (memory_estimate.h) is above this
  /// are kTooLarge and not built; Trace() refuses them as ResourceExhausted.
  /// 0: no limit.
  int64_t max_memory_bytes = 0;
};

/// The grid point's template and program, built for the fewest devices that
/// stand for all (RepresentativesOf's first whose part can be built and cut
/// out; ExpandedProgram::keep_device set), else whole; `used` gets the
/// representatives (keep empty: whole). Errors: those of DistributedTemplate
/// and ExpandTemplate for the whole (FailedPrecondition: it is not built from
/// a template).
StatusOr<sharding::ExpandedGrid> ExpandedRepresentatives(
    const Function& seq, const sharding::GridOptions& grid,
    const std::vector<sharding::ParamRule>& rules, const ParallelOptions& o, int devices_per_node,
    Representatives& used);

class Evaluator {
 public:
  explicit Evaluator(const Experiment& e, EvaluatorOptions options = {});

  /// Distributes and simulates `c`. A configuration the enumeration already
  /// found invalid (Config::invalid) is kInvalid with that reason, unbuilt.
  ConfigResult Evaluate(const Config& c);

  /// Cost proxy of Evaluate(c) for the search's progress estimate
  /// (progress_estimator.h), found without simulating: 0 when Evaluate()
  /// rejects `c` before distributing it (Config::invalid, the model does not build for its
  /// batch, or the transform's rules or the size limits refuse it: only a
  /// fixed cost is left), else EstimatedCost(). Builds the sequential model
  /// of c's batch if it is not cached yet (Evaluate() would).
  double PredictedCost(const Config& c);

  /// search/throughput_bound.h's ThroughputUpperBound of `c`, from the
  /// work floor of its sequential step (sim::WorkFloorS, cached per batch):
  /// no distribution of it runs faster. 0 where none is known: `c`
  /// invalid at enumeration, the model not built for its batch, or a matrix
  /// op the profile times without a rate ceiling (a fitted negative term).
  double ThroughputBound(const Config& c);

  /// Why `c` is invalid, without building its program: Config::invalid, the
  /// model's refusal of its batch, or CheckPoint's reasons; Ok when the
  /// sharding path would go on to build it (it may still refuse it later).
  Status Validate(const Config& c);

  /// The family of the partitioned one-microbatch template of a grid point
  /// (sharding::GridTemplate): equal for grid points that differ only in K,
  /// the batch and the micro-batch. Evaluate() reuses the last template for
  /// the same micro-batch, and writes one for another micro-batch from two
  /// built ones of the family (retyped_templates). Empty where `c` is not
  /// simulated from a template (ZeRO 2/3, a profile with overlap.comm_stream,
  /// expanded_microbatches off). grid_search.cc evaluates each rank's slice
  /// grouped by it.
  std::string TemplateKey(const Config& c) const;
  /// The micro-batch of the program `c`'s template is built from (one
  /// replica's, with replica symmetry); 0 where K does not divide its batch.
  int64_t MicroBatchOf(const Config& c) const;

  /// How many templates were written from two of their family
  /// (retyped_templates) rather than built, and the template of the last
  /// grid point simulated from one (nullptr if none): for tests.
  int64_t templates_written() const { return templates_written_; }
  /// How many templates were written from templates of fewer layers
  /// (folded_layers) rather than built: for tests and benchmarks.
  int64_t templates_folded() const { return templates_folded_; }
  /// How many of the stage fold's small templates the layer fold wrote
  /// (NestsLayerFolds): for tests.
  int64_t small_templates_folded() const { return small_templates_folded_; }
  const sharding::GridTemplate* last_template() const {
    return template_.has_value() ? &*template_ : nullptr;
  }

  /// Simulates `c` again recording its trace and memory timelines into `out`.
  /// InvalidArgument with the reason for a Config::invalid.
  /// ResourceExhausted, before building anything, when the whole program
  /// (no replica symmetry) with its trace is estimated above max_memory_bytes.
  Status Trace(const Config& c, io::TraceRecord& out);

 private:
  /// The sequential model at `batch`; with `layers` > 0, a transformer's
  /// with that many layers (folded_layers).
  StatusOr<const Function*> Sequential(int64_t batch, int64_t layers = 0);
  /// What Evaluate, Validate and PredictedCost start from: the sequential
  /// program of `c`'s batch, its knobs with the world's device count, and
  /// whether one replica stands for all (replica symmetry).
  struct Point {
    const Function* seq = nullptr;
    ParallelOptions o;
    bool one_replica = false;
  };
  /// `c`'s Point; InvalidArgument with the enumeration's reason or the
  /// model's refusal of the batch.
  StatusOr<Point> PointOf(const Config& c);
  /// `c`'s knobs as the sharding path distributes them (replica symmetry:
  /// one replica, dp 1) and the batch of the program it distributes.
  std::pair<ParallelOptions, int64_t> ShardedPoint(const Config& c) const;
  /// True (and `r` is kPruned with the bound) when the memory lower bound of
  /// `seq` as `o` (memory_bound.h; transformer-training models on the
  /// sharding path) is above the experiment's memory_limit.
  bool Prune(const Function& seq, const ParallelOptions& o, ConfigResult& r) const;
  /// `seq`'s layers' footprint, found once (footprints_).
  const std::optional<LayerFootprint>& FootprintOf(const Function& seq) const;
  /// The checks before anything is built, in the order their reasons win:
  /// D*K past 64 bits, the world size, T against the model, an axis no rule
  /// uses, the K-dependent grid checks (sharding::CheckGridPoint), then the
  /// simulator's op limit (CheckDistributionSize).
  Status CheckPoint(const Function& seq, const ParallelOptions& o, bool one_replica) const;
  /// What the checks of every grid point of a sequential program and rules
  /// need, found once: its batch inputs (sharding::BatchParams) and the layers
  /// its stages are checked against before building
  /// (sharding::PipelineLayers; nullopt where they cannot be counted, and
  /// building then says why).
  struct SequentialFacts {
    std::vector<std::string> batch;
    std::optional<int64_t> layers;
  };
  const SequentialFacts& FactsOf(const Function& seq,
                                 const std::vector<sharding::ParamRule>& rules) const;
  sharding::GridOptions Grid(const ParallelOptions& o) const;
  /// Marks `r` kTooLarge when the program of `o` (one replica of it when
  /// `one_replica`) is estimated above the memory limit; true if so. With
  /// `expanded`, as copies of its one-microbatch template (TemplateKey).
  bool RejectTooLarge(const Function& seq, const ParallelOptions& o, bool one_replica,
                      ConfigResult& r, bool expanded = false) const;
  /// `seq` annotated on a mesh {dp, tp} by the experiment's rules and
  /// distributed by the sharding passes (sharding/grid.h) as `o` says;
  /// InvalidArgument for knobs that path does not distribute. `replicas`
  /// identical replicas of it fill the world (replica symmetry), 1 for the
  /// whole program.
  StatusOr<Module> Sharded(const Function& seq, const ParallelOptions& o,
                           int64_t replicas = 1) const;
  void SimulateSharded(const Config& c, const Function& seq, ConfigResult& r);
  /// SimulateSharded by SimulateExpanded from the grid point's template
  /// (the cached one when TemplateKey(c) matches); false (nothing recorded)
  /// where `c` is not simulated from a template. `program` and `o` as
  /// SimulateSharded distributes them.
  bool SimulateExpandedInto(const Config& c, const Function& program, const ParallelOptions& o,
                            int64_t replicas, ConfigResult& r);
  /// A grid point simulated from a template (SimulateExpandedInto's arguments).
  struct TemplatePoint {
    const Config& config;
    const Function& program;
    const ParallelOptions& o;
    sharding::GridOptions grid;
    const std::vector<sharding::ParamRule>& rules;
    int64_t replicas;
  };
  /// SimulateExpandedInto from the template of the first of `ways` whose
  /// part can be built alone (else the whole), of family `key` and the ways
  /// at micro-batch `micro` (NextTemplate): true when recorded, false where
  /// the template cannot say the whole program, nullopt where that way's
  /// copies cannot be cut out (it is then in refused_parts_, for `micro`).
  std::optional<bool> SimulateTemplateInto(const TemplatePoint& p,
                                           const std::vector<Representatives>& ways,
                                           const std::string& key, int64_t micro, ConfigResult& r);
  /// What a way of representatives adds to a template's key.
  static std::string WayKey(const Representatives& w);
  /// template_'s program for `keep` simulated: composed per kind of segment
  /// (options_.composed_segments) where that applies, else from its copies;
  /// `unexpanded` gets the error where the copies cannot be written.
  StatusOr<sim::SimulationResult> SimulateTemplate(const sharding::GridOptions& grid,
                                                   const std::vector<char>* keep, int64_t batch,
                                                   Status& unexpanded);
  /// The world-size and tensor-parallel rules of the sharding path; its rules.
  StatusOr<const std::vector<sharding::ParamRule>*> CheckSharded(const ParallelOptions& o,
                                                                 int64_t replicas) const;
  sim::SimulateOptions SearchSimulateOptions(int64_t batch) const;
  /// Trace() of the whole program `seq` distributed as `o`, simulated as
  /// copies of its template (sharding::ExpandTemplate) and labelled with the
  /// names the built program gives them (sharding::CopyNames): the same
  /// record, without building the program's IR. nullopt where `c` is not
  /// simulated from a template or the names cannot be told (Trace() then
  /// builds the program).
  std::optional<Status> TraceExpanded(const Config& c, const Function& seq,
                                      const ParallelOptions& o, io::TraceRecord& out);

  /// Fills r's outcome from a simulation for a global batch of `batch` (both
  /// paths share it); `replicas` programs like it run side by side.
  void Record(StatusOr<sim::SimulationResult> sim, int64_t batch, int64_t replicas, bool expanded,
              ConfigResult& r);
  /// Simulates `program` of `module` and Record()s it.
  void RecordSimulation(const Module& module, const Function& program, int64_t batch,
                        int64_t replicas, ConfigResult& r);

  /// The experiment's sharding rules, parsed once (the first Sharded call).
  StatusOr<const std::vector<sharding::ParamRule>*> Rules(bool sequence_parallel = false) const;

  const Experiment& e_;
  EvaluatorOptions options_;
  std::map<std::pair<int64_t, int64_t>, Module> sequential_;  // per batch and layers
  std::map<int64_t, std::optional<double>> work_floor_;  // per batch (ThroughputBound)
  mutable std::map<std::pair<const Function*, const std::vector<sharding::ParamRule>*>,
                   SequentialFacts>
      facts_;                             // FactsOf
  /// Per sequential program: its layers' footprint (layer_footprint.h) for
  /// the activation bound of pruning; nullopt where it cannot be found.
  mutable std::map<const Function*, std::optional<LayerFootprint>> footprints_;
  sim::CostModel costs_;                  // memo shared by every configuration
  mutable std::optional<StatusOr<std::vector<sharding::ParamRule>>> rules_;
  /// The same with the model's sequence-parallel rules first.
  mutable std::optional<StatusOr<std::vector<sharding::ParamRule>>> sp_rules_;
  /// The template for `micro` of the family `family` (TemplateKey and the
  /// parts' WayKeys): reused, written from the family's two built ones, or
  /// built; `micro` <= 0 (a batch K does not divide) is always built.
  /// FailedPrecondition from the build: the template cannot say the program.
  Status NextTemplate(const TemplatePoint& p, const std::vector<Representatives>& ways,
                      const std::string& family, int64_t micro);
  /// The template of `p` built, or written from templates of fewer layers
  /// where folded_layers allows it and the fold can say it.
  StatusOr<sharding::GridTemplate> BuildTemplate(const TemplatePoint& p,
                                                 const std::vector<Representatives>& ways);
  /// The layers per model chunk of `p` when its template is folded, else 0.
  int64_t FoldedLayersPerChunk(const TemplatePoint& p) const;
  /// True where the stage fold's small templates for `groups` are written by
  /// the layer fold (one group of at least folded_layers layers per chunk):
  /// each from templates of 2 and 3 layers per chunk, 30 v layers built for
  /// a family's first micro-batch and 12 v for the next instead of 6 v n and
  /// 4 v n.
  bool NestsLayerFolds(const std::vector<std::pair<int64_t, int64_t>>& groups) const;
  /// The template of `grid` (`chunks` model chunks of n layers) for `parts`
  /// written by the layer fold `fold` from the one of 3 layers per chunk
  /// (learned from those of 2 and 3 the first time): the family's fold of
  /// the grid point, or of one of the stage fold's small templates.
  /// FailedPrecondition or the builds' errors: build it whole.
  StatusOr<sharding::GridTemplate> LayerFolded(std::optional<sharding::LayerFold>& fold,
                                               const TemplatePoint& p,
                                               const sharding::GridOptions& grid,
                                               std::vector<sharding::DevicePart> parts,
                                               int64_t chunks, int64_t n);
  /// The groups of stages of `p` (stages, layers per chunk) when its template
  /// is written by the stage fold: P >= folded_stages with groups of an even
  /// number of stages (one, or two of P / 2 with Megatron's uneven split),
  /// and fewer layers built than by the layer fold (or built whole); else
  /// none.
  std::vector<std::pair<int64_t, int64_t>> StageGroups(const TemplatePoint& p) const;
  /// `p`'s template of `groups` written from one of 4 stages per group by the
  /// family's stage fold (learned from one of 2 the first time); its part the
  /// same way of `ways` as the small ones'. FailedPrecondition or the small
  /// builds' errors: build it otherwise.
  StatusOr<sharding::GridTemplate> StageFoldedTemplate(
      const TemplatePoint& p, const std::vector<Representatives>& ways,
      const std::vector<std::pair<int64_t, int64_t>>& groups);
  /// `p`'s template of n layers per chunk written from one of 3 per chunk by
  /// the family's fold (learned from one of 2 per chunk the first time).
  /// FailedPrecondition or the small builds' errors: build it whole.
  StatusOr<sharding::GridTemplate> FoldedTemplate(const TemplatePoint& p,
                                                  const std::vector<Representatives>& ways,
                                                  int64_t n);
  /// The last grid point's template, its family and micro-batch (expanded
  /// simulation).
  std::optional<sharding::GridTemplate> template_;
  std::string template_family_;
  int64_t template_micro_ = 0;
  /// The first template built of the last family, and what it and the
  /// second teach of the micro-batches between theirs
  /// (sharding/retype_template.h): only between, because the partitioner
  /// chooses by size (a vocabulary-parallel gradient computed whole or
  /// masked, say), and a choice that compares sizes linear in m and is the
  /// same at both ends is the same between. `refused`: the two differ in more
  /// than c * m, so each is built.
  struct Family {
    std::string key;
    std::optional<sharding::GridTemplate> first;
    int64_t first_micro = 0, second_micro = 0;
    std::optional<sharding::MicrobatchScaling> scaling;
    bool refused = false;
    /// What a layer adds to the family's templates (sharding::LayerFold),
    /// learned at its first micro-batch; `fold_refused`: built whole.
    std::optional<sharding::LayerFold> fold;
    bool fold_refused = false;
    /// The same across pipeline stages (sharding::StageFold).
    std::optional<sharding::StageFold> stage_fold;
    bool stage_fold_refused = false;
    /// The stage fold's templates of 2 and 4 stages, each written by a layer
    /// fold of its own (`small_folds[0]`, `[1]`) where their chunks hold
    /// folded_layers or more (NestsLayerFolds); `small_fold_refused`: built
    /// whole.
    std::optional<sharding::LayerFold> small_folds[2];
    bool small_fold_refused[2] = {false, false};
  };
  Family family_;
  int64_t templates_written_ = 0;
  int64_t templates_folded_ = 0;
  int64_t small_templates_folded_ = 0;
  /// The template keys of parts (representatives) that could not be cut out.
  std::set<std::string> refused_parts_;
};

}  // namespace distir::search
