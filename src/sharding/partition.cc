#include "sharding/partition.h"

#include <algorithm>
#include <map>

#include "interp/infer_types.h"
#include "sharding/shard_data.h"

namespace distir::sharding {
namespace {

using Box = std::vector<std::pair<int64_t, int64_t>>;

const Mesh* MeshOf(const Module& module, const Function& fn) {
  for (const auto& p : fn.params()) {
    if (p->sharding() != nullptr) return module.LookupMesh(p->sharding()->mesh);
  }
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) {
      if (r->sharding() != nullptr) return module.LookupMesh(r->sharding()->mesh);
    }
  }
  return nullptr;
}

DenseTensor Scalar(DType dtype, double value) { return DenseTensor{dtype, {}, {value}}; }

DenseTensor I64Vector(const std::vector<int64_t>& v) {
  DenseTensor t{DType::kI64, {static_cast<int64_t>(v.size())}, {}};
  for (int64_t x : v) t.values.push_back(static_cast<double>(x));
  return t;
}

class Partitioner {
 public:
  /// With `part`, only its kept devices (PartitionShardingsPart).
  Partitioner(const Module& module, const Function& fn, DevicePart* part = nullptr)
      : module_(module), fn_(fn), part_(part) {}

  StatusOr<std::unique_ptr<Function>> Run();

 private:
  // The mesh of the op being partitioned (every value an op reads or writes
  // is on it, except across a MeshTransfer).
  const Mesh& mesh() const { return *mesh_; }
  // Consecutive values are mostly on one mesh: the last answer is tried first
  // (a module of P stages declares P + 1 meshes, looked up by name).
  const Mesh& MeshOfValue(const Value& v) const {
    const std::string& name = v.sharding()->mesh;
    if (last_mesh_ == nullptr || last_mesh_->name() != name) last_mesh_ = module_.LookupMesh(name);
    return *last_mesh_;
  }
  int num_devices() const { return static_cast<int>(mesh_->num_devices()); }
  DeviceId Device(int dev) const { return mesh_->devices()[dev]; }
  std::string LocalName(const Value& v, int dev) const {
    if (v.name().empty()) return {};
    return v.name() + "." + MeshOfValue(v).devices()[dev].ToString();
  }
  std::vector<int64_t> LocalShape(const Value& v, int dev) const {
    const Mesh& m = MeshOfValue(v);
    return v.sharding()->LocalShape(m, v.type().shape(), m.Coords(dev));
  }
  Value* Local(const Value* v, int dev) const { return local_[v->id()][dev]; }
  // Whether device `dev` of mesh `m` is emitted (all are without part_).
  bool KeptOn(const Mesh& m, int dev) const {
    if (part_ == nullptr) return true;
    const int32_t id = m.devices()[dev].value();
    return id < static_cast<int32_t>(part_->keep.size()) && part_->keep[id] != 0;
  }
  bool Kept(int dev) const { return KeptOn(mesh(), dev); }
  // For a loop over the op mesh's devices: each op emitted stands for
  // N / kept of the whole program's.
  void ImagePerDevice();
  Value* LocalOrGhost(const Value& v, int dev, const std::vector<int64_t>& shape,
                      const std::string& name);
  // A parameter of `shape` on device `dev` that stands for what a device
  // left out would contribute to a kept collective (like `of`'s dtype).
  Value* Ghost(const Value& of, int dev, const std::vector<int64_t>& shape,
               const std::string& name);
  Value* LocalOrGhost(const Value& v, int dev) {
    return LocalOrGhost(v, dev, LocalShape(v, dev), LocalName(v, dev));
  }
  // Whether a collective of `in` over `group` names its devices left out
  // (attribute `participants`) instead of writing ghosts for them: in a part
  // with some of the group left out, where every member's piece has one shape.
  bool NamesLeftOut(const Value& in, const std::vector<int>& group) const;
  // The groups of `axes` with a kept device; image_ set for them.
  std::vector<std::vector<int>> KeptGroups(const std::vector<std::string>& axes);
  Value* Constant(int dev, DenseTensor t, const std::string& base);
  Op* Emit(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
           const std::vector<std::string>& names, const Op& origin);

