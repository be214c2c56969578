// The Expander: microbatch replication's copies of a template's ops
// (replicate.h: ExpandMicrobatches, ExpandMicrobatchesInOrder and
// ExpandMicrobatchSegments). Internal to distir_sharding:
// expand_microbatches.cc writes the copies, segmented_expansion.cc their
// kinds (ir/segmented_program.h).

#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "ir/segmented_program.h"
#include "sharding/microbatch_classes.h"
#include "sharding/segment_view.h"
#include "support/status.h"

namespace distir::sharding {

namespace segment_writer {
class SegmentWriter;
}

class Expander {
 public:
  Expander(const Function& fn, int64_t k, MicrobatchClasses c)
      : fn_(fn), k_(k), c_(std::move(c)), shared_(fn.num_values(), -1) {}

  /// Keeps only the values on the devices `keep` marks (by device id) and the
  /// ops that touch one; a collective keeps its operands and results there.
  /// FailedPrecondition where another op mixes kept and other devices, or a
  /// value spans both.
  Status Restrict(const std::vector<char>& keep);
  /// The template is the part of a program on some devices
  /// (PartitionShardingsPart): `images` (per template op; kept by the
  /// caller) says how many of the whole's ops each stands for.
  void SetImages(const std::vector<double>* images) { images_ = images; }
  ExpandedProgram Run();
  std::vector<std::optional<TaskTag>>& tasks() { return tasks_; }
  /// The ops of the unrestricted program Run() writes (of the whole program
  /// the template is part of, with SetImages).
  int64_t WholeOps() const;

  /// The task segments (segment_view.h) of the program Run() emits, found
  /// from the template alone: the segments SegmentOrderView finds in that
  /// program, the values between them being the Sends' results (numbered by
  /// their segments). nullopt where a sum would join a segment of its own
  /// (a summed Send result) or a Send's result is not kept.
  std::optional<SegmentOrderView::Parts> Segments();
  /// Run()'s program with its ops in the order of `order`, a permutation of
  /// Segments()'s segments, each segment's ops in Run()'s order: the program
  /// Run() and OrderExpandedByTasks give, its values numbered in the new
  /// order. nullopt where an op would read a value not yet written or a
  /// running sum would skip a microbatch (the order is then not a program).
  std::optional<ExpandedProgram> RunInOrder(const std::vector<size_t>& order);
  /// The program RunInOrder(order) writes, as kinds of segments and their
  /// order (ir/segmented_program.h); nullopt where RunInOrder would refuse,
  /// or where a kept value is a tuple or a shared task op reads a sum.
  /// REQUIRES: Segments() returned the segments `order` permutes.
  std::optional<SegmentedProgram> Segmented(const std::vector<size_t>& order) const;

 private:
  friend class segment_writer::SegmentWriter;  // Segmented()'s steps (segmented_expansion.cc)
  /// One segment: microbatch m of task class `cls`, or (cls < 0) copy m of op `op`.
  struct Segment {
    int32_t cls = -1;
    int32_t op = -1;
    int32_t m = 0;
  };
  void Reserve();
  void EmitParams();
  void EmitReturns();
  /// Clone(i, m), then its sums where it has them.
  void Emit(size_t i, int64_t m);
  /// Groups the task ops (IsScheduledTask, not Sends) by (stage, phase):
  /// class_of_, class_ops_; false where a per-microbatch op with a summed
  /// result is not such an op (a Send: its sum would join another segment),
  /// or a shared task op names a microbatch other than 0.
  bool GroupTasks();
  /// Appends to `out` the segment op i opens, numbered microbatch 0: its
  /// class's where `opened` has not marked the class yet (then marks it),
  /// none where it has, else the op's own.
  void AddSegment(size_t i, std::vector<char>& opened, std::vector<Segment>& out) const;
  /// The segments' tasks, Sends, the Sends each reads, and devices.
  SegmentOrderView::Parts SegmentParts() const;
  /// The template's reads and writes as value ids (those kept, when
  /// restricted), so that the K copies walk flat arrays, not the IR.
  void Flatten();
  void Clone(size_t i, int64_t m);
  void Accumulate(const Op& op, int64_t m);

  const Function& fn_;
  int64_t k_;
  MicrobatchClasses c_;
  std::vector<char> has_summed_;            // per op: a result is summed
  std::vector<int32_t> tin_begin_, tin_;    // CSR per template op: value ids read
  std::vector<int32_t> tout_begin_, tout_;  // CSR per template op: value ids written
  bool restricted_ = false;
  std::vector<char> kept_value_;           // by template value id (when restricted_)
  std::vector<char> kept_op_;              // by template op id (when restricted_)
  const std::vector<double>* images_ = nullptr;  // SetImages
  std::vector<std::vector<int32_t>> per_;  // [microbatch][template value id] (Reserve())
  std::vector<int32_t> shared_;            // shared values; sums of per-microbatch ones
  ExpandedProgram x_;
  std::vector<std::optional<TaskTag>> tasks_;
  std::vector<int32_t> ins_, outs_;  // scratch
  // Segments (Segments(), RunInOrder()).
  std::vector<int32_t> class_of_;                   // per template op: its task class, or -1
  std::vector<TaskTag> class_task_;                 // per class: stage and phase
  std::vector<std::vector<int32_t>> class_ops_[2];  // per class: kept ops of microbatch 0, of m > 0
  std::vector<Segment> segments_;
  bool undefined_read_ = false;  // RunInOrder: an op read a value not yet written
  bool record_tasks_ = true;     // tasks(): Run()'s program is ordered after; RunInOrder()'s is not
};

}  // namespace distir::sharding
