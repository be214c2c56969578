#include "sharding/stage_meshes.h"

#include <algorithm>
#include <map>
#include <set>

#include "sharding/pipeline_task.h"
#include "sharding/rebuilder.h"
#include "support/status_or.h"

namespace distir::sharding {
namespace {

// The task's stage: a chunk when interleaved (stages.h).
int64_t ChunkOf(const Op& op) { return GetTask(op).value_or(TaskTag{}).stage; }

// The one mesh every sharding of `fn` names.
StatusOr<const Mesh*> SingleMesh(const Module& module, const Function& fn) {
  const Mesh* mesh = nullptr;
  auto see = [&](const Value& v) -> Status {
    if (v.sharding() == nullptr) return Status::Ok();
    const Mesh* m = module.LookupMesh(v.sharding()->mesh);
    if (mesh != nullptr && m != mesh)
      return FailedPrecondition(v.loc())
             << "pipeline stages need a program on one mesh; " << v.Ref() << " is on @"
             << v.sharding()->mesh << ", others on @" << mesh->name();
    mesh = m;
    return Status::Ok();
  };
  for (const auto& p : fn.params()) DISTIR_RETURN_IF_ERROR(see(*p));
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) DISTIR_RETURN_IF_ERROR(see(*r));
  }
  if (mesh == nullptr) return FailedPrecondition() << "@" << fn.name() << " has no sharding";
  if (mesh->explicit_devices())
    return Unimplemented() << "pipeline stages of mesh @" << mesh->name()
                           << " with explicit devices are not supported yet";
  return mesh;
}

// Declares @M.s0 .. @M.s<P-1>: the sub-meshes of the world [.., pp, ..].
Status DeclareStages(Module& module, const Mesh& base, int64_t stages,
                     const std::string& outer_axis) {
  const int outer = base.AxisIndex(outer_axis);
  const size_t pos = static_cast<size_t>(outer + 1);  // 0 when there is no outer axis
  std::vector<int64_t> world_sizes;
  for (const MeshAxis& a : base.axes()) world_sizes.push_back(a.size);
  world_sizes.insert(world_sizes.begin() + static_cast<std::ptrdiff_t>(pos), stages);
  for (int64_t s = 0; s < stages; ++s) {
    std::string name = base.name() + ".s" + std::to_string(s);
    if (module.LookupMesh(name) != nullptr)
      return InvalidArgument() << "mesh @" << name << " is already declared";
    std::vector<DeviceId> devices;
    for (int64_t i = 0; i < base.num_devices(); ++i) {
      std::vector<int64_t> c = base.Coords(i);
      c.insert(c.begin() + static_cast<std::ptrdiff_t>(pos), s);
      int64_t linear = 0;
      for (size_t a = 0; a < c.size(); ++a) linear = linear * world_sizes[a] + c[a];
      devices.push_back(DeviceId(static_cast<int32_t>(linear)));
    }
    module.AddMesh(Mesh(name, base.axes(), devices, base.loc()));
  }
  return Status::Ok();
}

Sharding OnStage(const Sharding& s, const std::string& mesh) {
  Sharding out = s;
  out.mesh = mesh;
  return out;
}

class StageSplitter {
 public:
  /// `stages`: P, the chunk of an op runs on stage chunk mod P.
  /// `scatter`: the axis over which replicated transfers are scattered and
  /// gathered (ScatterDim); empty: none.
  StageSplitter(const Function& fn, const Mesh& base, int64_t stages, std::string scatter)
      : fn_(fn),
        mesh_(base),
        stages_(stages),
        b_(fn),
        scatter_(std::move(scatter)),
        // An axis of size 1 is not declared: nothing to scatter over.
        scatter_size_(base.AxisIndex(scatter_) >= 0 ? base.AxisSize(scatter_) : 1) {}

  StatusOr<std::unique_ptr<Function>> Run();

 private:
  std::string MeshName(int64_t stage) const {
    return mesh_.name() + ".s" + std::to_string(stage);
  }
  int64_t StageOf(const Op& op) const { return ChunkOf(op) % stages_; }
  Value* OnStage(const Value* old, int64_t stage, const Op& reader);
  Value* ParamCopy(const Value* old, int64_t stage);
  Value* Recompute(const Value* old, int64_t stage, const Op& reader);
  Value* Transfer(const Value* old, int64_t stage, const Op& reader);
  Value* GatherOnArrival(Value* pieces, const Value& whole, AttrMap attrs, int64_t stage,
                         const std::string& name, const Op& reader);
  int ScatterDim(const Value& v) const;
  Op* CloneOnStage(const Op& op, int64_t stage, const Op& reader);
  bool SlicedParamCopy(const Op& op, const std::vector<int64_t>& home);
  void RepeatOnStage(const Op& op, int64_t stage);