  Status PartitionOp(const Op& op);
  Status EmitCompute(const Op& op);
  bool GathersSplitRows(const Op& op) const;
  Value* EmitMaskedGather(const Op& op, int dev, Value* data, Value* ids);
  Value* EmitMaskedEmbeddingGrad(const Op& op, int dev, Value* ids, Value* dy);
  struct MaskedIds {
    Value* in;    ///< the ids this device's rows hold
    Value* safe;  ///< shifted to the local rows; 0 where not `in`
  };
  MaskedIds EmitMaskIds(const Op& op, int dev, Value* ids, DType idt, int64_t lo, int64_t hi);
  int64_t VocabStart(const Op& op, int dev) const;
  Status EmitLogSumExpReduce(const Op& op);
  Status EmitCollective(const Op& op);
  Status EmitSlice(const Op& op, const Value* in, int dim, int dev, Value*& out_value);
  Status EmitTransfer(const Op& op);
  const std::vector<std::vector<int>>& Groups(const std::vector<std::string>& axes);
  bool EvenOver(const Value& v, int dim) const;
  bool OnPartialOrigin(const Sharding& s, int dev) const {
    std::vector<int64_t> coords = mesh_->Coords(dev);
    for (const std::string& a : s.partial) {
      if (coords[mesh_->AxisIndex(a)] != 0) return false;
    }
    return true;
  }

  const Module& module_;
  const Function& fn_;
  DevicePart* part_;
  double image_ = 1;  // what each op emitted now stands for (DevicePart::images)
  const Mesh* mesh_ = nullptr;
  mutable const Mesh* last_mesh_ = nullptr;  // MeshOfValue's last answer
  std::unique_ptr<Function> out_;
  std::vector<std::vector<Value*>> local_;  // by global value id, per device
  // Groups(), by mesh and axes.
  std::map<std::pair<const Mesh*, std::vector<std::string>>, std::vector<std::vector<int>>> groups_;
};

Value* Partitioner::Constant(int dev, DenseTensor t, const std::string& base) {
  AttrMap attrs = {{"value", Attribute(std::move(t))}, {"device", Attribute(Device(dev))}};
  Op* op = out_->AddOp(OpKind::kConstant, {}, std::move(attrs),
                       {out_->UniqueName(base + "." + Device(dev).ToString())});
  if (part_ != nullptr) part_->images.push_back(image_);
  return op->result(0);
}

void Partitioner::ImagePerDevice() {
  int kept = 0;
  for (int dev = 0; dev < num_devices(); ++dev) kept += Kept(dev) ? 1 : 0;
  image_ = kept == 0 ? 0 : static_cast<double>(num_devices()) / kept;
}

// A kept collective's operand on a device left out is a parameter of its
// local type there: the collective keeps every participant (and its cost).
Value* Partitioner::LocalOrGhost(const Value& v, int dev, const std::vector<int64_t>& shape,
                                 const std::string& name) {
  Value*& local = local_[v.id()][dev];
  if (local == nullptr) local = Ghost(v, dev, shape, name);
  return local;
}

Value* Partitioner::Ghost(const Value& of, int dev, const std::vector<int64_t>& shape,
                          const std::string& name) {
  return out_->AddParam(out_->UniqueName(name.empty() ? "ghost" : name),
                        Type::Tensor(of.type().dtype(), shape, Device(dev)), of.loc());
}

bool Partitioner::NamesLeftOut(const Value& in, const std::vector<int>& group) const {
  if (part_ == nullptr || std::all_of(group.begin(), group.end(), [&](int d) { return Kept(d); }))
    return false;
  // Evenly sharded, every device holds the same shape (a data-parallel
  // group's reduction: asked for every collective of every device).
  if (in.sharding()->IsEven(MeshOfValue(in), in.type().shape())) return true;
  const std::vector<int64_t> shape = LocalShape(in, group[0]);
  return std::all_of(group.begin(), group.end(), [&](int d) { return LocalShape(in, d) == shape; });
}

std::vector<std::vector<int>> Partitioner::KeptGroups(const std::vector<std::string>& axes) {
  std::vector<std::vector<int>> groups = Groups(axes);
  const size_t all = groups.size();
  std::erase_if(groups, [&](const std::vector<int>& g) {
    return std::none_of(g.begin(), g.end(), [&](int dev) { return Kept(dev); });
  });
  image_ = groups.empty() ? 0 : static_cast<double>(all) / static_cast<double>(groups.size());
  return groups;
}

Op* Partitioner::Emit(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                      const std::vector<std::string>& names, const Op& origin) {
  std::vector<std::string> unique;
  for (const std::string& n : names) unique.push_back(n.empty() ? n : out_->UniqueName(n));
  // A gather that carries a task runs in it: the gather of a scatter-gathered
  // stage transfer (stage_meshes.h) in the receiver's, a linear layer's
  // gather for its weight gradient (regather.h) in the backward's. Every
  // other piece inherits its task from its producer when the tasks are
  // ordered (pipeline_task.h).
  if (const Attribute* task = origin.FindAttr("task");
      origin.kind() == OpKind::kMeshAllGather && task != nullptr)
    attrs["task"] = *task;
  if (part_ != nullptr) part_->images.push_back(image_);
  return out_->AddOp(kind, std::move(inputs), std::move(attrs), std::move(unique), origin.loc());
}

