#include "sharding/segment_view.h"

namespace distir::sharding {

bool IsScheduledTask(const std::optional<TaskTag>& t) {
  return t.has_value() && (t->phase == TaskPhase::kForward || t->phase == TaskPhase::kBackward) &&
         t->stage >= 0 && t->microbatch >= 0;
}

Status SegmentOrderView::ReadsTooEarly(size_t s, int32_t v) const {
  return Internal() << "the pipeline schedule runs task segment " << s << " before value " << v
                    << " is computed";
}

Status SegmentOrderView::NotInSchedule(size_t s) const {
  return Internal() << "task segment " << s << " belongs to no task of the schedule";
}

}  // namespace distir::sharding
