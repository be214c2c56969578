// The abstract interpreter (paper Algorithm 1), generic over the domain.
//
// Interpret() walks a function's ops once, in program order, and keeps the
// value of every SSA value in a side table (std::vector<V> indexed by
// Value::id()); nothing is stored in the IR. Each primitive op is handed to the
// domain (domain.h), which picks the most precise matching rule. A call pushes
// a frame for the callee on an explicit stack and the walk continues there, so
// call depth costs heap, never native stack: a chain of 100,000 nested calls
// runs like a flat program. A device-generic callee (Function::IsDeviceGeneric)
// runs without devices: its arguments enter with the device stripped and its
// results leave with the device the call's arguments share. An optional
// CallMemo reuses the results of a callee already interpreted on the same
// abstract arguments, which makes type inference of a module linear in its
// size rather than in the sum of its call depths.
//
// infer_types.h builds type inference on top of this; the simulator and the
// reference executor reuse it with their own domains.

#pragma once

#include <span>
#include <unordered_map>
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

/// Adds to `status` one CallNote per op of `calls` (the calls being
/// interpreted, innermost first). Past kMaxCallNotes calls it keeps the
/// innermost and outermost halves and says how many it left out between them.
Status AddCallNotes(Status status, const std::vector<const Op*>& calls);
inline constexpr int kMaxCallNotes = 20;

/// Function::IsDeviceGeneric() without allocating (it runs once per call op).
bool IsDeviceGeneric(const Function& fn);

/// One function being interpreted: the root function, or a callee entered by
/// the op at `next` of the frame below it.
template <typename V>
struct Frame {
  const Function* fn = nullptr;
  std::vector<V> values;  ///< by Value::id() of `fn`
  size_t next = 0;        ///< the op of `fn` being run (a call: waiting for its callee)
  bool generic = false;   ///< `fn` is device-generic: results go back to `device`
  DeviceId device;
  bool memoize = false;        ///< store the results in the CallMemo on return
  std::vector<Type> memo_key;  ///< the argument types, when `memoize`
};

}  // namespace interp_internal

/// Results of calls whose arguments are all abstract, by callee and argument
/// types. Interpreting a callee is a pure function of the callee and its
/// arguments, so a hit is what interpreting it again would give; errors are
/// never stored. Keeps at most kMaxPerCallee argument lists per callee. Valid
/// while the module's functions are unchanged; not thread-safe.
template <typename V>
class CallMemo {
 public:
  static constexpr size_t kMaxPerCallee = 8;

  /// The returned values of `callee` on arguments of `arg_types`, or nullptr.
  const std::vector<V>* Find(const Function& callee, const std::vector<Type>& arg_types) const {
    auto it = entries_.find(&callee);
    if (it == entries_.end()) return nullptr;
    for (const Entry& e : it->second) {
      if (e.arg_types == arg_types) return &e.results;
    }
    return nullptr;
  }

  /// Records `results` for `callee` on `arg_types` (dropped when full).
  void Insert(const Function& callee, std::vector<Type> arg_types, std::vector<V> results) {
    std::vector<Entry>& list = entries_[&callee];
    if (list.size() < kMaxPerCallee) list.push_back({std::move(arg_types), std::move(results)});
  }

 private:
  struct Entry {
    std::vector<Type> arg_types;
    std::vector<V> results;
  };
  std::unordered_map<const Function*, std::vector<Entry>> entries_;
};

/// A per-op hook that does nothing (the default of Interpreter::Run).
struct NoOpHook {
  template <typename V>
  Status operator()(const Op& /*op*/, std::vector<V>& /*values*/) const {
    return Status::Ok();
  }
};

/// Runs functions of one module over one domain.
/// The module, the domain and the memo (if any) must outlive the interpreter;
/// the module and the domain are not modified.
template <typename V>
class Interpreter {
 public:
  /// With a `memo`, calls whose arguments are all abstract are looked up there
  /// first and stored there after they ran.
  Interpreter(const Module& module, const Domain<V>& domain, CallMemo<V>* memo = nullptr)
      : module_(module), domain_(domain), memo_(memo) {}

