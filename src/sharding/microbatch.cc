#include "sharding/microbatch.h"

#include <algorithm>
#include <memory>

#include "ir/gemm_accumulation.h"
#include "interp/infer_types.h"
#include "sharding/pipeline_task.h"

namespace distir::sharding {
namespace {

// The class of every op of `fn` (microbatch.h) and which values to sum.
struct Classes {
  std::vector<bool> batch;    // by value id: depends on a batch input
  std::vector<bool> per_mb;   // by op index
  std::vector<bool> update;   // by op index
  std::vector<bool> forward;  // by op index (per-microbatch ops only)
  std::vector<bool> summed;   // by value id: per-microbatch, summed over microbatches
};

// With `sum_addends`: a per-microbatch Add of two per-microbatch values
// whose result only update ops read becomes update work, and its operands are
// summed instead (the sum of a + b over the microbatches is the sum of a plus
// the sum of b); so does a Shard annotation of such an Add's result that only
// update ops read (the layout a weight gradient is pinned to). A pipelined
// program's tied embedding has its gradient's two addends on the first and
// the last stage: each then adds up where it is computed and they meet once
// per step, as in Megatron's embedding all-reduce after the pipeline flush,
// instead of a transfer per microbatch from the last stage to the first.
void SumAddendsSeparately(const Function& fn, Classes& c) {
  const size_t n = fn.ops().size();
  std::vector<int> readers(fn.num_values(), 0), other_readers(fn.num_values(), 0);
  for (const Value* v : fn.returns()) other_readers[v->id()] = 1;
  auto per_mb_add = [&](const Value* v) {
    const Op* def = v->def();
    if (def == nullptr || def->kind() != OpKind::kAdd || !c.per_mb[static_cast<size_t>(def->id())])
      return false;
    return std::all_of(def->inputs().begin(), def->inputs().end(),
                       [&](const Value* x) { return static_cast<bool>(c.batch[x->id()]); });
  };
  for (size_t i = n; i-- > 0;) {
    const Op& op = *fn.ops()[i];
    const bool only_update = op.num_results() == 1 && readers[op.result(0)->id()] > 0 &&
                             other_readers[op.result(0)->id()] == 0;
    if (c.per_mb[i] && only_update &&
        (per_mb_add(op.result(0)) || (op.kind() == OpKind::kShard && per_mb_add(op.input(0))))) {
      c.per_mb[i] = false;
      c.update[i] = true;
    }
    for (const Value* v : op.inputs()) {
      ++readers[v->id()];
      if (!c.update[i]) ++other_readers[v->id()];
    }
  }
}

Classes Classify(const Function& fn, const std::vector<const Value*>& batch_params,
                 bool sum_addends) {
  const size_t n = fn.ops().size();
  Classes c{std::vector<bool>(fn.num_values(), false), std::vector<bool>(n, false),
            std::vector<bool>(n, false), std::vector<bool>(n, false),
            std::vector<bool>(fn.num_values(), false)};
  for (const Value* p : batch_params) c.batch[p->id()] = true;
  std::vector<bool> after_update(fn.num_values(), false);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = *fn.ops()[i];
    bool reads_batch = false, reads_update = false;
    for (const Value* v : op.inputs()) {
      reads_batch = reads_batch || c.batch[v->id()];
      reads_update = reads_update || after_update[v->id()];
    }
    c.update[i] = IsOptimizer(op.kind()) || reads_update;
    c.per_mb[i] = reads_batch && !c.update[i];
    for (const auto& r : op.results()) {
      c.batch[r->id()] = reads_batch;
      after_update[r->id()] = c.update[i];
    }
  }
  // Once-per-step work that only the update reads is update work, not setup:
  // AdamW's decayed master copy (`<w>.decayed = w * (1 - lr wd)`) reads the
  // weight alone; made in the setup, its f32 copy of every weight would live
  // through every microbatch (4 bytes per parameter at the peak; Megatron's
  // optimizer decays in its step).
  std::vector<bool> read(fn.num_values(), false), read_outside_update(fn.num_values(), false);
  for (const Value* v : fn.returns()) read[v->id()] = read_outside_update[v->id()] = true;
  for (size_t i = n; i-- > 0;) {
    const Op& op = *fn.ops()[i];
    if (!c.per_mb[i] && !c.update[i] && op.num_results() > 0) {
      bool only_update = true;
      for (const auto& r : op.results())
        only_update = only_update && read[r->id()] && !read_outside_update[r->id()];
      c.update[i] = only_update;
    }
    for (const Value* v : op.inputs()) {
      read[v->id()] = true;
      if (!c.update[i]) read_outside_update[v->id()] = true;
    }
  }
  if (sum_addends) SumAddendsSeparately(fn, c);
  // Forward: what a returned per-microbatch value is computed from.
  std::vector<bool> needed(fn.num_values(), false);
  auto per_mb_value = [&](const Value* v) {
    return v->def() != nullptr && c.per_mb[static_cast<size_t>(v->def()->id())];
  };
  for (const Value* v : fn.returns()) {
    if (per_mb_value(v)) needed[v->id()] = true;
  }
  for (size_t i = n; i-- > 0;) {
    const Op& op = *fn.ops()[i];
    if (!c.per_mb[i]) continue;
    for (const auto& r : op.results()) c.forward[i] = c.forward[i] || needed[r->id()];
    if (!c.forward[i]) continue;
    for (const Value* v : op.inputs()) needed[v->id()] = true;
  }
  // Summed: per-microbatch values read once per step, and returned scalars.
  for (size_t i = 0; i < n; ++i) {
    if (c.per_mb[i]) continue;
    for (const Value* v : fn.ops()[i]->inputs()) c.summed[v->id()] = per_mb_value(v);
  }
  for (const Value* v : fn.returns()) {
    if (per_mb_value(v) && v->type().is_tensor() && v->type().rank() == 0) c.summed[v->id()] = true;
  }
  return c;
}

class Splitter {
 public:
  Splitter(const Function& fn, int64_t k, bool first_only, const Classes& c)
      : fn_(fn),
        k_(k),
        built_(first_only ? 1 : k),
        c_(c),
        out_(std::make_unique<Function>(fn.name())),
        per_(static_cast<size_t>(k), std::vector<Value*>(fn.num_values(), nullptr)),
        shared_(fn.num_values(), nullptr) {}

