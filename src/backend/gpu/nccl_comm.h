// An NCCL communicator for the GPU executor, set up through MPI: rank 0 of the
// MPI communicator creates the unique id (ncclGetUniqueId), MPI_Bcast sends it
// to every rank, and each calls ncclCommInitRank; so one MPI rank per GPU, with
// the NCCL rank equal to the MPI rank.
//
// Collectives and point-to-point operations are asynchronous on the given
// stream (a cudaStream_t as void*; nullptr: the default stream) and use sum as
// the reduction, which is what the DistIR ops mean.

#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "backend/gpu/gpu_types.h"
#include "support/status_or.h"

namespace distir::gpu {

class NcclCommunicator {
 public:
  /// Collective over `comm`: every rank must call it. REQUIRES: each rank has
  /// selected its GPU (cudaSetDevice) first.
  static StatusOr<std::unique_ptr<NcclCommunicator>> Create(MPI_Comm comm);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  /// recv = sum over ranks of send (count elements each; recv may be send).
  Status AllReduceSum(GpuDType t, const void* send, void* recv, int64_t count, void* stream);
  /// recv (size() * send_count elements) = every rank's send, in rank order.
  Status AllGather(GpuDType t, const void* send, void* recv, int64_t send_count, void* stream);
  /// recv (recv_count elements) = this rank's block of the sum of every send
  /// (size() * recv_count elements each).
  Status ReduceScatterSum(GpuDType t, const void* send, void* recv, int64_t recv_count,
                          void* stream);
  /// Point-to-point; a matching Recv must be posted by `peer`.
  Status Send(GpuDType t, const void* buf, int64_t count, int peer, void* stream);
  Status Recv(GpuDType t, void* buf, int64_t count, int peer, void* stream);

 private:
  struct Impl;
  NcclCommunicator(std::unique_ptr<Impl> impl, int rank, int size);
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, size_ = 1;
};

}  // namespace distir::gpu
