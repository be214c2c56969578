#include "transforms/pipeline_schedule.h"

#include <set>

namespace distir {
namespace {

// Ready tasks of one stage, ordered by microbatch.
struct StageQueue {
  std::set<int64_t> forward;
  std::set<int64_t> backward;
  bool last_was_forward = false;
  bool ran_any = false;
};

// Picks (and removes) the task `stage` runs now, if any.
bool Pick(StageQueue& q, PipelineSchedule schedule, bool& backward, int64_t& microbatch) {
  const bool prefer_backward =
      schedule == PipelineSchedule::k1F1B && q.ran_any && q.last_was_forward;
  std::set<int64_t>* first = prefer_backward ? &q.backward : &q.forward;
  std::set<int64_t>* second = prefer_backward ? &q.forward : &q.backward;
  std::set<int64_t>* chosen = !first->empty() ? first : (!second->empty() ? second : nullptr);
  if (chosen == nullptr) return false;
  backward = chosen == &q.backward;
  microbatch = *chosen->begin();
  chosen->erase(chosen->begin());
  q.last_was_forward = !backward;
  q.ran_any = true;
  return true;
}

}  // namespace

std::vector<std::vector<PipelineTask>> SchedulePipeline(int64_t stages, int64_t microbatches,
                                                        PipelineSchedule schedule, bool training) {
  std::vector<StageQueue> queues(static_cast<size_t>(stages));
  for (int64_t m = 0; m < microbatches; ++m) queues[0].forward.insert(m);
  const int64_t total = microbatches * stages * (training ? 2 : 1);
  int64_t done = 0;
  std::vector<std::vector<PipelineTask>> timesteps;
  while (done < total) {
    std::vector<PipelineTask> step;
    for (int64_t s = 0; s < stages; ++s) {
      PipelineTask task{s, 0, false};
      if (Pick(queues[static_cast<size_t>(s)], schedule, task.backward, task.microbatch)) {
        step.push_back(task);
      }
    }
    // Successors join their queues only now: they are ready next timestep.
    for (const PipelineTask& t : step) {
      if (!t.backward && t.stage + 1 < stages) {
        queues[static_cast<size_t>(t.stage + 1)].forward.insert(t.microbatch);
      } else if (!t.backward && training) {
        queues[static_cast<size_t>(t.stage)].backward.insert(t.microbatch);
      } else if (t.backward && t.stage > 0) {
        queues[static_cast<size_t>(t.stage - 1)].backward.insert(t.microbatch);
      }
    }
    done += static_cast<int64_t>(step.size());
    timesteps.push_back(std::move(step));
  }
  return timesteps;
}

std::string TaskName(const PipelineTask& task) {
  return std::string(task.backward ? "b" : "f") + std::to_string(task.stage) + "." +
         std::to_string(task.microbatch);
}

}  // namespace distir
