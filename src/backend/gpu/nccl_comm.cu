#include "backend/gpu/cuda_check.h"
#include "backend/gpu/nccl_comm.h"

namespace distir::gpu {

struct NcclCommunicator::Impl {
  ncclComm_t comm = nullptr;
  ~Impl() {
    if (comm != nullptr) ncclCommDestroy(comm);
  }
};

namespace {

ncclDataType_t NcclType(GpuDType t) {
  switch (t) {
    case GpuDType::kF32:
      return ncclFloat32;
    case GpuDType::kF16:
      return ncclFloat16;
    case GpuDType::kBF16:
      return ncclBfloat16;
  }
  return ncclFloat32;
}

cudaStream_t S(void* stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace

NcclCommunicator::NcclCommunicator(std::unique_ptr<Impl> impl, int rank, int size)
    : impl_(std::move(impl)), rank_(rank), size_(size) {}
NcclCommunicator::~NcclCommunicator() = default;

StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::Create(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ncclUniqueId id{};
  // Only rank 0 may create the id; a failure there must still release the others
  // from MPI_Bcast, so its outcome travels with the id.
  int ok = rank != 0 || ncclGetUniqueId(&id) == ncclSuccess;
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (!ok) return Internal() << "ncclGetUniqueId failed on rank 0";
  if (MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm) != MPI_SUCCESS) {
    return Internal() << "MPI_Bcast of the NCCL unique id failed";
  }
  auto impl = std::make_unique<Impl>();
  DISTIR_NCCL_RETURN_IF_ERROR(ncclCommInitRank(&impl->comm, size, id, rank));
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(std::move(impl), rank, size));
}

Status NcclCommunicator::AllReduceSum(GpuDType t, const void* send, void* recv, int64_t count,
                                      void* stream) {
  DISTIR_NCCL_RETURN_IF_ERROR(ncclAllReduce(send, recv, static_cast<size_t>(count), NcclType(t),
                                            ncclSum, impl_->comm, S(stream)));
  return Status::Ok();
}

Status NcclCommunicator::AllGather(GpuDType t, const void* send, void* recv, int64_t send_count,
                                   void* stream) {
  DISTIR_NCCL_RETURN_IF_ERROR(ncclAllGather(send, recv, static_cast<size_t>(send_count),
                                            NcclType(t), impl_->comm, S(stream)));
  return Status::Ok();
}

Status NcclCommunicator::ReduceScatterSum(GpuDType t, const void* send, void* recv,
                                          int64_t recv_count, void* stream) {
  DISTIR_NCCL_RETURN_IF_ERROR(ncclReduceScatter(send, recv, static_cast<size_t>(recv_count),
                                                NcclType(t), ncclSum, impl_->comm, S(stream)));
  return Status::Ok();
}

Status NcclCommunicator::Send(GpuDType t, const void* buf, int64_t count, int peer, void* stream) {
  DISTIR_NCCL_RETURN_IF_ERROR(
      ncclSend(buf, static_cast<size_t>(count), NcclType(t), peer, impl_->comm, S(stream)));
  return Status::Ok();
}

Status NcclCommunicator::Recv(GpuDType t, void* buf, int64_t count, int peer, void* stream) {
  DISTIR_NCCL_RETURN_IF_ERROR(
      ncclRecv(buf, static_cast<size_t>(count), NcclType(t), peer, impl_->comm, S(stream)));
  return Status::Ok();
}

}  // namespace distir::gpu
