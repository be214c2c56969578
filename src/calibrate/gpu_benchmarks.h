// Microbenchmarks of the CUDA executor's kernels (backend/gpu/), the GPU
// counterpart of compute_benchmarks.h and comm_benchmarks.h: cuBLAS MatMul
// (cublas_gemm.h) over a sweep of shapes in f32, f16 and bf16 and in the three
// operand layouts the executor calls, the executor's elementwise Add and Gelu
// kernels (gpu_kernels.h) from one element (the launch overhead) to 2^26 (the
// HBM bandwidth), and NCCL Send, AllReduce and AllGather (nccl_comm.h) over
// message sizes and rank counts. The results are Measurements in the CPU
// benchmarks' form, so profile_fit.h fits them unchanged.
//
// Built only with CUDA (DISTIR_HAVE_CUDA, library distir_calibrate_gpu). A time
// is measured with CUDA events around a batch of calls enqueued back to back
// on one stream, as the executor enqueues a program's ops: a kernel shorter
// than its launch costs the launch rate, as in a run. Samples last at least
// min_sample_s and the median sample is kept (timer.h has the reasons).

#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "backend/gpu/gpu_types.h"
#include "calibrate/compute_benchmarks.h"
#include "calibrate/measurement.h"
#include "calibrate/timer.h"
#include "support/status_or.h"

namespace distir::calibrate {

struct GpuSweep {
  std::vector<MatMulShape> matmul_shapes;    ///< each timed in every one of matmul_dtypes
  std::vector<gpu::GpuDType> matmul_dtypes;  ///< f32, f16, bf16
  std::vector<int64_t> elementwise_sizes;    ///< elements of Add and Gelu (f32)
  TimingOptions timing;                      ///< of the compute benchmarks
  std::vector<int64_t> message_bytes;        ///< NCCL S values, multiples of 4
  std::vector<int> rank_counts;              ///< empty: 2, 4, 8, ... and the world size
  int comm_trials = 9;
  double comm_trial_s = 0.01;  ///< calls per trial ~ this / the size's expected time
};

/// The sweep `distir calibrate --backend cuda` runs: MatMul over every (m, n, k)
/// in {256, 1024, 4096}^3 in the layouts A B, A B^T and A^T B, plus skinny
/// shapes (a dimension of 16 or 64 against 4096-8192) and 8192^3, each in f32,
/// f16 and bf16; Add and Gelu over 1, 4, 16, ..., 4^13 = 2^26 elements; NCCL
/// over 8 KiB ... 256 MiB in steps of 4x. Samples of at least 5 ms.
GpuSweep DefaultGpuSweep();

/// A few shapes and sizes for tests and a first look (about a second on a GPU):
/// MatMul from 64^3 (launch-bound) to 4096^3 (near the peak), Add and Gelu up
/// to 2^24 elements.
GpuSweep QuickGpuSweep();

/// Makes GPU (local rank on this node) % DeviceCount() the calling thread's
/// current device, as the GPU executor does; the local rank is the rank in
/// `comm`'s shared-memory split. Collective over `comm`.
/// Errors: FailedPrecondition when no CUDA device is visible, Internal for a
/// failing CUDA or MPI call.
Status SelectRankGpu(MPI_Comm comm);

/// Runs the compute part of `sweep` on the current device: MatMul in every
/// dtype of matmul_dtypes, then Add and Gelu in f32. One Measurement per (op,
/// dtype, size), counted as docs/cost_model.md does (MatMul 2mnk FLOPs and
/// (|A| + |B| + |C|) * width bytes; Add 1 FLOP and 12 bytes per element; Gelu 5
/// FLOPs and 8 bytes per element), with the median seconds per call.
/// Errors: Internal for a failing CUDA or cuBLAS call (including running out of
/// device memory for the largest shape).
StatusOr<std::vector<Measurement>> RunGpuComputeBenchmarks(const GpuSweep& sweep);

/// NCCL Send (ping-pong between two ranks, half the round trip), AllReduce (f32
/// sum) and AllGather over message_bytes on the first k ranks of `comm` for
/// every k of rank_counts, S in nccl-tests' convention (comm_benchmarks.h). A
/// time is the slowest rank's per call, the median over comm_trials trials.
/// Collective over `comm`; every rank must have selected its GPU
/// (SelectRankGpu) and pass the same sweep. Returns the measurements on rank 0,
/// an empty vector elsewhere and on a communicator of one rank.
/// Errors: InvalidArgument for a rank count outside 2..size(comm); Internal for
/// a failing CUDA, NCCL or MPI call (a failure inside NCCL's set-up on one
/// rank can leave the others waiting, as in the GPU executor).
StatusOr<std::vector<Measurement>> RunNcclCommBenchmarks(MPI_Comm comm, const GpuSweep& sweep);

}  // namespace distir::calibrate
