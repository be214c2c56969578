#include "lowering/deadlock_check.h"

#include "lowering/lower.h"
#include "lowering_test_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::LoadExample;
using testing::ParseAndInferOrDie;
using testing::StatusIs;
using ::testing::HasSubstr;

Status Lower(const Module& m, SendSemantics sends = SendSemantics::kRendezvous) {
  LowerOptions options;
  options.deadlock.sends = sends;
  return LowerToRanks(m, options).status();
}

TEST(DeadlockCheckTest, ProjectedExamplesAreDeadlockFree) {
  for (const char* name : {"mlp_pp.distir", "mlp_pp_swapped.distir", "mlp_dp.distir",
                           "mlp_zero.distir", "mlp_checkpoint.distir"}) {
    SCOPED_TRACE(name);
    EXPECT_OK(Lower(LoadExample(name)));
  }
}

// Rank d1 enters AllReduce then AllGather on group [d1, d2], rank d2 the reverse.
constexpr char kSwappedCollectives[] = R"(
func @bad(%a1: tensor<4xf32, d1>, %a2: tensor<4xf32, d2>) {
  %s1 = Collective(%a1) {group = [d1, d2], kind = "AllReduce", rank = 0}
  %g1 = Collective(%a1) {axis = 0, group = [d1, d2], kind = "AllGather", rank = 0} : tensor<8xf32, d1>
  %g2 = Collective(%a2) {axis = 0, group = [d1, d2], kind = "AllGather", rank = 1} : tensor<8xf32, d2>
  %s2 = Collective(%a2) {group = [d1, d2], kind = "AllReduce", rank = 1}
  return %s1, %g1, %g2, %s2
}
)";

TEST(DeadlockCheckTest, ReportsCollectivesInDifferentOrders) {
  Status s = Lower(ParseAndInferOrDie(kSwappedCollectives));
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument,
                          "ranks d1 and d2 disagree on collective #1 of group [d1, d2]: d1 "
                          "enters AllReduce (at <test>:3:"));
  EXPECT_THAT(s.message(), HasSubstr("d2 enters AllGather {axis = 0} (at <test>:5:"));
  EXPECT_EQ(s.loc().line, 3);
}

TEST(DeadlockCheckTest, ReportsCollectivesThatDifferInAttributes) {
  Status s = Lower(ParseAndInferOrDie(R"(
func @bad(%a1: tensor<4x4xf32, d1>, %a2: tensor<4x4xf32, d2>) {
  %g1 = Collective(%a1) {axis = 0, group = [d1, d2], kind = "AllGather", rank = 0} : tensor<8x4xf32, d1>
  %g2 = Collective(%a2) {axis = 1, group = [d1, d2], kind = "AllGather", rank = 1} : tensor<4x8xf32, d2>
  return %g1, %g2
}
)"));
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument, "{axis = 0}"));
  EXPECT_THAT(s.message(), HasSubstr("{axis = 1}"));
}

// Each rank receives from the other before it sends: a cycle under any semantics.
constexpr char kReceiveCycle[] = R"(
func @cycle(%a: tensor<4xf32, d1>, %b: tensor<4xf32, d2>) {
  %x = RecvFrom() {device = d2} : tensor<4xf32, d1>
  _ = SendTo(%a) {device = d2}
  %y = RecvFrom() {device = d1} : tensor<4xf32, d2>
  _ = SendTo(%b) {device = d1}
  return %x, %y
}
)";

TEST(DeadlockCheckTest, ReportsASendCycle) {
  for (SendSemantics sends : {SendSemantics::kRendezvous, SendSemantics::kBuffered}) {
    Status s = Lower(ParseAndInferOrDie(kReceiveCycle), sends);
    EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument,
                            "deadlock: rank d1 waits in RecvFrom from d2 (at <test>:3:"));
    EXPECT_THAT(s.message(), HasSubstr("but rank d2 waits in RecvFrom from d1 (at <test>:5:"));
    EXPECT_EQ(s.loc().line, 3);
    EXPECT_TRUE(s.notes().empty());
  }
}