  /// Interprets `fn` on `args` (one per parameter). On return `values` has
  /// fn.num_values() entries: the value of each Value by id. After each op of
  /// `fn` (not of its callees) `on_op(op, values)` is called; it may refine the
  /// op's results in `values` or fail with a Status, which stops the run.
  /// On error, the values of the ops before the failing one are set and the
  /// others are default-constructed (for types: unknown). An error inside a
  /// callee carries one note per call level (AddCallNotes).
  /// Uses O(1) native stack whatever the call depth.
  template <typename OnOp = NoOpHook>
  Status Run(const Function& fn, std::span<const V> args, std::vector<V>& values,
             OnOp&& on_op = {}) const;

 private:
  using Frame = interp_internal::Frame<V>;

  template <typename OnOp>
  Status RunFrames(std::vector<Frame>& stack, OnOp& on_op) const;
  StatusOr<bool> EnterCall(const Op& op, ArgList<V> args, std::vector<Frame>& stack) const;
  void ReturnFromCall(std::vector<Frame>& stack) const;
  static void BindResults(const Op& call, const std::vector<V>& returned, bool generic,
                          DeviceId device, std::vector<V>& values);
  static Status WithCallNotes(Status status, const std::vector<Frame>& stack);

  const Module& module_;
  const Domain<V>& domain_;
  CallMemo<V>* memo_;
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
  std::vector<Frame> stack(1);
  Frame& root = stack.front();
  root.fn = &fn;
  root.values.swap(values);  // reuse the caller's allocation
  root.values.clear();
  root.values.resize(fn.num_values());
  for (int i = 0; i < fn.num_params(); ++i) root.values[fn.param(i)->id()] = args[i];
  Status status = RunFrames(stack, on_op);
  values = std::move(stack.front().values);
  return status;
}

// The loop over the top frame's ops. A call either pushes its callee's frame
// (the loop continues there and comes back when it is done) or is answered by
// the memo. Only ops of the root function reach `on_op`.
template <typename V>
template <typename OnOp>
Status Interpreter<V>::RunFrames(std::vector<Frame>& stack, OnOp& on_op) const {
  std::vector<const V*> arg_ptrs;  // reused for every op: no per-op allocation
  arg_ptrs.reserve(8);
  while (true) {
    Frame& top = stack.back();
    const std::vector<std::unique_ptr<Op>>& ops = top.fn->ops();
    if (top.next == ops.size()) {
      if (stack.size() == 1) return Status::Ok();
      ReturnFromCall(stack);
    } else {
      PrefetchOps(ops, top.next);
      const Op& op = *ops[top.next];
      arg_ptrs.clear();
      for (const Value* in : op.inputs()) arg_ptrs.push_back(&top.values[in->id()]);
      ArgList<V> op_args(arg_ptrs.data(), static_cast<int>(arg_ptrs.size()));
      if (op.is_call()) {
        StatusOr<bool> entered = EnterCall(op, op_args, stack);  // may move `top`
        if (!entered.ok()) return WithCallNotes(std::move(entered).status(), stack);
        if (*entered) continue;
      } else {
        StatusOr<std::vector<V>> results = domain_.Apply(op, op_args);
        if (!results.ok()) return WithCallNotes(std::move(results).status(), stack);
        const std::vector<std::unique_ptr<Value>>& defined = op.results();
        for (size_t r = 0; r < defined.size(); ++r) {
          top.values[defined[r]->id()] = std::move((*results)[r]);
        }
      }
    }
    // The op at `next` of the (new) top frame is done.
    Frame& done = stack.back();
    const Op& finished = *done.fn->ops()[done.next++];
    if (stack.size() == 1) DISTIR_RETURN_IF_ERROR(on_op(finished, done.values));
  }
}

