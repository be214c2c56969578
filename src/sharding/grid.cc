#include "sharding/grid.h"

#include <algorithm>
#include <charconv>

#include "ir/clone.h"
#include "sharding/cleanup.h"
#include "sharding/materialize.h"
#include "sharding/microbatch.h"
#include "sharding/partition.h"
#include "sharding/pipeline_task.h"
#include "sharding/propagate.h"
#include "sharding/recompute.h"
#include "sharding/regather.h"
#include "sharding/replicate.h"
#include "sharding/stage_meshes.h"
#include "sharding/stages.h"
#include "sharding/task_order.h"
#include "sharding/zero.h"
#include "transforms/interleaved_schedule.h"

namespace distir::sharding {
namespace {

StatusOr<int64_t> PositiveInt(const std::string& key, const std::string& value) {
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || ptr != value.data() + value.size() || n < 1 || n > (int64_t{1} << 20))
    return InvalidArgument() << "'" << key << "=" << value << "' must be an integer from 1 to 2^20";
  return n;
}

}  // namespace

GridOptions GridOf(const ParallelOptions& o, std::string layer_pattern, bool recompute_layers,
                   bool scatter_gather_transfers) {
  GridOptions grid;
  grid.axes = {{"dp", o.dp}, {"tp", o.tp}};
  grid.pp = o.pp;
  grid.virtual_stages = o.virtual_stages;
  grid.microbatches = o.microbatches;
  grid.schedule = o.schedule;
  grid.recompute = o.recompute;
  grid.recompute_layers = o.recompute == RecomputeKind::kFull && recompute_layers;
  grid.zero_stage = o.zero_stage;
  grid.layer_pattern = std::move(layer_pattern);
  grid.scatter_gather_transfers = scatter_gather_transfers;
  return grid;
}

StatusOr<GridOptions> ParseGridSpec(const std::string& text) {
  GridOptions grid;
  std::string axes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "pp") {
      DISTIR_ASSIGN_OR_RETURN(grid.pp, PositiveInt(key, value));
    } else if (key == "vpp") {
      DISTIR_ASSIGN_OR_RETURN(grid.virtual_stages, PositiveInt(key, value));
    } else if (key == "microbatches") {
      DISTIR_ASSIGN_OR_RETURN(grid.microbatches, PositiveInt(key, value));
    } else if (key == "schedule") {
      DISTIR_ASSIGN_OR_RETURN(grid.schedule, ParseSchedule(value));
    } else if (key == "recompute") {
      if (value != "" && value != "0" && value != "1" && value != "layer" && value != "selective")
        return InvalidArgument()
               << "'" << item
               << "' must read recompute, recompute=0, recompute=1, recompute=layer "
                  "or recompute=selective";
      grid.recompute = value == "0"           ? RecomputeKind::kNone
                       : value == "selective" ? RecomputeKind::kSelective
                                              : RecomputeKind::kFull;
      grid.recompute_layers = value == "layer";
    } else if (key == "zero") {
      if (value.size() != 1 || value[0] < '0' || value[0] > '3')
        return InvalidArgument() << "'" << item << "' must read zero=0, 1, 2 or 3";
      grid.zero_stage = value[0] - '0';
    } else if (key == "scatter_gather") {
      if (value != "" && value != "0" && value != "1")
        return InvalidArgument() << "'" << item
                                 << "' must read scatter_gather, scatter_gather=0 or =1";
      grid.scatter_gather_transfers = value != "0";
    } else if (key == "regather") {
      if (value != "" && value != "0" && value != "1")
        return InvalidArgument() << "'" << item << "' must read regather, regather=0 or =1";
      grid.regather_linear_inputs = value != "0";
    } else {
      axes += (axes.empty() ? "" : ",") + item;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!axes.empty()) {
    DISTIR_ASSIGN_OR_RETURN(grid.axes, ParseMeshAxes(axes));
  }
  return grid;
}

std::vector<std::string> BatchParams(const Function& fn, const std::vector<ParamRule>& rules,
                                     const std::string& data_axis) {
  std::vector<std::string> out;
  for (const auto& p : fn.params()) {
    const ParamRule* r = MatchRule(rules, p->name());
    if (r == nullptr || r->dims.empty()) continue;
    for (const std::string& a : r->dims[0]) {
      if (a == data_axis) out.push_back(p->name());
    }
  }
  return out;
}

