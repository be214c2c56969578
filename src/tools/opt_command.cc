// distir opt FILE [--print-types] [--domain mixed|shape] [--lower [--function F]] [-o OUT]

#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lowering/lower.h"
#include "sharding/annotate.h"
#include "sharding/cleanup.h"
#include "sharding/equivalence.h"
#include "sharding/grid.h"
#include "sharding/materialize.h"
#include "sharding/partition.h"
#include "sharding/propagate.h"
#include "sharding/regather.h"
#include "sharding/stage_meshes.h"
#include "sharding/task_order.h"
#include "tools/cli_util.h"
#include "tools/commands.h"
#include "transforms/fuse_gelu.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

// Whether the --parallelize spec asks for regather (sharding/regather.h).
bool PipelineOfRegathers(const std::string& parallelize) {
  StatusOr<sharding::GridOptions> grid = sharding::ParseGridSpec(parallelize);
  return grid.ok() && grid->regather_linear_inputs;
}

struct OptOptions {
  std::string input;
  std::string output = "-";
  bool print_types = false;
  std::string domain = "mixed";
  bool lower = false;
  std::string function;
  bool propagate_sharding = false;
  bool materialize = false;
  bool cleanup = false;
  bool partition = false;
  bool check_partition = false;
  uint64_t seed = 1;
  int64_t int_max = 1;                   // integer inputs of --check-partition in [0, int_max]
  std::vector<std::string> passes;       // --pass, in order
  std::string parallelize;               // --parallelize dp=2,tp=4
  std::vector<std::string> shard_rules;  // --shard PATTERN=[{..}, ..]
  std::string layers;                    // --layers REGEX: the pipeline layers

  bool any_sharding_pass() const {
    return propagate_sharding || materialize || cleanup || partition || check_partition ||
           !passes.empty() || !parallelize.empty();
  }
  /// The passes to run: --pass as given, else the pipeline the flags imply.
  std::vector<std::string> Pipeline() const {
    if (!passes.empty()) return passes;
    std::vector<std::string> p = {"propagate-sharding"};
    if (!parallelize.empty()) {
      // A grid point: the whole pipeline, up to the per-device program.
      p.insert(p.end(), {"materialize", "cleanup"});
      if (PipelineOfRegathers(parallelize)) p.push_back("regather-linear-inputs");
      p.push_back("split-stages");
      if (!check_partition) p.insert(p.end(), {"partition", "order-tasks"});
      return p;
    }
    if (materialize || cleanup || partition || check_partition) p.push_back("materialize");
    if (cleanup) p.push_back("cleanup");
    if (partition) p.push_back("partition");
    return p;
  }
};

// The grid point of --parallelize for the pipeline passes: its schedule
// (1F1B when it names none), model chunks per stage (vpp, 1 when none) and
// scatter-gather of stage transfers.
sharding::GridOptions PipelineOf(const OptOptions& o) {
  StatusOr<sharding::GridOptions> grid = sharding::ParseGridSpec(o.parallelize);
  return grid.ok() ? *grid : sharding::GridOptions{};
}

// Runs the sharding pass `name` on function `fn` of `m`; `grid` gives the
// pipeline passes their schedule and chunks.
Status RunNamedPass(const std::string& name, Module& m, const std::string& fn,
                    const sharding::GridOptions& grid) {
  if (name == "propagate-sharding") return sharding::PropagateShardings(m, fn);
  if (name == "fuse-gelu") {
    FuseGelusIn(m, fn);
    return Status::Ok();
  }
  if (name == "split-stages")
    return sharding::SplitStageMeshes(m, fn, "dp", grid.virtual_stages, grid.ScatterAxis());
  if (name == "order-tasks")
    return sharding::OrderPipelineTasks(m, fn, grid.schedule, grid.virtual_stages);
  if (name == "materialize") return sharding::MaterializeShardings(m, fn);
  if (name == "regather-linear-inputs") {
    sharding::RegatherLinearInputs(m, fn);
    return Status::Ok();
  }
  if (name == "partition") return sharding::PartitionShardings(m, fn);
  if (name == "cleanup") {
    sharding::RunCleanup(m, fn);
    return Status::Ok();
  }
  for (const sharding::NamedCleanupPass& p : sharding::CleanupPasses()) {
    if (name == p.name) {
      p.run(m, fn);
      return Status::Ok();
    }
  }
  std::string known =
      "propagate-sharding, materialize, cleanup, regather-linear-inputs, split-stages, "
      "partition, order-tasks, fuse-gelu";
  for (const sharding::NamedCleanupPass& p : sharding::CleanupPasses())
    known += std::string(", ") + p.name;
  return InvalidArgument() << "unknown pass '" << name << "' (passes: " << known << ")";
}

