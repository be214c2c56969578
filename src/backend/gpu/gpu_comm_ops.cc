// Communication planners of the GPU executor (see gpu_ops.h): SendTo and
// RecvFrom on the point-to-point NCCL communicator, each Collective on its
// group's communicator, all on the executor's stream.
//
// Data movement without reduction (Send/Recv, AllGather) goes through NCCL as
// raw words, so any dtype with an even byte count moves; reductions (sum) need
// f32, f16 or bf16. Rooted kinds (Broadcast, Reduce, Scatter, MPIGather) and
// gathers or scatters along an inner axis have no NCCL path yet.

#include <algorithm>
#include <optional>

#include "backend/gpu/gpu_ops.h"

namespace distir::gpu {
namespace {

using backend::TensorView;
using Views = std::span<const TensorView>;

using Unsupported = internal::UnsupportedOp;

// A byte count as NCCL words: f32 words when it divides by 4, else 16-bit ones.
struct Words {
  GpuDType type;
  int64_t count;
};
std::optional<Words> AsWords(int64_t bytes) {
  if (bytes % 4 == 0) return Words{GpuDType::kF32, bytes / 4};
  if (bytes % 2 == 0) return Words{GpuDType::kF16, bytes / 2};
  return std::nullopt;
}

std::optional<GpuDType> ReduceType(DType d) {
  if (d == DType::kF32) return GpuDType::kF32;
  if (d == DType::kF16) return GpuDType::kF16;
  if (d == DType::kBF16) return GpuDType::kBF16;
  return std::nullopt;
}

// True when every extent before `axis` is 1, so chunks along it are contiguous.
bool OuterIsOne(const TensorView& v, int64_t axis) {
  for (int64_t i = 0; i < axis; ++i) {
    if (v.shape[static_cast<size_t>(i)] != 1) return false;
  }
  return true;
}

StatusOr<GpuKernel> PlanPointToPoint(const Op& op, Views in, Views out, const GpuComms* comms,
                                     void* stream) {
  const bool send = op.kind() == OpKind::kSendTo;
  const TensorView v = send ? in[0] : out[0];
  const std::optional<Words> w = AsWords(v.bytes());
  if (!w) return Unsupported(op) << "a message of an odd number of bytes (" << v.bytes() << ")";
  if (comms == nullptr) return GpuKernel();
  const DeviceId peer_device = op.FindAttr("device")->AsDevice();
  const std::optional<int> peer = comms->ranks.RankOf(peer_device);
  if (!peer || comms->p2p == nullptr) {
    return InvalidArgument(op.loc()) << op.Name() << " peer " << peer_device.ToString() << " runs no program";
  }
  NcclCommunicator* c = comms->p2p;
  const int p = *peer;
  const Words words = *w;
  // One stream per rank keeps each pair's messages in program order, as the
  // lowering's deadlock check assumes.
  if (send) return GpuKernel([=] { return c->Send(words.type, v.data, words.count, p, stream); });
  return GpuKernel([=] { return c->Recv(words.type, v.data, words.count, p, stream); });
}

StatusOr<GpuKernel> PlanCollective(const Op& op, DeviceId self, Views in, Views out,
                                   const GpuComms* comms, void* stream) {
  const std::vector<DeviceId>& group = op.FindAttr("group")->AsDevices();
  if (std::find(group.begin(), group.end(), self) == group.end()) {
    return InvalidArgument(op.loc()) << "Collective's group does not contain " << self.ToString();
  }
  const std::string& kind = op.FindAttr("kind")->AsString();
  if (kind != "AllReduce" && kind != "AllGather" && kind != "ReduceScatter") {
    return Unimplemented(op.loc()) << "the CUDA backend cannot run collective " << kind;
  }
  if (in.empty()) return Unsupported(op) << kind << " without an input";
  const TensorView x = in[0], y = out[0];
  const int64_t axis = kind == "AllReduce" ? 0 : op.GetInt("axis", 0) < 0 ? op.GetInt("axis", 0) + x.rank()
                                                                        : op.GetInt("axis", 0);
  if (!OuterIsOne(kind == "AllGather" ? x : y, axis)) {
    return Unsupported(op) << kind << " along inner axis " << axis;
  }
  const std::optional<GpuDType> rt = ReduceType(x.dtype);
  const std::optional<Words> words = AsWords(x.bytes());
  if (kind != "AllGather" && !rt) return Unsupported(op) << kind << " of " << DTypeName(x.dtype);
  if (kind == "AllGather" && !words) return Unsupported(op) << "AllGather of an odd number of bytes";
  if (comms == nullptr) return GpuKernel();
  auto it = comms->groups.find(group);
  if (it == comms->groups.end()) return InvalidArgument(op.loc()) << "no communicator for the Collective's group";
  NcclCommunicator* c = it->second;
  if (kind == "AllReduce") {
    const GpuDType t = *rt;
    return GpuKernel([=] { return c->AllReduceSum(t, x.data, y.data, x.num_elements(), stream); });
  }
  if (kind == "AllGather") {
    const Words w = *words;
    return GpuKernel([=] { return c->AllGather(w.type, x.data, y.data, w.count, stream); });
  }
  const GpuDType t = *rt;
  return GpuKernel([=] { return c->ReduceScatterSum(t, x.data, y.data, y.num_elements(), stream); });
}

}  // namespace

StatusOr<GpuKernel> PlanGpuCommOp(const Op& op, DeviceId self, Views in, Views out,
                                  const GpuComms* comms, void* stream) {
  if (op.kind() == OpKind::kCollective) return PlanCollective(op, self, in, out, comms, stream);
  return PlanPointToPoint(op, in, out, comms, stream);
}

}  // namespace distir::gpu