// Devices grouped by their coordinates off `axes`; each group ordered by the
// shard index over `axes` (the first axis major), which is the order in which
// an all-gather concatenates and a reduce-scatter hands out pieces.
const std::vector<std::vector<int>>& Partitioner::Groups(const std::vector<std::string>& axes) {
  // Every collective of a mesh over the same axes has the same groups.
  std::vector<std::vector<int>>& groups = groups_[{mesh_, axes}];
  if (!groups.empty()) return groups;
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int>>> by_key;
  for (int dev = 0; dev < num_devices(); ++dev) {
    std::vector<int64_t> coords = mesh().Coords(dev);
    std::vector<int64_t> key;
    for (int a = 0; a < mesh().num_axes(); ++a) {
      bool in_group = std::find(axes.begin(), axes.end(), mesh().axes()[a].name) != axes.end();
      key.push_back(in_group ? -1 : coords[a]);
    }
    int64_t index = 0;
    for (const std::string& a : axes)
      index = index * mesh().AxisSize(a) + coords[mesh().AxisIndex(a)];
    by_key[key].emplace_back(index, dev);
  }
  for (auto& [key, members] : by_key) {
    std::sort(members.begin(), members.end());
    std::vector<int> g;
    for (const auto& m : members) g.push_back(m.second);
    groups.push_back(std::move(g));
  }
  return groups;
}

// The local shape of `v` is the same on every device along `dim`.
bool Partitioner::EvenOver(const Value& v, int dim) const {
  if (!v.sharding()->offsets.empty() && !v.sharding()->offsets[dim].empty()) return false;
  int64_t shards = v.sharding()->NumShards(mesh(), dim);
  return v.type().shape()[dim] % shards == 0;
}

// A local Slice of the piece `in` holds on `dev` down to the piece `op`'s
// result holds there (dim `dim` now split further).
Status Partitioner::EmitSlice(const Op& op, const Value* in, int dim, int dev, Value*& out_value) {
  const Value& res = *op.result(0);
  std::vector<int64_t> coords = mesh().Coords(dev);
  Box have = ShardBox(*in->sharding(), mesh(), in->type().shape(), coords);
  Box want = ShardBox(*res.sharding(), mesh(), res.type().shape(), coords);
  int64_t begin = want[dim].first - have[dim].first;
  int64_t end = want[dim].second - have[dim].first;
  std::string base = res.name().empty() ? "slice" : res.name();
  Value* starts = Constant(dev, I64Vector({begin}), base + ".start");
  Value* ends = Constant(dev, I64Vector({end}), base + ".end");
  Value* axes = Constant(dev, I64Vector({dim}), base + ".axis");
  Op* slice =
      Emit(OpKind::kSlice, {Local(in, dev), starts, ends, axes}, {}, {LocalName(res, dev)}, op);
  out_value = slice->result(0);
  return Status::Ok();
}

