#include "calibrate/compute_benchmarks.h"

#include <random>
#include <string>

#include "backend/cpu/host_kernels.h"

namespace distir::calibrate {
namespace {

template <typename T>
std::vector<T> RandomBuffer(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

template <typename T>
Measurement TimeMatMul(const MatMulShape& shape, const char* dtype, const TimingOptions& timing) {
  const auto [m, n, k, ta, tb] = shape;
  std::vector<T> a = RandomBuffer<T>(m * k, 1), b = RandomBuffer<T>(k * n, 2);
  std::vector<T> c(static_cast<size_t>(m * n));
  Measurement r;
  r.op = "MatMul";
  r.dtype = dtype;
  r.shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
            (ta ? "T" : "N") + (tb ? "T" : "N");
  r.flops = 2.0 * static_cast<double>(m * n * k);
  r.bytes = static_cast<double>((m * k + k * n + m * n) * static_cast<int64_t>(sizeof(T)));
  r.time_s = MedianSecondsPerCall(
      [&] { backend::Gemm<T>(ta, tb, m, n, k, T(1), a.data(), b.data(), T(0), c.data()); }, timing);
  return r;
}

Measurement TimeAdd(int64_t n, const TimingOptions& timing) {
  std::vector<float> a = RandomBuffer<float>(n, 3), b = RandomBuffer<float>(n, 4);
  std::vector<float> out(static_cast<size_t>(n));
  Measurement r{
      "Add", "f32", std::to_string(n), static_cast<double>(n), 12.0 * static_cast<double>(n), 1, 0};
  r.time_s = MedianSecondsPerCall(
      [&] { backend::Binary<float>(backend::BinaryKind::kAdd, n, a.data(), b.data(), out.data()); },
      timing);
  return r;
}

Measurement TimeGelu(int64_t n, const TimingOptions& timing) {
  std::vector<float> x = RandomBuffer<float>(n, 5), out(static_cast<size_t>(n));
  Measurement r{
      "Gelu", "f32", std::to_string(n), 5.0 * static_cast<double>(n), 8.0 * static_cast<double>(n),
      1,      0};
  r.time_s = MedianSecondsPerCall(
      [&] { backend::Unary<float>(backend::UnaryKind::kGeluErf, n, x.data(), out.data()); },
      timing);
  return r;
}

}  // namespace

void AppendMatMulLayouts(std::initializer_list<int64_t> dims, std::vector<MatMulShape>& shapes) {
  for (int64_t m : dims) {
    for (int64_t n : dims) {
      for (int64_t k : dims) {
        shapes.push_back({m, n, k, false, false});  // MatMul, Gemm
        shapes.push_back({m, n, k, false, true});   // MatMulGrad's dx = dy W^T
        shapes.push_back({m, n, k, true, false});   // MatMulGrad's dw = x^T dy
      }
    }
  }
}

ComputeSweep DefaultComputeSweep() {
  ComputeSweep s;
  AppendMatMulLayouts({16, 64, 256, 512}, s.matmul_shapes);
  s.matmul_shapes.push_back({1024, 1024, 1024});
  for (int64_t d : {64, 256, 512}) s.f64_shapes.push_back({d, d, d});
  for (int64_t n = 1; n <= (int64_t{1} << 22); n *= 4) s.elementwise_sizes.push_back(n);
  // Sustained times: see timer.h. 5 ms is a fraction of an iteration and several
  // scheduler time slices' worth of preemption granularity on a shared machine.
  s.timing.min_sample_s = 5e-3;
  s.timing.min_total_s = 0.025;
  s.timing.warmup_s = 2e-3;
  return s;
}

ComputeSweep QuickComputeSweep() {
  ComputeSweep s;
  s.matmul_shapes = {{8, 8, 8}, {32, 16, 64, false, true}, {64, 64, 64, true, false}};
  s.f64_shapes = {{16, 16, 16}};
  s.elementwise_sizes = {1, 256, 4096};
  s.timing.min_samples = 3;
  s.timing.min_total_s = 1e-4;
  return s;
}

std::vector<Measurement> RunHostComputeBenchmarks(const ComputeSweep& sweep) {
  backend::InitHostKernels();  // one BLAS thread per rank, as the executor runs
  std::vector<Measurement> out;
  for (const auto& shape : sweep.matmul_shapes)
    out.push_back(TimeMatMul<float>(shape, "f32", sweep.timing));
  for (const auto& shape : sweep.f64_shapes)
    out.push_back(TimeMatMul<double>(shape, "f64", sweep.timing));
  for (int64_t n : sweep.elementwise_sizes) out.push_back(TimeAdd(n, sweep.timing));
  for (int64_t n : sweep.elementwise_sizes) out.push_back(TimeGelu(n, sweep.timing));
  return out;
}

}  // namespace distir::calibrate
