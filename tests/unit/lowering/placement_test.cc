#include "lowering/placement.h"

#include <vector>

#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseAndInferOrDie;
using testing::ParseOrDie;
using testing::StatusIs;

std::vector<DeviceId> Devices(const Placement& p, const Function& fn, int op) {
  std::span<const DeviceId> d = p.devices(*fn.ops()[op]);
  return std::vector<DeviceId>(d.begin(), d.end());
}

std::vector<DeviceId> D(std::initializer_list<int> ids) {
  std::vector<DeviceId> out;
  for (int i : ids) out.push_back(DeviceId(i));
  return out;
}

constexpr char kMixed[] = R"(
func @layer(%x: tensor<4x4xf32>) {
  %y = Relu(%x)
  return %y
}

func @main(%a: tensor<4x4xf32, d0>, %b: tensor<4x4xf32, d1>) {
  %r = Relu(%a)
  %s = Send(%r) {device = d1}
  %t0, %t1 = AllReduce(%r, %b)
  %u0, %u2, %u3 = Broadcast(%t0) {devices = [d0, d2, d3]}
  %c = @layer(%t1)
  _ = SendTo(%c) {device = d0}
  %k = Constant() {device = d5, value = dense<f32>[1.0]}
  return %s, %u2, %u3, %k
}
)";

TEST(PlacementTest, OpsRunOnTheDevicesOfTheirValuesAndDestinations) {
  Module m = ParseAndInferOrDie(kMixed);
  const Function& fn = *m.entry();
  ASSERT_OK_AND_ASSIGN(Placement p, ComputePlacement(m, fn));
  EXPECT_EQ(Devices(p, fn, 0), D({0}));           // Relu
  EXPECT_EQ(Devices(p, fn, 1), D({0, 1}));        // Send: source and destination
  EXPECT_EQ(Devices(p, fn, 2), D({0, 1}));        // AllReduce
  EXPECT_EQ(Devices(p, fn, 3), D({0, 2, 3}));     // Broadcast: source and receivers
  EXPECT_EQ(Devices(p, fn, 4), D({1}));           // device-generic call: its argument's device
  EXPECT_EQ(Devices(p, fn, 5), D({1}));           // SendTo: its own side only
  EXPECT_EQ(Devices(p, fn, 6), D({5}));           // Constant: its device attribute
  EXPECT_EQ(p.all_devices(), D({0, 1, 2, 3, 5}));
  EXPECT_EQ(p.CalleeCommunication(*fn.ops()[4]), nullptr);
}

TEST(PlacementTest, CallOfAPlacedFunctionRunsWhereverTheCalleeDoes) {
  Module m = ParseAndInferOrDie(R"(
func @hop(%x: tensor<4xf32, d0>) {
  %y = Send(%x) {device = d1}
  %z = Send(%y) {device = d0}
  return %z
}

func @main(%a: tensor<4xf32, d0>) {
  %b = @hop(%a)
  return %b
}
)");
  const Function& fn = *m.entry();
  ASSERT_OK_AND_ASSIGN(Placement p, ComputePlacement(m, fn));
  EXPECT_EQ(Devices(p, fn, 0), D({0, 1}));
  ASSERT_NE(p.CalleeCommunication(*fn.ops()[0]), nullptr);
  EXPECT_EQ(p.CalleeCommunication(*fn.ops()[0])->kind(), OpKind::kSend);
}

TEST(PlacementTest, OpWithoutValuesOnADeviceHasNoDevice) {
  Module m = ParseAndInferOrDie(R"(
func @main(%a: tensor<f32, d0>) {
  %k = Constant() {value = dense<f32>[1.0]}
  %y = Relu(%k)
  return %a
}
)");
  ASSERT_OK_AND_ASSIGN(Placement p, ComputePlacement(m, *m.entry()));
  EXPECT_TRUE(p.devices(*m.entry()->ops()[0]).empty());
  EXPECT_TRUE(p.devices(*m.entry()->ops()[1]).empty());
}

TEST(PlacementTest, NeedsInferredTypes) {
  Module m = ParseOrDie(R"(
func @main(%a: tensor<4xf32, d0>) {
  %y = Relu(%a)
  return %y
}
)");
  EXPECT_THAT(ComputePlacement(m, *m.entry()),
              StatusIs(StatusCode::kFailedPrecondition, "type of %y (of Relu) is unknown"));
}

}  // namespace
}  // namespace distir
