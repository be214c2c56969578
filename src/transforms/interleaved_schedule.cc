#include "transforms/interleaved_schedule.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "support/check.h"

namespace distir {
namespace {

// Megatron's get_model_chunk_id and the microbatch its data iterator gives:
// the k-th forward (or backward) task of a rank as a virtual stage and
// microbatch. Groups of P consecutive tasks share a chunk; the chunks take
// turns, v groups to a round; round g holds microbatches g P .. g P + P - 1.
PipelineTask TaskOfIteration(int64_t stages, int64_t chunks, int64_t rank, int64_t k,
                             bool backward) {
  const int64_t group = stages * chunks;
  int64_t chunk = (k % group) / stages;
  if (backward) chunk = chunks - 1 - chunk;
  const int64_t microbatch = (k / group) * stages + k % stages;
  return PipelineTask{chunk * stages + rank, microbatch, backward};
}

// The warm-up forwards of `rank`. One chunk (forward_backward_pipelining_
// without_interleaving): P - r - 1, at most K. Interleaved: every one when
// K = P (Megatron then runs all forwards before any backward), else
// (P - r - 1) 2 + (v - 1) P, at most K v.
int64_t WarmupTasks(int64_t stages, int64_t chunks, int64_t microbatches, int64_t rank) {
  if (chunks == 1) return std::min(stages - rank - 1, microbatches);
  const int64_t total = microbatches * chunks;
  if (microbatches == stages) return total;
  return std::min((stages - rank - 1) * 2 + (chunks - 1) * stages, total);
}

using TaskKey = std::tuple<int64_t, int64_t, bool>;  // virtual stage, microbatch, backward

// The task that must have run before `t` (in an earlier timestep), if any:
// the forward of the previous virtual stage; the backward of the next one,
// or the forward of the last for its backward.
std::optional<TaskKey> Predecessor(const PipelineTask& t, int64_t virtual_stages) {
  if (!t.backward) {
    if (t.stage == 0) return std::nullopt;
    return TaskKey{t.stage - 1, t.microbatch, false};
  }
  if (t.stage == virtual_stages - 1) return TaskKey{t.stage, t.microbatch, false};
  return TaskKey{t.stage + 1, t.microbatch, true};
}

}  // namespace

Status CheckInterleaving(int64_t stages, int64_t chunks, int64_t microbatches) {
  if (chunks == 1) return Status::Ok();
  if (chunks < 1) return InvalidArgument() << "v = " << chunks << " model chunks: must be >= 1";
  if (stages < 2)
    return InvalidArgument() << "the interleaved schedule (v = " << chunks
                             << " model chunks per stage) needs P >= 2 pipeline stages, got P = "
                             << stages;
  if (microbatches % stages != 0)
    return InvalidArgument() << "the interleaved schedule needs the microbatches K = "
                             << microbatches
                             << " to be a multiple of the pipeline stages P = " << stages
                             << " (Megatron's check)";
  return Status::Ok();
}

std::vector<PipelineTask> InterleavedRankOrder(int64_t stages, int64_t chunks, int64_t microbatches,
                                               int64_t rank, bool training) {
  DISTIR_CHECK(CheckInterleaving(stages, chunks, microbatches).ok());
  const int64_t total = microbatches * chunks;
  std::vector<PipelineTask> order;
  if (!training) {
    for (int64_t k = 0; k < total; ++k)
      order.push_back(TaskOfIteration(stages, chunks, rank, k, false));
    return order;
  }
  const int64_t warmup = WarmupTasks(stages, chunks, microbatches, rank);
  for (int64_t k = 0; k < warmup; ++k)
    order.push_back(TaskOfIteration(stages, chunks, rank, k, false));
  for (int64_t k = 0; k < total - warmup; ++k) {
    order.push_back(TaskOfIteration(stages, chunks, rank, k + warmup, false));
    order.push_back(TaskOfIteration(stages, chunks, rank, k, true));
  }
  for (int64_t k = total - warmup; k < total; ++k)
    order.push_back(TaskOfIteration(stages, chunks, rank, k, true));
  return order;
}

std::vector<std::vector<PipelineTask>> ScheduleInterleaved(int64_t stages, int64_t chunks,
                                                           int64_t microbatches, bool training) {
  std::vector<std::vector<PipelineTask>> orders;
  size_t remaining = 0;
  for (int64_t r = 0; r < stages; ++r) {
    orders.push_back(InterleavedRankOrder(stages, chunks, microbatches, r, training));
    remaining += orders.back().size();
  }
  std::vector<size_t> next(static_cast<size_t>(stages), 0);
  std::map<TaskKey, size_t> done_at;  // task -> its timestep
  std::vector<std::vector<PipelineTask>> timesteps;
  while (remaining > 0) {
    const size_t now = timesteps.size();
    std::vector<PipelineTask> step;
    for (size_t r = 0; r < orders.size(); ++r) {
      if (next[r] == orders[r].size()) continue;
      const PipelineTask& t = orders[r][next[r]];
      std::optional<TaskKey> before = Predecessor(t, stages * chunks);
      if (before.has_value() && done_at.count(*before) == 0) continue;
      step.push_back(t);
      ++next[r];
    }
    // Megatron's order never waits on itself: some rank always progresses.
    DISTIR_CHECK(!step.empty());
    for (const PipelineTask& t : step) done_at[{t.stage, t.microbatch, t.backward}] = now;
    remaining -= step.size();
    timesteps.push_back(std::move(step));
  }
  return timesteps;
}

}  // namespace distir