namespace {

// A grid point's batch is micro-batch x D x K (Megatron's global batch): each
// replica's microbatches have whole, equal micro-batches.
Status CheckBatchPieces(const Function& fn, const std::vector<std::string>& batch,
                        const GridOptions& grid) {
  int64_t dp = 1;
  for (const MeshAxis& a : grid.axes) dp = a.name == "dp" ? a.size : dp;
  const int64_t pieces = dp * grid.microbatches;
  for (const auto& p : fn.params()) {
    if (std::find(batch.begin(), batch.end(), p->name()) == batch.end()) continue;
    if (!p->type().is_tensor() || p->type().rank() < 1) continue;  // SplitMicrobatches says why
    const int64_t b = p->type().shape()[0];
    if (b % pieces != 0)
      return InvalidArgument(p->loc())
             << "the batch of " << p->Ref() << " (" << b << ") does not divide into D x K = " << dp
             << " x " << grid.microbatches << " micro-batches (batch = micro-batch x D x K)";
  }
  return Status::Ok();
}

}  // namespace

Status CheckGridPoint(const Function& fn, const GridOptions& grid,
                      const std::vector<ParamRule>& rules) {
  return CheckGridPoint(fn, grid, BatchParams(fn, rules));
}

Status CheckGridPoint(const Function& fn, const GridOptions& grid,
                      const std::vector<std::string>& batch_params) {
  DISTIR_RETURN_IF_ERROR(CheckBatchPieces(fn, batch_params, grid));
  DISTIR_RETURN_IF_ERROR(CheckInterleaving(grid.pp, grid.virtual_stages, grid.microbatches));
  // Megatron interleaves 1F1B only; GPipe's order of chunks is not modelled.
  if (grid.virtual_stages > 1 && grid.schedule != PipelineSchedule::k1F1B)
    return InvalidArgument() << "vpp = " << grid.virtual_stages
                             << " is Megatron's interleaved 1F1B: schedule="
                             << ScheduleName(grid.schedule) << " does not interleave";
  return Status::Ok();
}

namespace {

// AnnotateGrid assigns stages (and splits microbatches) only at these points.
bool AssignsStages(const GridOptions& grid) {
  return grid.pp > 1 || grid.microbatches > 1 || grid.recompute != RecomputeKind::kNone;
}

}  // namespace

StatusOr<int64_t> PipelineLayers(const Function& seq, const std::vector<std::string>& batch_params,
                                 const std::string& layer_pattern) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<bool> forward, ForwardOps(seq, batch_params));
  return CountLayers(seq, forward, batch_params, layer_pattern);
}

Status CheckPipelineChunks(const Function& seq, const GridOptions& grid, int64_t layers) {
  if (!AssignsStages(grid)) return Status::Ok();
  return CheckStageChunks(seq.name(), layers, grid.pp, grid.virtual_stages);
}

namespace {

// AnnotateGrid; with `first_only`, the template of microbatch 0
// (microbatch.h), whose microbatch parameters go to `mb_params`.
Status Annotate(Module& module, const std::string& function, const GridOptions& grid,
                const std::vector<ParamRule>& rules, bool first_only,
                std::vector<std::string>& mb_params) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to distribute";
  std::vector<std::string> batch = BatchParams(*fn, rules);
  DISTIR_RETURN_IF_ERROR(CheckGridPoint(*fn, grid, batch));
  DISTIR_RETURN_IF_ERROR(AnnotateMesh(module, function, grid.axes, rules));
  if (AssignsStages(grid)) {
    DISTIR_ASSIGN_OR_RETURN(
        mb_params, SplitMicrobatches(module, function, grid.microbatches, batch, first_only,
                                     /*sum_addends=*/grid.pp > 1));
    DISTIR_RETURN_IF_ERROR(AssignStages(module, function, grid.pp, mb_params, grid.layer_pattern,
                                        grid.virtual_stages));
    if (grid.recompute != RecomputeKind::kNone) {
      std::vector<int64_t> layers;
      if (grid.recompute_layers) {
        // The passes above replaced the function: look it up again.
        DISTIR_ASSIGN_OR_RETURN(
            layers, ForwardLayers(*module.Lookup(function), mb_params, grid.layer_pattern));
      }
      DISTIR_RETURN_IF_ERROR(
          RecomputeForward(module, function, layers, grid.recompute == RecomputeKind::kSelective));
    }
  }
  return ApplyZero(module, function, grid.zero_stage);
}

// Partition's names of the microbatch parameters `global` (partition.cc:
// `<name>.<device>` on each device of the parameter's mesh; on those `keep`
// marks, if given).
std::vector<std::string> LocalNames(const Module& module, const Function& fn,
                                    const std::vector<std::string>& global,
                                    const std::vector<char>* keep) {
  std::vector<std::string> local;
  for (const auto& p : fn.params()) {
    if (std::find(global.begin(), global.end(), p->name()) == global.end()) continue;
    if (p->sharding() == nullptr) continue;
    const Mesh* mesh = module.LookupMesh(p->sharding()->mesh);
    for (const DeviceId& d : mesh->devices()) {
      if (keep != nullptr &&
          (d.value() >= static_cast<int32_t>(keep->size()) || (*keep)[d.value()] == 0))
        continue;
      local.push_back(p->name() + "." + d.ToString());
    }
  }
  return local;
}

}  // namespace