  StatusOr<std::unique_ptr<Function>> Run(std::vector<std::string>& mb_names);

 private:
  std::string Suffix(int64_t m) const { return k_ == 1 ? "" : ".mb" + std::to_string(m); }
  // What a clone reads for `v`: a per-microbatch op microbatch m's value,
  // an op run once per step the shared one (a sum, for per-microbatch values).
  Value* Get(const Value* v, int64_t m) const {
    bool per_value =
        v->def() == nullptr ? c_.batch[v->id()] : c_.per_mb[static_cast<size_t>(v->def()->id())];
    return per_value && m >= 0 ? per_[static_cast<size_t>(m)][v->id()] : shared_[v->id()];
  }
  Op* CloneOp(const Op& op, int64_t m, const std::string& suffix, TaskTag task);
  Status Accumulate(const Op& op, int64_t m, TaskPhase phase);

  const Function& fn_;
  int64_t k_;
  int64_t built_;  // microbatches emitted: K, or 1 for the template
  const Classes& c_;
  std::unique_ptr<Function> out_;
  std::vector<std::vector<Value*>> per_;  // [microbatch][old value id]
  std::vector<Value*> shared_;            // values of setup and update ops, sums
};

Op* Splitter::CloneOp(const Op& op, int64_t m, const std::string& suffix, TaskTag task) {
  std::vector<Value*> inputs;
  for (const Value* v : op.inputs()) inputs.push_back(Get(v, m));
  std::vector<std::string> names;
  for (const auto& r : op.results())
    names.push_back(r->name().empty() ? r->name() : out_->UniqueName(r->name() + suffix));
  AttrMap attrs = op.attrs();
  // The sum of the microbatch losses is the step's loss: keep N of the whole batch.
  if ((op.kind() == OpKind::kMSELoss || op.kind() == OpKind::kMSELossGrad) &&
      attrs.count("denominator") == 0)
    attrs["denominator"] = Attribute(op.input(0)->type().NumElements());
  Op* n = out_->AddOp(op.kind(), std::move(inputs), std::move(attrs), std::move(names), op.loc());
  SetTask(*n, task);
  for (int i = 0; i < op.num_results(); ++i) {
    const Value& r = *op.result(i);
    n->result(i)->set_loc(r.loc());
    n->result(i)->CopyShardingFrom(r);
  }
  return n;
}

// After microbatch m of `op`: adds its summed results to the running sums.
Status Splitter::Accumulate(const Op& op, int64_t m, TaskPhase phase) {
  for (const auto& r : op.results()) {
    if (!c_.summed[r->id()]) continue;
    Value* v = per_[static_cast<size_t>(m)][r->id()];
    if (!r->type().is_tensor())
      return InvalidArgument(op.loc()) << r->Ref() << " (" << r->type()
                                       << ") must be summed over microbatches, but is not a tensor";
    if (m == 0) {
      shared_[r->id()] = v;
      continue;
    }
    std::string name = r->name().empty() ? "sum" : r->name();
    name = out_->UniqueName(m + 1 == k_ ? name : name + ".sum" + std::to_string(m));
    AttrMap attrs;
    if (IsFusedWeightGradient(*r)) attrs[kGemmAccumulateAttr] = int64_t{1};
    Op* add = out_->AddOp(OpKind::kAdd, {shared_[r->id()], v}, std::move(attrs), {name}, op.loc());
    SetTask(*add, TaskTag{0, m, phase});
    shared_[r->id()] = add->result(0);
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<Function>> Splitter::Run(std::vector<std::string>& mb_names) {
  out_->set_loc(fn_.loc());
  for (const auto& p : fn_.params()) {
    if (!c_.batch[p->id()]) {
      shared_[p->id()] = out_->AddParam(p->name(), p->type(), p->loc());
      shared_[p->id()]->CopyShardingFrom(*p);
      continue;
    }
    std::vector<int64_t> shape = p->type().shape();
    shape[0] /= k_;
    for (int64_t m = 0; m < built_; ++m) {
      Value* v = out_->AddParam(p->name() + Suffix(m), p->type().WithShape(shape), p->loc());
      v->CopyShardingFrom(*p);
      per_[static_cast<size_t>(m)][p->id()] = v;
      mb_names.push_back(v->name());
    }
  }
  const auto& ops = fn_.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (c_.per_mb[i] || c_.update[i]) continue;
    Op* n = CloneOp(*ops[i], -1, "", TaskTag{0, -1, TaskPhase::kSetup});
    for (int r = 0; r < n->num_results(); ++r) shared_[ops[i]->result(r)->id()] = n->result(r);
  }
  for (int64_t m = 0; m < built_; ++m) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!c_.per_mb[i]) continue;
      TaskPhase phase = c_.forward[i] ? TaskPhase::kForward : TaskPhase::kBackward;
      Op* n = CloneOp(*ops[i], m, Suffix(m), TaskTag{0, m, phase});
      for (int r = 0; r < n->num_results(); ++r)
        per_[static_cast<size_t>(m)][ops[i]->result(r)->id()] = n->result(r);
      DISTIR_RETURN_IF_ERROR(Accumulate(*ops[i], m, phase));
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!c_.update[i]) continue;
    Op* n = CloneOp(*ops[i], -1, "", TaskTag{0, -1, TaskPhase::kUpdate});
    for (int r = 0; r < n->num_results(); ++r) shared_[ops[i]->result(r)->id()] = n->result(r);
  }
  std::vector<Value*> returns;
  for (const Value* v : fn_.returns()) {
    bool split = v->def() != nullptr && c_.per_mb[static_cast<size_t>(v->def()->id())] &&
                 !c_.summed[v->id()];
    if (c_.batch[v->id()] && v->def() == nullptr) split = true;  // a returned batch input
    if (!split) {
      returns.push_back(shared_[v->id()]);
      continue;
    }
    for (int64_t m = 0; m < built_; ++m) returns.push_back(per_[static_cast<size_t>(m)][v->id()]);
  }
  out_->SetReturns(std::move(returns), fn_.return_loc());
  return std::move(out_);
}

