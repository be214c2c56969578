#include "testing/same_result.h"

#include <gtest/gtest.h>

namespace distir::testing {

void ExpectSameResult(const search::ConfigResult& a, const search::ConfigResult& b,
                      const std::string& what) {
  EXPECT_EQ(a.status, b.status) << what << ": " << a.reason << " vs " << b.reason;
  EXPECT_EQ(a.reason, b.reason) << what;
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s) << what;
  EXPECT_EQ(a.throughput, b.throughput) << what;
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes) << what;
  EXPECT_EQ(a.fits, b.fits) << what;
  EXPECT_EQ(a.num_ops, b.num_ops) << what;
  EXPECT_EQ(a.exposed_communication_s, b.exposed_communication_s) << what;
  EXPECT_TRUE(a.step == b.step) << what;
}

}  // namespace distir::testing
