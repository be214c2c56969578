// Checks that writing a grid point's expansion in order from its template's
// task segments (sharding/segment_view.h, ExpandMicrobatchesInOrder) gives
// the program that expanding it and ordering its ops gives, op for op, and
// that simulating it from kinds of segments gives the same figures, for the
// whole program and for replica 0's part of it.

#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ir/expanded_program.h"
#include "sharding/grid.h"
#include "sharding/replicate.h"
#include "sharding/task_order.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir::sharding {

// The expansion of template `t` at `grid`'s K (restricted to `keep` unless
// null), ordered over its ops; nullopt where the restricted part cannot be
// cut out (FailedPrecondition, as the search then simulates the whole).
inline std::optional<ExpandedProgram> OrderedExpansion(const GridTemplate& t,
                                                       const GridOptions& grid,
                                                       const std::vector<char>* keep) {
  const Function& tmpl = *t.module.entry();
  std::vector<std::optional<TaskTag>> tasks;
  StatusOr<ExpandedProgram> x = ExpandMicrobatches(tmpl, grid.microbatches, t.local, tasks, keep);
  if (!x.ok() && keep != nullptr && x.status().code() == StatusCode::kFailedPrecondition)
    return std::nullopt;
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  if (!x.ok()) return std::nullopt;
  const Status s = OrderExpandedByTasks(*x, tmpl, tasks, grid.schedule, grid.virtual_stages);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::move(*x);
}

// The same ops in the same order reading and writing the same values, the
// values of `b` numbered apart from those of `a` (in `b`'s op order).
inline void ExpectSameProgram(const std::optional<ExpandedProgram>& x,
                              const std::optional<ExpandedProgram>& y) {
  ASSERT_EQ(x.has_value(), y.has_value());
  if (!x.has_value()) return;
  const ExpandedProgram& a = *x;
  const ExpandedProgram& b = *y;
  ASSERT_EQ(a.op, b.op);
  ASSERT_EQ(a.copy, b.copy);
  ASSERT_EQ(a.num_values(), b.num_values());
  ASSERT_EQ(a.params.size(), b.params.size());
  std::vector<int32_t> to_b(static_cast<size_t>(a.num_values()), -1);
  auto same = [&](int32_t va, int32_t vb) {
    int32_t& m = to_b[static_cast<size_t>(va)];
    if (m < 0) m = vb;
    return m == vb &&
           a.value_template[static_cast<size_t>(va)] == b.value_template[static_cast<size_t>(vb)] &&
           a.value_is_sum[static_cast<size_t>(va)] == b.value_is_sum[static_cast<size_t>(vb)];
  };
  for (size_t i = 0; i < a.params.size(); ++i) ASSERT_TRUE(same(a.params[i], b.params[i])) << i;
  for (int32_t k = 0; k < a.num_ops(); ++k) {
    ASSERT_EQ(a.Results(k).size(), b.Results(k).size()) << k;
    ASSERT_EQ(a.Inputs(k).size(), b.Inputs(k).size()) << k;
    for (size_t i = 0; i < a.Results(k).size(); ++i)
      ASSERT_TRUE(same(a.Results(k)[i], b.Results(k)[i])) << "op " << k << " result " << i;
    for (size_t i = 0; i < a.Inputs(k).size(); ++i)
      ASSERT_TRUE(same(a.Inputs(k)[i], b.Inputs(k)[i])) << "op " << k << " input " << i;
  }
  ASSERT_EQ(a.returns.size(), b.returns.size());
  for (size_t i = 0; i < a.returns.size(); ++i) EXPECT_TRUE(same(a.returns[i], b.returns[i])) << i;
  EXPECT_EQ(a.keep_device, b.keep_device);
  EXPECT_EQ(a.whole_num_ops, b.whole_num_ops);
}

// The expansion written in order from the template's task segments
// (ExpandMicrobatchesInOrder), where it applies; nullopt else.
inline std::optional<ExpandedProgram> InOrderExpansion(const GridTemplate& t,
                                                       const GridOptions& grid,
                                                       const std::vector<char>* keep) {
  StatusOr<std::optional<ExpandedProgram>> x = ExpandMicrobatchesInOrder(
      *t.module.entry(), grid.microbatches, t.local, grid.schedule, grid.virtual_stages, keep);
  if (!x.ok() && keep != nullptr && x.status().code() == StatusCode::kFailedPrecondition)
    return std::nullopt;
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  return x.ok() ? std::move(*x) : std::nullopt;
}

// Writing the program in order from the template, where that applies, gives
// the program that ordering the expansion's ops gives.
// `devices_per_replica`: T P, the devices of data-parallel replica 0 (ids
// [0, T P)); 0: no replica to cut out.
inline void ExpectSegmentOrderAsOps(const GridTemplate& t, const GridOptions& grid,
                                    int devices_per_replica) {
  std::vector<const std::vector<char>*> parts{nullptr};
  const std::vector<char> keep(static_cast<size_t>(std::max(devices_per_replica, 0)), 1);
  if (devices_per_replica > 0) parts.push_back(&keep);
  for (const std::vector<char>* part : parts) {
    const std::optional<ExpandedProgram> by_ops = OrderedExpansion(t, grid, part);
    if (std::optional<ExpandedProgram> in_order = InOrderExpansion(t, grid, part))
      ExpectSameProgram(by_ops, in_order);
  }
}

