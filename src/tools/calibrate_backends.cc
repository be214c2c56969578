#include "tools/calibrate_backends.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "calibrate/comm_benchmarks.h"
#include "calibrate/compute_benchmarks.h"
#include "calibrate/executor_benchmarks.h"
#include "support/host_info.h"

#ifdef DISTIR_HAVE_CUDA
#include "backend/gpu/device_buffer.h"
#include "backend/gpu/gpu_info.h"
#include "calibrate/gpu_benchmarks.h"
#endif

namespace distir::tools {
namespace {

using calibrate::Measurement;

// Physical memory shared by the `ranks` ranks of this node.
int64_t MemoryPerRank(int ranks) {
  const int64_t bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return bytes / std::max(ranks, 1);
}

StatusOr<std::vector<Measurement>> MeasureCpu(bool quick, int rank, int world) {
  if (rank == 0) std::cerr << "calibrate: timing host kernels on " << world << " rank(s)...\n";
  std::vector<Measurement> ms = calibrate::RunHostComputeBenchmarks(
      quick ? calibrate::QuickComputeSweep() : calibrate::DefaultComputeSweep());
  // The per-op overhead and bandwidth come from Adds run by the executor itself;
  // the bare kernel's Adds stay in the CSV only, as "AddKernel".
  DISTIR_ASSIGN_OR_RETURN(
      std::vector<Measurement> through_executor,
      calibrate::RunExecutorElementwiseBenchmarks(quick ? calibrate::QuickExecutorSweep()
                                                        : calibrate::DefaultExecutorSweep()));
  for (Measurement& m : ms) {
    if (m.op == "Add") m.op = "AddKernel";
  }
  ms.insert(ms.end(), through_executor.begin(), through_executor.end());
  if (rank == 0 && world > 1) std::cerr << "calibrate: timing MPI Send/AllReduce/AllGather...\n";
  DISTIR_ASSIGN_OR_RETURN(
      std::vector<Measurement> comm,
      calibrate::RunMpiCommBenchmarks(
          MPI_COMM_WORLD, quick ? calibrate::QuickCommSweep() : calibrate::DefaultCommSweep()));
  ms.insert(ms.end(), comm.begin(), comm.end());
  return ms;
}

#ifdef DISTIR_HAVE_CUDA
// The lowest rank of MPI_COMM_WORLD without a visible CUDA device, or -1.
int FirstRankWithoutGpu() {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int mine = gpu::DeviceCount() == 0 ? rank : world, first = world;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return first < world ? first : -1;
}

// Every rank benchmarks its own GPU at once, as the executor's ranks compute at
// once (GPUs sharing a node's power and PCIe switches are measured sharing them).
StatusOr<std::vector<Measurement>> MeasureCuda(bool quick, int rank, int world) {
  const calibrate::GpuSweep sweep =
      quick ? calibrate::QuickGpuSweep() : calibrate::DefaultGpuSweep();
  if (rank == 0)
    std::cerr << "calibrate: timing cuBLAS and CUDA kernels on " << world << " GPU(s)...\n";
  Status selected = calibrate::SelectRankGpu(MPI_COMM_WORLD);
  StatusOr<std::vector<Measurement>> ms =
      selected.ok() ? calibrate::RunGpuComputeBenchmarks(sweep)
                    : StatusOr<std::vector<Measurement>>(std::move(selected));
  // The communication benchmarks are collective: every rank must know whether
  // another rank's compute benchmarks failed before it starts them.
  int failed = ms.ok() ? 0 : 1, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!ms.ok()) return ms.status();
  if (any != 0) return Internal() << "the GPU compute benchmarks failed on another rank";
  if (rank == 0 && world > 1) std::cerr << "calibrate: timing NCCL Send/AllReduce/AllGather...\n";
  DISTIR_ASSIGN_OR_RETURN(std::vector<Measurement> comm,
                          calibrate::RunNcclCommBenchmarks(MPI_COMM_WORLD, sweep));
  ms->insert(ms->end(), comm.begin(), comm.end());
  return ms;
}
#endif

}  // namespace

Status CheckBackendAvailable(const std::string& backend) {
  if (backend != "cuda") return Status::Ok();
#ifdef DISTIR_HAVE_CUDA
  if (const int rank = FirstRankWithoutGpu(); rank >= 0) {
    return FailedPrecondition() << "calibrate --backend cuda: no CUDA device is visible on rank "
                                << rank;
  }
  return Status::Ok();
#else
  return FailedPrecondition() << "calibrate --backend cuda: this distir was built without CUDA "
                                 "(nvcc not found at configure time, or DISTIR_ENABLE_CUDA=OFF)";
#endif
}

CalibratedDevice DescribeCalibratedDevice(const std::string& backend, int world) {
#ifdef DISTIR_HAVE_CUDA
  if (backend == "cuda") {
    CalibratedDevice d{"CUDA GPU", 0, "NVLink/PCIe (NCCL)"};
    StatusOr<gpu::GpuInfo> info = gpu::QueryGpus();
    if (info.ok() && !info->devices.empty()) {
      d.name = info->devices.front().name;
      d.memory_bytes = info->devices.front().memory_bytes;
    }
    return d;
  }
#endif
  (void)backend;
  const std::string cpu = CurrentHost().cpu_model;
  return {cpu.empty() ? "host CPU" : cpu, MemoryPerRank(world), "shared-memory (MPI)"};
}

StatusOr<std::vector<Measurement>> MeasureBackend(const std::string& backend, bool quick, int rank,
                                                  int world) {
#ifdef DISTIR_HAVE_CUDA
  if (backend == "cuda") return MeasureCuda(quick, rank, world);
#endif
  if (backend != "cpu") return Internal() << "calibrate: backend '" << backend << "' unavailable";
  return MeasureCpu(quick, rank, world);
}

}  // namespace distir::tools
