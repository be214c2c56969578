// Microbenchmarks of the CPU executor's host kernels (backend/cpu/host_kernels.h),
// so that the costs the calibrator fits are the costs `distir run --backend cpu`
// pays: MatMul over a sweep of shapes in f32 and f64 (cblas through OpenBLAS,
// one thread per rank), elementwise Add over sizes from one element (the per-op
// overhead) to well past the last-level cache (the memory bandwidth), and Gelu
// (erf-based, compute-bound on a CPU: the vector FLOP rate).
//
// Under mpirun every rank runs them at once, as the executor's ranks do, so a
// shared memory bus is measured shared.

#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "calibrate/measurement.h"
#include "calibrate/timer.h"

namespace distir::calibrate {

struct ComputeSweep {
  std::vector<std::array<int64_t, 3>> matmul_shapes;  ///< (m, n, k) of C[m x n] = A[m x k] B[k x n]
  std::vector<int64_t> elementwise_sizes;             ///< elements of Add and Gelu
  TimingOptions timing;
};

/// The sweep `distir calibrate` runs: 27 MatMul shapes (every m, n, k in
/// {32, 128, 512}) plus the square 16, 64, 256 and 1024; elementwise sizes
/// 1, 16, 256, ..., 4^12 (16 Mi) elements. About 20 s on one core.
ComputeSweep DefaultComputeSweep();

/// A sweep of a few small shapes for tests (well under a second).
ComputeSweep QuickComputeSweep();

/// Runs the sweep: MatMul in f32 and f64, Add and Gelu in f32. Returns one
/// Measurement per (op, dtype, size), with FLOPs and bytes counted as
/// docs/cost_model.md does (MatMul 2mnk FLOPs and |A| + |B| + |C| bytes; Add 1
/// FLOP and 12 bytes per element; Gelu 5 FLOPs and 8 bytes per element).
std::vector<Measurement> RunHostComputeBenchmarks(const ComputeSweep& sweep);

}  // namespace distir::calibrate
