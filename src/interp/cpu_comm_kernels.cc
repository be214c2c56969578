// CPU kernels of the communication ops in the paper's global form: the
// executor sees every participant at once, so a collective is a plain function
// from the per-device inputs (in order) to the per-device outputs. Reductions
// sum in input order, in double, and round once to the dtype. Output devices
// are those the shape rules give (comm_shape_rules.cc).

#include "interp/concrete_kernels.h"
#include "interp/cpu_kernels.h"

namespace distir::cpu {
namespace {

// Elementwise sum of all inputs, in input order. The shape rules made the
// shapes equal.
DenseTensor SumAll(Args in) {
  DenseTensor sum = in[0].tensor();
  for (int i = 1; i < in.size(); ++i) {
    const std::vector<double>& v = in[i].tensor().values;
    for (size_t e = 0; e < v.size(); ++e) sum.values[e] += v[e];
  }
  return sum;
}

DenseTensor ConcatAll(Args in, int64_t axis) {
  std::vector<const DenseTensor*> tensors;
  for (int i = 0; i < in.size(); ++i) tensors.push_back(&in[i].tensor());
  return concrete::Concat(tensors, axis);
}

// Chunk `index` of `parts` equal chunks of `t` along `axis`.
DenseTensor Chunk(const DenseTensor& t, int64_t axis, int64_t parts, int64_t index) {
  std::vector<shape::SliceDim> dims;
  for (int64_t extent : t.shape) dims.push_back({0, 1, extent});
  const int64_t size = t.shape[axis] / parts;
  dims[axis] = {index * size, 1, size};
  return concrete::Slice(t, dims);
}

// One rounded copy of `t` per result type (the contents are shared).
Values Replicate(const std::vector<Type>& types, DenseTensor t) {
  const HostValue first = MakeResult(types[0], std::move(t));
  Values out;
  for (const Type& type : types) out.push_back(first.WithDevice(type.device()));
  return out;
}

StatusOr<int64_t> Axis(const Op& op, const std::string& name, const Type& x) {
  return shape::NormalizeAxis(op, op.GetInt(name, 0), x.rank());
}

// A collective that names participants it does not hold (a part of a
// program, docs/ir.md) is for the simulator: the others' pieces are not here.
Status HoldsEveryParticipant(const Op& op, Args in) {
  const Attribute* all = op.FindAttr("participants");
  if (all == nullptr || all->AsDevices().size() == static_cast<size_t>(in.size()))
    return Status::Ok();
  return Unimplemented(op.loc()) << OpKindName(op.kind()) << " holds " << in.size() << " of its "
                                 << all->AsDevices().size()
                                 << " participants (a part of a program): it cannot be executed";
}

Result SendKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  return One(in[0].WithDevice(types[0].device()));
}

Result AllReduceKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(HoldsEveryParticipant(op, in));
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  return Replicate(types, SumAll(in));
}

Result AllGatherKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(HoldsEveryParticipant(op, in));
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, Axis(op, "axis", in[0].type()));
  return Replicate(types, ConcatAll(in, axis));
}

Result ReduceScatterKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(HoldsEveryParticipant(op, in));
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, Axis(op, "axis", in[0].type()));
  const DenseTensor sum = SumAll(in);
  Values out;
  for (int i = 0; i < in.size(); ++i) {
    out.push_back(MakeResult(types[i], Chunk(sum, axis, in.size(), i)));
  }
  return out;
}

// Output j is the concatenation along concat_axis of chunk j (along
// split_axis) of every input, in input order.
Result AllToAllKernel(const Op& op, Args in) {
  DISTIR_RETURN_IF_ERROR(HoldsEveryParticipant(op, in));
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t split, Axis(op, "split_axis", in[0].type()));
  DISTIR_ASSIGN_OR_RETURN(int64_t concat, Axis(op, "concat_axis", in[0].type()));
  const int64_t n = in.size();
  Values out;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<DenseTensor> chunks;
    for (int i = 0; i < n; ++i) chunks.push_back(Chunk(in[i].tensor(), split, n, j));
    std::vector<const DenseTensor*> ptrs;
    for (const DenseTensor& c : chunks) ptrs.push_back(&c);
    out.push_back(MakeResult(types[j], concrete::Concat(ptrs, concat)));
  }
  return out;
}

Result BroadcastKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  Values out;
  for (const Type& t : types) out.push_back(in[0].WithDevice(t.device()));
  return out;
}

// Chunk i of the input along `axis` goes to devices[i].
Result ScatterKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, Axis(op, "axis", in[0].type()));
  const int64_t n = static_cast<int64_t>(types.size());
  Values out;
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(MakeResult(types[i], Chunk(in[0].tensor(), axis, n, i)));
  }
  return out;
}

Result MPIGatherKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  DISTIR_ASSIGN_OR_RETURN(int64_t axis, Axis(op, "axis", in[0].type()));
  return One(MakeResult(types[0], ConcatAll(in, axis)));
}

Result ReduceToRootKernel(const Op& op, Args in) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<Type> types, ResultTypes(op, in));
  return One(MakeResult(types[0], SumAll(in)));
}

// SendTo, RecvFrom and Collective are one rank's half of a transfer: they only
// make sense with one process per rank, and the executor runs global programs.
Result PerRankKernel(const Op& op, Args) {
  return Unimplemented(op.loc()) << OpKindName(op.kind())
                                 << " is per-rank communication; the reference executor runs "
                                    "global programs (execute the program before lowering)";
}

}  // namespace

void RegisterCommKernels(CpuDomain& domain) {
  domain.Register(OpKind::kSend, SendKernel);
  domain.Register(OpKind::kAllReduce, AllReduceKernel);
  domain.Register(OpKind::kAllGather, AllGatherKernel);
  domain.Register(OpKind::kReduceScatter, ReduceScatterKernel);
  domain.Register(OpKind::kAllToAll, AllToAllKernel);
  domain.Register(OpKind::kBroadcast, BroadcastKernel);
  domain.Register(OpKind::kScatter, ScatterKernel);
  domain.Register(OpKind::kMPIGather, MPIGatherKernel);
  domain.Register(OpKind::kReduce, ReduceToRootKernel);
  domain.Register(OpKind::kSendTo, PerRankKernel);
  domain.Register(OpKind::kRecvFrom, PerRankKernel);
  domain.Register(OpKind::kCollective, PerRankKernel);
}

}  // namespace distir::cpu
