// Backend-independent parts of the executor (see executor.h): the
// device-to-rank mapping, lowering for execution, inputs, the timing protocol
// and the per-op Chrome trace.

#include "backend/executor.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ir/op_registry.h"
#include "lowering/deadlock_check.h"
#include "lowering/placement.h"

namespace distir::backend {

StatusOr<int> NodeLocalRank(MPI_Comm comm) {
  int me = 0, local = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    return Internal() << "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed";
  }
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

std::string_view BackendName(BackendKind kind) {
  return kind == BackendKind::kCpu ? "cpu" : "cuda";
}

StatusOr<BackendKind> ParseBackend(std::string_view name) {
  if (name == "cpu") return BackendKind::kCpu;
  if (name == "cuda") return BackendKind::kCuda;
  return InvalidArgument() << "unknown backend '" << name << "': expected cpu or cuda";
}

RankMap::RankMap(std::vector<DeviceId> devices) : devices_(std::move(devices)) {
  std::sort(devices_.begin(), devices_.end());
}

std::optional<int> RankMap::RankOf(DeviceId device) const {
  auto it = std::lower_bound(devices_.begin(), devices_.end(), device);
  if (it == devices_.end() || *it != device) return std::nullopt;
  return static_cast<int>(it - devices_.begin());
}

DeviceId RankMap::DeviceOf(int rank) const {
  return rank >= 0 && rank < num_devices() ? devices_[rank] : DeviceId();
}

const RankProgram* ExecutionPlan::ProgramOf(int rank) const {
  return rank >= 0 && rank < static_cast<int>(programs.size()) ? &programs[rank] : nullptr;
}

StatusOr<ExecutionPlan> PrepareExecution(const Module& module, const Function& fn) {
  DISTIR_ASSIGN_OR_RETURN(Placement placement, ComputePlacement(module, fn));
  ExecutionPlan plan;
  DISTIR_ASSIGN_OR_RETURN(plan.programs, ProjectToRanks(placement));
  std::vector<RankView> views;
  std::vector<DeviceId> devices;
  for (const RankProgram& r : plan.programs) {
    views.push_back(RankView{r.device, r.function.get()});
    devices.push_back(r.device);
  }
  DISTIR_RETURN_IF_ERROR(CheckDeadlockFree(views, DeadlockCheckOptions{}));
  plan.ranks = RankMap(std::move(devices));
  // ProjectToRanks returns device order already; keep programs[i] <-> rank i
  // true even if that ever changes.
  std::sort(plan.programs.begin(), plan.programs.end(),
            [](const RankProgram& a, const RankProgram& b) { return a.device < b.device; });
  plan.global = &fn;
  return plan;
}

std::vector<HostValue> RankInputs(const RankProgram& program,
                                  std::span<const HostValue> global_args) {
  std::vector<HostValue> out;
  for (const auto& p : program.function->params()) {
    out.push_back(global_args[program.origin[p->id()]->index()]);
  }
  return out;
}

namespace {

// RandomInputs' stream for global parameter `index`: one splitmix64 step from
// seed + index (reference_executor.cc); executor_test checks the two agree.
uint64_t ParamStream(uint64_t seed, int index) {
  uint64_t z = seed + static_cast<uint64_t>(index) + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<HostValue> RandomRankInputs(const RankProgram& program, uint64_t seed,
                                        const RandomInputOptions& options) {
  std::vector<HostValue> out;
  for (const auto& p : program.function->params()) {
    out.push_back(
        RandomValue(p->type(), ParamStream(seed, program.origin[p->id()]->index()), options));
  }
  return out;
}

void StoreRandomRankInput(const RankProgram& program, int param, uint64_t seed,
                          const TensorView& view, const RandomInputOptions& options) {
  const Value& p = *program.function->param(param);
  DrawRandomElements(
      p.type(), ParamStream(seed, program.origin[p.id()]->index()), options,
      [&](int64_t first, std::span<const double> values) { StoreValues(values, view, first); });
}

bool ParamsAreTensors(const RankProgram& program) {
  const auto& params = program.function->params();
  return std::none_of(params.begin(), params.end(),
                      [](const auto& p) { return p->type().is_tuple(); });
}

Status Executor::SetRandomInputs(uint64_t seed) {
  const RankProgram* mine = program();
  return SetInputs(mine ? RandomRankInputs(*mine, seed) : std::vector<HostValue>{});
}

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Rank 0 receives every rank's op intervals (labels and categories packed as
// text, one op per line: "category\tstart\tend\tlabel").
std::vector<std::vector<OpTiming>> GatherOpTimings(const std::vector<OpTiming>& mine,
                                                   MPI_Comm comm) {
  std::string packed;
  for (const OpTiming& t : mine) {
    packed += t.category + '\t' + std::to_string(t.start_s) + '\t' + std::to_string(t.end_s) +
              '\t' + t.label + '\n';
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int bytes = static_cast<int>(packed.size());
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::string all(static_cast<size_t>(rank == 0 ? total : 0), '\0');
  MPI_Gatherv(packed.data(), bytes, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, 0,
              comm);
  std::vector<std::vector<OpTiming>> out;
  if (rank != 0) return out;
  out.resize(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::string_view s(all.data() + displs[r], static_cast<size_t>(counts[r]));
    while (!s.empty()) {
      const size_t nl = s.find('\n');
      const std::string line(s.substr(0, nl));
      s.remove_prefix(nl + 1);
      const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1), t3 = line.find('\t', t2 + 1);
      out[r].push_back({line.substr(t3 + 1), line.substr(0, t1),
                        std::stod(line.substr(t1 + 1, t2 - t1 - 1)),
                        std::stod(line.substr(t2 + 1, t3 - t2 - 1))});
    }
  }
  return out;
}

}  // namespace

StatusOr<TimingResult> TimeExecutor(Executor& executor, MPI_Comm comm,
                                    const TimingOptions& options) {
  if (options.iterations < 1 || options.warmup < 0) {
    return InvalidArgument() << "timing needs at least 1 iteration and no negative warm-up, got "
                             << options.iterations << " and " << options.warmup;
  }
  for (int i = 0; i < options.warmup; ++i) DISTIR_RETURN_IF_ERROR(executor.Run());
  TimingResult result;
  for (int i = 0; i < options.iterations; ++i) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    DISTIR_RETURN_IF_ERROR(executor.Run());
    double dt = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
    result.iteration_s.push_back(dt);
  }
  result.median_s = Median(result.iteration_s);
  result.throughput =
      result.median_s > 0 ? static_cast<double>(options.batch_size) / result.median_s : 0;
  int64_t peaks[2] = {executor.planned_peak_bytes(), executor.live_peak_bytes()};
  MPI_Allreduce(MPI_IN_PLACE, peaks, 2, MPI_INT64_T, MPI_MAX, comm);
  result.planned_peak_bytes = peaks[0];
  result.live_peak_bytes = peaks[1];
  if (options.per_op) {
    std::vector<OpTiming> mine;
    MPI_Barrier(comm);
    DISTIR_RETURN_IF_ERROR(executor.RunProfiled(mine));
    result.ops = GatherOpTimings(mine, comm);
  }
  return result;
}

std::string OpTimingChromeTraceJson(const std::string& name, const RankMap& ranks,
                                    const std::vector<std::vector<OpTiming>>& per_rank) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"pid", 0}, {"name", "process_name"}, {"args", {{"name", name}}}});
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const DeviceId d = ranks.DeviceOf(static_cast<int>(r));
    if (!d.has_value()) continue;
    events.push_back({{"ph", "M"},
                      {"pid", 0},
                      {"tid", d.value()},
                      {"name", "thread_name"},
                      {"args", {{"name", d.ToString()}}}});
    for (const OpTiming& t : per_rank[r]) {
      events.push_back({{"ph", "X"},
                        {"pid", 0},
                        {"tid", d.value()},
                        {"name", t.label},
                        {"cat", t.category},
                        {"ts", t.start_s * 1e6},
                        {"dur", (t.end_s - t.start_s) * 1e6}});
    }
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump(1);
}

