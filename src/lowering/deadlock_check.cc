#include "lowering/deadlock_check.h"

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <unordered_map>

#include "lowering/placement.h"

namespace distir {
namespace {

enum class State { kRunning, kRecv, kSend, kCollective, kDone };

struct Message {
  int sender = -1;
  const Op* op = nullptr;
};

// The next collective of one group, while its members arrive.
struct Pending {
  const Op* first = nullptr;  // the op of the first member to arrive
  int first_rank = -1;
  int64_t index = 1;          // 1-based position among the group's collectives
  std::vector<int> waiting;   // members that have arrived, blocked
};

std::string Where(const Op& op) { return "at " + op.loc().ToString(); }

// "AllGather {axis = 0}": what members of a group must agree on.
std::string DescribeCollective(const Op& op) {
  std::ostringstream os;
  os << op.FindAttr("kind")->AsString();
  bool first = true;
  for (const auto& [name, value] : op.attrs()) {
    if (name == "kind" || name == "group" || name == "rank") continue;
    os << (first ? " {" : ", ") << name << " = " << value.ToString();
    first = false;
  }
  if (!first) os << "}";
  return os.str();
}

bool SameCollective(const Op& a, const Op& b) {
  AttrMap x = a.attrs();
  AttrMap y = b.attrs();
  x.erase("rank");
  y.erase("rank");
  return x == y;
}

class Checker {
 public:
  Checker(const std::vector<RankView>& ranks, const DeadlockCheckOptions& options)
      : ranks_(ranks), options_(options) {}

  Status Run();

 private:
  Status Init();
  Status Advance(int r);
  Status Step(int r, const Op& op, bool& blocked);
  Status DoSend(int r, const Op& op, bool& blocked);
  Status DoRecv(int r, const Op& op, bool& blocked);
  Status DoCollective(int r, const Op& op, bool& blocked);
  Status CheckGroup(int r, const Op& op, const std::vector<DeviceId>& group) const;
  StatusOr<int> PeerRank(int r, const Op& op, DeviceId peer) const;
  void Resume(int r);
  int Blocker(int r) const;
  std::string Describe(int r) const;
  Status ReportStuck() const;
  Status ReportUnreceived() const;
  uint64_t QueueKey(int from, int to) const {
    return static_cast<uint64_t>(from) * ranks_.size() + static_cast<uint64_t>(to);
  }

