#include "transforms/parallel_options.h"

#include <algorithm>
#include <cctype>

#include "support/str_util.h"

namespace distir {

std::string_view ScheduleName(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGpipe:
      return "gpipe";
    case PipelineSchedule::k1F1B:
      return "1f1b";
  }
  return "?";
}

StatusOr<PipelineSchedule> ParseSchedule(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "gpipe") return PipelineSchedule::kGpipe;
  if (lower == "1f1b") return PipelineSchedule::k1F1B;
  return InvalidArgument() << "unknown pipeline schedule '" << text << "' (expected gpipe or 1f1b)";
}

std::string DescribeParallelOptions(const ParallelOptions& o) {
  std::string out = "D=" + std::to_string(o.dp) + " T=" + std::to_string(o.tp) +
                    " P=" + std::to_string(o.pp) + " K=" + std::to_string(o.microbatches) + " " +
                    std::string(ScheduleName(o.schedule));
  if (o.virtual_stages != 1) out += " vpp=" + std::to_string(o.virtual_stages);
  if (o.sequence_parallel) out += " sp";
  if (o.recompute == RecomputeKind::kFull) out += " recompute";
  if (o.recompute == RecomputeKind::kSelective) out += " recompute=selective";
  if (o.zero_stage != 0) out += " zero=" + std::to_string(o.zero_stage);
  return out;
}

}  // namespace distir
