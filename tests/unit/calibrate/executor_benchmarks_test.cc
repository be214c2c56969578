// The executor-path microbenchmarks: a chain of Adds (or Relus) lowered and run
// by the CPU executor on this rank alone (MPI_COMM_SELF; a singleton MPI job).

#include "calibrate/executor_benchmarks.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

#include "testing/test_util.h"

#if defined(__SANITIZE_ADDRESS__)
// The full unwinder, so that leak stacks reach the MPI libraries the
// suppressions name (the fast one stops in libc or libstdc++).
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }
#endif

namespace distir::calibrate {
namespace {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    // Keep Open MPI's plugins loaded so that LeakSanitizer can name (and
    // tests/lsan.supp suppress) their one-time allocations (cf. cpu_executor_np*).
    setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 0);
    if (!initialized) MPI_Init(nullptr, nullptr);
  }
  void TearDown() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
};

[[maybe_unused]] ::testing::Environment* const kMpi =
    ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

TEST(ExecutorBenchmarksTest, QuickSweepTimesAddAndReluThroughTheExecutor) {
  ExecutorSweep sweep = QuickExecutorSweep();
  sweep.relu_sizes = {64};
  ASSERT_OK_AND_ASSIGN(std::vector<Measurement> ms, RunExecutorElementwiseBenchmarks(sweep));
  ASSERT_EQ(ms.size(), sweep.sizes.size() + 1);
  for (size_t i = 0; i < sweep.sizes.size(); ++i) {
    EXPECT_EQ(ms[i].op, "Add");
    // The cost model's counts: 1 FLOP and 12 bytes per element.
    EXPECT_EQ(ms[i].flops, static_cast<double>(sweep.sizes[i]));
    EXPECT_EQ(ms[i].bytes, 12.0 * static_cast<double>(sweep.sizes[i]));
    EXPECT_GT(ms[i].time_s, 0);
  }
  EXPECT_EQ(ms.back().op, "Relu");
  EXPECT_EQ(ms.back().bytes, 8.0 * 64);
  EXPECT_GT(ms.back().time_s, 0);
}

}  // namespace
}  // namespace distir::calibrate