Status AnnotateGrid(Module& module, std::string function, const GridOptions& grid,
                    const std::vector<ParamRule>& rules) {
  std::vector<std::string> mb;
  return Annotate(module, function, grid, rules, /*first_only=*/false, mb);
}

Status DistributeGrid(Module& module, std::string function, const GridOptions& grid,
                      const std::vector<ParamRule>& rules) {
  DISTIR_RETURN_IF_ERROR(AnnotateGrid(module, function, grid, rules));
  DISTIR_RETURN_IF_ERROR(PropagateShardings(module, function));
  DISTIR_RETURN_IF_ERROR(MaterializeShardings(module, function));
  RunCleanup(module, function);
  if (grid.regather_linear_inputs) RegatherLinearInputs(module, function);
  DISTIR_RETURN_IF_ERROR(SplitStageMeshes(module, function, "dp", grid.virtual_stages,
                                          grid.ScatterAxis()));
  DISTIR_RETURN_IF_ERROR(PartitionShardings(module, function));
  return OrderPipelineTasks(module, function, grid.schedule, grid.virtual_stages);
}

bool ReplicatesMicrobatches(const GridOptions& grid) {
  return grid.microbatches > 1 && grid.zero_stage <= 1;
}

namespace {

// The partitioned template of microbatch 0 (replicate.h), with its tasks;
// its local microbatch parameters go to `local`. With `part`, only on its
// devices (PartitionShardingsPart).
Status DistributeTemplate(Module& module, const std::string& function, const GridOptions& grid,
                          const std::vector<ParamRule>& rules, std::vector<std::string>& local,
                          std::vector<DevicePart>* parts = nullptr, int* chosen = nullptr) {
  std::vector<std::string> mb;
  DISTIR_RETURN_IF_ERROR(Annotate(module, function, grid, rules, /*first_only=*/true, mb));
  DISTIR_RETURN_IF_ERROR(PropagateShardings(module, function));
  DISTIR_RETURN_IF_ERROR(MaterializeShardings(module, function));
  RunCleanup(module, function);
  if (grid.regather_linear_inputs) RegatherLinearInputs(module, function);
  DISTIR_RETURN_IF_ERROR(SplitStageMeshes(module, function, "dp", grid.virtual_stages,
                                          grid.ScatterAxis()));
  // The first part that can be partitioned (a refused one leaves the
  // function as it was), else the whole.
  for (size_t i = 0; parts != nullptr && i < parts->size(); ++i) {
    DevicePart& part = (*parts)[i];
    std::vector<std::string> names = LocalNames(module, *module.Lookup(function), mb, &part.keep);
    const Status s = PartitionShardingsPart(module, function, part);
    if (s.code() == StatusCode::kFailedPrecondition) continue;
    DISTIR_RETURN_IF_ERROR(s);
    local = std::move(names);
    *chosen = static_cast<int>(i);
    InheritTasks(*module.Lookup(function));
    return Status::Ok();
  }
  local = LocalNames(module, *module.Lookup(function), mb, nullptr);
  DISTIR_RETURN_IF_ERROR(PartitionShardings(module, function));
  InheritTasks(*module.Lookup(function));
  return Status::Ok();
}

}  // namespace

Status DistributeGridReplicated(Module& module, std::string function, const GridOptions& grid,
                                const std::vector<ParamRule>& rules) {
  if (!ReplicatesMicrobatches(grid)) return DistributeGrid(module, function, grid, rules);
  std::vector<std::string> local;
  DISTIR_RETURN_IF_ERROR(DistributeTemplate(module, function, grid, rules, local));
  std::vector<std::optional<TaskTag>> tasks;
  DISTIR_RETURN_IF_ERROR(ReplicateMicrobatches(module, function, grid.microbatches, local, &tasks));
  return OrderByTasks(*module.Lookup(function), tasks, grid.schedule, grid.virtual_stages);
}

bool ExpandsFromTemplate(const GridOptions& grid) {
  return grid.microbatches >= 1 && grid.zero_stage <= 1;
}

StatusOr<GridTemplate> DistributedTemplate(const Function& seq, const GridOptions& grid,
                                           const std::vector<ParamRule>& rules,
                                           const std::vector<char>* keep_devices,
                                           std::string even_axis, bool last_apart) {
  if (!ExpandsFromTemplate(grid))
    return FailedPrecondition() << "the grid point is not built from a template of one microbatch";
  if (keep_devices == nullptr) {
    GridTemplate out;
    out.module.AddFunction(CloneFunction(seq));
    DISTIR_RETURN_IF_ERROR(DistributeTemplate(out.module, seq.name(), grid, rules, out.local));
    return out;
  }
  DISTIR_ASSIGN_OR_RETURN(
      GridTemplate out,
      DistributedTemplateOfFirst(seq, grid, rules,
                                 {DevicePart{*keep_devices, even_axis, {}, last_apart}}));
  if (out.part < 0) return FailedPrecondition() << "the part cannot be cut out";
  return out;
}