  const std::vector<RankView>& ranks_;
  DeadlockCheckOptions options_;
  std::unordered_map<int32_t, int> index_;     // device id -> rank
  std::vector<std::vector<const Op*>> events_;  // per rank: its communication ops
  std::vector<size_t> pc_;
  std::vector<State> state_;
  std::vector<int> waits_on_;  // the peer a rank blocked in SendTo/RecvFrom waits for
  std::unordered_map<uint64_t, std::deque<Message>> queues_;  // by (sender, receiver)
  std::map<std::vector<DeviceId>, Pending> groups_;
  std::deque<int> ready_;
};

Status Checker::Init() {
  for (size_t r = 0; r < ranks_.size(); ++r) {
    index_[ranks_[r].device.value()] = static_cast<int>(r);
    std::vector<const Op*> events;
    for (const auto& op : ranks_[r].function->ops()) {
      if (op->is_call() || !IsCommunication(op->kind())) continue;
      if (!IsPerRankCommunication(op->kind())) {
        return InvalidArgument(op->loc())
               << "the program of rank " << ranks_[r].device << " contains global " << op->Name()
               << "; per-rank programs communicate with SendTo, RecvFrom and Collective";
      }
      events.push_back(op.get());
    }
    events_.push_back(std::move(events));
  }
  pc_.assign(ranks_.size(), 0);
  state_.assign(ranks_.size(), State::kRunning);
  waits_on_.assign(ranks_.size(), -1);
  for (size_t r = 0; r < ranks_.size(); ++r) ready_.push_back(static_cast<int>(r));
  return Status::Ok();
}

StatusOr<int> Checker::PeerRank(int r, const Op& op, DeviceId peer) const {
  auto it = index_.find(peer.value());
  if (it != index_.end()) return it->second;
  return InvalidArgument(op.loc()) << op.Name() << " of rank " << ranks_[r].device << " names "
                                   << peer << ", which runs no program";
}

// A rank blocked in SendTo (rendezvous) or a Collective goes on after it.
void Checker::Resume(int r) {
  ++pc_[r];
  state_[r] = State::kRunning;
  ready_.push_back(r);
}

Status Checker::DoSend(int r, const Op& op, bool& blocked) {
  DISTIR_ASSIGN_OR_RETURN(int peer, PeerRank(r, op, op.FindAttr("device")->AsDevice()));
  queues_[QueueKey(r, peer)].push_back(Message{r, &op});
  if (state_[peer] == State::kRecv && waits_on_[peer] == r) {
    state_[peer] = State::kRunning;  // retries its RecvFrom
    ready_.push_back(peer);
  }
  if (options_.sends == SendSemantics::kBuffered) return Status::Ok();
  blocked = true;
  state_[r] = State::kSend;
  waits_on_[r] = peer;
  return Status::Ok();
}

Status Checker::DoRecv(int r, const Op& op, bool& blocked) {
  DISTIR_ASSIGN_OR_RETURN(int peer, PeerRank(r, op, op.FindAttr("device")->AsDevice()));
  std::deque<Message>& queue = queues_[QueueKey(peer, r)];
  if (queue.empty()) {
    blocked = true;
    state_[r] = State::kRecv;
    waits_on_[r] = peer;
    return Status::Ok();
  }
  const Message m = queue.front();
  queue.pop_front();
  const Type& sent = m.op->input(0)->type();
  const Type& received = op.result(0)->type();
  if (sent.WithDevice(ranks_[r].device) != received) {
    return InvalidArgument(op.loc())
           << "RecvFrom of rank " << ranks_[r].device << " receives " << received.ToString()
           << ", but the matching SendTo of rank " << ranks_[peer].device << " ("
           << Where(*m.op) << ") sends " << sent.ToString()
           << "; the k-th receive from a peer takes the k-th send to it";
  }
  if (options_.sends == SendSemantics::kRendezvous) Resume(m.sender);
  return Status::Ok();
}

Status Checker::CheckGroup(int r, const Op& op, const std::vector<DeviceId>& group) const {
  const int64_t pos = op.GetInt("rank", -1);
  if (pos < 0 || pos >= static_cast<int64_t>(group.size()) || group[pos] != ranks_[r].device) {
    return InvalidArgument(op.loc()) << "Collective of rank " << ranks_[r].device << " says rank "
                                     << pos << " of group " << op.FindAttr("group")->ToString()
                                     << ", which is not its position there";
  }
  for (DeviceId d : group) DISTIR_RETURN_IF_ERROR(PeerRank(r, op, d).status());
  return Status::Ok();
}

Status Checker::DoCollective(int r, const Op& op, bool& blocked) {
  const std::vector<DeviceId>& group = op.FindAttr("group")->AsDevices();
  DISTIR_RETURN_IF_ERROR(CheckGroup(r, op, group));
  Pending& g = groups_[group];
  if (g.first == nullptr) {
    g.first = &op;
    g.first_rank = r;
  } else if (!SameCollective(*g.first, op)) {
    return InvalidArgument(g.first->loc())
           << "ranks " << ranks_[g.first_rank].device << " and " << ranks_[r].device
           << " disagree on collective #" << g.index << " of group "
           << op.FindAttr("group")->ToString() << ": " << ranks_[g.first_rank].device
           << " enters " << DescribeCollective(*g.first) << " (" << Where(*g.first) << "), "
           << ranks_[r].device << " enters " << DescribeCollective(op) << " (" << Where(op)
           << "); every member must enter the same collectives in the same order";
  }
  if (g.waiting.size() + 1 < group.size()) {
    g.waiting.push_back(r);
    blocked = true;
    state_[r] = State::kCollective;
    return Status::Ok();
  }
  for (int w : g.waiting) Resume(w);
  g.waiting.clear();
  g.first = nullptr;
  ++g.index;
  return Status::Ok();
}

Status Checker::Step(int r, const Op& op, bool& blocked) {
  switch (op.kind()) {
    case OpKind::kSendTo:
      return DoSend(r, op, blocked);
    case OpKind::kRecvFrom:
      return DoRecv(r, op, blocked);
    default:
      return DoCollective(r, op, blocked);
  }
}

Status Checker::Advance(int r) {
  while (state_[r] == State::kRunning) {
    if (pc_[r] == events_[r].size()) {
      state_[r] = State::kDone;
      break;
    }
    bool blocked = false;
    DISTIR_RETURN_IF_ERROR(Step(r, *events_[r][pc_[r]], blocked));
    if (blocked) break;
    ++pc_[r];
  }
  return Status::Ok();
}

// The rank `r` waits for: its peer, or a member of its group not yet arrived.
int Checker::Blocker(int r) const {
  if (state_[r] != State::kCollective) return waits_on_[r];
  const Op& op = *events_[r][pc_[r]];
  const Pending& g = groups_.at(op.FindAttr("group")->AsDevices());
  for (DeviceId d : op.FindAttr("group")->AsDevices()) {
    const int m = index_.at(d.value());
    if (m != r && std::find(g.waiting.begin(), g.waiting.end(), m) == g.waiting.end()) return m;
  }
  return r;
}

std::string Checker::Describe(int r) const {
  std::ostringstream os;
  os << "rank " << ranks_[r].device;
  if (state_[r] == State::kDone) {
    os << " has returned (at " << ranks_[r].function->return_loc().ToString() << ")";
    return os.str();
  }
  const Op& op = *events_[r][pc_[r]];
  const int peer = waits_on_[r];
  switch (state_[r]) {
    case State::kRecv:
      os << " waits in RecvFrom from " << ranks_[peer].device;
      break;
    case State::kSend:
      os << " waits in SendTo to " << ranks_[peer].device << " for its receive";
      break;
    default:
      os << " waits in Collective " << DescribeCollective(op) << " of group "
         << op.FindAttr("group")->ToString();
      break;
  }
  os << " (" << Where(op) << ")";
  return os.str();
}

// Every rank still waiting is blocked for good; blame the one with the
// smallest device and what it waits for, and list the other blocked ranks.
Status Checker::ReportStuck() const {
  int first = -1;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    if (state_[r] == State::kDone) continue;
    if (first < 0 || ranks_[r].device < ranks_[first].device) first = static_cast<int>(r);
  }
  const Op& op = *events_[first][pc_[first]];
  const int blocker = Blocker(first);
  Status s = InvalidArgument(op.loc()) << "deadlock: " << Describe(first) << ", but "
                                       << Describe(blocker);
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const int other = static_cast<int>(r);
    if (state_[r] != State::kDone && other != first && other != blocker) s.AddNote(Describe(r));
  }
  return s;
}

