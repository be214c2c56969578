// A program written as copies of a template function's ops, without the IR
// of the copies (docs/transforms.md §12.8, docs/cost_model.md §3.2).
//
// Microbatch replication (sharding/replicate.h) repeats the per-microbatch
// ops of a per-device template K times and sums what the update reads; the
// schedule then orders the result (sharding/task_order.h). The search only
// simulates that program, and the simulator only needs, per op, which
// template op it repeats and which values it reads and writes: building the
// IR of K copies (names, attributes, types) is most of the cost of a grid
// point. An ExpandedProgram is that description: ops in program order, each
// a copy of a template op or an Add into a running sum, over values numbered
// here. sim::SimulateExpanded (sim/simulator.h) simulates it exactly as
// sim::Simulate simulates the built program (the same per-device op
// sequences, costs and buffers).

#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace distir {

struct ExpandedProgram {
  /// ExpandedProgram::op of a sum: Add(running sum, copy of the value summed).
  static constexpr int32_t kSum = -1;

  // Ops, in program order.
  std::vector<int32_t> op;           ///< template op id, or kSum
  std::vector<int32_t> copy;         ///< which copy (microbatch) of the template op
  std::vector<int32_t> in_begin{0};  ///< CSR, size ops + 1: value ids read
  std::vector<int32_t> in;
  std::vector<int32_t> out_begin{0};  ///< CSR, size ops + 1: value ids written
  std::vector<int32_t> out;

  // Values, numbered from 0.
  std::vector<int32_t> value_template;  ///< the template value it copies (a sum: the value summed)
  std::vector<uint8_t> value_is_sum;    ///< 1: a running sum, a fresh tensor of its template's type
  std::vector<int32_t> params;          ///< values that are parameters (resident)
  std::vector<int32_t> returns;         ///< values returned (resident)
  /// By device id: nonzero for the devices the program keeps. Empty: every
  /// device of the template. Otherwise the program is the part of the copies
  /// on these devices (a collective with only its operands and results on
  /// them, costed as the whole collective), and the simulator times and
  /// reports only them: one data-parallel replica standing for all where the
  /// replicas are alike (docs/cost_model.md §3.2).
  std::vector<char> keep_device;
  /// With keep_device: the ops of the whole program (every device's); the
  /// simulator reports it as SimulationResult::num_ops. -1: num_ops().
  int64_t whole_num_ops = -1;

  int32_t num_ops() const { return static_cast<int32_t>(op.size()); }
  int32_t num_values() const { return static_cast<int32_t>(value_template.size()); }
  std::span<const int32_t> Inputs(int32_t i) const {
    return {in.data() + in_begin[i], in.data() + in_begin[i + 1]};
  }
  std::span<const int32_t> Results(int32_t i) const {
    return {out.data() + out_begin[i], out.data() + out_begin[i + 1]};
  }
  /// A new value copying template value `t` (a sum when `sum`); its id.
  int32_t AddValue(int32_t t, bool sum = false) {
    value_template.push_back(t);
    value_is_sum.push_back(sum ? 1 : 0);
    return num_values() - 1;
  }
  /// Appends an op reading `inputs` and writing `results`.
  void AddOp(int32_t template_op, int32_t copy_index, std::span<const int32_t> inputs,
             std::span<const int32_t> results) {
    op.push_back(template_op);
    copy.push_back(copy_index);
    in.insert(in.end(), inputs.begin(), inputs.end());
    in_begin.push_back(static_cast<int32_t>(in.size()));
    out.insert(out.end(), results.begin(), results.end());
    out_begin.push_back(static_cast<int32_t>(out.size()));
  }
  /// Reorders the ops: op k of the result is op order[k] of this.
  /// REQUIRES: `order` is a permutation of the op indices.
  void PermuteOps(std::span<const size_t> order) {
    ExpandedProgram p;
    p.value_template = std::move(value_template);
    p.value_is_sum = std::move(value_is_sum);
    p.params = std::move(params);
    p.returns = std::move(returns);
    p.keep_device = std::move(keep_device);
    p.whole_num_ops = whole_num_ops;
    p.op.reserve(op.size());
    p.copy.reserve(op.size());
    p.in.reserve(in.size());
    p.out.reserve(out.size());
    for (size_t k : order) {
      const auto i = static_cast<int32_t>(k);
      p.AddOp(op[k], copy[k], Inputs(i), Results(i));
    }
    *this = std::move(p);
  }
};

}  // namespace distir