// Each rank sends before it receives: fine with buffers, a deadlock when a
// send waits for its receive.
constexpr char kSendFirst[] = R"(
func @exchange(%a: tensor<4xf32, d1>, %b: tensor<4xf32, d2>) {
  _ = SendTo(%a) {device = d2}
  %x = RecvFrom() {device = d2} : tensor<4xf32, d1>
  _ = SendTo(%b) {device = d1}
  %y = RecvFrom() {device = d1} : tensor<4xf32, d2>
  return %x, %y
}
)";

TEST(DeadlockCheckTest, RendezvousSendsWaitForTheirReceive) {
  EXPECT_THAT(Lower(ParseAndInferOrDie(kSendFirst)),
              StatusIs(StatusCode::kInvalidArgument,
                       "deadlock: rank d1 waits in SendTo to d2 for its receive"));
  EXPECT_OK(Lower(ParseAndInferOrDie(kSendFirst), SendSemantics::kBuffered));
}

constexpr char kUnreceived[] = R"(
func @lost(%a: tensor<4xf32, d1>, %b: tensor<4xf32, d2>) {
  _ = SendTo(%a) {device = d2}
  %y = Relu(%b)
  return %y
}
)";

TEST(DeadlockCheckTest, ReportsASendWithoutReceive) {
  EXPECT_THAT(Lower(ParseAndInferOrDie(kUnreceived)),
              StatusIs(StatusCode::kInvalidArgument, "but rank d2 has returned (at <test>:5:"));
  EXPECT_THAT(Lower(ParseAndInferOrDie(kUnreceived), SendSemantics::kBuffered),
              StatusIs(StatusCode::kInvalidArgument,
                       "SendTo from d1 to d2 is never received: rank d2 returns"));
}

TEST(DeadlockCheckTest, ReportsMismatchedMessageTypes) {
  EXPECT_THAT(Lower(ParseAndInferOrDie(R"(
func @f(%a: tensor<4xf32, d1>, %b: tensor<4xf32, d2>) {
  _ = SendTo(%a) {device = d2}
  %y = RecvFrom() {device = d1} : tensor<8xf32, d2>
  return %y
}
)")),
              StatusIs(StatusCode::kInvalidArgument,
                       "RecvFrom of rank d2 receives tensor<8xf32, d2>, but the matching SendTo of "
                       "rank d1 (at <test>:3:"));
}

TEST(DeadlockCheckTest, ReportsAPeerWithoutAProgram) {
  EXPECT_THAT(Lower(ParseAndInferOrDie(R"(
func @f(%a: tensor<4xf32, d1>) {
  _ = SendTo(%a) {device = d7}
  return %a
}
)")),
              StatusIs(StatusCode::kInvalidArgument, "SendTo of rank d1 names d7, which runs no program"));
}

TEST(DeadlockCheckTest, ReportsAGroupMemberThatNeverArrives) {
  EXPECT_THAT(Lower(ParseAndInferOrDie(R"(
func @f(%a: tensor<4xf32, d1>, %b: tensor<4xf32, d2>) {
  %s = Collective(%a) {group = [d1, d2], kind = "AllReduce", rank = 0}
  %t = Relu(%b)
  return %s, %t
}
)")),
              StatusIs(StatusCode::kInvalidArgument,
                       "deadlock: rank d1 waits in Collective AllReduce of group [d1, d2] (at "
                       "<test>:3:"));
}

TEST(DeadlockCheckTest, RejectsGlobalCommunicationInARankProgram) {
  Module m = ParseAndInferOrDie(R"(
func @f(%a: tensor<4xf32, d1>) {
  %b = Send(%a) {device = d2}
  return %b
}
)");
  EXPECT_THAT(CheckDeadlockFree({RankView{DeviceId(1), m.entry()}}),
              StatusIs(StatusCode::kInvalidArgument, "contains global Send"));
}

}  // namespace
}  // namespace distir