Status Partitioner::EmitCollective(const Op& op) {
  const Value* in = op.input(0);
  const Value& res = *op.result(0);
  const std::vector<std::string>& axes = op.FindAttr("axes")->AsStrings();
  const Attribute* reduction = op.FindAttr("reduction");
  if (reduction != nullptr && reduction->AsString() == "logsumexp" &&
      op.kind() == OpKind::kMeshAllReduce)
    return EmitLogSumExpReduce(op);
  if (reduction != nullptr && reduction->AsString() != "sum")
    return Unimplemented(op.loc()) << op.Name() << " with reduction " << reduction->AsString()
                                   << " across devices is not supported yet";
  OpKind kind = op.kind();
  int axis = static_cast<int>(op.GetInt("axis", -1));
  // Uneven pieces: NCCL-style reduce-scatter and all-to-all need equal ones;
  // reduce (or gather) whole, then slice locally.
  bool uneven_rs = kind == OpKind::kMeshReduceScatter && !EvenOver(res, axis);
  int split = static_cast<int>(op.GetInt("split_axis", -1));
  bool uneven_a2a =
      kind == OpKind::kMeshAllToAll &&
      (!EvenOver(res, split) || !EvenOver(*in, static_cast<int>(op.GetInt("concat_axis", 0))));
  AttrMap attrs;
  OpKind global = OpKind::kAllReduce;
  if (kind == OpKind::kMeshAllGather || uneven_a2a) {
    global = OpKind::kAllGather;
    attrs["axis"] = Attribute(int64_t{uneven_a2a ? op.GetInt("concat_axis", 0) : axis});
  } else if (kind == OpKind::kMeshReduceScatter && !uneven_rs) {
    global = OpKind::kReduceScatter;
    attrs["axis"] = Attribute(int64_t{axis});
  } else if (kind == OpKind::kMeshAllToAll) {
    global = OpKind::kAllToAll;
    attrs["split_axis"] = Attribute(int64_t{split});
    attrs["concat_axis"] = Attribute(op.GetInt("concat_axis", 0));
  }
  bool then_slice = uneven_rs || uneven_a2a;
  for (const std::vector<int>& group : KeptGroups(axes)) {
    // Where the pieces are alike, a group's devices left out are named by
    // `participants` rather than written as ghosts (docs/ir.md).
    const bool named = !then_slice && NamesLeftOut(*in, group);
    std::vector<Value*> inputs;
    std::vector<std::string> names;
    std::vector<int> written;
    std::vector<DeviceId> participants;
    for (int dev : group) {
      participants.push_back(Device(dev));
      if (named && !Kept(dev)) continue;
      written.push_back(dev);
      inputs.push_back(LocalOrGhost(*in, dev));
      names.push_back(then_slice ? LocalName(res, dev) + ".whole" : LocalName(res, dev));
    }
    AttrMap group_attrs = attrs;
    if (named) group_attrs["participants"] = Attribute(std::move(participants));
    Op* c = Emit(global, std::move(inputs), std::move(group_attrs), names, op);
    for (size_t i = 0; i < written.size(); ++i)
      local_[res.id()][written[i]] = c->result(static_cast<int>(i));
  }
  if (!then_slice) return Status::Ok();
  // The whole (reduced or gathered) value: slice each device's piece out of it.
  Sharding whole = *res.sharding();
  int dim = uneven_rs ? axis : split;
  for (const std::string& a : axes) std::erase(whole.dims[dim], a);
  if (!whole.offsets.empty()) whole.offsets[dim].clear();
  ImagePerDevice();
  for (int dev = 0; dev < num_devices(); ++dev) {
    if (!Kept(dev)) continue;
    std::vector<int64_t> coords = mesh().Coords(dev);
    Box have = ShardBox(whole, mesh(), res.type().shape(), coords);
    Box want = ShardBox(*res.sharding(), mesh(), res.type().shape(), coords);
    std::string base = res.name().empty() ? "slice" : res.name();
    Value* starts = Constant(dev, I64Vector({want[dim].first - have[dim].first}), base + ".start");
    Value* ends = Constant(dev, I64Vector({want[dim].second - have[dim].first}), base + ".end");
    Value* ax = Constant(dev, I64Vector({dim}), base + ".axis");
    Op* s = Emit(OpKind::kSlice, {local_[res.id()][dev], starts, ends, ax}, {},
                 {LocalName(res, dev)}, op);
    local_[res.id()][dev] = s->result(0);
  }
  return Status::Ok();
}

// A transfer between two meshes of the same shape whose layouts correspond
// axis by axis (materialize.cc arranges it): device i of the source sends its
// piece to device i of the target; a device in both keeps it.
Status Partitioner::EmitTransfer(const Op& op) {
  const Value* in = op.input(0);
  const Value& res = *op.result(0);
  const Mesh& from = MeshOfValue(*in);
  ImagePerDevice();
  for (int dev = 0; dev < num_devices(); ++dev) {
    if (KeptOn(from, dev) != Kept(dev))
      return FailedPrecondition(op.loc())
             << op.Name() << " sends from " << from.devices()[dev] << " to " << Device(dev)
             << ": one is kept, the other not";
    if (!Kept(dev)) continue;
    DeviceId src = from.devices()[dev];
    if (src == Device(dev)) {
      local_[res.id()][dev] = Local(in, dev);
      continue;
    }
    Op* send = Emit(OpKind::kSend, {Local(in, dev)}, {{"device", Attribute(Device(dev))}},
                    {LocalName(res, dev)}, op);
    local_[res.id()][dev] = send->result(0);
  }
  return Status::Ok();
}

