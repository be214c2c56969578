// The backend-specific half of `distir calibrate` (calibrate_command.cc): which
// device is calibrated, whether the backend can run on every rank, and which
// microbenchmarks time it. The CPU backend times the host kernels, the CPU
// executor and MPI (src/calibrate/{compute,executor,comm}_benchmarks.h); the
// CUDA backend times cuBLAS, the GPU kernels and NCCL
// (src/calibrate/gpu_benchmarks.h), and exists only in a CUDA build.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/measurement.h"
#include "support/status_or.h"

namespace distir::tools {

/// What the default base profile records about the calibrated device.
struct CalibratedDevice {
  std::string name;          ///< CPU model or GPU name
  int64_t memory_bytes = 0;  ///< per rank: a share of the host's memory, or the GPU's
  std::string link_name;     ///< the transport the communication benchmarks use
};

/// Whether `backend` ("cpu" or "cuda") can be calibrated by this binary on every
/// rank. Collective over MPI_COMM_WORLD for "cuda" in a CUDA build (every rank
/// counts its devices). Errors (FailedPrecondition, identical on every rank):
/// "cuda" in a build without CUDA; a rank that sees no CUDA device (the lowest
/// such rank is named).
Status CheckBackendAvailable(const std::string& backend);

/// The device `backend` runs on, on this rank, for `world` ranks on one node.
/// REQUIRES: CheckBackendAvailable(backend) succeeded.
CalibratedDevice DescribeCalibratedDevice(const std::string& backend, int world);

/// Runs the backend's microbenchmarks (the quick sweeps when `quick`) on every
/// rank at once, communication over MPI_COMM_WORLD included; collective, so
/// every rank calls it with the same arguments. Returns every measurement on
/// rank 0 (other ranks return their own compute timings, which are unused).
/// Progress goes to stderr on rank 0. REQUIRES: CheckBackendAvailable(backend)
/// succeeded. Errors: those of the benchmarks (a failing executor, CUDA, NCCL
/// or MPI call).
StatusOr<std::vector<calibrate::Measurement>> MeasureBackend(const std::string& backend, bool quick,
                                                             int rank, int world);

}  // namespace distir::tools
