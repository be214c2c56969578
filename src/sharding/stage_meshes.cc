#include "sharding/stage_meshes.h"

#include <algorithm>
#include <map>

#include "sharding/pipeline_task.h"
#include "sharding/rebuilder.h"
#include "support/status_or.h"

namespace distir::sharding {
namespace {

int64_t StageOf(const Op& op) { return GetTask(op).value_or(TaskTag{}).stage; }

// The one mesh every sharding of `fn` names.
StatusOr<const Mesh*> SingleMesh(const Module& module, const Function& fn) {
  const Mesh* mesh = nullptr;
  auto see = [&](const Value& v) -> Status {
    if (v.sharding() == nullptr) return Status::Ok();
    const Mesh* m = module.LookupMesh(v.sharding()->mesh);
    if (mesh != nullptr && m != mesh)
      return FailedPrecondition(v.loc()) << "pipeline stages need a program on one mesh; "
                                         << v.Ref() << " is on @" << v.sharding()->mesh
                                         << ", others on @" << mesh->name();
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
  StageSplitter(const Function& fn, const std::string& base) : fn_(fn), base_(base), b_(fn) {}

  std::unique_ptr<Function> Run();

 private:
  std::string MeshName(int64_t stage) const { return base_ + ".s" + std::to_string(stage); }
  Value* OnStage(const Value* old, int64_t stage, const Op& reader);

  const Function& fn_;
  std::string base_;
  Rebuilder b_;
  std::map<std::pair<int, int64_t>, Value*> moved_;  // (old value id, stage) -> transfer
};

// `old` as op `reader` on `stage` reads it: moved there once if need be.
Value* StageSplitter::OnStage(const Value* old, int64_t stage, const Op& reader) {
  Value* v = b_.Map(old);
  if (v->sharding() == nullptr || v->sharding()->mesh == MeshName(stage)) return v;
  auto [it, inserted] = moved_.try_emplace({old->id(), stage}, nullptr);
  if (!inserted) return it->second;
  std::string base = old->name().empty() ? "moved" : old->name();
  Sharding to = sharding::OnStage(*v->sharding(), MeshName(stage));
  Value* t = b_.Emit(OpKind::kMeshTransfer, {v}, {{"mesh", Attribute(MeshName(stage))}},
                     b_.Fresh(base + ".to.s" + std::to_string(stage)), reader.loc(), v->type(), &to);
  std::optional<TaskTag> task = old->def() != nullptr ? GetTask(*old->def()) : GetTask(reader);
  if (task.has_value()) SetTask(*t->def(), *task);
  it->second = t;
  return t;
}

std::unique_ptr<Function> StageSplitter::Run() {
  // A parameter lives on the stage of its first reader.
  std::vector<int64_t> first_reader(fn_.num_values(), -1);
  for (auto it = fn_.ops().rbegin(); it != fn_.ops().rend(); ++it) {
    for (const Value* v : (*it)->inputs()) first_reader[v->id()] = StageOf(**it);
  }
  for (const auto& p : fn_.params()) {
    Value* v = b_.Map(p.get());
    if (v->sharding() != nullptr)
      v->set_sharding(sharding::OnStage(*v->sharding(), MeshName(std::max<int64_t>(first_reader[p->id()], 0))));
  }
  for (const auto& op : fn_.ops()) {
    const int64_t stage = StageOf(*op);
    std::vector<std::pair<const Value*, Value*>> rebound;
    for (const Value* v : op->inputs()) {
      Value* moved = OnStage(v, stage, *op);
      if (moved == b_.Map(v)) continue;
      rebound.emplace_back(v, b_.Map(v));
      b_.Bind(v, moved);
    }
    Op* n = b_.Clone(*op);
    for (auto it = rebound.rbegin(); it != rebound.rend(); ++it) b_.Bind(it->first, it->second);
    for (int i = 0; i < n->num_results(); ++i) {
      const Sharding* s = n->result(i)->sharding();
      if (s != nullptr) n->result(i)->set_sharding(sharding::OnStage(*s, MeshName(stage)));
    }
    if (n->FindAttr("mesh") != nullptr && IsMeshCollective(n->kind()))
      n->SetAttr("mesh", Attribute(MeshName(stage)));
  }
  return b_.Finish();
}

}  // namespace

Status SplitStageMeshes(Module& module, std::string function, const std::string& outer_axis) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to split into stages";
  InheritTasks(*fn);
  int64_t stages = 1;
  for (const auto& op : fn->ops()) stages = std::max(stages, StageOf(*op) + 1);
  if (stages == 1) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(const Mesh* base, SingleMesh(module, *fn));
  const std::string base_name = base->name();
  DISTIR_RETURN_IF_ERROR(DeclareStages(module, *base, stages, outer_axis));
  module.ReplaceFunction(StageSplitter(*fn, base_name).Run());
  return Status::Ok();
}

}  // namespace distir::sharding
