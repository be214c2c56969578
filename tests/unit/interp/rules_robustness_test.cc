// No rule may crash, whatever its arguments: every op kind is applied, in both
// domains, to many pseudo-random argument lists (tensors of assorted ranks,
// dtypes and devices, scalars, tuples, the unknown type, concrete integer
// tensors with odd values) and attribute values. A rule either returns one
// value per result or an error; DISTIR_CHECK failures and sanitizer reports
// fail the test.

#include <gtest/gtest.h>

#include <random>

#include "interp/mixed_domain.h"
#include "interp/shape_domain.h"
#include "ir/function.h"

namespace distir {
namespace {

class RandomArgs {
 public:
  explicit RandomArgs(uint32_t seed) : rng_(seed) {}

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::vector<int64_t> Shape() {
    std::vector<int64_t> s(Int(0, 3));
    for (int64_t& d : s) d = Int(0, 5) == 0 ? kDynamicDim : Int(0, 6);
    return s;
  }

  DeviceId Device() { return Int(0, 4) == 0 ? DeviceId() : DeviceId(Int(0, 2)); }

  DType AnyDType() {
    static constexpr DType kTypes[] = {DType::kF32, DType::kF16, DType::kI64, DType::kI32,
                                       DType::kBool};
    return kTypes[Int(0, 4)];
  }

  Type AnyType() {
    switch (Int(0, 9)) {
      case 0:
        return Type();
      case 1:
        return Type::Scalar(AnyDType(), Device());
      case 2:
        return Type::Tuple({Type::Tensor(DType::kF32, Shape(), Device())});
      default:
        return Type::Tensor(AnyDType(), Shape(), Device());
    }
  }

  DenseTensor IntTensor() {
    DenseTensor t{DType::kI64, {}, {}};
    if (Int(0, 3) != 0) t.shape.push_back(Int(0, 4));
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      static constexpr double kOdd[] = {-1, 0, 1, 2, 3, -7, 1e12, -9.2e18};
      t.values.push_back(kOdd[Int(0, 7)]);
    }
    return t;
  }

  MixedValue AnyMixed() {
    if (Int(0, 2) == 0) return MixedValue::Concrete(IntTensor(), Device());
    return MixedValue(AnyType());
  }

  Attribute AttrOf(AttrType type) {
    switch (type) {
      case AttrType::kInt:
        return int64_t{Int(-3, 3)};
      case AttrType::kFloat:
        return 0.5;
      case AttrType::kString:
        return "tanh";
      case AttrType::kInts: {
        std::vector<int64_t> v(Int(0, 3));
        for (int64_t& x : v) x = Int(-3, 5);
        return v;
      }
      case AttrType::kFloats:
        return std::vector<double>{1.0};
      case AttrType::kStrings:
        return std::vector<std::string>{"a"};
      case AttrType::kDevice:
        return DeviceId(Int(0, 2));
      case AttrType::kDevices: {
        std::vector<DeviceId> v(Int(0, 3));
        for (DeviceId& d : v) d = DeviceId(Int(0, 2));
        return v;
      }
      case AttrType::kDType:
        return AnyDType();
      case AttrType::kTensor:
        return IntTensor();
      case AttrType::kSharding: {
        Sharding s = Sharding::Replicated("m", Int(0, 3));
        if (!s.dims.empty() && Int(0, 1) == 1) s.dims[0] = {"a"};
        return s;
      }
    }
    return int64_t{0};
  }

  AttrMap Attrs(const OpInfo& info) {
    AttrMap attrs;
    for (const AttrSpec& spec : info.attrs) {
      if (spec.required || Int(0, 1) == 0) attrs[std::string(spec.name)] = AttrOf(spec.type);
    }
    return attrs;
  }

 private:
  std::mt19937 rng_;
};

int Bound(int lo, int hi) { return hi == kVariadic ? lo + 3 : hi; }

template <typename V>
void ExpectNoCrash(const Domain<V>& domain, const Op& op, const std::vector<V>& args) {
  std::vector<const V*> ptrs;
  for (const V& a : args) ptrs.push_back(&a);
  StatusOr<std::vector<V>> out = domain.Apply(op, ArgList<V>(ptrs.data(), ptrs.size()));
  if (out.ok() && op.kind() != OpKind::kCall) {
    // A rule that accepts must give one value per result, except where the
    // interpreter reports the mismatch (checked there).
    EXPECT_GE(out->size(), 1u) << op.Name();
  }
}

TEST(RulesRobustnessTest, RulesNeverCrashOnArbitraryArguments) {
  RandomArgs random(20240611);
  Function fn("fuzz");
  int names = 0;
  for (const OpInfo& info : AllOps()) {
    for (int trial = 0; trial < 300; ++trial) {
      const int n_in = random.Int(info.min_inputs, Bound(info.min_inputs, info.max_inputs));
      const int n_out = random.Int(info.min_outputs, Bound(info.min_outputs, info.max_outputs));
      std::vector<Value*> inputs;
      std::vector<Type> types;
      std::vector<MixedValue> mixed;
      for (int i = 0; i < n_in; ++i) {
        types.push_back(random.AnyType());
        mixed.push_back(random.AnyMixed());
        inputs.push_back(fn.AddParam("p" + std::to_string(names++), types.back()));
      }
      std::vector<std::string> results;
      for (int r = 0; r < n_out; ++r) results.push_back("r" + std::to_string(names++));
      const Op& op = *fn.AddOp(info.kind, inputs, random.Attrs(info), results);
      ExpectNoCrash(DefaultShapeDomain(), op, types);
      ExpectNoCrash(DefaultMixedDomain(), op, mixed);
    }
  }
}

}  // namespace
}  // namespace distir