// What the search records: no trace, no memory timeline; memory by `kinds`.
inline sim::SimulateOptions FigureOptions(const sim::MemoryClassifier& kinds) {
  sim::SimulateOptions options;
  options.record_trace = false;
  options.record_memory_timeline = false;
  options.memory_kind = kinds;
  return options;
}

// The same figures, bit for bit: times, op counts, per-device busy, idle
// and memory (by kind).
// Device `d`'s figures of two simulations, bit for bit (the device's id apart).
inline void ExpectSameDevice(const sim::DeviceResult& x, const sim::DeviceResult& y, int64_t d) {
  EXPECT_EQ(x.compute_s, y.compute_s) << "device " << d;
  EXPECT_EQ(x.communication_s, y.communication_s) << "device " << d;
  EXPECT_EQ(x.idle_s, y.idle_s) << "device " << d;
  EXPECT_EQ(x.peak_memory_bytes, y.peak_memory_bytes) << "device " << d;
  EXPECT_EQ(x.memory_at_peak, y.memory_at_peak) << "device " << d;
  EXPECT_EQ(x.peak_memory_by_kind, y.peak_memory_by_kind) << "device " << d;
}

inline void ExpectSameFigures(const sim::SimulationResult& a, const sim::SimulationResult& b) {
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.num_ops, b.num_ops);
  EXPECT_EQ(a.fits_in_memory, b.fits_in_memory);
  EXPECT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.throughput, b.throughput);
  EXPECT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < std::min(a.devices.size(), b.devices.size()); ++d) {
    EXPECT_EQ(a.devices[d].device, b.devices[d].device) << d;
    ExpectSameDevice(a.devices[d], b.devices[d], static_cast<int64_t>(d));
  }
}

// The simulation composed per kind of segment (SegmentTemplate,
// sim::SimulateSegmented) equals the copies' simulated op by op
// (ExpandTemplate, sim::SimulateExpanded): the same peaks, op counts and
// times, bit for bit (memory by kind with `kinds`), for the whole program and
// replica 0's part,
// wherever the copies are written in order (ExpandMicrobatchesInOrder).
// Returns how many of the two programs were composed (0 to 2).
inline int ExpectComposedAsExpanded(const GridTemplate& t, const GridOptions& grid,
                                    sim::CostModel& costs, int devices_per_replica,
                                    const sim::MemoryClassifier& kinds = {}) {
  std::vector<const std::vector<char>*> parts{nullptr};
  const std::vector<char> keep(static_cast<size_t>(std::max(devices_per_replica, 0)), 1);
  if (devices_per_replica > 0) parts.push_back(&keep);
  const sim::SimulateOptions options = FigureOptions(kinds);
  int composed = 0;
  const Function& tmpl = *t.module.entry();
  for (const std::vector<char>* part : parts) {
    StatusOr<std::optional<SegmentedProgram>> segments = SegmentTemplate(t, grid, part);
    if (!segments.ok() && part != nullptr &&
        segments.status().code() == StatusCode::kFailedPrecondition)
      continue;
    EXPECT_TRUE(segments.ok()) << segments.status().ToString();
    if (!segments.ok()) continue;
    // Composed wherever the copies are written in order.
    EXPECT_EQ(segments->has_value(), InOrderExpansion(t, grid, part).has_value());
    if (!segments->has_value()) continue;
    StatusOr<ExpandedProgram> copies = ExpandTemplate(t, grid, part);
    EXPECT_TRUE(copies.ok()) << copies.status().ToString();
    if (!copies.ok()) continue;
    StatusOr<sim::SimulationResult> a =
        sim::SimulateExpanded(t.module, tmpl, *copies, costs, options);
    StatusOr<sim::SimulationResult> b =
        sim::SimulateSegmented(t.module, tmpl, **segments, costs, options);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!a.ok() || !b.ok()) continue;
    ++composed;
    ExpectSameFigures(*a, *b);
  }
  return composed;
}

// The template of `keep`'s devices built alone (DistributedTemplate, with
// pieces even over `even_axis`); nullopt where it cannot be
// (FailedPrecondition) or fails.
inline std::optional<GridTemplate> BuiltPart(const Function& seq, const GridOptions& grid,
                                             const std::vector<ParamRule>& rules,
                                             const std::vector<char>& keep,
                                             const std::string& even_axis = "",
                                             bool last_apart = false) {
  StatusOr<GridTemplate> part = DistributedTemplate(seq, grid, rules, &keep, even_axis, last_apart);
  if (!part.ok() && part.status().code() == StatusCode::kFailedPrecondition) return std::nullopt;
  EXPECT_TRUE(part.ok()) << part.status().ToString();
  if (!part.ok()) return std::nullopt;
  return std::move(*part);
}

