// The CUDA calibration benchmarks (calibrate/gpu_benchmarks.h): the quick sweep
// times every (op, dtype) with the cost model's counts, and the fit accepts the
// result. Skips without a GPU (STYLE.md §7); the code compiles everywhere CUDA does.

#include "calibrate/gpu_benchmarks.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backend/gpu/device_buffer.h"
#include "calibrate/profile_fit.h"
#include "testing/test_util.h"

namespace distir::calibrate {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (gpu::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device"

TEST(GpuBenchmarksTest, QuickSweepTimesEveryOpAndDtypeWithCostModelCounts) {
  SKIP_WITHOUT_GPU();
  const GpuSweep sweep = QuickGpuSweep();
  ASSERT_OK_AND_ASSIGN(std::vector<Measurement> ms, RunGpuComputeBenchmarks(sweep));
  ASSERT_EQ(ms.size(), sweep.matmul_shapes.size() * sweep.matmul_dtypes.size() +
                           2 * sweep.elementwise_sizes.size());
  std::map<std::string, int> per_op_dtype;
  for (const Measurement& m : ms) {
    EXPECT_GT(m.time_s, 0) << m.op << " " << m.dtype << " " << m.shape;
    EXPECT_LT(m.time_s, 1) << m.op << " " << m.dtype << " " << m.shape;
    EXPECT_GT(m.flops, 0) << m.op << " " << m.dtype << " " << m.shape;
    ++per_op_dtype[m.op + " " + m.dtype];
  }
  EXPECT_EQ(per_op_dtype["MatMul f32"], 5);
  EXPECT_EQ(per_op_dtype["MatMul f16"], 5);
  EXPECT_EQ(per_op_dtype["MatMul bf16"], 5);
  EXPECT_EQ(per_op_dtype["Add f32"], 4);
  EXPECT_EQ(per_op_dtype["Gelu f32"], 4);
  // Shape 2 of dtype 1 (f16) is 256x256x64, A^T B: 2*256*256*64 = 8388608 FLOPs;
  // (256*64 + 64*256 + 256*256) * 2 = 196608 bytes.
  const Measurement& f16 = ms[sweep.matmul_shapes.size() + 1];
  EXPECT_EQ(f16.dtype, "f16");
  EXPECT_EQ(f16.shape, "256x256x64TN");
  EXPECT_EQ(f16.flops, 8388608);
  EXPECT_EQ(f16.bytes, 196608);
  // The largest product (4096^3) takes longer than the smallest (64^3) in every dtype:
  // without that no FLOP rate can be fitted (the first quick sweep on an H200 had none).
  for (size_t d = 0; d < sweep.matmul_dtypes.size(); ++d) {
    const size_t first = d * sweep.matmul_shapes.size();
    const size_t last = first + sweep.matmul_shapes.size() - 1;
    EXPECT_GT(ms[last].time_s, 2 * ms[first].time_s) << ms[last].dtype;
  }
}

TEST(GpuBenchmarksTest, QuickSweepFitsAProfileWithEveryMatMulPeak) {
  SKIP_WITHOUT_GPU();
  ASSERT_OK_AND_ASSIGN(std::vector<Measurement> ms, RunGpuComputeBenchmarks(QuickGpuSweep()));
  sim::HardwareProfile base = DefaultBaseProfile("gpu-test", "GPU", 1, int64_t{1} << 30, "nvlink");
  ASSERT_OK_AND_ASSIGN(CalibrationFit fit, FitProfile(ms, base, "f16"));
  EXPECT_GT(fit.profile.device.peak_flops_f32, 0);
  EXPECT_GT(fit.profile.device.peak_flops_f16, 0);
  EXPECT_GT(fit.profile.device.peak_flops_bf16, 0);
  EXPECT_GT(fit.profile.device.dram_bandwidth, 0);
}

}  // namespace
}  // namespace distir::calibrate
