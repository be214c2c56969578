// Parallelize(): validation, then the program emitter. The emitter replays the
// sequential ops task by task in schedule order; for every op it emits one
// clone per (replica r, shard t) on device mesh(r, stage, t), followed by the
// collectives the op's layout asks for. See parallelize.h and
// docs/transforms.md for the semantics.

#include "transforms/parallelize.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interp/infer_types.h"
#include "ir/builder.h"
#include "transforms/model_layout.h"
#include "transforms/parallel_plan.h"
#include "transforms/pipeline_schedule.h"

namespace distir {
namespace {

using parallel::Mesh;
using parallel::ParallelPlan;
using parallel::ParamSource;
using parallel::ResultSink;

Status Validate(const Function& seq, const ModelLayout& layout, const ParallelOptions& o) {
  if (o.dp < 1 || o.tp < 1 || o.pp < 1 || o.microbatches < 1) {
    return InvalidArgument() << "parallel degrees must be >= 1, got "
                             << DescribeParallelOptions(o);
  }
  // Interleaving lives on the sharding path only (sharding/grid.h).
  if (o.virtual_stages != 1) {
    return InvalidArgument() << "the per-model emitter has no interleaved schedule (vpp = "
                             << o.virtual_stages << "): distribute with the sharding path";
  }
  if (o.num_devices != 0 && o.world_size() != o.num_devices) {
    return InvalidArgument() << "D*T*P = " << o.world_size() << " does not match the "
                             << o.num_devices << " devices";
  }
  if (o.pp > layout.num_layers) {
    return InvalidArgument() << "P = " << o.pp << " exceeds the " << layout.num_layers
                             << " layers of @" << seq.name();
  }
  if (layout.tp_divisor % o.tp != 0) {
    return InvalidArgument() << "T = " << o.tp << " does not divide " << layout.tp_divisor_name
                             << " (" << layout.tp_divisor << ")";
  }
  if (layout.batch < o.dp * o.microbatches) {
    return InvalidArgument() << "batch / (D*K) < 1: batch " << layout.batch << ", D*K = "
                             << o.dp * o.microbatches;
  }
  if (layout.batch % (o.dp * o.microbatches) != 0) {
    return InvalidArgument() << "batch " << layout.batch << " is not divisible by D*K = "
                             << o.dp * o.microbatches;
  }
  if (o.zero_stage < 0 || o.zero_stage > 3) {
    return InvalidArgument() << "ZeRO stage " << o.zero_stage << " is not 0, 1, 2 or 3";
  }
  if (!layout.training && (o.recompute != RecomputeKind::kNone || o.zero_stage != 0)) {
    return InvalidArgument() << "recomputation and ZeRO apply to training; @" << seq.name()
                             << " is an inference model";
  }
  if (o.zero_stage != 0 && o.dp == 1) {
    return InvalidArgument() << "ZeRO partitions over data-parallel replicas and needs D > 1";
  }
  for (const Value* v : seq.returns()) {
    if (v->type().is_unknown()) {
      return FailedPrecondition() << "@" << seq.name()
                                  << " has unknown result types; run InferTypes first";
    }
  }
  return Status::Ok();
}

class ProgramEmitter {
 public:
  ProgramEmitter(const Function& seq, const ModelLayout& layout, const ParallelOptions& o);

  StatusOr<std::unique_ptr<Function>> Emit(ParallelPlan& plan) &&;

 private:
  enum class Target { kLocal, kRecompute, kOptimizer };

  size_t Slot(int64_t r, int64_t t) const { return static_cast<size_t>(r * T_ + t); }
  size_t LocalIndex(int64_t r, int64_t t, int64_t m, int vid) const {
    return (static_cast<size_t>((r * T_ + t) * K_ + m)) * V_ + static_cast<size_t>(vid);
  }
  size_t SlotIndex(int64_t r, int64_t t, int vid) const {
    return Slot(r, t) * V_ + static_cast<size_t>(vid);
  }
  uint64_t RemoteKey(int vid, int64_t r, int64_t t, int64_t m, int64_t s) const {
    return (((static_cast<uint64_t>(vid) * D_ + r) * T_ + t) * K_ + m) * P_ + s;
  }
  // Adds an op whose result names are unique by construction (no UniqueName
  // lookups: programs reach 10^5-10^6 ops).
  std::vector<Value*> Emit(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                           const std::vector<std::string>& names);
  Value* Emit1(OpKind kind, std::vector<Value*> inputs, AttrMap attrs, std::string name) {
    return Emit(kind, std::move(inputs), std::move(attrs), {std::move(name)})[0];
  }
  const std::string& SuffixOf(int64_t r, int64_t t, int64_t m) const {
    return suffixes_[static_cast<size_t>((r * T_ + t) * (K_ + 1) + (m + 1))];
  }
  void Analyze();
  void FindLocalShapes();
  Value* LocalShapeInput(const Op& op, int i, int64_t r, int64_t t, int64_t m, int64_t s);
  Status CreateParams(ParallelPlan& plan);
  std::string Suffix(int64_t r, int64_t t, int64_t m) const;
  // nullptr (and error_ set) when a value would flow to an earlier stage.
  Value* Input(const Op& op, int i, int64_t r, int64_t t, int64_t m, int64_t s, bool use_rc);
  // The same for `v`, an op result of the sequential function read by `op`.
  Value* ResultInput(const Op& op, const Value* v, int64_t r, int64_t t, int64_t m, int64_t s,
                     bool use_rc);
  Value*& Result(int vid, Target target, int64_t r, int64_t t, int64_t m);
  void EmitOp(const Op& op, int64_t s, int64_t m, Target target);
  void GatherShardedWeights(const Op& op);
  void AllReduceOverShards(const Op& op, int result, Target target, int64_t m);
  void EmitTask(const PipelineTask& task);
  void Accumulate(int vid, int64_t m);
  void EmitSends(const PipelineTask& task);
  void EmitOptimizer();
  Status EmitReturns(ParallelPlan& plan);