// Compute ops run on each device's pieces; shape operands and shape queries
// are replaced by local (or global) constants, see the header.
Status Partitioner::EmitCompute(const Op& op) {
  if (op.kind() == OpKind::kRange && !op.result(0)->sharding()->IsReplicated())
    return Unimplemented(op.loc()) << "a sharded Range is not supported yet";
  ImagePerDevice();
  for (int dev = 0; dev < num_devices(); ++dev) {
    if (!Kept(dev)) continue;
    std::vector<Value*> inputs;
    for (int i = 0; i < op.num_inputs(); ++i) inputs.push_back(Local(op.input(i), dev));
    AttrMap attrs = op.attrs();
    const Value& r0 = *op.result(0);
    std::string base = r0.name().empty() ? "v" : r0.name();
    switch (op.kind()) {
      case OpKind::kShape: {
        local_[r0.id()][dev] = Constant(dev, I64Vector(op.input(0)->type().shape()), base);
        continue;
      }
      case OpKind::kConstant: {
        attrs["value"] =
            Attribute(ShardDenseOn(attrs.at("value").AsTensor(), *r0.sharding(), mesh(), dev));
        attrs["device"] = Attribute(Device(dev));
        break;
      }
      case OpKind::kReshape:
      case OpKind::kExpand:
      case OpKind::kConstantOfShape: {
        int shape_input = op.kind() == OpKind::kConstantOfShape ? 0 : 1;
        inputs[shape_input] = Constant(dev, I64Vector(LocalShape(r0, dev)), base + ".shape");
        break;
      }
      case OpKind::kGemm:
        // A partial product gets its bias once per reduction group: on the
        // group's first device (coordinate 0 on every partial axis).
        if (op.num_inputs() == 3 && !OnPartialOrigin(*r0.sharding(), dev)) inputs.pop_back();
        break;
      case OpKind::kGather:
        if (GathersSplitRows(op)) {
          local_[r0.id()][dev] = EmitMaskedGather(op, dev, inputs[0], inputs[1]);
          continue;
        }
        break;
      case OpKind::kMSELoss:
      case OpKind::kMSELossGrad:
        if (attrs.count("denominator") == 0)
          attrs["denominator"] = Attribute(op.input(0)->type().NumElements());
        break;
      case OpKind::kCrossEntropy:
      case OpKind::kCrossEntropyGrad:
        // The mean over the global tokens (the labels), not this device's;
        // a piece of a split vocabulary says where its columns start.
        if (attrs.count("denominator") == 0)
          attrs["denominator"] = Attribute(op.input(1)->type().NumElements());
        if (op.num_inputs() == 3) attrs["vocab_start"] = Attribute(VocabStart(op, dev));
        break;
      case OpKind::kEmbeddingGrad:
        if (!r0.sharding()->dims[0].empty()) {
          local_[r0.id()][dev] = EmitMaskedEmbeddingGrad(op, dev, inputs[0], inputs[1]);
          continue;
        }
        break;
      default:
        break;
    }
    std::vector<std::string> names;
    for (const auto& r : op.results()) names.push_back(LocalName(*r, dev));
    Op* local = Emit(op.kind(), std::move(inputs), std::move(attrs), names, op);
    for (int r = 0; r < op.num_results(); ++r) local_[op.result(r)->id()][dev] = local->result(r);
  }
  return Status::Ok();
}

// A Gather whose table is split along the gathered axis (the factor rule's
// summed factor: its result is partial over the split axes).
bool Partitioner::GathersSplitRows(const Op& op) const {
  const Value& data = *op.input(0);
  const int64_t axis = op.GetInt("axis", 0);
  const int64_t rank = data.type().rank();
  return !data.sharding()->dims[static_cast<size_t>(axis < 0 ? axis + rank : axis)].empty();
}

// The ids of a table split by rows that device `dev`'s rows [lo, hi) hold,
// and the ids shifted to those rows (0 for the others, so a lookup or a
// scatter with them stays in range):
//   shifted = ids - lo; t = below 0 ? rows : shifted; in = t < rows;
//   safe = in ? t : 0.
// Elementwise on the ids, as in Megatron's masked input
// (vocab_parallel_embedding.py).
// `idt` is the ids' dtype (the local ids' types are inferred after partitioning).
Partitioner::MaskedIds Partitioner::EmitMaskIds(const Op& op, int dev, Value* ids, DType idt,
                                                int64_t lo, int64_t hi) {
  const Value& r0 = *op.result(0);
  const std::string base = r0.name().empty() ? "ids" : r0.name();
  Value* lo_c = Constant(dev, Scalar(idt, static_cast<double>(lo)), base + ".lo");
  Value* rows = Constant(dev, Scalar(idt, static_cast<double>(hi - lo)), base + ".rows");
  Value* zero = Constant(dev, Scalar(idt, 0), base + ".zero");
  auto emit = [&](OpKind kind, std::vector<Value*> in, const std::string& name) {
    return Emit(kind, std::move(in), {}, {name}, op)->result(0);
  };
  const std::string at = "." + Device(dev).ToString();
  Value* shifted = emit(OpKind::kSub, {ids, lo_c}, base + ".ids" + at);
  Value* below = emit(OpKind::kLess, {shifted, zero}, base + ".below" + at);
  Value* t = emit(OpKind::kWhere, {below, rows, shifted}, base + ".t" + at);
  Value* in = emit(OpKind::kLess, {t, rows}, base + ".in" + at);
  Value* safe = emit(OpKind::kWhere, {in, t, zero}, base + ".local_ids" + at);
  return {in, safe};
}

