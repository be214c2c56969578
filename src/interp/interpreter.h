// The abstract interpreter (paper Algorithm 1), generic over the domain.
//
// Interpret() walks a function's ops once, in program order, and keeps the
// value of every SSA value in a side table (std::vector<V> indexed by
// Value::id()); nothing is stored in the IR. Each primitive op is handed to the
// domain (domain.h), which picks the most precise matching rule. A call is
// handled here by interpreting the callee on the call's arguments (the call
// graph is acyclic, so this recursion is bounded by the call depth, never by
// the op count). A device-generic callee (Function::IsDeviceGeneric) runs
// without devices: its arguments enter with the device stripped and its results
// leave with the device the call's arguments share.
//
// infer_types.h builds type inference on top of this; the simulator and the
// reference executor reuse it with their own domains.

#pragma once

#include <span>
#include <utility>
#include <vector>

#include "interp/domain.h"
#include "interp/prefetch.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

namespace interp_internal {

/// Checks that a call has one argument per parameter and one result per return.
Status CheckCallArity(const Op& op, const Function& callee);

/// Checks that argument `index` of call `op`, of type `arg`, fits `param`: same
/// kind, dtype and rank, extents equal unless one is dynamic, same device
/// (devices are ignored for a device-generic callee, whose params have none).
Status CheckCallArgument(const Op& op, int index, const Type& arg, const Value& param);

/// Error for the arguments of a device-generic call being on two devices.
Status MixedCallDevices(const Op& op, DeviceId a, DeviceId b);

/// "in call of @f at file:line:col": the note added to errors inside callees.
std::string CallNote(const Op& op);

/// Function::IsDeviceGeneric() without allocating (it runs once per call op).
bool IsDeviceGeneric(const Function& fn);

}  // namespace interp_internal

/// A per-op hook that does nothing (the default of Interpreter::Run).
struct NoOpHook {
  template <typename V>
  Status operator()(const Op& /*op*/, std::vector<V>& /*values*/) const {
    return Status::Ok();
  }
};

/// Runs functions of one module over one domain.
/// The module and the domain must outlive the interpreter; neither is modified.
template <typename V>
class Interpreter {
 public:
  Interpreter(const Module& module, const Domain<V>& domain) : module_(module), domain_(domain) {}

  /// Interprets `fn` on `args` (one per parameter). On return `values` has
  /// fn.num_values() entries: the value of each Value by id. After each op of
  /// `fn` (not of its callees) `on_op(op, values)` is called; it may refine the
  /// op's results in `values` or fail with a Status, which stops the run.
  /// On error, the values of the ops before the failing one are set and the
  /// others are default-constructed (for types: unknown).
  template <typename OnOp = NoOpHook>
  Status Run(const Function& fn, std::span<const V> args, std::vector<V>& values,
             OnOp&& on_op = {}) const;

 private:
  Status RunCall(const Op& op, ArgList<V> args, std::vector<V>& values) const;

  const Module& module_;
  const Domain<V>& domain_;
};

/// Interprets `fn` (of `module`) on `args` and returns the value of every value
/// of `fn`, indexed by Value::id().
template <typename V>
StatusOr<std::vector<V>> InterpretValues(const Module& module, const Function& fn,
                                         const std::vector<V>& args, const Domain<V>& domain) {
  std::vector<V> values;
  DISTIR_RETURN_IF_ERROR(Interpreter<V>(module, domain).Run(fn, args, values));
  return values;
}

/// Interprets `fn` (of `module`) on `args` and returns the values it returns.
template <typename V>
StatusOr<std::vector<V>> Interpret(const Module& module, const Function& fn,
                                   const std::vector<V>& args, const Domain<V>& domain) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<V> values, InterpretValues(module, fn, args, domain));
  std::vector<V> out;
  out.reserve(fn.returns().size());
  for (const Value* r : fn.returns()) out.push_back(values[r->id()]);  // may repeat a value
  return out;
}

// ---- implementation

template <typename V>
template <typename OnOp>
Status Interpreter<V>::Run(const Function& fn, std::span<const V> args, std::vector<V>& values,
                           OnOp&& on_op) const {
  if (static_cast<int>(args.size()) != fn.num_params()) {
    return InvalidArgument(fn.loc()) << "function @" << fn.name() << " takes " << fn.num_params()
                                     << " arguments, got " << args.size();
  }
  values.clear();
  values.resize(fn.num_values());
  for (int i = 0; i < fn.num_params(); ++i) values[fn.param(i)->id()] = args[i];

  std::vector<const V*> arg_ptrs;  // reused for every op: no per-op allocation
  arg_ptrs.reserve(8);
  const std::vector<std::unique_ptr<Op>>& ops = fn.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    PrefetchOps(ops, i);
    const Op& op = *ops[i];
    arg_ptrs.clear();
    for (const Value* in : op.inputs()) arg_ptrs.push_back(&values[in->id()]);
    ArgList<V> op_args(arg_ptrs.data(), static_cast<int>(arg_ptrs.size()));
    if (op.is_call()) {
      DISTIR_RETURN_IF_ERROR(RunCall(op, op_args, values));
    } else {
      StatusOr<std::vector<V>> results = domain_.Apply(op, op_args);
      if (!results.ok()) return std::move(results).status();
      const std::vector<std::unique_ptr<Value>>& defined = op.results();
      for (size_t r = 0; r < defined.size(); ++r) {
        values[defined[r]->id()] = std::move((*results)[r]);
      }
    }
    DISTIR_RETURN_IF_ERROR(on_op(op, values));
  }
  return Status::Ok();
}

template <typename V>
Status Interpreter<V>::RunCall(const Op& op, ArgList<V> args, std::vector<V>& values) const {
  const Function* callee = module_.Lookup(op.callee());
  if (callee == nullptr) {
    return NotFound(op.loc()) << "call of undefined function @" << op.callee();
  }
  DISTIR_RETURN_IF_ERROR(interp_internal::CheckCallArity(op, *callee));
  const bool generic = interp_internal::IsDeviceGeneric(*callee);
  DeviceId device;
  std::vector<V> callee_args;
  callee_args.reserve(args.size());
  for (int i = 0; i < args.size(); ++i) {
    const Type& type = ValueTraits<V>::TypeOf(args[i]);
    if (!generic) {
      DISTIR_RETURN_IF_ERROR(interp_internal::CheckCallArgument(op, i, type, *callee->param(i)));
      callee_args.push_back(args[i]);
      continue;
    }
    DeviceId d = type.device();
    if (device.has_value() && d != device) {
      return interp_internal::MixedCallDevices(op, device, d);
    }
    if (!device.has_value()) device = d;
    DISTIR_RETURN_IF_ERROR(
        interp_internal::CheckCallArgument(op, i, type.WithDevice(DeviceId()), *callee->param(i)));
    callee_args.push_back(ValueTraits<V>::WithDevice(args[i], DeviceId()));
  }
  std::vector<V> callee_values;
  Status status = Run(*callee, callee_args, callee_values);
  if (!status.ok()) return status.AddNote(interp_internal::CallNote(op));
  // Copied, not moved: a callee may return one value twice.
  for (int r = 0; r < op.num_results(); ++r) {
    const V& out = callee_values[callee->returns()[r]->id()];
    values[op.result(r)->id()] = generic ? ValueTraits<V>::WithDevice(out, device) : out;
  }
  return Status::Ok();
}

}  // namespace distir