// The sharding passes, in pipeline order, on the entry function (or
// --function). They print every type: a sharding is printed after its type.
Status RunShardingPasses(const OptOptions& o, Module& m) {
  if (m.entry() == nullptr) return InvalidArgument() << "the module has no function";
  std::string fn = o.function.empty() ? m.entry()->name() : o.function;
  if (!o.parallelize.empty()) {
    DISTIR_ASSIGN_OR_RETURN(sharding::GridOptions grid, sharding::ParseGridSpec(o.parallelize));
    grid.layer_pattern = o.layers;
    DISTIR_ASSIGN_OR_RETURN(std::vector<sharding::ParamRule> rules,
                            sharding::ParseParamRules(o.shard_rules));
    DISTIR_RETURN_IF_ERROR(sharding::AnnotateGrid(m, fn, grid, rules));
  }
  for (const std::string& pass : o.Pipeline())
    DISTIR_RETURN_IF_ERROR(RunNamedPass(pass, m, fn, PipelineOf(o)));
  return Status::Ok();
}

// --check-partition's random inputs: integers (ids, labels) in [0, int_max].
StatusOr<RandomInputOptions> InputOptionsOf(const OptOptions& o) {
  if (o.int_max < 0) return InvalidArgument() << "--int-max must be >= 0, got " << o.int_max;
  RandomInputOptions options;
  options.int_max = o.int_max;
  return options;
}

// Partitions a copy of the materialised module `m` and checks it against `m`
// on the reference executor; the summary line is the command's output.
StatusOr<std::string> CheckPartition(const OptOptions& o, const Module& m) {
  std::string fn = o.function.empty() ? m.entry()->name() : o.function;
  DISTIR_ASSIGN_OR_RETURN(RandomInputOptions inputs, InputOptionsOf(o));
  DISTIR_ASSIGN_OR_RETURN(Module copy, ParseModule(PrintModule(m), "<materialized>"));
  DISTIR_RETURN_IF_ERROR(sharding::PartitionShardings(copy, fn));
  const sharding::GridOptions grid = PipelineOf(o);
  DISTIR_RETURN_IF_ERROR(
      sharding::OrderPipelineTasks(copy, fn, grid.schedule, grid.virtual_stages));
  DISTIR_ASSIGN_OR_RETURN(
      sharding::EquivalenceReport r,
      sharding::CheckPartitionEquivalence(m, copy, fn, o.seed, 1e-5, 1e-6, inputs));
  std::ostringstream os;
  os << "partitioned @" << fn << " on " << r.devices
     << " devices equals the global program: " << r.outputs << " outputs, " << r.elements
     << " elements, max |diff| " << r.max_abs_diff << " (seed " << o.seed << ")\n";
  return os.str();
}

// Types that the input did not spell out are dropped again before printing
// unless --print-types asks for them, so plain `opt` reproduces its input.
std::vector<std::vector<bool>> RecordAnnotated(const Module& m) {
  std::vector<std::vector<bool>> annotated;
  for (const auto& fn : m.functions()) {
    std::vector<bool> known(fn->num_values(), false);
    for (const auto& op : fn->ops()) {
      for (const auto& r : op->results()) known[r->id()] = !r->type().is_unknown();
    }
    annotated.push_back(std::move(known));
  }
  return annotated;
}

void DropInferred(Module& m, const std::vector<std::vector<bool>>& annotated) {
  for (size_t f = 0; f < m.functions().size(); ++f) {
    for (const auto& op : m.functions()[f]->ops()) {
      for (const auto& r : op->results()) {
        if (!annotated[f][r->id()]) r->set_type(Type());
      }
    }
  }
}