  const Function& fn_;
  Mesh mesh_;  // the mesh the stages split, a copy: DeclareStages adds meshes
  int64_t stages_;
  Rebuilder b_;
  std::string scatter_;
  int64_t scatter_size_;
  std::map<std::pair<int, int64_t>, Value*> moved_;  // (old value id, stage) -> its copy there
};

// `old` as op `reader` on `stage` reads it, once per (value, stage): a
// parameter has a copy on every stage that reads it (a weight is resident
// where it is used, as the tied embedding on the first and last stage); a
// setup value (computed from parameters alone) is computed again there; any
// other value is transferred.
Value* StageSplitter::OnStage(const Value* old, int64_t stage, const Op& reader) {
  Value* v = b_.Map(old);
  if (v->sharding() == nullptr || v->sharding()->mesh == MeshName(stage)) return v;
  auto it = moved_.find({old->id(), stage});
  if (it != moved_.end()) return it->second;
  Value* there = nullptr;
  if (old->def() == nullptr) {
    there = ParamCopy(old, stage);
  } else if (GetTask(*old->def()).value_or(TaskTag{}).phase == TaskPhase::kSetup) {
    there = Recompute(old, stage, reader);
  } else {
    there = Transfer(old, stage, reader);
  }
  moved_[{old->id(), stage}] = there;
  return there;
}

Value* StageSplitter::ParamCopy(const Value* old, int64_t stage) {
  Value* v = b_.Map(old);
  Value* copy = b_.out().AddParam(b_.Fresh(old->name() + ".s" + std::to_string(stage)), v->type(),
                                  old->loc());
  copy->set_sharding(sharding::OnStage(*v->sharding(), MeshName(stage)));
  return copy;
}

Value* StageSplitter::Recompute(const Value* old, int64_t stage, const Op& reader) {
  Op* n = CloneOnStage(*old->def(), stage, reader);
  SetTask(*n, TaskTag{stage, -1, TaskPhase::kSetup});
  Value* result = nullptr;
  for (int i = 0; i < n->num_results(); ++i) {
    moved_[{old->def()->result(i)->id(), stage}] = n->result(i);
    if (old->def()->result(i) == old) result = n->result(i);
  }
  return result;
}

Value* StageSplitter::Transfer(const Value* old, int64_t stage, const Op& reader) {
  Value* v = b_.Map(old);
  std::string base = old->name().empty() ? "moved" : old->name();
  const std::string at = ".s" + std::to_string(stage);
  const std::optional<TaskTag> task = GetTask(*old->def());
  const Op& def = *old->def();
  if (!scatter_.empty() && def.kind() == OpKind::kMeshAllGather) {
    // Megatron moves what each GPU holds and gathers on arrival: the gather's
    // input crosses (once per stage, shared with its other readers there) and
    // the gather runs on the receiving stage, in its reader's task; the
    // sender's gather goes if nothing on its own stage reads it.
    AttrMap attrs = def.attrs();
    attrs.erase("task");
    return GatherOnArrival(OnStage(def.input(0), stage, reader), *v, std::move(attrs), stage,
                           base + ".gathered" + at, reader);
  }
  const int dim = ScatterDim(*v);
  Value* sent = v;
  if (dim >= 0) {
    // Megatron's scatter-gather: each device of the tensor-parallel group
    // sends its 1/T of the replicated value, and the receiving group
    // all-gathers the pieces.
    Sharding split = *v->sharding();
    split.dims[static_cast<size_t>(dim)].push_back(scatter_);
    sent = b_.Emit(OpKind::kMeshSlice, {v},
                   {{"mesh", Attribute(v->sharding()->mesh)},
                    {"axes", Attribute(std::vector<std::string>{scatter_})},
                    {"axis", Attribute(int64_t{dim})}},
                   b_.Fresh(base + ".scatter"), reader.loc(), v->type(), &split);
    if (task.has_value()) SetTask(*sent->def(), *task);
  }
  Sharding to = sharding::OnStage(*sent->sharding(), MeshName(stage));
  Value* t = b_.Emit(OpKind::kMeshTransfer, {sent}, {{"mesh", Attribute(MeshName(stage))}},
                     b_.Fresh(base + ".to" + at), reader.loc(), v->type(), &to);
  if (task.has_value()) SetTask(*t->def(), *task);
  if (dim < 0) return t;
  return GatherOnArrival(t,  *v,
                         {{"axes", Attribute(std::vector<std::string>{scatter_})},
                          {"axis", Attribute(int64_t{dim})}},
                         stage, base + ".gathered" + at, reader);
}