// Template `t`'s copies (of `keep`'s devices unless null) simulated op by
// op; nullopt where they cannot be written or fail.
inline std::optional<sim::SimulationResult> SimulatedCopies(const GridTemplate& t,
                                                            const GridOptions& grid,
                                                            const std::vector<char>* keep,
                                                            sim::CostModel& costs,
                                                            const sim::MemoryClassifier& kinds) {
  StatusOr<ExpandedProgram> x = ExpandTemplate(t, grid, keep);
  if (!x.ok()) return std::nullopt;
  StatusOr<sim::SimulationResult> s =
      sim::SimulateExpanded(t.module, *t.module.entry(), *x, costs, FigureOptions(kinds));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return std::nullopt;
  return std::move(*s);
}

// Replica 0's part of the grid point built alone (DistributedTemplate with
// its devices, sharding/partition.h's PartitionShardingsPart) simulates as
// the same part cut out of the whole template `whole`: the same figures bit
// for bit, the whole program's op count included, from the copies and,
// where they apply, from kinds of segments. Both cut out, or neither.
// Returns whether the part was built and cut out (the search then uses it).
inline bool ExpectPartAsWhole(const Function& seq, const GridTemplate& whole,
                              const GridOptions& grid, const std::vector<ParamRule>& rules,
                              sim::CostModel& costs, int devices_per_replica,
                              const sim::MemoryClassifier& kinds = {}) {
  const std::vector<char> keep(static_cast<size_t>(devices_per_replica), 1);
  std::optional<GridTemplate> part = BuiltPart(seq, grid, rules, keep);
  if (!part.has_value()) return false;
  EXPECT_LT(part->module.entry()->ops().size(), whole.module.entry()->ops().size());
  std::optional<sim::SimulationResult> a = SimulatedCopies(whole, grid, &keep, costs, kinds);
  std::optional<sim::SimulationResult> b = SimulatedCopies(*part, grid, &keep, costs, kinds);
  EXPECT_EQ(a.has_value(), b.has_value());
  if (!a.has_value() || !b.has_value()) return false;
  ExpectSameFigures(*a, *b);
  StatusOr<std::optional<SegmentedProgram>> segments = SegmentTemplate(*part, grid, &keep);
  EXPECT_TRUE(segments.ok()) << segments.status().ToString();
  if (segments.ok() && segments->has_value()) {
    StatusOr<sim::SimulationResult> c = sim::SimulateSegmented(
        part->module, *part->module.entry(), **segments, costs, FigureOptions(kinds));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) ExpectSameFigures(*a, *c);
  }
  return true;
}

// Tensor-parallel ranks 0 and 1 standing for a stage's T (search/
// representatives.h): the template built for them alone (with pieces even
// over tp) simulates every device of the whole program as its
// representative, bit for bit: device d as d - r + min(r, 1), r = d mod T;
// the iteration time and the whole op count as the whole program's. With
// `last_apart`, rank T - 1 is built too and stands for itself (pieces even
// over tp but for the last). Returns whether the part was built and cut out.
inline bool ExpectTensorRanksAsWhole(const Function& seq, const GridTemplate& whole,
                                     const GridOptions& grid, const std::vector<ParamRule>& rules,
                                     sim::CostModel& costs, int64_t world, int64_t tp,
                                     const sim::MemoryClassifier& kinds = {},
                                     bool last_apart = false) {
  auto apart = [&](int64_t rank) { return rank < 2 || (last_apart && rank == tp - 1); };
  std::vector<char> keep(static_cast<size_t>(world));
  for (int64_t d = 0; d < world; ++d) keep[static_cast<size_t>(d)] = apart(d % tp);
  std::optional<GridTemplate> part = BuiltPart(seq, grid, rules, keep, "tp", last_apart);
  if (!part.has_value()) return false;
  std::optional<sim::SimulationResult> a = SimulatedCopies(whole, grid, nullptr, costs, kinds);
  std::optional<sim::SimulationResult> b = SimulatedCopies(*part, grid, &keep, costs, kinds);
  EXPECT_TRUE(a.has_value());
  if (!a.has_value() || !b.has_value()) return false;
  EXPECT_EQ(a->iteration_time_s, b->iteration_time_s);
  EXPECT_EQ(a->num_ops, b->num_ops);
  EXPECT_EQ(a->throughput, b->throughput);
  EXPECT_EQ(a->fits_in_memory, b->fits_in_memory);
  std::vector<const sim::DeviceResult*> rep(static_cast<size_t>(world), nullptr);
  for (const sim::DeviceResult& y : b->devices) rep[static_cast<size_t>(y.device.value())] = &y;
  EXPECT_EQ(a->devices.size(), static_cast<size_t>(world));
  for (const sim::DeviceResult& x : a->devices) {
    const int64_t d = x.device.value();
    const sim::DeviceResult* y = rep[static_cast<size_t>(apart(d % tp) ? d : d - d % tp + 1)];
    EXPECT_NE(y, nullptr) << d;
    if (y != nullptr) ExpectSameDevice(x, *y, d);
  }
  return true;
}

}  // namespace distir::sharding
