// The CPU domain's value type, its dtype rounding and its kernel table.

#include "interp/cpu_domain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "cpu_test_util.h"

namespace distir {
namespace {

using testing::T;

double P2(int e) { return std::ldexp(1.0, e); }

TEST(CpuDomainTest, F16RoundsToNearestWithTiesToEven) {
  // Spacing of f16 in [1, 2) is 2^-10. 1 + 2^-11 is halfway between 1 (even
  // mantissa) and 1 + 2^-10 (odd): ties go to 1.
  EXPECT_EQ(RoundToDType(1 + P2(-11), DType::kF16), 1.0);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
  EXPECT_EQ(RoundToDType(1 + 3 * P2(-11), DType::kF16), 1 + P2(-9));
  // Just above a tie rounds up.
  EXPECT_EQ(RoundToDType(1 + P2(-11) + P2(-30), DType::kF16), 1 + P2(-10));
  // 0.1 = 0x1.999999...p-4: 10 fraction bits give 0x1.998p-4 = 0.0999755859375.
  EXPECT_EQ(RoundToDType(0.1, DType::kF16), 0.0999755859375);
  EXPECT_EQ(RoundToDType(-0.1, DType::kF16), -0.0999755859375);
}

TEST(CpuDomainTest, F16OverflowsAndSubnormals) {
  // Largest f16 is 65504; the spacing there is 32, so 65520 is the tie between
  // 65504 (odd mantissa 0x3ff) and 65536 (not representable): it overflows.
  EXPECT_EQ(RoundToDType(65504, DType::kF16), 65504);
  EXPECT_EQ(RoundToDType(65519, DType::kF16), 65504);
  EXPECT_EQ(RoundToDType(65520, DType::kF16), std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToDType(-65520, DType::kF16), -std::numeric_limits<double>::infinity());
  // Subnormal spacing is 2^-24: 2^-24 stays, 2^-25 ties to 0 (even), 3 * 2^-25
  // ties to 2^-23 (even), 2^-14 (the smallest normal) stays.
  EXPECT_EQ(RoundToDType(P2(-24), DType::kF16), P2(-24));
  EXPECT_EQ(RoundToDType(P2(-25), DType::kF16), 0.0);
  EXPECT_EQ(RoundToDType(3 * P2(-25), DType::kF16), P2(-23));
  EXPECT_EQ(RoundToDType(P2(-14), DType::kF16), P2(-14));
  EXPECT_TRUE(std::isnan(RoundToDType(NAN, DType::kF16)));
  EXPECT_EQ(RoundToDType(INFINITY, DType::kF16), INFINITY);
}

TEST(CpuDomainTest, BF16RoundsToNearestWithTiesToEven) {
  // bf16 keeps 7 fraction bits: spacing 2^-7 in [1, 2). 1.00390625 = 1 + 2^-8
  // is the tie between 1 and 1 + 2^-7: even, so 1.
  EXPECT_EQ(RoundToDType(1.00390625, DType::kBF16), 1.0);
  // 1.01171875 = 1 + 3 * 2^-8 ties between 1 + 2^-7 (odd) and 1 + 2^-6: up to 1.015625.
  EXPECT_EQ(RoundToDType(1.01171875, DType::kBF16), 1.015625);
  EXPECT_EQ(RoundToDType(1.00390625 + P2(-30), DType::kBF16), 1.0078125);
  // Largest bf16 (2 - 2^-7) 2^127 stays; the f32 maximum is past the tie: inf.
  const double max_bf16 = (2 - P2(-7)) * P2(127);
  EXPECT_EQ(RoundToDType(max_bf16, DType::kBF16), max_bf16);
  EXPECT_EQ(RoundToDType(std::numeric_limits<float>::max(), DType::kBF16), INFINITY);
  // Smallest bf16 subnormal is 2^-133.
  EXPECT_EQ(RoundToDType(P2(-133), DType::kBF16), P2(-133));
  EXPECT_EQ(RoundToDType(P2(-134), DType::kBF16), 0.0);
}

// The rounding by frexp, ldexp and nearbyint that RoundToDType used for every
// value before it rounded normal values on their bits: the two must agree.
double RoundByQuantum(double value, int mantissa_bits, int min_exp, double max_finite) {
  if (std::isnan(value) || std::isinf(value) || value == 0) return value;
  int exp = 0;
  std::frexp(std::fabs(value), &exp);
  const double quantum = std::ldexp(1.0, std::max(exp - 1, min_exp) - mantissa_bits);
  double rounded = std::nearbyint(std::fabs(value) / quantum) * quantum;
  if (rounded > max_finite) rounded = INFINITY;
  return std::copysign(rounded, value);
}

TEST(CpuDomainTest, BitRoundingAgreesWithQuantumRoundingEverywhere) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> binade(-160, 140);
  std::uniform_real_distribution<double> fraction(1, 2);
  for (int i = 0; i < 200000; ++i) {
    double x = std::ldexp(fraction(rng), binade(rng)) * (i % 2 == 0 ? 1 : -1);
    // Every fourth value lies on a tie of its own bf16 or f16 grid.
    if (i % 4 == 1) x = RoundByQuantum(x, 8, -126, INFINITY);
    if (i % 4 == 3) x = RoundByQuantum(x, 11, -14, INFINITY);
    ASSERT_EQ(RoundToDType(x, DType::kBF16), RoundByQuantum(x, 7, -126, (2 - P2(-7)) * P2(127)))
        << std::hexfloat << x;
    ASSERT_EQ(RoundToDType(x, DType::kF16), RoundByQuantum(x, 10, -14, 65504)) << std::hexfloat
                                                                              << x;
  }
}

TEST(CpuDomainTest, F32IntegersAndBool) {
  // f32 spacing at 1 is 2^-23; 1 + 2^-24 ties to 1.
  EXPECT_EQ(RoundToDType(1 + P2(-24), DType::kF32), 1.0);
  EXPECT_EQ(RoundToDType(1 + P2(-23), DType::kF32), 1 + P2(-23));
  EXPECT_EQ(RoundToDType(1 + P2(-40), DType::kF64), 1 + P2(-40));
  EXPECT_EQ(RoundToDType(-2.5, DType::kI64), -2.0);
  EXPECT_EQ(RoundToDType(2.9, DType::kI32), 2.0);
  EXPECT_EQ(RoundToDType(0.5, DType::kBool), 1.0);
  EXPECT_EQ(RoundToDType(0, DType::kBool), 0.0);
}

TEST(CpuDomainTest, HostValuesCarryTypesAndShareContents) {
  const HostValue a = T({2}, {1, 2});
  EXPECT_EQ(a.type().ToString(), "tensor<2xf32, d0>");
  EXPECT_EQ(a.ToString(), "dense<2xf32>[1.0, 2.0] on d0");
  const HostValue moved = a.WithDevice(DeviceId(3));
  EXPECT_EQ(moved.device(), DeviceId(3));
  EXPECT_EQ(&moved.tensor(), &a.tensor());  // shared, not copied
  const HostValue tuple = HostValue::Tuple({a, T({1}, {3})});
  EXPECT_EQ(tuple.type().ToString(), "tuple<tensor<2xf32, d0>, tensor<1xf32, d0>>");
  EXPECT_EQ(tuple.WithDevice(DeviceId(1)).elements()[1].device(), DeviceId(1));
  const HostValue s = HostValue::Scalar(DType::kI64, 7, DeviceId(2));
  EXPECT_EQ(s.type().ToString(), "scalar<i64, d2>");
  EXPECT_EQ(s.tensor().values, std::vector<double>{7});
  EXPECT_TRUE(a == T({2}, {1, 2}));
  EXPECT_FALSE(a == moved);
}

TEST(CpuDomainTest, FromTypeGivesZeros) {
  const Type type = Type::Tuple(
      {Type::Tensor(DType::kF16, {2, 2}, DeviceId(1)), Type::Scalar(DType::kI64, DeviceId(1))});
  const HostValue v = ValueTraits<HostValue>::FromType(type);
  EXPECT_EQ(v.type(), type);
  EXPECT_EQ(v.elements()[0].tensor().values, std::vector<double>(4, 0.0));
}

TEST(CpuDomainTest, EveryOpHasAKernel) {
  for (const OpInfo& info : AllOps()) {
    EXPECT_TRUE(DefaultCpuDomain().HasRule(info.kind)) << info.name;
  }
}

}  // namespace
}  // namespace distir