// Megatron's VocabParallelEmbedding (golden G31): device `dev` holds rows
// [lo, hi) of the table along the gathered axis. It looks up the ids in its
// range and zeroes the rows of the others, so the sum over the split axes
// (the result's partial) is the global lookup.
Value* Partitioner::EmitMaskedGather(const Op& op, int dev, Value* data, Value* ids) {
  const Value& table = *op.input(0);
  const Value& r0 = *op.result(0);
  const int64_t rank = table.type().rank();
  const int64_t axis =
      op.GetInt("axis", 0) < 0 ? op.GetInt("axis", 0) + rank : op.GetInt("axis", 0);
  const Mesh& m = MeshOfValue(table);
  const auto [lo, hi] = ShardBox(*table.sharding(), m, table.type().shape(),
                                 m.Coords(dev))[static_cast<size_t>(axis)];
  const std::string base = r0.name().empty() ? "gather" : r0.name();
  const std::string at = "." + Device(dev).ToString();
  const MaskedIds ids_here = EmitMaskIds(op, dev, ids, op.input(1)->type().dtype(), lo, hi);
  Value* e =
      Emit(OpKind::kGather, {data, ids_here.safe}, op.attrs(), {base + ".rows_found" + at}, op)
          ->result(0);
  // The mask has the ids' dims; the table's dims after the axis follow them.
  std::vector<int64_t> trailing;
  const int64_t ids_rank = op.input(1)->type().rank();
  for (int64_t d = 0; d < rank - axis - 1; ++d) trailing.push_back(ids_rank + d);
  Value* mask = trailing.empty() ? ids_here.in
                                 : Emit(OpKind::kUnsqueeze, {ids_here.in},
                                        {{"axes", Attribute(trailing)}}, {base + ".mask" + at}, op)
                                       ->result(0);
  Value* fzero = Constant(dev, Scalar(table.type().dtype(), 0), base + ".zero_rows");
  return Emit(OpKind::kWhere, {mask, e, fzero}, {}, {LocalName(r0, dev)}, op)->result(0);
}

// EmbeddingGrad(ids, dy) {num_rows} with its rows split (the table of a
// VocabParallelEmbedding): device `dev` scatters the rows of the ids its rows
// [lo, hi) hold; the others' gradient rows are zeroed first (as Megatron's
// masked output zeroes them, so autograd does) and land on local row 0.
Value* Partitioner::EmitMaskedEmbeddingGrad(const Op& op, int dev, Value* ids, Value* dy) {
  const Value& r0 = *op.result(0);
  const auto [lo, hi] = ShardBox(*r0.sharding(), mesh(), r0.type().shape(), mesh().Coords(dev))[0];
  const std::string base = r0.name().empty() ? "embedding_grad" : r0.name();
  const std::string at = "." + Device(dev).ToString();
  const MaskedIds ids_here = EmitMaskIds(op, dev, ids, op.input(0)->type().dtype(), lo, hi);
  const int64_t ids_rank = op.input(0)->type().rank();
  Value* mask =
      Emit(OpKind::kUnsqueeze, {ids_here.in}, {{"axes", Attribute(std::vector<int64_t>{ids_rank})}},
           {base + ".mask" + at}, op)
          ->result(0);
  Value* fzero = Constant(dev, Scalar(op.input(1)->type().dtype(), 0), base + ".zero_rows");
  Value* dy_here = Emit(OpKind::kWhere, {mask, dy, fzero}, {}, {base + ".dy" + at}, op)->result(0);
  AttrMap attrs = op.attrs();
  attrs["num_rows"] = Attribute(hi - lo);
  return Emit(OpKind::kEmbeddingGrad, {ids_here.safe, dy_here}, std::move(attrs),
              {LocalName(r0, dev)}, op)
      ->result(0);
}

// Where the columns of device `dev`'s piece of CrossEntropy's logits start.
int64_t Partitioner::VocabStart(const Op& op, int dev) const {
  const Value& logits = *op.input(0);
  const Mesh& m = MeshOfValue(logits);
  return ShardBox(*logits.sharding(), m, logits.type().shape(), m.Coords(dev)).back().first;
}