  const Function& seq_;
  const ModelLayout& layout_;
  const ParallelOptions& o_;
  const int64_t D_, T_, P_, K_;
  const size_t V_;
  Mesh mesh_;
  FunctionBuilder b_;

  // Per sequential value id.
  std::vector<int> def_op_;        // defining op, -1 for parameters
  std::vector<int> param_pos_;     // parameter position, -1 for op results
  std::vector<char> is_grad_;      // per-microbatch value read by the optimizer
  std::vector<char> is_sum_;       // returned, summed over microbatches (losses)
  std::vector<std::vector<int64_t>> remote_stages_;  // other stages reading it
  // Per sequential op.
  std::vector<int64_t> stage_;
  std::vector<char> in_rc_;  // recomputed in its stage's backward task
  std::vector<char> skip_;   // only fed replaced shape inputs: not emitted
  // Per op input: the local extents that replace it (LocalShape), if any.
  std::vector<std::vector<std::vector<int64_t>>> local_shape_;
  std::vector<std::vector<const std::vector<Value*>*>> inst_;  // param instances per input
  std::vector<std::vector<int>> fwd_ops_, bwd_ops_, rc_ops_;   // per stage
  std::vector<int> opt_ops_;

  // Parameter instances: key -> values [r][t] (weights) or [r][t][m] (data).
  std::unordered_map<std::string, std::vector<Value*>> instances_;
  // Parameter names given so far. A weight can be instantiated under the same
  // name twice (a tied embedding read as the embedding and as the LM head), so
  // names get ".1", ".2", ... as Function::UniqueName would give, without
  // indexing every op result of the program (parameters come before any op).
  std::unordered_set<std::string> param_names_;
  std::string FreshParamName(std::string name) {
    if (param_names_.insert(name).second) return name;
    for (int i = 1;; ++i) {
      std::string candidate = name + "." + std::to_string(i);
      if (param_names_.insert(candidate).second) return candidate;
    }
  }
  std::vector<TpSplit> param_split_;  // split of each weight's first use
  // Environments.
  std::vector<Value*> local_, rc_, opt_, acc_;
  std::unordered_map<uint64_t, Value*> remote_;
  std::vector<std::vector<Value*>> gathered_;  // ZeRO-3 gathered weights per input [r][t]
  int64_t denominator_ = 0;                    // MSELoss element count of the global batch
  std::vector<std::string> suffixes_;          // Suffix(r, t, m) for m in -1..K-1
  int64_t gathers_ = 0;                        // ZeRO-3 all-gathers so far (for names)
  Status error_;                               // the first error of EmitOp
};

std::vector<Value*> ProgramEmitter::Emit(OpKind kind, std::vector<Value*> inputs, AttrMap attrs,
                                         const std::vector<std::string>& names) {
  Op* op = b_.function().AddOp(kind, std::move(inputs), std::move(attrs), names);
  std::vector<Value*> out;
  out.reserve(names.size());
  for (const auto& r : op->results()) out.push_back(r.get());
  return out;
}

ProgramEmitter::ProgramEmitter(const Function& seq, const ModelLayout& layout,
                               const ParallelOptions& o)
    : seq_(seq),
      layout_(layout),
      o_(o),
      D_(o.dp),
      T_(o.tp),
      P_(o.pp),
      K_(o.microbatches),
      V_(static_cast<size_t>(seq.num_values())),
      mesh_{o.dp, o.pp, o.tp},
      b_(seq.name() + "_dist") {}

void ProgramEmitter::Analyze() {
  const size_t n_ops = seq_.ops().size();
  def_op_.assign(V_, -1);
  param_pos_.assign(V_, -1);
  is_grad_.assign(V_, 0);
  is_sum_.assign(V_, 0);
  remote_stages_.assign(V_, {});
  stage_.resize(n_ops);
  in_rc_.assign(n_ops, 0);
  fwd_ops_.assign(static_cast<size_t>(P_), {});
  bwd_ops_.assign(static_cast<size_t>(P_), {});
  rc_ops_.assign(static_cast<size_t>(P_), {});
  for (int i = 0; i < seq_.num_params(); ++i) param_pos_[static_cast<size_t>(seq_.param(i)->id())] = i;
  FindLocalShapes();
  for (const auto& op : seq_.ops()) {
    const auto id = static_cast<size_t>(op->id());
    const LayoutOp& lo = layout_.ops[id];
    stage_[id] = parallel::StageOfLayer(lo.layer, layout_.num_layers, P_);
    for (const auto& r : op->results()) def_op_[static_cast<size_t>(r->id())] = op->id();
    if (skip_[id]) continue;
    const auto s = static_cast<size_t>(stage_[id]);
    switch (lo.phase) {
      case OpPhase::kForward:
        fwd_ops_[s].push_back(op->id());
        break;
      case OpPhase::kBackward:
        bwd_ops_[s].push_back(op->id());
        break;
      case OpPhase::kOptimizer:
        opt_ops_.push_back(op->id());
        break;
    }
    for (int i = 0; i < op->num_inputs(); ++i) {
      const Value* in = lo.gelu.empty() ? op->input(i) : lo.gelu_input;
      const int d = def_op_[static_cast<size_t>(in->id())];
      if (d < 0 || !local_shape_[id][static_cast<size_t>(i)].empty()) continue;
      const OpPhase def_phase = layout_.ops[static_cast<size_t>(d)].phase;
      if (def_phase == OpPhase::kOptimizer) continue;
      if (lo.phase == OpPhase::kOptimizer) {
        is_grad_[static_cast<size_t>(in->id())] = 1;
        continue;
      }
      const int64_t def_stage = stage_[static_cast<size_t>(d)];
      auto& remote = remote_stages_[static_cast<size_t>(in->id())];
      if (def_stage != stage_[id] &&
          std::find(remote.begin(), remote.end(), stage_[id]) == remote.end()) {
        remote.push_back(stage_[id]);
      }
    }
  }
  for (size_t i = 0; i < layout_.outputs.size(); ++i) {
    if (layout_.outputs[i].kind == OutputKind::kSum) is_sum_[static_cast<size_t>(seq_.returns()[i]->id())] = 1;
  }
  // Recomputation: the forward ops of a stage its backward ops depend on.
  for (int64_t s = 0; s < P_; ++s) {
    std::vector<char> needed(V_, 0);
    for (int id : bwd_ops_[static_cast<size_t>(s)]) {
      for (const Value* in : seq_.ops()[static_cast<size_t>(id)]->inputs()) needed[static_cast<size_t>(in->id())] = 1;
    }
    const auto& fwd = fwd_ops_[static_cast<size_t>(s)];
    for (auto it = fwd.rbegin(); it != fwd.rend(); ++it) {
      const Op& op = *seq_.ops()[static_cast<size_t>(*it)];
      bool any = false;
      for (const auto& r : op.results()) any = any || needed[static_cast<size_t>(r->id())];
      if (!any) continue;
      in_rc_[static_cast<size_t>(*it)] = 1;
      for (const Value* in : op.inputs()) needed[static_cast<size_t>(in->id())] = 1;
    }
    for (int id : fwd) {
      if (in_rc_[static_cast<size_t>(id)]) rc_ops_[static_cast<size_t>(s)].push_back(id);
    }
  }
}

// An imported graph spells some extents of its full tensors (a Reshape to
// [batch, seq, heads, head_dim], a Split into [d, d, d]); each clone reads
// the local extents instead (ModelLayout's LocalShape). Ops that only fed the
// replaced inputs (the Shape/Gather/Concat chains of dynamic exports) are
// then dead and not emitted. Ops are in topological order, so one reverse
// pass finds them.
void ProgramEmitter::FindLocalShapes() {
  const size_t n_ops = seq_.ops().size();
  local_shape_.assign(n_ops, {});
  skip_.assign(n_ops, 0);
  bool any = false;
  for (const auto& op : seq_.ops()) {
    const auto id = static_cast<size_t>(op->id());
    local_shape_[id].assign(static_cast<size_t>(op->num_inputs()), {});
    for (const LocalShape& ls : layout_.ops[id].local_shapes) {
      std::vector<int64_t> local = ls.Local(D_ * K_, T_);
      if (local == ls.full && !ls.computed) continue;
      local_shape_[id][static_cast<size_t>(ls.input)] = std::move(local);
      any = true;
    }
  }
  for (size_t id = 0; id < n_ops; ++id) skip_[id] = layout_.ops[id].fused_away;
  if (!any) return;
  std::vector<char> used(V_, 0), used_before(V_, 0);
  for (const Value* v : seq_.returns()) used[static_cast<size_t>(v->id())] = used_before[static_cast<size_t>(v->id())] = 1;
  for (auto it = seq_.ops().rbegin(); it != seq_.ops().rend(); ++it) {
    const Op& op = **it;
    const auto id = static_cast<size_t>(op.id());
    bool live = false, live_before = false;
    for (const auto& r : op.results()) {
      live = live || used[static_cast<size_t>(r->id())];
      live_before = live_before || used_before[static_cast<size_t>(r->id())];
    }
    skip_[id] = skip_[id] || (live_before && !live);
    for (int i = 0; i < op.num_inputs(); ++i) {
      const auto vid = static_cast<size_t>(op.input(i)->id());
      if (live_before) used_before[vid] = 1;
      if (live && local_shape_[id][static_cast<size_t>(i)].empty()) used[vid] = 1;
    }
  }
}

Value* ProgramEmitter::LocalShapeInput(const Op& op, int i, int64_t r, int64_t t, int64_t m,
                                       int64_t s) {
  const std::vector<int64_t>& local = local_shape_[static_cast<size_t>(op.id())][static_cast<size_t>(i)];
  DenseTensor value{DType::kI64, {static_cast<int64_t>(local.size())}, {}};
  for (int64_t e : local) value.values.push_back(static_cast<double>(e));
  return Emit1(OpKind::kConstant, {}, {{"value", std::move(value)}, {"device", mesh_.Device(r, s, t)}},
               op.result(0)->name() + ".shape" + std::to_string(i) + SuffixOf(r, t, m));
}

std::string ProgramEmitter::Suffix(int64_t r, int64_t t, int64_t m) const {
  std::string out;
  if (D_ > 1) out += ".r" + std::to_string(r);
  if (T_ > 1) out += ".t" + std::to_string(t);
  if (m >= 0 && K_ > 1) out += ".m" + std::to_string(m);
  return out;
}

Status ProgramEmitter::CreateParams(ParallelPlan& plan) {
  param_split_.assign(static_cast<size_t>(seq_.num_params()), TpSplit::kReplicated);
  std::vector<char> split_seen(static_cast<size_t>(seq_.num_params()), 0);
  inst_.resize(seq_.ops().size());
  for (const auto& op : seq_.ops()) {
    const auto id = static_cast<size_t>(op->id());
    inst_[id].assign(static_cast<size_t>(op->num_inputs()), nullptr);
    for (int i = 0; i < op->num_inputs(); ++i) {
      const int p = param_pos_[static_cast<size_t>(op->input(i)->id())];
      if (p < 0) continue;
      const LayoutParam& lp = layout_.params[static_cast<size_t>(p)];
      const TpSplit split = layout_.ops[id].input_splits[static_cast<size_t>(i)];
      if (!split_seen[static_cast<size_t>(p)]) {
        split_seen[static_cast<size_t>(p)] = 1;
        param_split_[static_cast<size_t>(p)] = split;
      }
      const int64_t s = stage_[id];
      const std::string key = std::to_string(p) + "/" + std::to_string(s) + "/" +
                              std::to_string(static_cast<int>(split));
      auto [it, fresh] = instances_.try_emplace(key);
      inst_[id][static_cast<size_t>(i)] = &it->second;
      if (!fresh) continue;
      const Value& full = *seq_.param(p);
      const bool data = lp.role == ParamRole::kData;
      const bool zero_piece = (lp.role == ParamRole::kOptimizerState && o_.zero_stage >= 1) ||
                              (lp.role == ParamRole::kWeight && o_.zero_stage == 3);
      const int64_t per_slot = data ? K_ : 1;
      for (int64_t r = 0; r < D_; ++r) {
        for (int64_t t = 0; t < T_; ++t) {
          for (int64_t m = 0; m < per_slot; ++m) {
            ParamSource src;
            src.seq_param = p;
            src.split = split;
            src.shard = t;
            src.device = mesh_.Device(r, s, t);
            Type type;
            if (data) {
              src.batch_piece = r * K_ + m;
              std::vector<int64_t> shape = full.type().shape();
              shape[0] /= D_ * K_;
              type = Type::Tensor(full.type().dtype(), std::move(shape), src.device);
            } else {
              if (zero_piece) src.zero_piece = r;
              type = parallel::ShardType(full.type(), split, t, T_, zero_piece ? D_ : 1,
                                         src.device);
              if (type.is_unknown()) {
                return InvalidArgument()
                       << "ZeRO: dim 0 of %" << full.name() << "'s shard is not divisible by D = "
                       << D_;
              }
            }
            it->second.push_back(b_.function().AddParam(
                FreshParamName(full.name() + Suffix(r, t, data ? m : -1)), type));
            plan.params.push_back(src);
          }
        }
      }
    }
  }
  return Status::Ok();
}

Value*& ProgramEmitter::Result(int vid, Target target, int64_t r, int64_t t, int64_t m) {
  switch (target) {
    case Target::kLocal:
      return local_[LocalIndex(r, t, m, vid)];
    case Target::kRecompute:
      return rc_[SlotIndex(r, t, vid)];
    case Target::kOptimizer:
      break;
  }
  return opt_[SlotIndex(r, t, vid)];
}

Value* ProgramEmitter::Input(const Op& op, int i, int64_t r, int64_t t, int64_t m, int64_t s,
                             bool use_rc) {
  const auto id = static_cast<size_t>(op.id());
  if (const std::vector<Value*>* inst = inst_[id][static_cast<size_t>(i)]) {
    const auto& g = gathered_[static_cast<size_t>(i)];
    if (!g.empty()) return g[Slot(r, t)];
    if (inst->size() == static_cast<size_t>(D_ * T_ * K_) && K_ > 1) {
      return (*inst)[static_cast<size_t>((r * T_ + t) * K_ + m)];
    }
    return (*inst)[Slot(r, t)];
  }
  return ResultInput(op, op.input(i), r, t, m, s, use_rc);
}

Value* ProgramEmitter::ResultInput(const Op& op, const Value* v, int64_t r, int64_t t, int64_t m,
                                   int64_t s, bool use_rc) {
  const int vid = v->id();
  const auto d = static_cast<size_t>(def_op_[static_cast<size_t>(vid)]);
  if (layout_.ops[d].phase == OpPhase::kOptimizer) return opt_[SlotIndex(r, t, vid)];
  if (stage_[d] != s) {
    auto it = remote_.find(RemoteKey(vid, r, t, m, s));
    if (it != remote_.end()) return it->second;
    if (error_.ok()) {
      const Op& def = *seq_.ops()[d];
      error_ = InvalidArgument(op.loc())
               << "%" << v->name() << " is computed in pipeline stage " << stage_[d]
               << " (" << def.Name() << ", layer " << layout_.ops[d].layer << ") but read by "
               << op.Name() << " (%" << op.result(0)->name() << ") in stage " << s
               << " before it is sent; values may only flow to later stages in the forward pass";
    }
    return nullptr;
  }
  if (use_rc && in_rc_[d]) return rc_[SlotIndex(r, t, vid)];
  return local_[LocalIndex(r, t, m, vid)];
}

// ZeRO-3: weights live as dim-0 pieces on the replicas; an op that reads one
// first all-gathers it (per shard t, over the replicas) and drops it after use.
void ProgramEmitter::GatherShardedWeights(const Op& op) {
  gathered_.assign(static_cast<size_t>(op.num_inputs()), {});
  if (o_.zero_stage != 3 || layout_.ops[static_cast<size_t>(op.id())].phase == OpPhase::kOptimizer) {
    return;
  }
  for (int i = 0; i < op.num_inputs(); ++i) {
    const int p = param_pos_[static_cast<size_t>(op.input(i)->id())];
    if (p < 0 || layout_.params[static_cast<size_t>(p)].role != ParamRole::kWeight) continue;
    const std::vector<Value*>& inst = *inst_[static_cast<size_t>(op.id())][static_cast<size_t>(i)];
    auto& g = gathered_[static_cast<size_t>(i)];
    g.assign(static_cast<size_t>(D_ * T_), nullptr);
    for (int64_t t = 0; t < T_; ++t) {
      std::vector<Value*> pieces;
      std::vector<std::string> names;
      for (int64_t r = 0; r < D_; ++r) {
        pieces.push_back(inst[Slot(r, t)]);
        names.push_back(op.input(i)->name() + ".full" + std::to_string(gathers_) + Suffix(r, t, -1));
      }
      auto out = Emit(OpKind::kAllGather, pieces, {{"axis", int64_t{0}}}, names);
      ++gathers_;
      for (int64_t r = 0; r < D_; ++r) g[Slot(r, t)] = out[static_cast<size_t>(r)];
    }
  }
}

void ProgramEmitter::AllReduceOverShards(const Op& op, int result, Target target, int64_t m) {
  const int vid = op.result(result)->id();
  for (int64_t r = 0; r < D_; ++r) {
    std::vector<Value*> parts;
    std::vector<std::string> names;
    for (int64_t t = 0; t < T_; ++t) {
      parts.push_back(Result(vid, target, r, t, m));
      names.push_back(parts.back()->name() + ".sum");
    }
    auto out = Emit(OpKind::kAllReduce, parts, {}, names);
    for (int64_t t = 0; t < T_; ++t) Result(vid, target, r, t, m) = out[static_cast<size_t>(t)];
  }
}

void ProgramEmitter::EmitOp(const Op& op, int64_t s, int64_t m, Target target) {
  if (!error_.ok() || skip_[static_cast<size_t>(op.id())]) return;
  GatherShardedWeights(op);
  const auto& local_shape = local_shape_[static_cast<size_t>(op.id())];
  const std::string& gelu = layout_.ops[static_cast<size_t>(op.id())].gelu;
  const bool use_rc = target == Target::kRecompute ||
                      (o_.recompute != RecomputeKind::kNone && target == Target::kLocal &&
                       layout_.ops[static_cast<size_t>(op.id())].phase == OpPhase::kBackward);
  const bool has_device = op.FindAttr("device") != nullptr;
  const bool mse = op.kind() == OpKind::kMSELoss || op.kind() == OpKind::kMSELossGrad;
  std::vector<std::string> names(static_cast<size_t>(op.num_results()));
  for (int64_t r = 0; r < D_; ++r) {
    for (int64_t t = 0; t < T_; ++t) {
      const std::string& suffix = SuffixOf(r, t, target == Target::kOptimizer ? -1 : m);
      for (int k = 0; k < op.num_results(); ++k) {
        std::string& name = names[static_cast<size_t>(k)];
        name = op.result(k)->name();
        if (target == Target::kRecompute) name += ".rc";
        name += suffix;
      }
      std::vector<Value*> inputs;
      inputs.reserve(static_cast<size_t>(op.num_inputs()));
      if (!gelu.empty()) {
        inputs.push_back(ResultInput(op, layout_.ops[static_cast<size_t>(op.id())].gelu_input, r, t,
                                     m, s, use_rc));
        if (!error_.ok()) return;
        Result(op.result(0)->id(), target, r, t, m) =
            Emit1(OpKind::kGelu, std::move(inputs), {{"approximate", gelu}}, names[0]);
        continue;
      }
      for (int i = 0; i < op.num_inputs(); ++i) {
        inputs.push_back(local_shape[static_cast<size_t>(i)].empty()
                             ? Input(op, i, r, t, m, s, use_rc)
                             : LocalShapeInput(op, i, r, t, m, s));
      }
      if (!error_.ok()) return;
      AttrMap attrs = op.attrs();
      if (has_device) attrs["device"] = mesh_.Device(r, s, t);
      if (mse && D_ * K_ > 1) attrs["denominator"] = denominator_;
      auto out = Emit(op.kind(), std::move(inputs), std::move(attrs), names);
      for (int k = 0; k < op.num_results(); ++k) {
        Result(op.result(k)->id(), target, r, t, m) = out[static_cast<size_t>(k)];
      }
    }
  }
  if (T_ > 1) {
    for (int result : layout_.ops[static_cast<size_t>(op.id())].partial_results) {
      AllReduceOverShards(op, result, target, m);
    }
  }
}

// Gradient accumulation over microbatches (ZeRO-2/3: each microbatch's
// gradient is first reduce-scattered over the replicas), and loss sums.
void ProgramEmitter::Accumulate(int vid, int64_t m) {
  const bool grad = is_grad_[static_cast<size_t>(vid)];
  const int64_t shards = grad ? T_ : 1;  // a loss is the same on every shard: keep t = 0
  std::vector<Value*> values(static_cast<size_t>(D_ * shards));
  for (int64_t r = 0; r < D_; ++r) {
    for (int64_t t = 0; t < shards; ++t) {
      values[static_cast<size_t>(r * shards + t)] = local_[LocalIndex(r, t, m, vid)];
    }
  }
  if (grad && o_.zero_stage >= 2) {
    for (int64_t t = 0; t < T_; ++t) {
      std::vector<Value*> parts;
      std::vector<std::string> names;
      for (int64_t r = 0; r < D_; ++r) {
        parts.push_back(values[static_cast<size_t>(r * T_ + t)]);
        names.push_back(parts.back()->name() + ".rs");
      }
      auto out = Emit(OpKind::kReduceScatter, parts, {{"axis", int64_t{0}}}, names);
      for (int64_t r = 0; r < D_; ++r) values[static_cast<size_t>(r * T_ + t)] = out[static_cast<size_t>(r)];
    }
  }
  for (int64_t r = 0; r < D_; ++r) {
    for (int64_t t = 0; t < shards; ++t) {
      Value*& acc = acc_[SlotIndex(r, t, vid)];
      Value* v = values[static_cast<size_t>(r * shards + t)];
      acc = acc == nullptr ? v : Emit1(OpKind::kAdd, {acc, v}, {}, v->name() + ".acc");
    }
  }
}

void ProgramEmitter::EmitTask(const PipelineTask& task) {
  const auto s = static_cast<size_t>(task.stage);
  if (task.backward && o_.recompute != RecomputeKind::kNone) {
    for (int id : rc_ops_[s]) EmitOp(*seq_.ops()[static_cast<size_t>(id)], task.stage, task.microbatch, Target::kRecompute);
  }
  const auto& ops = task.backward ? bwd_ops_[s] : fwd_ops_[s];
  for (int id : ops) EmitOp(*seq_.ops()[static_cast<size_t>(id)], task.stage, task.microbatch, Target::kLocal);
  if (!error_.ok()) return;
  for (int id : ops) {
    for (const auto& r : seq_.ops()[static_cast<size_t>(id)]->results()) {
      const auto vid = static_cast<size_t>(r->id());
      if (is_grad_[vid] || is_sum_[vid]) Accumulate(r->id(), task.microbatch);
    }
  }
}

void ProgramEmitter::EmitSends(const PipelineTask& task) {
  const auto& ops = task.backward ? bwd_ops_[static_cast<size_t>(task.stage)]
                                  : fwd_ops_[static_cast<size_t>(task.stage)];
  const int64_t m = task.microbatch;
  for (int id : ops) {
    for (const auto& res : seq_.ops()[static_cast<size_t>(id)]->results()) {
      const int vid = res->id();
      for (int64_t to : remote_stages_[static_cast<size_t>(vid)]) {
        for (int64_t r = 0; r < D_; ++r) {
          for (int64_t t = 0; t < T_; ++t) {
            Value* v = local_[LocalIndex(r, t, m, vid)];
            remote_[RemoteKey(vid, r, t, m, to)] =
                Emit1(OpKind::kSend, {v}, {{"device", mesh_.Device(r, to, t)}},
                       v->name() + ".s" + std::to_string(to));
          }
        }
      }
    }
  }
}

// End of step: reduce the accumulated gradients over the replicas (ZeRO-0:
// all-reduce; ZeRO-1: reduce-scatter; ZeRO-2/3 already did per microbatch),
// then run the optimizer per (replica, shard); ZeRO-1/2 update their dim-0
// piece of the weight and all-gather the updated weight.
void ProgramEmitter::EmitOptimizer() {
  gathered_.assign(8, {});  // the optimizer reads ZeRO-3 pieces as they are
  std::vector<char> reduced(V_, 0);
  for (int id : opt_ops_) {
    const Op& op = *seq_.ops()[static_cast<size_t>(id)];
    for (const Value* in : op.inputs()) {
      const auto vid = static_cast<size_t>(in->id());
      if (!is_grad_[vid] || reduced[vid] || D_ == 1 || o_.zero_stage >= 2) continue;
      reduced[vid] = 1;
      for (int64_t t = 0; t < T_; ++t) {
        std::vector<Value*> parts;
        std::vector<std::string> names;
        for (int64_t r = 0; r < D_; ++r) {
          parts.push_back(acc_[SlotIndex(r, t, in->id())]);
          names.push_back(in->name() + (o_.zero_stage == 1 ? ".rs" : ".ar") + Suffix(r, t, -1));
        }
        auto out = o_.zero_stage == 1
                       ? Emit(OpKind::kReduceScatter, parts, {{"axis", int64_t{0}}}, names)
                       : Emit(OpKind::kAllReduce, parts, {}, names);
        for (int64_t r = 0; r < D_; ++r) acc_[SlotIndex(r, t, in->id())] = out[static_cast<size_t>(r)];
      }
    }
  }
  const bool piecewise_update = o_.zero_stage == 1 || o_.zero_stage == 2;
  for (int id : opt_ops_) {
    const Op& op = *seq_.ops()[static_cast<size_t>(id)];
    const int64_t s = stage_[static_cast<size_t>(id)];
    for (int64_t r = 0; r < D_; ++r) {
      for (int64_t t = 0; t < T_; ++t) {
        std::vector<Value*> inputs;
        for (int i = 0; i < op.num_inputs(); ++i) {
          const auto vid = static_cast<size_t>(op.input(i)->id());
          if (is_grad_[vid]) {
            inputs.push_back(acc_[SlotIndex(r, t, op.input(i)->id())]);
            continue;
          }
          Value* v = Input(op, i, r, t, 0, s, false);
          const int p = param_pos_[vid];
          if (piecewise_update && p >= 0 && layout_.params[static_cast<size_t>(p)].role == ParamRole::kWeight) {
            std::vector<std::string> names;
            for (int64_t k = 0; k < D_; ++k) names.push_back(v->name() + ".piece" + std::to_string(k));
            v = Emit(OpKind::kSplit, {v}, {{"axis", int64_t{0}}}, names)[static_cast<size_t>(r)];
          }
          inputs.push_back(v);
        }
        std::vector<std::string> names;
        for (const auto& res : op.results()) names.push_back(res->name() + Suffix(r, t, -1));
        auto out = Emit(op.kind(), std::move(inputs), op.attrs(), names);
        for (int k = 0; k < op.num_results(); ++k) opt_[SlotIndex(r, t, op.result(k)->id())] = out[static_cast<size_t>(k)];
      }
    }
    if (!piecewise_update) continue;
    const int w_new = op.result(0)->id();
    for (int64_t t = 0; t < T_; ++t) {
      std::vector<Value*> parts;
      std::vector<std::string> names;
      for (int64_t r = 0; r < D_; ++r) {
        parts.push_back(opt_[SlotIndex(r, t, w_new)]);
        names.push_back(op.result(0)->name() + ".full" + Suffix(r, t, -1));
      }
      auto out = Emit(OpKind::kAllGather, parts, {{"axis", int64_t{0}}}, names);
      for (int64_t r = 0; r < D_; ++r) opt_[SlotIndex(r, t, w_new)] = out[static_cast<size_t>(r)];
    }
  }
}

Status ProgramEmitter::EmitReturns(ParallelPlan& plan) {
  std::vector<Value*> returns;
  for (size_t i = 0; i < layout_.outputs.size(); ++i) {
    const LayoutOutput& out = layout_.outputs[i];
    const Value* v = seq_.returns()[i];
    const int vid = v->id();
    ResultSink sink;
    sink.kind = out.kind;
    auto add = [&](Value* value, Type type) {
      sink.results.push_back(static_cast<int>(returns.size()));
      sink.types.push_back(std::move(type));
      returns.push_back(value);
    };
    const int64_t def_stage = stage_[static_cast<size_t>(def_op_[static_cast<size_t>(vid)])];
    switch (out.kind) {
      case OutputKind::kSum:
        sink.replicas = D_;
        for (int64_t r = 0; r < D_; ++r) {
          add(acc_[SlotIndex(r, 0, vid)], Type::Tensor(v->type().dtype(), {}, mesh_.Device(r, def_stage, 0)));
        }
        break;
      case OutputKind::kBatchConcat: {
        sink.split = out.split;
        sink.replicas = D_;
        sink.shards = out.split == TpSplit::kReplicated ? 1 : T_;
        sink.microbatches = K_;
        for (int64_t r = 0; r < D_; ++r) {
          for (int64_t t = 0; t < sink.shards; ++t) {
            for (int64_t m = 0; m < K_; ++m) {
              std::vector<int64_t> shape = v->type().shape();
              shape[0] /= D_ * K_;
              Type full = Type::Tensor(v->type().dtype(), shape);
              add(local_[LocalIndex(r, t, m, vid)],
                  parallel::ShardType(full, out.split, t, T_, 1, mesh_.Device(r, def_stage, t)));
            }
          }
        }
        break;
      }
      case OutputKind::kUpdated: {
        const auto p = static_cast<size_t>(out.param);
        const LayoutParam& lp = layout_.params[p];
        sink.split = param_split_[p];
        sink.zero_sharded = (lp.role == ParamRole::kOptimizerState && o_.zero_stage >= 1) ||
                            (lp.role == ParamRole::kWeight && o_.zero_stage == 3);
        sink.replicas = sink.zero_sharded ? D_ : 1;
        sink.shards = sink.split == TpSplit::kReplicated ? 1 : T_;
        if (sink.split == TpSplit::kQkvColumns) {
          return Unimplemented() << "collecting a QKV-split updated weight (%" << v->name() << ")";
        }
        for (int64_t r = 0; r < sink.replicas; ++r) {
          for (int64_t t = 0; t < sink.shards; ++t) {
            add(opt_[SlotIndex(r, t, vid)],
                parallel::ShardType(seq_.param(out.param)->type(), sink.split, t, T_,
                                    sink.zero_sharded ? D_ : 1, mesh_.Device(r, def_stage, t)));
          }
        }
        break;
      }
    }
    plan.sinks.push_back(std::move(sink));
  }
  b_.Return(std::move(returns));
  return Status::Ok();
}

StatusOr<std::unique_ptr<Function>> ProgramEmitter::Emit(ParallelPlan& plan) && {
  Analyze();
  for (const auto& op : seq_.ops()) {
    if (op->is_call()) {
      return InvalidArgument(op->loc()) << "the parallel transform does not handle calls ("
                                        << op->Name() << ")";
    }
    if (op->kind() == OpKind::kMSELoss || op->kind() == OpKind::kMSELossGrad) {
      denominator_ = op->input(1)->type().NumElements();
    }
  }
  for (int64_t r = 0; r < D_; ++r) {
    for (int64_t t = 0; t < T_; ++t) {
      for (int64_t m = -1; m < K_; ++m) suffixes_.push_back(Suffix(r, t, m));
    }
  }
  // Roughly: every sequential op once per (replica, shard, microbatch).
  const size_t estimate = seq_.ops().size() * static_cast<size_t>(D_ * T_ * K_) * 5 / 4;
  b_.function().Reserve(estimate, estimate);
  DISTIR_RETURN_IF_ERROR(CreateParams(plan));
  local_.assign(static_cast<size_t>(D_ * T_ * K_) * V_, nullptr);
  rc_.assign(static_cast<size_t>(D_ * T_) * V_, nullptr);
  opt_.assign(static_cast<size_t>(D_ * T_) * V_, nullptr);
  acc_.assign(static_cast<size_t>(D_ * T_) * V_, nullptr);
  const auto schedule = SchedulePipeline(P_, K_, o_.schedule, layout_.training);
  for (const auto& step : schedule) {
    for (const PipelineTask& task : step) EmitTask(task);
    DISTIR_RETURN_IF_ERROR(error_);  // the emitted values are incomplete
    for (const PipelineTask& task : step) EmitSends(task);
  }
  DISTIR_RETURN_IF_ERROR(error_);
  EmitOptimizer();
  DISTIR_RETURN_IF_ERROR(error_);
  DISTIR_RETURN_IF_ERROR(EmitReturns(plan));
  return std::move(b_).Finish();
}

}  // namespace

Status CheckParallelOptions(const Function& seq, const ParallelOptions& options) {
  DISTIR_ASSIGN_OR_RETURN(ModelLayout layout, AnalyzeModel(seq, options.tp));
  return Validate(seq, layout, options);
}

StatusOr<DistributedProgram> Parallelize(const Function& seq, const ParallelOptions& options) {
  DISTIR_ASSIGN_OR_RETURN(ModelLayout layout, AnalyzeModel(seq, options.tp));
  DISTIR_RETURN_IF_ERROR(Validate(seq, layout, options));
  ParallelPlan plan;
  plan.options = options;
  plan.mesh = parallel::Mesh{options.dp, options.pp, options.tp};
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> program,
                          ProgramEmitter(seq, layout, options).Emit(plan));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> init, parallel::BuildInit(seq, *program, plan));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> collect,
                          parallel::BuildCollect(seq, *program, plan));
  DistributedProgram out;
  out.options = options;
  out.init_name = init->name();
  out.collect_name = collect->name();
  out.program_name = program->name();
  out.module.AddFunction(std::move(init));
  out.module.AddFunction(std::move(collect));
  out.module.AddFunction(std::move(program));
  DISTIR_RETURN_IF_ERROR(InferTypes(out.module));
  return out;
}

}  // namespace distir
