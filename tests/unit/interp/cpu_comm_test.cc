// The communication kernels in their global form: hand-computed cases and the
// algebraic identities the parallel transforms rely on.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace distir {
namespace {

using ::testing::ElementsAre;
using testing::Elems;
using testing::ParseAndInferOrDie;
using testing::RunText;
using testing::T;

#define RUN(out, text, ...) \
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, RunText(text, {__VA_ARGS__}))

HostValue On(int device, std::vector<int64_t> shape, std::vector<double> values) {
  return T(std::move(shape), std::move(values), DType::kF32, DeviceId(device));
}

// Seeded random inputs of the entry function of `text`.
std::vector<HostValue> RandomArgs(const char* text, uint64_t seed) {
  const Module m = ParseAndInferOrDie(text);
  StatusOr<std::vector<HostValue>> args = RandomInputs(*m.entry(), seed);
  DISTIR_CHECK(args.ok()) << args.status().ToString();
  return *std::move(args);
}

TEST(CpuCommTest, SendCopiesToTheTargetDevice) {
  RUN(out, R"(func @f(%x: tensor<2xf32, d0>) {
    %y = Send(%x) {device = d5}
    return %y
  })",
      On(0, {2}, {1, 2}));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2xf32, d5>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 2));
}

TEST(CpuCommTest, AllReduceOfFourDevicesEqualsTheSum) {
  // [1, 2] + [10, 20] + [100, 200] + [1000, 2000] = [1111, 2222] on every device.
  RUN(out, R"(func @f(%a: tensor<2xf32, d0>, %b: tensor<2xf32, d1>, %c: tensor<2xf32, d2>,
                      %d: tensor<2xf32, d3>) {
    %y0, %y1, %y2, %y3 = AllReduce(%a, %b, %c, %d)
    return %y0, %y1, %y2, %y3
  })",
      On(0, {2}, {1, 2}), On(1, {2}, {10, 20}), On(2, {2}, {100, 200}), On(3, {2}, {1000, 2000}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].device(), DeviceId(i));
    EXPECT_THAT(Elems(out[i]), ElementsAre(1111, 2222));
  }
}