// An all-reduce of partial log-sum-exps (a split vocabulary's row pieces):
// each group gathers its pieces along a new last dim and takes their
// log-sum-exp, log(sum_i exp(lse_i)), on every device.
Status Partitioner::EmitLogSumExpReduce(const Op& op) {
  const Value* in = op.input(0);
  const Value& res = *op.result(0);
  const std::vector<std::string>& axes = op.FindAttr("axes")->AsStrings();
  const int64_t rank = in->type().rank();
  const std::string base = res.name().empty() ? "lse" : res.name();
  const std::vector<std::vector<int>> groups = KeptGroups(axes);
  const double group_image = image_;
  for (const std::vector<int>& group : groups) {
    std::vector<Value*> pieces;
    std::vector<std::string> names;
    for (int dev : group) {
      const std::string piece = base + ".piece." + Device(dev).ToString();
      if (Kept(dev)) {
        ImagePerDevice();
        pieces.push_back(Emit(OpKind::kUnsqueeze, {Local(in, dev)},
                              {{"axes", Attribute(std::vector<int64_t>{rank})}}, {piece}, op)
                             ->result(0));
      } else {
        // The piece a device left out would gather (LocalOrGhost).
        std::vector<int64_t> shape = LocalShape(*in, dev);
        shape.push_back(1);
        pieces.push_back(Ghost(*in, dev, shape, piece));
      }
      names.push_back(base + ".pieces." + Device(dev).ToString());
    }
    image_ = group_image;
    Op* gather =
        Emit(OpKind::kAllGather, std::move(pieces), {{"axis", Attribute(rank)}}, names, op);
    ImagePerDevice();
    for (size_t i = 0; i < group.size(); ++i) {
      if (!Kept(group[i])) continue;
      local_[res.id()][group[i]] = Emit(OpKind::kLogSumExp, {gather->result(static_cast<int>(i))},
                                        {}, {LocalName(res, group[i])}, op)
                                       ->result(0);
    }
  }
  return Status::Ok();
}

Status Partitioner::PartitionOp(const Op& op) {
  for (const auto& r : op.results()) {
    if (r->sharding() == nullptr)
      return FailedPrecondition(op.loc()) << r->Ref() << " has no sharding: materialise first";
  }
  mesh_ = &MeshOfValue(*op.result(0));
  for (const auto& r : op.results()) local_[r->id()].assign(num_devices(), nullptr);
  switch (op.kind()) {
    case OpKind::kMeshTransfer:
      return EmitTransfer(op);
    case OpKind::kShard:
      return FailedPrecondition(op.loc()) << "Shard op left: materialise the program first";
    case OpKind::kMeshSlice:
      ImagePerDevice();
      for (int dev = 0; dev < num_devices(); ++dev) {
        if (!Kept(dev)) continue;
        DISTIR_RETURN_IF_ERROR(EmitSlice(op, op.input(0), static_cast<int>(op.GetInt("axis", 0)),
                                         dev, local_[op.result(0)->id()][dev]));
      }
      return Status::Ok();
    case OpKind::kMeshAllReduce:
    case OpKind::kMeshReduceScatter:
    case OpKind::kMeshAllGather:
    case OpKind::kMeshAllToAll:
      return EmitCollective(op);
    default:
      if (op.is_call() || IsCommunication(op.kind()))
        return Unimplemented(op.loc()) << op.Name() << " cannot be partitioned";
      return EmitCompute(op);
  }
}

StatusOr<std::unique_ptr<Function>> Partitioner::Run() {
  out_ = std::make_unique<Function>(fn_.name());
  out_->set_loc(fn_.loc());
  local_.assign(fn_.num_values(), {});
  for (const auto& p : fn_.params()) {
    if (p->sharding() == nullptr)
      return FailedPrecondition(p->loc()) << p->Ref() << " has no sharding: propagate first";
    mesh_ = &MeshOfValue(*p);
    local_[p->id()].resize(num_devices());
    for (int dev = 0; dev < num_devices(); ++dev) {
      if (!Kept(dev)) continue;
      Type t = Type::Tensor(p->type().dtype(), LocalShape(*p, dev), Device(dev));
      local_[p->id()][dev] = out_->AddParam(LocalName(*p, dev), t, p->loc());
    }
  }
  for (const auto& op : fn_.ops()) DISTIR_RETURN_IF_ERROR(PartitionOp(*op));
  std::vector<Value*> returns;
  for (const Value* v : fn_.returns()) {
    const std::vector<Value*>& locals = local_[v->id()];
    for (size_t dev = 0; dev < locals.size(); ++dev) {
      if (KeptOn(MeshOfValue(*v), static_cast<int>(dev))) returns.push_back(locals[dev]);
    }
  }
  out_->SetReturns(std::move(returns), fn_.return_loc());
  return std::move(out_);
}