StatusOr<GridTemplate> DistributedTemplateOfFirst(const Function& seq, const GridOptions& grid,
                                                  const std::vector<ParamRule>& rules,
                                                  std::vector<DevicePart> parts) {
  if (!ExpandsFromTemplate(grid))
    return FailedPrecondition() << "the grid point is not built from a template of one microbatch";
  GridTemplate out;
  out.module.AddFunction(CloneFunction(seq));
  DISTIR_RETURN_IF_ERROR(
      DistributeTemplate(out.module, seq.name(), grid, rules, out.local, &parts, &out.part));
  if (out.part >= 0) {
    DevicePart& part = parts[static_cast<size_t>(out.part)];
    out.keep_device = std::move(part.keep);
    out.op_images = std::move(part.images);
  }
  return out;
}

namespace {

// The devices to expand a template for: `keep_devices`, which a template of
// a part needs; FailedPrecondition where it has none.
StatusOr<const std::vector<char>*> PartOf(const GridTemplate& t,
                                          const std::vector<char>* keep_devices) {
  if (!t.keep_device.empty() && keep_devices == nullptr)
    return FailedPrecondition() << "the template holds only part of the devices";
  return keep_devices;
}

const std::vector<double>* ImagesOf(const GridTemplate& t) {
  return t.keep_device.empty() ? nullptr : &t.op_images;
}

}  // namespace

StatusOr<ExpandedProgram> ExpandTemplate(const GridTemplate& t, const GridOptions& grid,
                                         const std::vector<char>* keep_devices) {
  const Function& tmpl = *t.module.entry();
  DISTIR_ASSIGN_OR_RETURN(const std::vector<char>* keep, PartOf(t, keep_devices));
  // Written in the schedule's order where the order of its task segments
  // applies (replicate.h); else expanded, then ordered op by op.
  DISTIR_ASSIGN_OR_RETURN(std::optional<ExpandedProgram> ordered,
                          ExpandMicrobatchesInOrder(tmpl, grid.microbatches, t.local, grid.schedule,
                                                    grid.virtual_stages, keep, ImagesOf(t)));
  if (ordered.has_value()) return std::move(*ordered);
  std::vector<std::optional<TaskTag>> tasks;
  DISTIR_ASSIGN_OR_RETURN(
      ExpandedProgram program,
      ExpandMicrobatches(tmpl, grid.microbatches, t.local, tasks, keep, ImagesOf(t)));
  DISTIR_RETURN_IF_ERROR(
      OrderExpandedByTasks(program, tmpl, tasks, grid.schedule, grid.virtual_stages));
  return program;
}

StatusOr<std::optional<SegmentedProgram>> SegmentTemplate(const GridTemplate& t,
                                                          const GridOptions& grid,
                                                          const std::vector<char>* keep_devices) {
  DISTIR_ASSIGN_OR_RETURN(const std::vector<char>* keep, PartOf(t, keep_devices));
  return ExpandMicrobatchSegments(*t.module.entry(), grid.microbatches, t.local, grid.schedule,
                                  grid.virtual_stages, keep, ImagesOf(t));
}

StatusOr<ExpandedGrid> DistributedExpansion(const Function& seq, const GridOptions& grid,
                                            const std::vector<ParamRule>& rules) {
  DISTIR_ASSIGN_OR_RETURN(GridTemplate t, DistributedTemplate(seq, grid, rules));
  DISTIR_ASSIGN_OR_RETURN(ExpandedProgram program, ExpandTemplate(t, grid));
  return ExpandedGrid{std::move(t.module), std::move(program)};
}

StatusOr<Module> DistributedCopy(const Function& seq, const GridOptions& grid,
                                 const std::vector<ParamRule>& rules) {
  // The annotation rewrites the function: work on a copy.
  Module m;
  m.AddFunction(CloneFunction(seq));
  // Built from one microbatch and repeated where it can be (the same program,
  // K times cheaper to build); else, or where the template cannot say it,
  // split into microbatches first.
  Status fast = DistributeGridReplicated(m, seq.name(), grid, rules);
  if (fast.code() != StatusCode::kFailedPrecondition || !ReplicatesMicrobatches(grid)) {
    DISTIR_RETURN_IF_ERROR(fast);
    return m;
  }
  Module split;
  split.AddFunction(CloneFunction(seq));
  DISTIR_RETURN_IF_ERROR(DistributeGrid(split, seq.name(), grid, rules));
  return split;
}

}  // namespace distir::sharding
