#include "search/memory_estimate.h"

#include <iomanip>
#include <sstream>

#include "support/byte_size.h"

namespace distir::search {

double EstimateProgramOps(const Function& seq, const ParallelOptions& o, bool one_replica) {
  const double n = static_cast<double>(seq.ops().size());
  double m = 1.25;
  if (o.recompute != RecomputeKind::kNone) m += 0.5;
  if (o.zero_stage >= 3) m += 0.5;
  const double replicas = one_replica ? 1.0 : static_cast<double>(o.dp);
  const double per_microbatch = m * n + 4.0 * static_cast<double>(o.pp);
  return replicas * static_cast<double>(o.tp) *
         (static_cast<double>(o.microbatches) * per_microbatch + n);
}

double EstimateMemoryBytes(double ops, bool with_trace) {
  const double per_op = kMemoryBytesPerOp + (with_trace ? kTraceMemoryBytesPerOp : 0.0);
  return kBaseMemoryBytes + ops * per_op;
}

double EstimateExpandedMemoryBytes(double ops, double template_ops) {
  return kBaseMemoryBytes + template_ops * kMemoryBytesPerOp + ops * kExpandedMemoryBytesPerOp;
}

double EstimateSegmentedMemoryBytes(double ops, double template_ops, double sequential_ops) {
  return kBaseMemoryBytes + sequential_ops * kGlobalViewMemoryBytesPerOp +
         2 * template_ops * kMemoryBytesPerOp + ops * kSegmentedMemoryBytesPerOp;
}

Status CheckMemoryEstimate(double estimate_bytes, double ops, int64_t limit_bytes) {
  if (limit_bytes <= 0 || estimate_bytes <= static_cast<double>(limit_bytes)) {
    return Status::Ok();
  }
  std::ostringstream count;
  count << std::setprecision(3) << ops;
  return ResourceExhausted() << "needs about " << FormatByteSize(estimate_bytes)
                             << " of memory to build and simulate its program of about "
                             << count.str() << " ops, above the limit of "
                             << FormatByteSize(static_cast<double>(limit_bytes))
                             << " (--max-memory)";
}

int64_t DefaultMaxMemory(int processes_on_machine) {
  const std::optional<int64_t> machine = MachineMemoryBytes();
  if (!machine) return 0;
  const double share = kDefaultMemoryFraction * static_cast<double>(*machine);
  return static_cast<int64_t>(share / processes_on_machine);
}

StatusOr<int64_t> ParseMaxMemory(const std::string& text) {
  if (text == "none") return int64_t{0};
  const std::optional<double> bytes = ParseByteSize(text);
  // 2^63: sizes are int64 bytes.
  if (!bytes || *bytes < 1 || !(*bytes < 9223372036854775808.0)) {
    return InvalidArgument() << "--max-memory must be a size below 8 EiB with a unit ("
                             << ByteSizeUnits() << ") or 'none', got '" << text << "'";
  }
  return static_cast<int64_t>(*bytes);
}

}  // namespace distir::search