// Checks call `op` and either pushes its callee's frame (true) or, on a memo
// hit, stores the results in the top frame (false).
template <typename V>
StatusOr<bool> Interpreter<V>::EnterCall(const Op& op, ArgList<V> args,
                                         std::vector<Frame>& stack) const {
  const Function* callee = module_.Lookup(op.callee());
  if (callee == nullptr) {
    return NotFound(op.loc()) << "call of undefined function @" << op.callee();
  }
  DISTIR_RETURN_IF_ERROR(interp_internal::CheckCallArity(op, *callee));
  Frame frame;
  frame.fn = callee;
  frame.generic = interp_internal::IsDeviceGeneric(*callee);
  frame.values.resize(callee->num_values());
  bool abstract = memo_ != nullptr;
  for (int i = 0; i < args.size(); ++i) {
    const Type& type = ValueTraits<V>::TypeOf(args[i]);
    abstract = abstract && !ValueTraits<V>::IsConcrete(args[i]);
    V& param = frame.values[callee->param(i)->id()];
    if (!frame.generic) {
      DISTIR_RETURN_IF_ERROR(interp_internal::CheckCallArgument(op, i, type, *callee->param(i)));
      param = args[i];
      continue;
    }
    DeviceId d = type.device();
    if (frame.device.has_value() && d != frame.device) {
      return interp_internal::MixedCallDevices(op, frame.device, d);
    }
    if (!frame.device.has_value()) frame.device = d;
    DISTIR_RETURN_IF_ERROR(
        interp_internal::CheckCallArgument(op, i, type.WithDevice(DeviceId()), *callee->param(i)));
    param = ValueTraits<V>::WithDevice(args[i], DeviceId());
  }
  if (abstract) {
    for (const auto& p : callee->params()) {
      frame.memo_key.push_back(ValueTraits<V>::TypeOf(frame.values[p->id()]));
    }
    if (const std::vector<V>* hit = memo_->Find(*callee, frame.memo_key)) {
      BindResults(op, *hit, frame.generic, frame.device, stack.back().values);
      return false;
    }
    frame.memoize = true;
  }
  stack.push_back(std::move(frame));
  return true;
}

// Pops the finished top frame and binds its returns to the results of the
// call waiting in the frame below (whose `next` still points at the call).
template <typename V>
void Interpreter<V>::ReturnFromCall(std::vector<Frame>& stack) const {
  Frame done = std::move(stack.back());
  stack.pop_back();
  Frame& caller = stack.back();
  const Op& call = *caller.fn->ops()[caller.next];
  std::vector<V> returned;
  returned.reserve(done.fn->returns().size());
  for (const Value* r : done.fn->returns()) returned.push_back(done.values[r->id()]);
  BindResults(call, returned, done.generic, done.device, caller.values);
  if (done.memoize) memo_->Insert(*done.fn, std::move(done.memo_key), std::move(returned));
}

// Copied, not moved: a callee may return one value twice.
template <typename V>
void Interpreter<V>::BindResults(const Op& call, const std::vector<V>& returned, bool generic,
                                 DeviceId device, std::vector<V>& values) {
  for (int r = 0; r < call.num_results(); ++r) {
    const V& out = returned[r];
    values[call.result(r)->id()] = generic ? ValueTraits<V>::WithDevice(out, device) : out;
  }
}

template <typename V>
Status Interpreter<V>::WithCallNotes(Status status, const std::vector<Frame>& stack) {
  if (stack.size() == 1) return status;
  std::vector<const Op*> calls;
  calls.reserve(stack.size() - 1);
  for (size_t i = stack.size() - 1; i-- > 0;) {
    calls.push_back(stack[i].fn->ops()[stack[i].next].get());
  }
  return interp_internal::AddCallNotes(std::move(status), calls);
}

}  // namespace distir
