// Microbenchmarks of the CPU executor's host kernels (backend/cpu/host_kernels.h),
// so that the costs the calibrator fits are the costs `distir run --backend cpu`
// pays: MatMul over a sweep of shapes in f32 and f64 (cblas through OpenBLAS,
// one thread per rank), in the three operand layouts the executor calls (MatMul
// and Gemm: A B; MatMulGrad: dy W^T and x^T dy), elementwise Add over sizes from
// one element to well past the last-level cache (the memory bandwidth), and Gelu
// (erf-based, compute-bound on a CPU: the vector FLOP rate). The per-op overhead
// of the executor is measured through the executor (executor_benchmarks.h).
//
// Under mpirun every rank runs them at once, as the executor's ranks do, so a
// shared memory bus is measured shared.

#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "calibrate/measurement.h"
#include "calibrate/timer.h"

namespace distir::calibrate {

/// C[m x n] = op(A) op(B) with op(A) m x k and op(B) k x n; op transposes when set.
struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
};

struct ComputeSweep {
  std::vector<MatMulShape> matmul_shapes;  ///< timed in f32 (the regression's samples)
  std::vector<MatMulShape> f64_shapes;     ///< timed in f64 (its peak rate only)
  std::vector<int64_t> elementwise_sizes;  ///< elements of Add and Gelu
  TimingOptions timing;
};

/// Appends every (m, n, k) in dims^3, each in the three operand layouts the
/// executors call: A B (MatMul, Gemm), A B^T and A^T B (MatMulGrad's dx, dw).
void AppendMatMulLayouts(std::initializer_list<int64_t> dims, std::vector<MatMulShape>& shapes);

/// The sweep `distir calibrate` runs: f32 MatMul over every (m, n, k) in
/// {16, 64, 256, 512}^3, each as A B, A B^T and A^T B, plus 1024^3 (193 shapes);
/// f64 over the squares 64, 256 and 512; Add and Gelu over 1, 4, 16, ..., 4^11
/// (4 Mi) elements. Each time is sustained (samples of at least 5 ms: timer.h).
ComputeSweep DefaultComputeSweep();

/// A sweep of a few small shapes for tests (well under a second).
ComputeSweep QuickComputeSweep();

/// Runs the sweep: MatMul in f32 (matmul_shapes) and f64 (f64_shapes), Add and Gelu in f32. Returns
/// one Measurement per (op, dtype, size), with FLOPs and bytes counted as docs/cost_model.md does
/// (MatMul 2mnk FLOPs and |A| + |B| + |C| bytes; Add 1 FLOP and 12 bytes per element; Gelu 5 FLOPs
/// and 8 bytes per element).
std::vector<Measurement> RunHostComputeBenchmarks(const ComputeSweep& sweep);

}  // namespace distir::calibrate
