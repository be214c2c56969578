#include "sharding/segment_view.h"

#include <algorithm>
#include <utility>

namespace distir::sharding {

bool IsScheduledTask(const std::optional<TaskTag>& t) {
  return t.has_value() && (t->phase == TaskPhase::kForward || t->phase == TaskPhase::kBackward) &&
         t->stage >= 0 && t->microbatch >= 0;
}

void FillRows(size_t rows, const std::vector<int32_t>& row_of, const std::vector<int32_t>& entries,
              std::vector<int32_t>& begin, std::vector<int32_t>& out) {
  begin.assign(rows + 1, 0);
  for (int32_t r : row_of) ++begin[static_cast<size_t>(r) + 1];
  for (size_t r = 1; r < begin.size(); ++r) begin[r] += begin[r - 1];
  out.resize(entries.size());
  std::vector<int32_t> next(begin.begin(), begin.end() - 1);
  for (size_t i = 0; i < entries.size(); ++i)
    out[static_cast<size_t>(next[static_cast<size_t>(row_of[i])]++)] = entries[i];
}

SegmentOrderView::SegmentOrderView(const ExpandedProgram& x, const Function& tmpl,
                                   const std::vector<std::optional<TaskTag>>& tasks)
    : ops_(std::in_place, x, tmpl) {
  p_.num_values = x.num_values();
  std::vector<int32_t> segment(static_cast<size_t>(x.num_ops()));
  Group(tasks, segment);
  Link(x, segment);
  Devices();
}

// Numbers the segments by their first op; op_ lists each one's ops.
void SegmentOrderView::Group(const std::vector<std::optional<TaskTag>>& tasks,
                             std::vector<int32_t>& segment) {
  int64_t stages = 0, microbatches = 0;
  for (const std::optional<TaskTag>& t : tasks) {
    if (!IsScheduledTask(t)) continue;
    stages = std::max(stages, t->stage + 1);
    microbatches = std::max(microbatches, t->microbatch + 1);
  }
  std::vector<int32_t> of_task(static_cast<size_t>(stages * microbatches * 2), -1);
  auto fresh = [&](const std::optional<TaskTag>& t, size_t send) {
    p_.tasks.push_back(t);
    const bool is_send = send < tasks.size();
    p_.send_result.push_back(is_send ? ops_->SendResult(send) : -1);
    p_.send_target.push_back(is_send ? ops_->SendTarget(send) : -1);
    return static_cast<int32_t>(p_.tasks.size() - 1);
  };
  for (size_t k = 0; k < tasks.size(); ++k) {
    const std::optional<TaskTag>& t = tasks[k];
    const bool send = ops_->IsSend(k);
    if (!IsScheduledTask(t) || send) {
      segment[k] = fresh(t, send ? k : tasks.size());
      continue;
    }
    const size_t at = static_cast<size_t>((t->stage * microbatches + t->microbatch) * 2 +
                                          (t->phase == TaskPhase::kBackward ? 1 : 0));
    if (of_task[at] < 0) of_task[at] = fresh(t, tasks.size());
    segment[k] = of_task[at];
  }
  std::vector<int32_t> ops(tasks.size());
  for (size_t k = 0; k < ops.size(); ++k) ops[k] = static_cast<int32_t>(k);
  FillRows(p_.tasks.size(), segment, ops, op_begin_, op_);
}

// The values that cross segments: each read of a value another segment
// defines is an input of the reader and a result of the writer. Program
// order defines a value before its readers. Parameters are left out: the
// orderings count them defined from the start, and no Send writes one.
void SegmentOrderView::Link(const ExpandedProgram& x, const std::vector<int32_t>& segment) {
  std::vector<int32_t> def(static_cast<size_t>(x.num_values()), -1);
  std::vector<int32_t> reader, read;
  for (int32_t k = 0; k < x.num_ops(); ++k) {
    const int32_t s = segment[static_cast<size_t>(k)];
    for (int32_t v : x.Inputs(k)) {
      const int32_t d = def[static_cast<size_t>(v)];
      if (d == s || d < 0) continue;
      reader.push_back(s);
      read.push_back(v);
    }
    for (int32_t r : x.Results(k)) def[static_cast<size_t>(r)] = s;
  }
  FillRows(p_.tasks.size(), reader, read, p_.in_begin, p_.in);
  std::vector<int32_t> writer(read.size());
  for (size_t i = 0; i < read.size(); ++i) writer[i] = def[static_cast<size_t>(read[i])];
  FillRows(p_.tasks.size(), writer, read, p_.out_begin, p_.out);
}

// The devices each task's first instance writes, shared by its later
// instances (the same ops without the setup a task may own); an empty row
// for Sends and ops outside the tasks, which the orderings do not ask.
void SegmentOrderView::Devices() {
  p_.device_row.assign(p_.tasks.size(), 0);
  std::vector<int32_t> row_of;  // by stage * 2 + backward
  std::vector<char> seen;
  for (size_t s = 0; s < p_.tasks.size(); ++s) {
    const std::optional<TaskTag>& t = p_.tasks[s];
    if (IsSend(s) || !IsScheduledTask(t)) continue;
    const size_t task = static_cast<size_t>(t->stage * 2 + (t->phase == TaskPhase::kBackward));
    if (task >= row_of.size()) row_of.resize(task + 1, -1);
    if (row_of[task] < 0) {
      std::fill(seen.begin(), seen.end(), 0);
      for (int32_t k = op_begin_[s]; k < op_begin_[s + 1]; ++k) {
        ops_->ForEachResultDevice(static_cast<size_t>(op_[static_cast<size_t>(k)]), [&](int32_t d) {
          if (d < 0) return;
          if (static_cast<size_t>(d) >= seen.size()) seen.resize(static_cast<size_t>(d) + 1, 0);
          if (seen[static_cast<size_t>(d)] != 0) return;
          seen[static_cast<size_t>(d)] = 1;
          p_.devices.push_back(d);
        });
      }
      p_.device_begin.push_back(static_cast<int32_t>(p_.devices.size()));
      row_of[task] = static_cast<int32_t>(p_.device_begin.size()) - 2;
    }
    p_.device_row[s] = row_of[task];
  }
}

Status SegmentOrderView::ReadsTooEarly(size_t s, int32_t v) const {
  if (ops_.has_value()) return ops_->ReadsTooEarly(Op(s), v);
  return Internal() << "the pipeline schedule runs task segment " << s << " before value " << v
                    << " is computed";
}

Status SegmentOrderView::NotInSchedule(size_t s) const {
  if (ops_.has_value()) return ops_->NotInSchedule(Op(s));
  return Internal() << "task segment " << s << " belongs to no task of the schedule";
}

std::vector<size_t> SegmentOrderView::OpOrder(const std::vector<size_t>& order) const {
  std::vector<size_t> ops;
  ops.reserve(op_.size());
  for (size_t s : order) {
    for (int32_t k = op_begin_[s]; k < op_begin_[s + 1]; ++k)
      ops.push_back(static_cast<size_t>(op_[static_cast<size_t>(k)]));
  }
  return ops;
}

}  // namespace distir::sharding
