// Task segments: the ops of an expanded pipelined program
// (ir/expanded_program.h) grouped by the task instance they run in, so that
// the pipeline orderings (task_order.h, exchange_order.h) order K x tasks
// segments instead of K x ops ops (issue #18, docs/cost_model.md §3.2). The
// segments are found from the template (replicate.h's
// ExpandMicrobatchesInOrder), without the program.
//
// A segment is either every op of one task instance (stage or chunk,
// microbatch, forward or backward) that is not a Send, in program order, or
// one other op (a Send, a setup or update op). The exchange order runs each
// task's ops together, in program order, between its communication points,
// and places the Sends by the tasks that produce and read them; so ordering
// the segments and writing each one's ops in program order gives exactly the
// op order that ordering the ops gives (where the exchange order applies;
// elsewhere the program is written, then its ops ordered).
//
// A SegmentOrderView offers what order_view.h's views offer, per segment:
// the values it reads from other segments (parameters left out), the values it
// writes that other segments read, the devices its ops write, and for a Send
// its target and result.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sharding/pipeline_task.h"
#include "support/status.h"

namespace distir::sharding {

class SegmentOrderView {
 public:
  /// What the view holds (replicate.h finds it from the template).
  struct Parts {
    std::vector<std::optional<TaskTag>> tasks;  ///< per segment: the task of its ops
    std::vector<int32_t> send_result;           ///< per segment: a Send's result, else -1
    std::vector<int32_t> send_target;           ///< per segment: a Send's target device, else -1
    std::vector<int32_t> in_begin{0}, in;       ///< CSR: values read from other segments
    std::vector<int32_t> out_begin{0}, out;     ///< CSR: values other segments read
    std::vector<int32_t> device_row;            ///< per segment: its row of the device CSR
    std::vector<int32_t> device_begin{0, 0}, devices;  ///< row 0: none
    int num_values = 0;                                ///< value ids are below it
  };

  /// The segments; the errors name no op.
  explicit SegmentOrderView(Parts parts) : p_(std::move(parts)) {}

  /// The task of each segment: that of its ops.
  const std::vector<std::optional<TaskTag>>& tasks() const { return p_.tasks; }
  size_t num_ops() const { return p_.tasks.size(); }
  int num_values() const { return p_.num_values; }
  bool IsSend(size_t s) const { return p_.send_result[s] >= 0; }
  /// Values segment `s` reads that another segment writes (not parameters).
  template <typename F>
  void ForEachInput(size_t s, F f) const {
    for (int32_t k = p_.in_begin[s]; k < p_.in_begin[s + 1]; ++k) f(p_.in[static_cast<size_t>(k)]);
  }
  /// Values segment `s` writes that another segment reads.
  template <typename F>
  void ForEachResult(size_t s, F f) const {
    for (int32_t k = p_.out_begin[s]; k < p_.out_begin[s + 1]; ++k)
      f(p_.out[static_cast<size_t>(k)]);
  }
  /// None: parameters are defined from the start and read by no segment here.
  template <typename F>
  void ForEachParam(F) const {}
  /// Devices the ops of `s` write. A task's later microbatches list those of
  /// its first: the orderings only ask which stage writes a device first.
  template <typename F>
  void ForEachResultDevice(size_t s, F f) const {
    const auto row = static_cast<size_t>(p_.device_row[s]);
    for (int32_t k = p_.device_begin[row]; k < p_.device_begin[row + 1]; ++k)
      f(p_.devices[static_cast<size_t>(k)]);
  }
  int32_t SendTarget(size_t s) const { return p_.send_target[s]; }
  int32_t SendResult(size_t s) const { return p_.send_result[s]; }
  /// The errors of ExpandedOrderView, naming the segment.
  Status ReadsTooEarly(size_t s, int32_t v) const;
  Status NotInSchedule(size_t s) const;

 private:
  Parts p_;
};

/// Whether `t` is the task of an op the schedule places: a forward or
/// backward task of a stage and microbatch.
bool IsScheduledTask(const std::optional<TaskTag>& t);

}  // namespace distir::sharding
