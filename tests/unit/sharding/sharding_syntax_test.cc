// Meshes and shardings in the IR: text round trip, geometry of uneven shards.

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/sharding.h"
#include "ir/verifier.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using ::distir::testing::ParseOrDie;
using ::distir::testing::StatusIs;

TEST(ShardingSyntaxTest, RoundTripsMeshesShardingsAndOffsets) {
  const char* text = R"(mesh @m = <[a = 2, b = 4]>
mesh @s = <[x = 2], devices = [d4, d5]>

func @f(%x: tensor<127x64xf32> <@s, [{x}, {}], offsets = [{0, 64, 127}, {}]>, %p: tensor<8x16xf32> <@m, [{}, {b}], partial = max[a]>) {
  %y = Shard(%p) {for_users = 1, hint = 1, sharding = <@m, [{a}, {b}]>} : tensor<8x16xf32> <@m, [{a}, {b}]>
  return %x, %y
}
)";
  Module m = ParseOrDie(text);
  EXPECT_OK(VerifyModule(m));
  EXPECT_EQ(PrintModule(m), text);
  EXPECT_EQ(m.LookupMesh("s")->devices(), (std::vector<DeviceId>{DeviceId(4), DeviceId(5)}));
}

TEST(ShardingSyntaxTest, UnevenShardsAreCeilChunks) {
  // G28: 127 rows over 2 devices are 64 + 63 rows, torch.chunk style.
  Mesh mesh("m", {{"x", 2}});
  Sharding s = Sharding::Replicated("m", 2);
  s.dims[0] = {"x"};
  EXPECT_EQ(s.LocalShape(mesh, {127, 64}, {0}), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(s.LocalShape(mesh, {127, 64}, {1}), (std::vector<int64_t>{63, 64}));
  EXPECT_FALSE(s.IsEven(mesh, {127, 64}));
  // 50257 over 4: three shards of 12565 and one of 12562 (SHARDING.md G31).
  Mesh t("m", {{"t", 4}});
  Sharding v = Sharding::Replicated("m", 1);
  v.dims[0] = {"t"};
  EXPECT_EQ(v.ShardRange(t, 0, 50257, 3), (std::pair<int64_t, int64_t>{37695, 50257}));
}

TEST(ShardingSyntaxTest, ShardIndexIsMajorAxisFirst) {
  Mesh mesh("m", {{"a", 2}, {"b", 4}});
  Sharding s = Sharding::Replicated("m", 1);
  s.dims[0] = {"b", "a"};
  // Device (a = 1, b = 2): index = b * 2 + a = 5.
  EXPECT_EQ(s.ShardIndex(mesh, 0, {1, 2}), 5);
}

TEST(ShardingSyntaxTest, ShardingsMustBeOnTensors) {
  Module m = ParseOrDie(R"(mesh @m = <[a = 2]>
func @f(%s: scalar<f32> <@m, []>) {
  return %s
})");
  EXPECT_THAT(VerifyModule(m), StatusIs(StatusCode::kInvalidArgument, "must be on a tensor"));
}

}  // namespace
}  // namespace distir
