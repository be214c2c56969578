#include "sharding/task_order.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "sharding/exchange_order.h"
#include "sharding/pipeline_task.h"
#include "sharding/segment_view.h"
#include "support/status_or.h"
#include "transforms/interleaved_schedule.h"
#include "transforms/pipeline_schedule.h"

namespace distir::sharding {
namespace {

constexpr int64_t kFirst = -1;
constexpr int64_t kLast = std::numeric_limits<int64_t>::max();

// The timestep of each (stage, microbatch, backward) task, flat: index
// (stage * microbatches + microbatch) * 2 + backward; -1 for none.
class Timesteps {
 public:
  /// `steps`: a schedule's timesteps of `stages` stages (chunks).
  Timesteps(int64_t stages, int64_t microbatches,
            const std::vector<std::vector<PipelineTask>>& steps)
      : microbatches_(microbatches), at_(static_cast<size_t>(stages * microbatches * 2), -1) {
    num_steps_ = static_cast<int64_t>(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      for (const PipelineTask& t : steps[i])
        at_[Index(t.stage, t.microbatch, t.backward)] = static_cast<int64_t>(i);
    }
  }
  /// Timesteps of the schedule.
  int64_t num_steps() const { return num_steps_; }
  /// REQUIRES: stage and microbatch within the counts given.
  int64_t At(int64_t stage, int64_t microbatch, bool backward) const {
    return at_[Index(stage, microbatch, backward)];
  }