Status Checker::ReportUnreceived() const {
  const Message* oldest = nullptr;
  for (const auto& [key, queue] : queues_) {
    if (queue.empty()) continue;
    const Message& m = queue.front();
    if (oldest == nullptr || std::pair(m.sender, m.op->id()) < std::pair(oldest->sender, oldest->op->id())) {
      oldest = &m;
    }
  }
  if (oldest == nullptr) return Status::Ok();
  const DeviceId to = oldest->op->FindAttr("device")->AsDevice();
  const int receiver = index_.at(to.value());
  return InvalidArgument(oldest->op->loc())
         << "SendTo from " << ranks_[oldest->sender].device << " to " << to
         << " is never received: rank " << to << " returns (at "
         << ranks_[receiver].function->return_loc().ToString()
         << ") without a matching RecvFrom";
}

Status Checker::Run() {
  DISTIR_RETURN_IF_ERROR(Init());
  while (!ready_.empty()) {
    const int r = ready_.front();
    ready_.pop_front();
    DISTIR_RETURN_IF_ERROR(Advance(r));
  }
  for (State s : state_) {
    if (s != State::kDone) return ReportStuck();
  }
  return ReportUnreceived();
}

}  // namespace

Status CheckDeadlockFree(const std::vector<RankView>& ranks, const DeadlockCheckOptions& options) {
  return Checker(ranks, options).Run();
}

}  // namespace distir