// `pieces` on `stage` all-gathered (by `attrs`' axes and axis) to the layout
// of `whole` there: the receiver's work, at the start of the task of
// `reader`, the op that reads it.
Value* StageSplitter::GatherOnArrival(Value* pieces, const Value& whole, AttrMap attrs,
                                      int64_t stage, const std::string& name, const Op& reader) {
  attrs["mesh"] = Attribute(MeshName(stage));
  Sharding there = sharding::OnStage(*whole.sharding(), MeshName(stage));
  Value* g = b_.Emit(OpKind::kMeshAllGather, {pieces}, std::move(attrs), b_.Fresh(name),
                     reader.loc(), whole.type(), &there);
  if (std::optional<TaskTag> r = GetTask(reader); r.has_value()) SetTask(*g->def(), *r);
  return g;
}

// The dim along which a transfer of `v` is scattered over `scatter_`, or -1
// (sent as it is): only a value replicated over that axis (not split by it,
// not partial), evenly laid out, with a dim whose pieces divide by its size
// (Megatron sends whole tensors when the element count does not divide by
// T). The longest such dim (the last of equals), so the pieces are large.
int StageSplitter::ScatterDim(const Value& v) const {
  const Sharding* s = v.sharding();
  if (scatter_size_ <= 1 || s == nullptr || s->is_partial() || s->UsesAxis(scatter_) ||
      !s->offsets.empty() || !v.type().HasStaticShape())
    return -1;
  const std::vector<int64_t> shape = v.type().shape();
  int best = -1;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    int64_t shards = 1;
    for (const std::string& axis : s->dims[static_cast<size_t>(d)]) shards *= mesh_.AxisSize(axis);
    const int64_t piece =
        shape[static_cast<size_t>(d)] % shards == 0 ? shape[static_cast<size_t>(d)] / shards : 0;
    if (piece > 0 && piece % scatter_size_ == 0 &&
        (best < 0 || shape[static_cast<size_t>(d)] >= shape[static_cast<size_t>(best)]))
      best = d;
  }
  return best;
}

// Clones `op` onto `stage`: its operands as that stage reads them, its
// results on the stage's mesh. Names stay the op's own when it runs on its
// own stage, else get ".s<stage>".
Op* StageSplitter::CloneOnStage(const Op& op, int64_t stage, const Op& reader) {
  std::vector<Value*> inputs;
  for (const Value* v : op.inputs()) inputs.push_back(OnStage(v, stage, reader));
  const bool copy = StageOf(op) != stage;
  std::vector<std::string> names;
  for (const auto& r : op.results()) {
    names.push_back(!copy || r->name().empty()
                        ? r->name()
                        : b_.Fresh(r->name() + ".s" + std::to_string(stage)));
  }
  Op* n = b_.out().AddOp(op.kind(), std::move(inputs), op.attrs(), std::move(names), op.loc(),
                         op.is_call() ? op.callee() : std::string());
  for (int i = 0; i < op.num_results(); ++i) {
    const Value& r = *op.result(i);
    n->result(i)->set_type(r.type());
    n->result(i)->set_loc(r.loc());
    if (r.sharding() != nullptr)
      n->result(i)->set_sharding(sharding::OnStage(*r.sharding(), MeshName(stage)));
    if (!copy) b_.Bind(&r, n->result(i));
  }
  if (n->FindAttr("mesh") != nullptr && IsMeshCollective(n->kind()))
    n->SetAttr("mesh", Attribute(MeshName(stage)));
  return n;
}

// Update op `op` of a tied weight again on `stage`, which holds a copy of the
// weight: from that stage's copies of the weight and its optimizer state and
// the gradient transferred there; later repeated ops read its results.
void StageSplitter::RepeatOnStage(const Op& op, int64_t stage) {
  Op* n = CloneOnStage(op, stage, op);
  TaskTag t = GetTask(op).value_or(TaskTag{});
  t.stage = stage;
  SetTask(*n, t);
  for (int i = 0; i < op.num_results(); ++i) moved_[{op.result(i)->id(), stage}] = n->result(i);
}

