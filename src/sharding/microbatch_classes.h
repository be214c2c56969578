// Which ops and values of a partitioned one-microbatch template are per
// microbatch, which shared, and which per-microbatch values are summed: what
// both forms of microbatch replication (replicate.h: the IR, ReplicateMicrobatches;
// the copies, ExpandMicrobatches) start from.

#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/function.h"
#include "sharding/pipeline_task.h"
#include "support/status.h"

namespace distir::sharding {

/// A forward or backward task: a microbatch's work.
bool IsTaskPhase(const std::optional<TaskTag>& t);

/// Which ops and values of a template are per microbatch, and which
/// per-microbatch values are summed (replicate.h).
struct MicrobatchClasses {
  // Bytes, not vector<bool>: the expansion reads them once per op and copy.
  std::vector<char> per_op, per_value, summed;
  std::vector<std::optional<TaskTag>> task;  // per op
  size_t last_per = 0;                       // one past the last per-microbatch op
};

/// Classifies `fn`'s ops and values, `batch` naming its batch parameters
/// (microbatch 0). Errors (FailedPrecondition, at the op): a call, an op that
/// reads a microbatch without a task, a shared op before the last
/// per-microbatch op that reads a per-microbatch value.
Status ClassifyTemplate(const Function& fn, const std::set<std::string>& batch,
                        MicrobatchClasses& c);

}  // namespace distir::sharding