// The rank programs print the types the input wrote, like plain `opt`, and
// always those of RecvFrom and Collective results: a rank cannot infer what it
// receives.
void DropInferred(LoweredModule& lowered, const Module& m,
                  const std::vector<std::vector<bool>>& annotated) {
  std::unordered_set<const Value*> written;
  for (size_t f = 0; f < m.functions().size(); ++f) {
    for (const auto& op : m.functions()[f]->ops()) {
      for (const auto& r : op->results()) {
        if (annotated[f][r->id()]) written.insert(r.get());
      }
    }
  }
  for (size_t f = 0; f < lowered.module.functions().size(); ++f) {
    const std::vector<const Value*>& origin = lowered.origins[f];
    for (const auto& op : lowered.module.functions()[f]->ops()) {
      if (op->kind() == OpKind::kRecvFrom || op->kind() == OpKind::kCollective) continue;
      for (const auto& r : op->results()) {
        if (written.count(origin[r->id()]) == 0) r->set_type(Type());
      }
    }
  }
}

int RunLower(const OptOptions& o, const Module& m, const std::vector<std::vector<bool>>& annotated,
             const std::string& text) {
  LowerOptions options;
  options.function = o.function;
  StatusOr<LoweredModule> lowered = LowerToRanks(m, options);
  if (!lowered.ok()) {
    // An error of the module as a whole (it has no function) names the input.
    Status s = lowered.status();
    return ReportError(s.WithLocIfMissing(SourceLoc{DisplayName(o.input), 0, 0, ""}), text);
  }
  if (!o.print_types) DropInferred(*lowered, m, annotated);
  Status written =
      WriteOutputAtomically(o.output, DescribePrograms(*lowered) + PrintModule(lowered->module));
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

int RunOptOn(const OptOptions& o) {
  StatusOr<std::string> text = ReadInput(o.input);
  if (!text.ok()) return ReportError(text.status());
  StatusOr<Module> parsed = ParseModule(*text, DisplayName(o.input));
  if (!parsed.ok()) return ReportError(parsed.status(), *text);
  Module m = std::move(parsed).value();
  Status verified = VerifyModule(m);
  if (!verified.ok()) return ReportError(verified, *text);
  std::vector<std::vector<bool>> annotated = RecordAnnotated(m);
  InferOptions infer;
  infer.domain = o.domain == "shape" ? InferDomain::kShape : InferDomain::kMixed;
  Status inferred = InferTypes(m, infer);
  if (!inferred.ok()) return ReportError(inferred, *text);
  // Again with every type known: the verifier skips a Shard whose operand's type
  // was not written, and an unknown axis in its sharding then tripped a check in
  // the sharding passes (found by the fuzz campaign, tests/fuzz).
  Status reverified = VerifyModule(m);
  if (!reverified.ok()) return ReportError(reverified, *text);
  if (o.lower) return RunLower(o, m, annotated, *text);
  bool sharding_pass = o.any_sharding_pass();
  if (sharding_pass) {
    Status s = RunShardingPasses(o, m);
    if (!s.ok()) {
      return ReportError(s.WithLocIfMissing(SourceLoc{DisplayName(o.input), 0, 0, ""}), *text);
    }
  }
  if (o.check_partition) {
    StatusOr<std::string> summary = CheckPartition(o, m);
    if (!summary.ok()) return ReportError(summary.status(), *text);
    Status written = WriteOutputAtomically(o.output, *summary);
    return written.ok() ? kExitOk : ReportError(written);
  }
  if (!o.print_types && !sharding_pass) DropInferred(m, annotated);
  Status written = WriteOutputAtomically(o.output, PrintModule(m));
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

}  // namespace

int RunOpt(int argc, char** argv) {
  OptOptions o;
  po::options_description desc(
      "usage: distir opt FILE [options]\n\n"
      "Parses FILE ('-' for stdin), verifies it, infers the type of every value and\n"
      "prints the program in canonical form, or with --lower its per-rank programs.\n"
      "Errors are printed as file:line:col.\n\noptions");
  desc.add_options()("help,h", "print this help")("print-types", po::bool_switch(&o.print_types),
                                                  "print the inferred type of every value")(
      "domain", po::value(&o.domain)->default_value("mixed"),
      "type inference domain: mixed (abstract tensors, concrete shapes) or shape")(
      "lower", po::bool_switch(&o.lower),
      "print the per-rank programs instead: one function per distinct rank program, "
      "after a comment saying which ranks run which")(
      "function", po::value(&o.function),
      "with --lower or a sharding pass: the function to work on (default: the last one, "
      "the entry)")("propagate-sharding", po::bool_switch(&o.propagate_sharding),
                    "propagate the shardings of parameters and Shard ops to every value; insert "
                    "Shard {for_users = 1} where an op needs an operand laid out otherwise")(
      "materialize", po::bool_switch(&o.materialize),
      "propagate, then replace every reshard by mesh collectives (MeshAllReduce, "
      "MeshReduceScatter, MeshAllGather, MeshAllToAll) and local slices (MeshSlice)")(
      "cleanup", po::bool_switch(&o.cleanup),
      "propagate, materialise, then run every collective clean-up to a fixpoint")(
      "pass", po::value(&o.passes)->composing(),
      "run this pass by name (repeatable, in order; no implied propagation): "
      "propagate-sharding, materialize, cleanup, regather-linear-inputs, split-stages, "
      "partition, order-tasks, one clean-up: "
      "gather-slice-cancel, reduce-scatter-gather-to-all-reduce, all-reduce-reassociate, "
      "all-reduce-to-reduce-scatter, all-gather-sink, all-reduce-fold; or fuse-gelu (an "
      "exported GELU's elementwise ops as one Gelu)")(
      "parallelize", po::value(&o.parallelize),
      "distribute a sequential program over a mesh, e.g. dp=2,tp=4 or "
      "dp=2,tp=2,pp=2,microbatches=4,schedule=gpipe[,recompute[=layer|selective]][,zero=1]"
      "[,scatter_gather][,regather]: "
      "declare mesh @mesh, lay the parameters "
      "out by the --shard rules (with pp or microbatches: split the batch inputs, those whose "
      "rule puts dp on dim 0, into microbatches and give every op a pipeline stage), then "
      "propagate, materialise, clean up, move the stages to sub-meshes, partition and order "
      "each device's ops by the schedule (with --check-partition: check instead of printing); "
      "vpp=V: V model chunks per stage, the layers cut into pp x V equal chunks, chunk c on "
      "stage c mod pp, run by Megatron's interleaved 1F1B (microbatches a multiple of pp)")(
      "shard", po::value(&o.shard_rules)->composing(),
      "with --parallelize: a parameter rule PATTERN=[{axes}, ...] (repeatable, first match "
      "wins), e.g. 'x=[{dp}, {}]' or 'w*[02468]=[{}, {tp}]'")(
      "layers", po::value(&o.layers),
      "with --parallelize: the pipeline layers (and recompute=layer's checkpoints) by a "
      "regular expression on weight names whose first group names the layer, e.g. "
      "'^layers\\.([0-9]+)\\.'; default: every forward op that reads a weight")(
      "partition", po::bool_switch(&o.partition),
      "propagate, materialise, then print the per-device program (one op per device, "
      "local shapes, per-group collectives)")(
      "check-partition", po::bool_switch(&o.check_partition),
      "propagate, materialise and partition, then run the global and the per-device "
      "programs on the same random inputs (reference executor) and compare the outputs; "
      "prints one summary line, exit 1 when they differ")(
      "seed", po::value(&o.seed)->default_value(1), "with --check-partition: the input seed")(
      "int-max", po::value(&o.int_max)->default_value(1),
      "with --check-partition: integer inputs (token ids, labels) are drawn uniformly from "
      "[0, N]; N must be below every table they index")(
      "output,o", po::value(&o.output)->default_value("-"), "output file ('-' for stdout)")(
      "input", po::value(&o.input), "input file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("opt", argc, argv, desc, vm)) return *stop;
  if (o.input.empty() || (o.domain != "mixed" && o.domain != "shape") ||
      (!o.function.empty() && !o.lower && !o.any_sharding_pass())) {
    std::cerr << "distir opt: "
              << (o.input.empty() ? "missing input FILE"
                  : o.domain != "mixed" && o.domain != "shape"
                      ? "bad --domain"
                      : "--function needs --lower or a sharding pass")
              << " (see --help)\n";
    return kExitUsage;
  }
  return RunOptOn(o);
}

}  // namespace distir::tools