TEST(CpuCommTest, AllGatherReduceScatterBroadcastReduceHandComputed) {
  // AllGather on axis 0: [[1, 2]] and [[3, 4]] -> [[1, 2], [3, 4]] on both.
  // ReduceScatter on axis 1 of [[1, 2], [3, 4]] + [[10, 20], [30, 40]] =
  // [[11, 22], [33, 44]]: column 0 [11, 33] to d0, column 1 [22, 44] to d1.
  RUN(out, R"(func @f(%a: tensor<1x2xf32, d0>, %b: tensor<1x2xf32, d1>,
                      %c: tensor<2x2xf32, d0>, %d: tensor<2x2xf32, d1>) {
    %g0, %g1 = AllGather(%a, %b) {axis = 0}
    %r0, %r1 = ReduceScatter(%c, %d) {axis = 1}
    %b2, %b3 = Broadcast(%a) {devices = [d2, d3]}
    %s = Reduce(%c, %d) {device = d4}
    return %g0, %g1, %r0, %r1, %b2, %b3, %s
  })",
      On(0, {1, 2}, {1, 2}), On(1, {1, 2}, {3, 4}), On(0, {2, 2}, {1, 2, 3, 4}),
      On(1, {2, 2}, {10, 20, 30, 40}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(out[1].type().ToString(), "tensor<2x2xf32, d1>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(out[2].type().ToString(), "tensor<2x1xf32, d0>");
  EXPECT_THAT(Elems(out[2]), ElementsAre(11, 33));
  EXPECT_THAT(Elems(out[3]), ElementsAre(22, 44));
  EXPECT_EQ(out[4].device(), DeviceId(2));
  EXPECT_EQ(out[5].device(), DeviceId(3));
  EXPECT_THAT(Elems(out[5]), ElementsAre(1, 2));
  EXPECT_EQ(out[6].type().ToString(), "tensor<2x2xf32, d4>");
  EXPECT_THAT(Elems(out[6]), ElementsAre(11, 22, 33, 44));
}

TEST(CpuCommTest, ScatterMPIGatherAndAllToAllHandComputed) {
  // Scatter [1, 2, 3, 4] on axis 0 to d1, d2: [1, 2] and [3, 4]; MPIGather of
  // them to d0 on axis 0 gives [1, 2, 3, 4] back.
  // AllToAll split 0, concat 1 of x0 = [[1], [2]] (d0), x1 = [[3], [4]] (d1):
  // output j concatenates chunk j of each input: y0 = [[1, 3]], y1 = [[2, 4]].
  RUN(out, R"(func @f(%x: tensor<4xf32, d0>, %a: tensor<2x1xf32, d0>, %b: tensor<2x1xf32, d1>) {
    %s1, %s2 = Scatter(%x) {axis = 0, devices = [d1, d2]}
    %g = MPIGather(%s1, %s2) {axis = 0, device = d0}
    %y0, %y1 = AllToAll(%a, %b) {concat_axis = 1, split_axis = 0}
    return %s1, %s2, %g, %y0, %y1
  })",
      On(0, {4}, {1, 2, 3, 4}), On(0, {2, 1}, {1, 2}), On(1, {2, 1}, {3, 4}));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2xf32, d1>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 2));
  EXPECT_EQ(out[1].type().ToString(), "tensor<2xf32, d2>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(3, 4));
  EXPECT_EQ(out[2].type().ToString(), "tensor<4xf32, d0>");
  EXPECT_THAT(Elems(out[2]), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(out[3].type().ToString(), "tensor<1x2xf32, d0>");
  EXPECT_THAT(Elems(out[3]), ElementsAre(1, 3));
  EXPECT_THAT(Elems(out[4]), ElementsAre(2, 4));
}

TEST(CpuCommTest, ReduceScatterThenAllGatherEqualsAllReduce) {
  constexpr char kProgram[] = R"(func @f(%a: tensor<8x6xf32, d0>, %b: tensor<8x6xf32, d1>,
                                         %c: tensor<8x6xf32, d2>, %d: tensor<8x6xf32, d3>) {
    %r0, %r1, %r2, %r3 = ReduceScatter(%a, %b, %c, %d) {axis = 0}
    %g0, %g1, %g2, %g3 = AllGather(%r0, %r1, %r2, %r3) {axis = 0}
    %s0, %s1, %s2, %s3 = AllReduce(%a, %b, %c, %d)
    return %g0, %g1, %g2, %g3, %s0, %s1, %s2, %s3
  })";
  RUN(out, kProgram, RandomArgs(kProgram, 7));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].type(), out[i + 4].type());
    // Both sum in device order in double and round once: bitwise equal.
    EXPECT_EQ(out[i], out[i + 4]) << "device " << i;
  }
}

TEST(CpuCommTest, ScatterThenMPIGatherIsTheIdentity) {
  constexpr char kProgram[] = R"(func @f(%x: tensor<4x6xf32, d0>) {
    %s0, %s1, %s2 = Scatter(%x) {axis = 1, devices = [d0, d1, d2]}
    %y = MPIGather(%s0, %s1, %s2) {axis = 1, device = d0}
    return %y
  })";
  std::vector<HostValue> args = RandomArgs(kProgram, 8);
  RUN(out, kProgram, args);
  EXPECT_EQ(out[0], args[0]);
}

TEST(CpuCommTest, AllToAllTwiceWithSwappedAxesIsTheIdentity) {
  constexpr char kProgram[] = R"(func @f(%a: tensor<4x6xf32, d0>, %b: tensor<4x6xf32, d1>) {
    %t0, %t1 = AllToAll(%a, %b) {concat_axis = 1, split_axis = 0}
    %y0, %y1 = AllToAll(%t0, %t1) {concat_axis = 0, split_axis = 1}
    return %t0, %y0, %y1
  })";
  std::vector<HostValue> args = RandomArgs(kProgram, 9);
  RUN(out, kProgram, args);
  EXPECT_EQ(out[0].type().ToString(), "tensor<2x12xf32, d0>");
  EXPECT_EQ(out[1], args[0]);
  EXPECT_EQ(out[2], args[1]);
}

TEST(CpuCommTest, SendOfATupleMovesEveryElement) {
  RUN(out, R"(func @f(%a: tensor<2xf32, d0>, %b: tensor<1xf32, d0>) {
    %t = Tuple(%a, %b)
    %s = Send(%t) {device = d1}
    %a1, %b1 = UnpackTuple(%s)
    return %s, %b1
  })",
      On(0, {2}, {1, 2}), On(0, {1}, {3}));
  EXPECT_EQ(out[0].type().ToString(), "tuple<tensor<2xf32, d1>, tensor<1xf32, d1>>");
  EXPECT_EQ(out[1].type().ToString(), "tensor<1xf32, d1>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(3));
}

}  // namespace
}  // namespace distir