// Every local type must be what the value's sharding says for its device
// (of the devices `keep` marks, if given).
Status CheckLocalTypes(const Module& module, const Function& global, const Function& local,
                       const std::vector<char>* keep) {
  size_t next = 0;
  for (size_t i = 0; i < global.returns().size(); ++i) {
    const Value& g = *global.returns()[i];
    const Mesh& mesh = *module.LookupMesh(g.sharding()->mesh);
    const size_t n = static_cast<size_t>(mesh.num_devices());
    for (size_t dev = 0; dev < n; ++dev) {
      const int32_t id = mesh.devices()[dev].value();
      if (keep != nullptr && (id >= static_cast<int32_t>(keep->size()) || (*keep)[id] == 0))
        continue;
      const Value& l = *local.returns()[next++];
      std::vector<int64_t> want =
          g.sharding()->LocalShape(mesh, g.type().shape(), mesh.Coords(static_cast<int64_t>(dev)));
      if (l.type().shape() != want)
        return Internal(l.loc()) << "partitioned " << l.Ref() << " has type " << l.type()
                                 << ", its sharding says [" << ShapeToString(want) << "]";
    }
  }
  return Status::Ok();
}

}  // namespace

Status PartitionShardings(Module& module, std::string function) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to partition";
  if (MeshOf(module, *fn) == nullptr) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> local, Partitioner(module, *fn).Run());
  std::unique_ptr<Function> global = module.ReplaceFunction(std::move(local));
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  return CheckLocalTypes(module, *global, *module.Lookup(function), nullptr);
}

// Whether every device along `axis` but the last holds a piece of `s` of
// one shape: where a dim is split over `axis`, the axes before it cut it
// evenly and `axis` cuts each of their pieces of length len into n ceil-chunks
// of which the first n - 1 are whole (len >= (n - 1) ceil(len / n));
// the axes after it then cut equal pieces alike.
bool EvenButLast(const Sharding& s, const Mesh& m, const std::vector<int64_t>& shape,
                 const std::string& axis) {
  for (size_t d = 0; d < s.dims.size(); ++d) {
    const std::vector<std::string>& axes = s.dims[d];
    const auto at = std::find(axes.begin(), axes.end(), axis);
    if (at == axes.end()) continue;
    if (!s.offsets.empty() && !s.offsets[d].empty()) return false;
    int64_t outer = 1;
    for (auto a = axes.begin(); a != at; ++a) outer *= m.AxisSize(*a);
    if (shape[d] % outer != 0) return false;
    const int64_t len = shape[d] / outer, n = m.AxisSize(axis);
    if (len < (n - 1) * ((len + n - 1) / n)) return false;
  }
  return true;
}

// FailedPrecondition naming the first value of `fn` that `axis` splits (or
// holds partial) unevenly; with `last_apart`, beyond its last piece.
Status CheckEvenOver(const Module& module, const Function& fn, const std::string& axis,
                     bool last_apart) {
  auto check = [&](const Value& v) -> Status {
    const Sharding* s = v.sharding();
    if (s == nullptr || !s->UsesAxis(axis)) return Status::Ok();
    const Mesh& mesh = *module.LookupMesh(s->mesh);
    if (s->IsEven(mesh, v.type().shape())) return Status::Ok();
    if (last_apart && EvenButLast(*s, mesh, v.type().shape(), axis)) return Status::Ok();
    return FailedPrecondition(v.loc()) << v.Ref() << " is split unevenly: the devices along "
                                       << axis << " hold pieces of different shapes";
  };
  for (const auto& p : fn.params()) DISTIR_RETURN_IF_ERROR(check(*p));
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) DISTIR_RETURN_IF_ERROR(check(*r));
  }
  return Status::Ok();
}

Status PartitionShardingsPart(Module& module, std::string function, DevicePart& part) {
  part.images.clear();
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to partition";
  if (MeshOf(module, *fn) == nullptr) return Status::Ok();
  if (!part.even_axis.empty())
    DISTIR_RETURN_IF_ERROR(CheckEvenOver(module, *fn, part.even_axis, part.last_apart));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> local, Partitioner(module, *fn, &part).Run());
  std::unique_ptr<Function> global = module.ReplaceFunction(std::move(local));
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  return CheckLocalTypes(module, *global, *module.Lookup(function), &part.keep);
}

}  // namespace distir::sharding
