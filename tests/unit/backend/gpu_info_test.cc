#include "backend/gpu/gpu_info.h"

#include <gtest/gtest.h>

namespace distir::gpu {
namespace {

TEST(GpuInfoTest, ReportsLinkedRuntimeAndNccl) {
  StatusOr<GpuInfo> info = QueryGpus();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_GE(info->nccl_version, 20000);  // NCCL 2.x encodes as MAJOR*10000 + MINOR*100 + PATCH
  EXPECT_GE(info->cuda_runtime_version, 12000);
  EXPECT_NE(DescribeGpus(*info).find("NCCL 2."), std::string::npos) << DescribeGpus(*info);
}

TEST(GpuInfoTest, DescribesEveryVisibleGpu) {
  StatusOr<GpuInfo> info = QueryGpus();
  ASSERT_TRUE(info.ok());
  if (info->devices.empty()) GTEST_SKIP() << "no GPU here: " << info->driver_note;
  for (const GpuDevice& d : info->devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, 0);
    EXPECT_GE(d.compute_major, 7);
  }
}

}  // namespace
}  // namespace distir::gpu
