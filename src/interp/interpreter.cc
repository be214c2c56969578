#include "interp/interpreter.h"

#include <span>
#include <string>

namespace distir::interp_internal {
namespace {

// Extents fit when equal or when either side is not known statically: the
// callee is then interpreted on the more precise argument.
bool ShapesFit(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != kDynamicDim && b[i] != kDynamicDim) return false;
  }
  return true;
}

bool TypesFit(const Type& arg, const Type& param) {
  if (arg.kind() != param.kind()) return false;
  switch (arg.kind()) {
    case TypeKind::kUnknown:
      return true;
    case TypeKind::kScalar:
      return arg.dtype() == param.dtype() && arg.device() == param.device();
    case TypeKind::kTensor:
      return arg.dtype() == param.dtype() && arg.device() == param.device() &&
             ShapesFit(arg.shape(), param.shape());
    case TypeKind::kTuple: {
      const std::vector<Type>& a = arg.elements();
      const std::vector<Type>& p = param.elements();
      if (a.size() != p.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!TypesFit(a[i], p[i])) return false;
      }
      return true;
    }
  }
  return false;
}

bool MentionsDevice(const Type& t) {
  if (!t.is_tuple()) return t.device().has_value();
  for (const Type& e : t.elements()) {
    if (MentionsDevice(e)) return true;
  }
  return false;
}

}  // namespace

bool IsDeviceGeneric(const Function& fn) {
  for (const std::unique_ptr<Value>& p : fn.params()) {
    if (MentionsDevice(p->type())) return false;
  }
  return true;
}

Status CheckCallArity(const Op& op, const Function& callee) {
  if (op.num_inputs() != callee.num_params()) {
    return InvalidArgument(op.loc())
           << "call of @" << callee.name() << " passes " << op.num_inputs()
           << " arguments, but it takes " << callee.num_params();
  }
  if (op.num_results() != static_cast<int>(callee.returns().size())) {
    return InvalidArgument(op.loc())
           << "call of @" << callee.name() << " has " << op.num_results()
           << " results, but it returns " << callee.returns().size() << " values";
  }
  return Status::Ok();
}

Status CheckCallArgument(const Op& op, int index, const Type& arg, const Value& param) {
  if (TypesFit(arg, param.type())) return Status::Ok();
  return InvalidArgument(op.loc())
         << "argument " << index << " of call " << op.Name() << " does not fit parameter "
         << param.Ref() << ": expected " << param.type().ToString() << ", got " << arg.ToString();
}

Status MixedCallDevices(const Op& op, DeviceId a, DeviceId b) {
  return InvalidArgument(op.loc()) << "arguments of call " << op.Name()
                                   << " of a device-generic function must share one device, "
                                      "got "
                                   << a << " and " << b;
}

std::string CallNote(const Op& op) {
  std::string note = "in call of " + op.Name();
  if (!op.loc().empty()) note += " at " + op.loc().ToString();
  return note;
}

Status AddCallNotes(Status status, const std::vector<const Op*>& calls) {
  const size_t n = calls.size();
  constexpr size_t kHalf = kMaxCallNotes / 2;
  for (size_t i = 0; i < n; ++i) {
    // A deep chain would print one line per level: keep both ends, where the
    // error and the user's entry point are.
    if (n > static_cast<size_t>(kMaxCallNotes) && i == kHalf) {
      status.AddNote("... " + std::to_string(n - 2 * kHalf) + " more calls ...");
      i = n - kHalf - 1;
      continue;
    }
    status.AddNote(CallNote(*calls[i]));
  }
  return status;
}

}  // namespace distir::interp_internal
