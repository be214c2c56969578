// The check of memory pruning that the search's pruning tests share: with a
// memory limit, a configuration pruned is above it (its bound, and its
// simulated peak without the limit), and every other one is as it was
// without the limit, bit for bit.

#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "testing/experiment_text.h"

namespace distir::search {

/// Evaluates the experiment `text` with `memory_limit: limit B` and checks
/// each configuration against `unlimited` (its results without the limit,
/// in enumeration order). Returns the reasons of those pruned.
inline std::vector<std::string> ExpectPrunedOnlyAboveLimit(
    const std::string& text, int64_t limit, const std::vector<ConfigResult>& unlimited) {
  const Experiment limited =
      testing::ExperimentOf(text + "memory_limit: " + std::to_string(limit) + " B\n");
  Evaluator pruning(limited);
  std::vector<std::string> reasons;
  const std::vector<Config> configs = EnumerateConfigs(limited);
  EXPECT_EQ(configs.size(), unlimited.size());
  for (size_t i = 0; i < configs.size() && i < unlimited.size(); ++i) {
    const ConfigResult r = pruning.Evaluate(configs[i]);
    const ConfigResult& u = unlimited[i];
    const std::string what = DescribeParallelOptions(configs[i].options);
    if (r.status == ConfigStatus::kPruned) {
      reasons.push_back(r.reason);
      EXPECT_GT(r.peak_memory_bytes, limit) << what;
      EXPECT_FALSE(r.fits) << what;
      EXPECT_NE(r.reason.find("above memory_limit"), std::string::npos) << r.reason;
      if (u.status == ConfigStatus::kOk) {
        EXPECT_GT(u.peak_memory_bytes, limit) << what;
      }
      continue;
    }
    EXPECT_EQ(r.status, u.status) << what;
    EXPECT_EQ(r.iteration_time_s, u.iteration_time_s) << what;
    EXPECT_EQ(r.peak_memory_bytes, u.peak_memory_bytes) << what;
  }
  return reasons;
}

}  // namespace distir::search
