// Checks that ordering a grid point's expansion over its task segments
// (sharding/segment_view.h) gives the op order that ordering its ops gives,
// op for op, for the whole program and for replica 0's part of it.

#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ir/expanded_program.h"
#include "sharding/grid.h"
#include "sharding/replicate.h"
#include "sharding/task_order.h"
#include "testing/test_util.h"

namespace distir::sharding {

// The expansion of template `t` at `grid`'s K (restricted to `keep` unless
// null), ordered over segments or over ops; nullopt where the restricted
// part cannot be cut out (FailedPrecondition, as the search then simulates
// the whole).
inline std::optional<ExpandedProgram> OrderedExpansion(const GridTemplate& t,
                                                       const GridOptions& grid,
                                                       const std::vector<char>* keep,
                                                       bool by_segments) {
  const Function& tmpl = *t.module.entry();
  std::vector<std::optional<TaskTag>> tasks;
  StatusOr<ExpandedProgram> x = ExpandMicrobatches(tmpl, grid.microbatches, t.local, tasks, keep);
  if (!x.ok() && keep != nullptr && x.status().code() == StatusCode::kFailedPrecondition)
    return std::nullopt;
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  if (!x.ok()) return std::nullopt;
  const Status s =
      OrderExpandedByTasks(*x, tmpl, tasks, grid.schedule, grid.virtual_stages, by_segments);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::move(*x);
}

inline void ExpectSameProgram(const std::optional<ExpandedProgram>& x,
                              const std::optional<ExpandedProgram>& y) {
  ASSERT_EQ(x.has_value(), y.has_value());
  if (!x.has_value()) return;
  const ExpandedProgram& a = *x;
  const ExpandedProgram& b = *y;
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.copy, b.copy);
  EXPECT_EQ(a.in, b.in);
  EXPECT_EQ(a.in_begin, b.in_begin);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out_begin, b.out_begin);
}

// `devices_per_replica`: T P, the devices of data-parallel replica 0 (ids
// [0, T P)); 0 or the world: no replica to cut out.
inline void ExpectSegmentOrderAsOps(const GridTemplate& t, const GridOptions& grid,
                                    int devices_per_replica) {
  ExpectSameProgram(OrderedExpansion(t, grid, nullptr, true),
                    OrderedExpansion(t, grid, nullptr, false));
  if (devices_per_replica <= 0) return;
  const std::vector<char> keep(static_cast<size_t>(devices_per_replica), 1);
  ExpectSameProgram(OrderedExpansion(t, grid, &keep, true),
                    OrderedExpansion(t, grid, &keep, false));
}

}  // namespace distir::sharding