bool IsRankCommunication(OpKind kind) {
  return kind == OpKind::kSendTo || kind == OpKind::kRecvFrom || kind == OpKind::kCollective;
}

OpLabeler::OpLabeler(const Function& global) {
  for (const auto& op : global.ops()) {
    const bool communication = GetOpInfo(op->kind()).op_class == OpClass::kCommunication;
    if (!IsRankCommunication(op->kind()) && !communication) continue;
    for (const Value* in : op->inputs()) users_[in].push_back(op.get());
  }
}

std::string OpLabeler::Label(const Op& op, const std::vector<const Value*>& origin) const {
  const Op* global = GlobalOp(op, origin);
  if (global == nullptr) return op.Name();
  std::string label = global->Name();
  if (global->num_results() > 0) label += " " + global->result(0)->Ref();
  return label;
}

const Op* OpLabeler::GlobalOp(const Op& op, const std::vector<const Value*>& origin) const {
  if (op.num_results() > 0 && origin[op.result(0)->id()] != nullptr) {
    return origin[op.result(0)->id()]->def();
  }
  if (op.num_inputs() == 0 || origin[op.input(0)->id()] == nullptr) return nullptr;
  auto it = users_.find(origin[op.input(0)->id()]);
  if (it == users_.end()) return nullptr;
  const std::string want = op.kind() == OpKind::kSendTo ? "Send" : op.FindAttr("kind")->AsString();
  for (const Op* g : it->second) {
    if (g->Name() == want) return g;
  }
  return nullptr;
}

}  // namespace distir::backend