// A local slice of a parameter on a stage other than the parameter's home:
// that stage's copy of the parameter is the slice itself (a resident piece,
// as the emitter's per-stage weights), not the whole weight sliced every step.
bool StageSplitter::SlicedParamCopy(const Op& op, const std::vector<int64_t>& home) {
  const int64_t stage = StageOf(op);
  if (op.kind() != OpKind::kMeshSlice || op.input(0)->def() != nullptr ||
      home[op.input(0)->id()] == stage || op.result(0)->sharding() == nullptr)
    return false;
  const Value& piece = *op.result(0);
  Value* copy = b_.out().AddParam(b_.Fresh(op.input(0)->name() + ".s" + std::to_string(stage)),
                                  piece.type(), op.input(0)->loc());
  copy->set_sharding(sharding::OnStage(*piece.sharding(), MeshName(stage)));
  b_.Bind(&piece, copy);
  return true;
}

StatusOr<std::unique_ptr<Function>> StageSplitter::Run() {
  // A parameter lives on the stage of its first reader that takes it whole
  // (a stage that only slices it gets the slice as its own copy), and has a
  // copy on every other stage that reads it.
  std::vector<int64_t> first_reader(fn_.num_values(), -1);
  std::vector<std::set<int64_t>> stages_reading(fn_.num_values());
  std::vector<bool> updated(fn_.num_values(), false);
  for (auto it = fn_.ops().rbegin(); it != fn_.ops().rend(); ++it) {
    const bool update = GetTask(**it).value_or(TaskTag{}).phase == TaskPhase::kUpdate;
    const bool slice = (*it)->kind() == OpKind::kMeshSlice;
    for (const Value* v : (*it)->inputs()) {
      if (!slice || first_reader[v->id()] < 0) first_reader[v->id()] = StageOf(**it);
      stages_reading[v->id()].insert(StageOf(**it));
      updated[v->id()] = updated[v->id()] || update;
    }
  }
  // A weight tied across stages (GPT's embedding and output layer on the
  // first and last stage) and updated: every stage that reads it updates its
  // own copy, as Megatron steps both copies after all-reducing the gradient
  // over its embedding group. The gradient reaches each copy's stage by a
  // transfer of the sum (the second half of that all-reduce). `repeat[op]`:
  // the other stages that repeat update op `op`.
  std::vector<std::set<int64_t>> tied(fn_.num_values());
  for (const auto& p : fn_.params()) {
    if (stages_reading[p->id()].size() > 1 && updated[p->id()])
      tied[p->id()] = stages_reading[p->id()];
  }
  std::vector<std::set<int64_t>> repeat(fn_.ops().size());
  for (const auto& op : fn_.ops()) {
    if (GetTask(*op).value_or(TaskTag{}).phase != TaskPhase::kUpdate) continue;
    std::set<int64_t> stages;
    for (const Value* v : op->inputs()) stages.insert(tied[v->id()].begin(), tied[v->id()].end());
    for (const auto& r : op->results()) tied[r->id()] = stages;
    stages.erase(StageOf(*op));
    repeat[static_cast<size_t>(op->id())] = std::move(stages);
  }
  for (const auto& p : fn_.params()) {
    Value* v = b_.Map(p.get());
    if (v->sharding() != nullptr)
      v->set_sharding(
          sharding::OnStage(*v->sharding(), MeshName(std::max<int64_t>(first_reader[p->id()], 0))));
  }
  for (const auto& op : fn_.ops()) {
    if (SlicedParamCopy(*op, first_reader)) continue;
    CloneOnStage(*op, StageOf(*op), *op);
    for (int64_t s : repeat[static_cast<size_t>(op->id())]) RepeatOnStage(*op, s);
  }
  return b_.Finish();
}

}  // namespace

Status SplitStageMeshes(Module& module, std::string function, const std::string& outer_axis,
                        int64_t virtual_stages, const std::string& scatter_axis) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to split into stages";
  InheritTasks(*fn);
  if (virtual_stages < 1)
    return InvalidArgument() << "model chunks per stage must be >= 1, got " << virtual_stages;
  int64_t chunks = 1;
  for (const auto& op : fn->ops()) chunks = std::max(chunks, ChunkOf(*op) + 1);
  if (chunks % virtual_stages != 0)
    return InvalidArgument() << "@" << function << "'s tasks name " << chunks
                             << " model chunks, not a multiple of v = " << virtual_stages;
  const int64_t stages = chunks / virtual_stages;
  if (stages == 1) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(const Mesh* found, SingleMesh(module, *fn));
  const Mesh base = *found;  // DeclareStages adds meshes to the module
  DISTIR_RETURN_IF_ERROR(DeclareStages(module, base, stages, outer_axis));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> split,
                          StageSplitter(*fn, base, stages, scatter_axis).Run());
  module.ReplaceFunction(std::move(split));
  // The senders' gathers whose results now cross ungathered.
  if (!scatter_axis.empty()) RemoveDeadMeshOps(module, function);
  return Status::Ok();
}

}  // namespace distir::sharding
