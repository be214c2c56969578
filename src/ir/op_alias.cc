// The aliasing table of op_alias.h.

#include "ir/op_alias.h"

#include <algorithm>
#include <string>

namespace distir {

bool IsTokenResult(const Op& op, DeviceId self) {
  if (op.kind() == OpKind::kSendTo) return true;
  if (op.kind() != OpKind::kCollective || op.num_inputs() == 0) return false;
  const Attribute* kind = op.FindAttr("kind");
  if (kind == nullptr) return false;
  const std::string& k = kind->AsString();
  if (k == "Reduce" || k == "MPIGather") {
    const Attribute* root = op.FindAttr("device");
    return root != nullptr && root->AsDevice() != self;
  }
  if (k == "Broadcast" || k == "Scatter") {
    const Attribute* to = op.FindAttr("devices");
    if (to == nullptr) return false;
    const std::vector<DeviceId>& d = to->AsDevices();
    return std::find(d.begin(), d.end(), self) == d.end();
  }
  return false;
}

int AliasedInput(const Op& op, int result) {
  switch (op.kind()) {
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kIdentity:
    case OpKind::kSGD:
      return 0;
    case OpKind::kAdam:
      return result == 0 ? 0 : result + 1;  // w', m', v' share w, m, v
    case OpKind::kSendTo:
    case OpKind::kCollective:
      // A per-rank op runs on the device of its data: its input's.
      if (op.num_inputs() == 0) return -1;
      return IsTokenResult(op, op.input(0)->type().device()) ? 0 : -1;
    default:
      return -1;
  }
}

}  // namespace distir