StatusOr<std::vector<const Value*>> BatchValues(const Function& fn, int64_t k,
                                                const std::vector<std::string>& names) {
  if (names.empty())
    return InvalidArgument() << "@" << fn.name()
                             << " has no batch input to split into microbatches";
  std::vector<const Value*> out;
  for (const std::string& name : names) {
    const Value* v = nullptr;
    for (const auto& p : fn.params()) {
      if (p->name() == name) v = p.get();
    }
    if (v == nullptr) return InvalidArgument() << "@" << fn.name() << " has no parameter %" << name;
    if (!v->type().is_tensor() || v->type().rank() < 1)
      return InvalidArgument(v->loc()) << "batch input " << v->Ref() << " (" << v->type()
                                       << ") must be a tensor with a batch dimension";
    if (v->type().shape()[0] % k != 0)
      return InvalidArgument(v->loc())
             << "the batch of " << v->Ref() << " (" << v->type().shape()[0]
             << ") does not divide into " << k << " microbatches";
    out.push_back(v);
  }
  return out;
}

}  // namespace

StatusOr<std::vector<bool>> ForwardOps(const Function& fn,
                                       const std::vector<std::string>& batch_params) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<const Value*> batch, BatchValues(fn, 1, batch_params));
  // Summing addends apart moves gradient Adds only, never a forward op.
  return Classify(fn, batch, /*sum_addends=*/false).forward;
}

StatusOr<std::vector<std::string>> SplitMicrobatches(Module& module, std::string function,
                                                     int64_t microbatches,
                                                     const std::vector<std::string>& batch_params,
                                                     bool first_only, bool sum_addends) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to split";
  if (microbatches < 1)
    return InvalidArgument() << "microbatches must be >= 1, got " << microbatches;
  for (const auto& op : fn->ops()) {
    if (op->is_call())
      return InvalidArgument(op->loc())
             << "calls cannot be split into microbatches yet (" << op->Name() << ")";
  }
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  DISTIR_ASSIGN_OR_RETURN(std::vector<const Value*> batch,
                          BatchValues(*fn, microbatches, batch_params));
  Classes classes = Classify(*fn, batch, sum_addends);
  std::vector<std::string> names;
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<Function> split,
                          Splitter(*fn, microbatches, first_only, classes).Run(names));
  module.ReplaceFunction(std::move(split));
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  return names;
}

}  // namespace distir::sharding