 private:
  size_t Index(int64_t stage, int64_t microbatch, bool backward) const {
    return static_cast<size_t>((stage * microbatches_ + microbatch) * 2 + (backward ? 1 : 0));
  }
  int64_t microbatches_;
  int64_t num_steps_ = 0;
  std::vector<int64_t> at_;
};

// The timesteps of `chunks` stages (P v chunks with v = `virtual_stages`):
// `schedule`'s, or the interleaved schedule's when v > 1.
StatusOr<std::vector<std::vector<PipelineTask>>> ScheduleOfTasks(int64_t chunks,
                                                                 int64_t microbatches,
                                                                 PipelineSchedule schedule,
                                                                 int64_t virtual_stages,
                                                                 bool training) {
  // 1F1B as Megatron runs it (interleaved_schedule.h with v = 1: P - r - 1
  // warm-up forwards); the synchronous PipeDream-flush of SchedulePipeline
  // gives stage r 2 (P - r) - 1, and its extra in-flight forwards cannot meet
  // their neighbours' exchanges (exchange_order.h).
  if (virtual_stages == 1 && (schedule != PipelineSchedule::k1F1B || !training))
    return SchedulePipeline(chunks, microbatches, schedule, training);
  if (virtual_stages < 1 || chunks % virtual_stages != 0)
    return InvalidArgument() << "the tasks name " << chunks
                             << " model chunks, not a multiple of v = " << virtual_stages;
  const int64_t stages = chunks / virtual_stages;
  DISTIR_RETURN_IF_ERROR(CheckInterleaving(stages, virtual_stages, microbatches));
  return ScheduleInterleaved(stages, virtual_stages, microbatches, training);
}

// The Timesteps of ScheduleOfTasks(chunks, microbatches, schedule,
// virtual_stages, training), kept for the grid points that ask again: a
// search orders every point's program, and points that differ only in D and
// T share the schedule (building it was 4 % of the MLP-1B search). A few
// recent schedules per thread, so the memory stays small.
StatusOr<std::shared_ptr<const Timesteps>> TimestepsOf(int64_t chunks, int64_t microbatches,
                                                       PipelineSchedule schedule,
                                                       int64_t virtual_stages, bool training) {
  using Key = std::tuple<int64_t, int64_t, PipelineSchedule, int64_t, bool>;
  constexpr size_t kKept = 64;
  thread_local std::vector<std::pair<Key, std::shared_ptr<const Timesteps>>> kept;
  const Key key{chunks, microbatches, schedule, virtual_stages, training};
  for (const auto& [k, t] : kept) {
    if (k == key) return t;
  }
  DISTIR_ASSIGN_OR_RETURN(
      auto steps, ScheduleOfTasks(chunks, microbatches, schedule, virtual_stages, training));
  auto t = std::make_shared<const Timesteps>(chunks, microbatches, steps);
  if (kept.size() == kKept) kept.erase(kept.begin());
  kept.emplace_back(key, t);
  return t;
}

// Setup ops in program order, the tasks' ops in exchange order, then the
// update ops in program order; nullopt where the exchange order has a cycle.
template <typename View>
std::optional<std::vector<size_t>> ExchangeThenUpdate(
    const View& fn, const std::vector<std::optional<TaskTag>>& tasks,
    const std::vector<int64_t>& key, int64_t chains, bool interleaved) {
  const size_t n = fn.num_ops();
  std::vector<int64_t> step(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (key[i] != kFirst && key[i] != kLast) step[i] = key[i];
  }
  std::optional<std::vector<size_t>> middle = ExchangeOrder(fn, tasks, step, chains, interleaved);
  if (!middle.has_value()) return std::nullopt;
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (key[i] == kFirst) order.push_back(i);
  }
  order.insert(order.end(), middle->begin(), middle->end());
  for (size_t i = 0; i < n; ++i) {
    if (key[i] == kLast) order.push_back(i);
  }
  if (order.size() != n) return std::nullopt;
  return order;
}

// OK when running the ops of `fn` in `order` reads every value after its
// definition; Internal naming the first op that reads a value too early.
template <typename View>
Status CheckDefinedBeforeUse(const View& fn, const std::vector<size_t>& order) {
  std::vector<bool> defined(static_cast<size_t>(fn.num_values()), false);
  fn.ForEachParam([&](int32_t v) { defined[v] = true; });
  for (size_t i : order) {
    int32_t early = -1;
    fn.ForEachInput(i, [&](int32_t v) {
      if (early < 0 && !defined[v]) early = v;
    });
    if (early >= 0) return fn.ReadsTooEarly(i, early);
    fn.ForEachResult(i, [&](int32_t v) { defined[v] = true; });
  }
  return Status::Ok();
}

// The schedule's place of each op of `fn`: its task's timestep, kFirst for
// setup ops and kLast for update ops; the number of stages (chunks) and of
// timesteps the tasks name.
struct TaskKeys {
  std::vector<int64_t> key;
  int64_t stages = 0;
  int64_t steps = 0;
};

// The TaskKeys of `fn`; nullopt when `tasks` name no task (the order stays).
template <typename View>
StatusOr<std::optional<TaskKeys>> KeysOf(const View& fn,
                                         const std::vector<std::optional<TaskTag>>& tasks,
                                         PipelineSchedule schedule, int64_t virtual_stages) {
  const size_t n = fn.num_ops();
  int64_t stages = 0, microbatches = 0;
  bool training = false;
  for (const std::optional<TaskTag>& t : tasks) {
    if (!t.has_value()) continue;
    stages = std::max(stages, t->stage + 1);
    microbatches = std::max(microbatches, t->microbatch + 1);
    training = training || t->phase == TaskPhase::kBackward;
  }
  if (stages == 0 || microbatches == 0) return std::optional<TaskKeys>();
  DISTIR_ASSIGN_OR_RETURN(std::shared_ptr<const Timesteps> timesteps,
                          TimestepsOf(stages, microbatches, schedule, virtual_stages, training));
  const Timesteps& at = *timesteps;
  TaskKeys keys{std::vector<int64_t>(n, kFirst), stages, at.num_steps()};
  for (size_t i = 0; i < n; ++i) {
    const std::optional<TaskTag>& t = tasks[i];
    if (!t.has_value() || t->phase == TaskPhase::kSetup) continue;
    if (t->phase == TaskPhase::kUpdate) {
      keys.key[i] = kLast;
      continue;
    }
    const int64_t step =
        t->stage < 0 || t->microbatch < 0
            ? -1
            : at.At(t->stage, t->microbatch, t->phase == TaskPhase::kBackward);
    if (step < 0) return fn.NotInSchedule(i);
    keys.key[i] = step;
  }
  return std::optional<TaskKeys>(std::move(keys));
}

// Each stage in its own order, meeting its neighbours only at their
// transfers (exchange_order.h); nullopt where that order is not a valid
// program (the caller then orders by timesteps).
template <typename View>
std::optional<std::vector<size_t>> ExchangeTaskOrder(
    const View& fn, const std::vector<std::optional<TaskTag>>& tasks, const TaskKeys& keys,
    int64_t virtual_stages) {
  std::optional<std::vector<size_t>> order =
      ExchangeThenUpdate(fn, tasks, keys.key, keys.stages / virtual_stages, virtual_stages > 1);
  if (!order.has_value() || !CheckDefinedBeforeUse(fn, *order).ok()) return std::nullopt;
  return order;
}

// Within a timestep, the tasks' own ops first, then the sends between
// stages in stage order: a device receives only once its own task is done
// and does not wait for another stage's task before starting its own.
// Setup and update keep program order, sends included: an update may read
// what a send brings (a gradient computed on the next stage, as a
// transformer's bias gradient is, all-reduced where its weight lives).
template <typename View>
StatusOr<std::vector<size_t>> TimestepOrder(const View& fn,
                                            const std::vector<std::optional<TaskTag>>& tasks,
                                            const TaskKeys& keys) {
  const size_t n = fn.num_ops();
  const std::vector<int64_t>& key = keys.key;
  std::vector<int64_t> send_stage(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (fn.IsSend(i) && key[i] != kFirst && key[i] != kLast)
      send_stage[i] = tasks[i].value_or(TaskTag{}).stage;
  }
  // A stable counting sort on (key, send stage): setup, timesteps, update
  // (kFirst, 0..S-1, kLast), each with the non-sends then the sends by stage.
  const int64_t steps = keys.steps, stages = keys.stages;
  auto bucket = [&](size_t i) {
    const int64_t k = key[i] == kFirst ? 0 : key[i] == kLast ? steps + 1 : key[i] + 1;
    return static_cast<size_t>(k * (stages + 1) + (send_stage[i] + 1));
  };
  std::vector<size_t> start(static_cast<size_t>((steps + 2) * (stages + 1)) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[bucket(i) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[start[bucket(i)]++] = i;
  DISTIR_RETURN_IF_ERROR(CheckDefinedBeforeUse(fn, order));
  return order;
}

// The order of the ops of `fn` that OrderByTasks gives; nullopt when `tasks`
// name no task (the order stays).
template <typename View>
StatusOr<std::optional<std::vector<size_t>>> TaskOrder(
    const View& fn, const std::vector<std::optional<TaskTag>>& tasks, PipelineSchedule schedule,
    int64_t virtual_stages) {
  DISTIR_ASSIGN_OR_RETURN(std::optional<TaskKeys> keys,
                          KeysOf(fn, tasks, schedule, virtual_stages));
  if (!keys.has_value()) return std::optional<std::vector<size_t>>();
  if (std::optional<std::vector<size_t>> order =
          ExchangeTaskOrder(fn, tasks, *keys, virtual_stages))
    return order;
  DISTIR_ASSIGN_OR_RETURN(std::vector<size_t> order, TimestepOrder(fn, tasks, *keys));
  return std::optional<std::vector<size_t>>(std::move(order));
}

}  // namespace

std::optional<std::vector<size_t>> ExchangeSegmentOrder(const SegmentOrderView& segments,
                                                        PipelineSchedule schedule,
                                                        int64_t virtual_stages) {
  StatusOr<std::optional<TaskKeys>> keys =
      KeysOf(segments, segments.tasks(), schedule, virtual_stages);
  if (!keys.ok()) return std::nullopt;
  if (!keys->has_value()) {
    // No task: the order stays, and every segment is one op.
    std::vector<size_t> order(segments.num_ops());
    std::iota(order.begin(), order.end(), size_t{0});
    return order;
  }
  return ExchangeTaskOrder(segments, segments.tasks(), **keys, virtual_stages);
}

Status FunctionOrderView::ReadsTooEarly(size_t i, int32_t v) const {
  const Op& op = *fn_.ops()[i];
  for (const Value* in : op.inputs()) {
    if (in->id() != v) continue;
    return Internal(op.loc()) << "the pipeline schedule runs " << op.Name() << " before "
                              << in->Ref() << " is computed (by " << in->def()->Name() << ")";
  }
  return Internal(op.loc()) << "the pipeline schedule runs " << op.Name() << " too early";
}

Status FunctionOrderView::NotInSchedule(size_t i) const {
  const Op& op = *fn_.ops()[i];
  return Internal(op.loc()) << op.Name() << " belongs to no task of the schedule";
}

ExpandedOrderView::ExpandedOrderView(const ExpandedProgram& x, const Function& tmpl)
    : x_(x),
      tmpl_(tmpl),
      send_(tmpl.ops().size(), false),
      values_(static_cast<size_t>(tmpl.num_values()), nullptr) {
  for (const auto& p : tmpl.params()) values_[p->id()] = p.get();
  for (size_t i = 0; i < tmpl.ops().size(); ++i) {
    const Op& op = *tmpl.ops()[i];
    send_[i] = op.kind() == OpKind::kSend;
    for (const auto& r : op.results()) values_[r->id()] = r.get();
  }
}

// Names the template op of the copy, and the template value read.
Status ExpandedOrderView::ReadsTooEarly(size_t i, int32_t v) const {
  const int32_t t = x_.op[i];
  const Value& read = Template(v);
  const std::string what = t >= 0 ? tmpl_.ops()[static_cast<size_t>(t)]->Name() : "a sum";
  return Internal(t >= 0 ? tmpl_.ops()[static_cast<size_t>(t)]->loc() : read.loc())
         << "the pipeline schedule runs " << what << " (copy " << x_.copy[i] << ") before "
         << read.Ref() << " is computed";
}

Status ExpandedOrderView::NotInSchedule(size_t i) const {
  const int32_t t = x_.op[i];
  if (t < 0) return Internal() << "a sum of copy " << x_.copy[i] << " belongs to no task";
  const Op& op = *tmpl_.ops()[static_cast<size_t>(t)];
  return Internal(op.loc()) << op.Name() << " (copy " << x_.copy[i]
                            << ") belongs to no task of the schedule";
}

Status OrderPipelineTasks(Module& module, std::string function, PipelineSchedule schedule,
                          int64_t virtual_stages) {
  Function* fn = module.Lookup(function);
  if (fn == nullptr) return NotFound() << "no function @" << function << " to schedule";
  InheritTasks(*fn);
  std::vector<std::optional<TaskTag>> tasks(fn->ops().size());
  for (size_t i = 0; i < tasks.size(); ++i) tasks[i] = GetTask(*fn->ops()[i]);
  return OrderByTasks(*fn, tasks, schedule, virtual_stages);
}

Status OrderByTasks(Function& fn, const std::vector<std::optional<TaskTag>>& tasks,
                    PipelineSchedule schedule, int64_t virtual_stages) {
  DISTIR_ASSIGN_OR_RETURN(std::optional<std::vector<size_t>> order,
                          TaskOrder(FunctionOrderView(fn), tasks, schedule, virtual_stages));
  if (order.has_value()) fn.PermuteOps(*order);
  return Status::Ok();
}

Status OrderExpandedByTasks(ExpandedProgram& program, const Function& tmpl,
                            const std::vector<std::optional<TaskTag>>& tasks,
                            PipelineSchedule schedule, int64_t virtual_stages) {
  DISTIR_ASSIGN_OR_RETURN(
      std::optional<std::vector<size_t>> order,
      TaskOrder(ExpandedOrderView(program, tmpl), tasks, schedule, virtual_stages));
  if (order.has_value()) program.PermuteOps(*order);
  return Status::Ok();
}

}  // namespace distir::sharding
