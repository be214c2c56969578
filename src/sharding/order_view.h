// What the pipeline orderings (task_order.h, exchange_order.h) read of a
// program, for a Function and for an ExpandedProgram (ir/expanded_program.h)
// alike: per op whether it is a Send, the ids of the values it reads and
// writes, and the devices of its results. The orderings are templates over
// these two views, so that the search orders the copies of a template
// without building their IR and gets the order the built program gets.

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Calls `f(device id)` for each device of `t` (Type::Devices), without
/// building a vector for a tensor or scalar: the order passes ask it for
/// every op of programs of 10^8 ops.
template <typename F>
void ForEachDeviceOf(const Type& t, F f) {
  if (!t.is_tuple()) {
    if (t.device().has_value()) f(t.device().value());
    return;
  }
  for (DeviceId d : t.Devices()) f(d.value());
}

class FunctionOrderView {
 public:
  explicit FunctionOrderView(const Function& fn) : fn_(fn) {}
  size_t num_ops() const { return fn_.ops().size(); }
  int num_values() const { return fn_.num_values(); }
  bool IsSend(size_t i) const { return fn_.ops()[i]->kind() == OpKind::kSend; }
  template <typename F>
  void ForEachInput(size_t i, F f) const {
    for (const Value* v : fn_.ops()[i]->inputs()) f(v->id());
  }
  template <typename F>
  void ForEachResult(size_t i, F f) const {
    for (const auto& r : fn_.ops()[i]->results()) f(r->id());
  }
  template <typename F>
  void ForEachParam(F f) const {
    for (const auto& p : fn_.params()) f(p->id());
  }
  /// Devices of every result's type.
  template <typename F>
  void ForEachResultDevice(size_t i, F f) const {
    for (const auto& r : fn_.ops()[i]->results()) {
      ForEachDeviceOf(r->type(), f);
    }
  }
  /// The device of a Send's result (none: -1).
  int32_t SendTarget(size_t i) const {
    const DeviceId d = fn_.ops()[i]->result(0)->type().device();
    return d.has_value() ? d.value() : -1;
  }
  int32_t SendResult(size_t i) const { return fn_.ops()[i]->result(0)->id(); }
  /// An Internal error: op `i` reads value `v` before its definition.
  Status ReadsTooEarly(size_t i, int32_t v) const;
  /// An Internal error: op `i`'s task has no timestep in the schedule.
  Status NotInSchedule(size_t i) const;

 private:
  const Function& fn_;
};

class ExpandedOrderView {
 public:
  /// REQUIRES: `x` copies the ops of `tmpl`; both outlive the view.
  ExpandedOrderView(const ExpandedProgram& x, const Function& tmpl);
  size_t num_ops() const { return static_cast<size_t>(x_.num_ops()); }
  int num_values() const { return x_.num_values(); }
  bool IsSend(size_t i) const { return x_.op[i] >= 0 && send_[static_cast<size_t>(x_.op[i])]; }
  template <typename F>
  void ForEachInput(size_t i, F f) const {
    for (int32_t v : x_.Inputs(static_cast<int32_t>(i))) f(v);
  }
  template <typename F>
  void ForEachResult(size_t i, F f) const {
    for (int32_t v : x_.Results(static_cast<int32_t>(i))) f(v);
  }
  template <typename F>
  void ForEachParam(F f) const {
    for (int32_t v : x_.params) f(v);
  }
  template <typename F>
  void ForEachResultDevice(size_t i, F f) const {
    for (int32_t v : x_.Results(static_cast<int32_t>(i))) {
      ForEachDeviceOf(Template(v).type(), f);
    }
  }
  int32_t SendTarget(size_t i) const {
    const DeviceId d = Template(SendResult(i)).type().device();
    return d.has_value() ? d.value() : -1;
  }
  int32_t SendResult(size_t i) const { return x_.Results(static_cast<int32_t>(i))[0]; }
  Status ReadsTooEarly(size_t i, int32_t v) const;
  Status NotInSchedule(size_t i) const;

 private:
  const Value& Template(int32_t v) const {
    return *values_[static_cast<size_t>(x_.value_template[static_cast<size_t>(v)])];
  }
  const ExpandedProgram& x_;
  const Function& tmpl_;
  std::vector<bool> send_;            // per template op
  std::vector<const Value*> values_;  // template values by id
};

}  // namespace distir::sharding
