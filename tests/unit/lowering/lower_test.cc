#include "lowering/lower.h"

#include <chrono>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lowering_test_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::LoadExample;
using testing::StatusIs;
using ::testing::HasSubstr;

TEST(LowerTest, DescribesWhichRanksShareWhichProgram) {
  ASSERT_OK_AND_ASSIGN(LoweredModule dp, LowerToRanks(LoadExample("mlp_dp.distir")));
  EXPECT_EQ(DescribePrograms(dp),
            "// @mlpDP lowered to 2 ranks, 1 program\n"
            "// ranks d1, d2: program @rank_d1\n");
  ASSERT_OK_AND_ASSIGN(LoweredModule pp, LowerToRanks(LoadExample("mlp_pp.distir")));
  EXPECT_EQ(DescribePrograms(pp),
            "// @mlpPP lowered to 2 ranks, 2 programs\n"
            "// rank d1: program @rank_d1\n"
            "// rank d2: program @rank_d2\n");
}

TEST(LowerTest, KeepsOnlyTheCalleesTheRanksNeed) {
  ASSERT_OK_AND_ASSIGN(LoweredModule pp, LowerToRanks(LoadExample("mlp_pp.distir")));
  std::vector<std::string> names;
  for (const auto& f : pp.module.functions()) names.push_back(f->name());
  EXPECT_EQ(names, (std::vector<std::string>{"dense", "denseGrad", "lossGrad", "rank_d1",
                                             "rank_d2"}));
  ASSERT_EQ(pp.origins.size(), names.size());
}

// The lowered module prints, parses, verifies and re-infers to the same text.
TEST(LowerTest, RankProgramsRoundTripThroughTheParser) {
  for (const char* name : {"mlp_pp.distir", "mlp_dp.distir", "mlp_zero.distir",
                           "mlp_checkpoint.distir", "gpt2_reshape.distir"}) {
    Module m = LoadExample(name);
    ASSERT_OK_AND_ASSIGN(LoweredModule lowered, LowerToRanks(m));
    const std::string text = PrintModule(lowered.module);
    ASSERT_OK_AND_ASSIGN(Module reparsed, ParseModule(text, name));
    ASSERT_OK(VerifyModule(reparsed));
    ASSERT_OK(InferTypes(reparsed));
    EXPECT_EQ(PrintModule(reparsed), text) << name;
  }
}

TEST(LowerTest, LowersANamedFunction) {
  Module m = LoadExample("mlp_pp.distir");
  LowerOptions options;
  options.function = "lossGrad";
  EXPECT_THAT(LowerToRanks(m, options),
              StatusIs(StatusCode::kInvalidArgument, "parameter %p of @lossGrad has no device"));
  options.function = "nope";
  EXPECT_THAT(LowerToRanks(m, options), StatusIs(StatusCode::kNotFound, "no function @nope"));
}

// A global program of about 100k ops over 8 devices: per device, chains of
// Relu; every 8 steps an AllReduce over all devices and a ring of Sends.
Module BigProgram(int steps) {
  constexpr int kDevices = 8;
  Module m;
  auto fn = std::make_unique<Function>("big");
  std::vector<Value*> cur;
  for (int d = 0; d < kDevices; ++d) {
    cur.push_back(fn->AddParam("x" + std::to_string(d),
                               Type::Tensor(DType::kF32, {64}, DeviceId(d))));
  }
  int n = 0;
  auto name = [&n] { return "v" + std::to_string(n++); };
  for (int s = 0; s < steps; ++s) {
    for (int d = 0; d < kDevices; ++d) {
      Op* op = fn->AddOp(OpKind::kRelu, {cur[d]}, {}, {name()});
      op->result(0)->set_type(cur[d]->type());
      cur[d] = op->result(0);
    }
    if (s % 8 != 7) continue;
    std::vector<std::string> names;
    for (int d = 0; d < kDevices; ++d) names.push_back(name());
    Op* ar = fn->AddOp(OpKind::kAllReduce, cur, {}, names);
    for (int d = 0; d < kDevices; ++d) {
      ar->result(d)->set_type(cur[d]->type());
      cur[d] = ar->result(d);
    }
    std::vector<Value*> sent(kDevices);
    for (int d = 0; d < kDevices; ++d) {
      const DeviceId to((d + 1) % kDevices);
      Op* send = fn->AddOp(OpKind::kSend, {cur[d]}, {{"device", to}}, {name()});
      send->result(0)->set_type(cur[d]->type().WithDevice(to));
      sent[to.value()] = send->result(0);
    }
    cur = sent;
  }
  fn->SetReturns(cur);
  m.AddFunction(std::move(fn));
  return m;
}

TEST(LowerTest, LowersAHundredThousandOpsQuickly) {
  Module m = BigProgram(11000);  // 88000 Relu + 1375 AllReduce + 11000 Send
  ASSERT_OK(VerifyModule(m));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(LoweredModule lowered, LowerToRanks(m));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Each rank sends to its own ring neighbour, so no two programs are alike.
  EXPECT_EQ(lowered.programs.size(), 8u);
  EXPECT_EQ(lowered.module.functions()[0]->ops().size(), 11000u + 1375u + 2 * 1375u);
  RecordProperty("lower_seconds", std::to_string(seconds));
  EXPECT_LT(seconds, 30.0);  // linear: well under a second in a release build
}

}  // namespace
}  // namespace distir
