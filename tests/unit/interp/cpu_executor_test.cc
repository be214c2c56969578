// The reference executor's entry points (Execute, RandomInputs, AllClose), a
// whole MLP training step against the same computation written with Eigen,
// and the project's first semantic-equivalence test: the paper's Figure 2
// pipeline (data/examples/mlp_pp.distir) against its sequential twin.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <span>

#include "cpu_test_util.h"
#include "interp/reference_executor.h"
#include "support/str_util.h"

namespace distir {
namespace {

using testing::F64;
using testing::ParseAndInferOrDie;
using testing::ParseOrDie;
using testing::StatusIs;
using testing::T;

constexpr char kRelu[] = R"(func @f(%x: tensor<2xf32, d0>) {
  %y = Relu(%x)
  return %y
})";

// Large tensors are filled in chunks on several threads (support/parallel_for.h);
// element i still takes draws [2i, 2i + 2) of the stream. A tuple's second
// element continues the stream where the first ends, so its values must equal
// those of one tensor as long as both, shifted by the first element's size.
TEST(ReferenceExecutorTest, ChunkedRandomFillContinuesTheSequentialStream) {
  const Type head = Type::Tensor(DType::kF32, {64, 1});
  const Type tail = Type::Tensor(DType::kF32, {64, 5000});
  const Type whole = Type::Tensor(DType::kF32, {64, 5001});
  const HostValue pair = RandomValue(Type::Tuple({head, tail}), 7);
  const HostValue one = RandomValue(whole, 7);
  const std::vector<double>& t = pair.elements()[1].tensor().values;
  const std::vector<double>& w = one.tensor().values;
  ASSERT_EQ(t.size() + 64, w.size());
  for (size_t j = 0; j < t.size(); ++j) {
    ASSERT_EQ(t[j], w[64 + j]) << "element " << j;  // same fan-in 64, same draws
  }
  // The first element is the same draws as a short tensor's (filled on one thread).
  const HostValue lone = RandomValue(head, 7);
  EXPECT_EQ(pair.elements()[0].tensor().values, lone.tensor().values);
  EXPECT_EQ(std::vector<double>(w.begin(), w.begin() + 64), lone.tensor().values);
}

// DrawRandomElements hands on RandomValue's elements, chunk by chunk (several
// threads' chunks and several blocks per chunk here), for each kind of dtype.
TEST(ReferenceExecutorTest, DrawRandomElementsGivesRandomValuesElements) {
  for (DType dtype : {DType::kBF16, DType::kF32, DType::kI64, DType::kBool}) {
    const Type type = Type::Tensor(dtype, {64, 5001});
    std::vector<double> drawn(64 * 5001, -7);
    std::mutex mu;
    int64_t covered = 0;
    DrawRandomElements(type, 9, {}, [&](int64_t first, std::span<const double> values) {
      std::copy(values.begin(), values.end(), drawn.begin() + first);
      std::lock_guard<std::mutex> lock(mu);
      covered += static_cast<int64_t>(values.size());
    });
    EXPECT_EQ(covered, 64 * 5001) << DTypeName(dtype);
    EXPECT_EQ(drawn, RandomValue(type, 9).tensor().values) << DTypeName(dtype);
  }
}

TEST(ReferenceExecutorTest, RejectsArgumentsThatDoNotFit) {
  Module m = ParseOrDie(kRelu);
  EXPECT_THAT(Execute(m, *m.entry(), {}),
              StatusIs(StatusCode::kInvalidArgument, "function @f takes 1 arguments, got 0"));
  EXPECT_THAT(Execute(m, *m.entry(), {T({3}, {1, 2, 3})}),
              StatusIs(StatusCode::kInvalidArgument,
                       "argument 0 of @f does not fit parameter %x: expected "
                       "tensor<2xf32, d0>, got tensor<3xf32, d0>"));
  EXPECT_THAT(Execute(m, *m.entry(), {T({2}, {1, 2}, DType::kF32, DeviceId(1))}),
              StatusIs(StatusCode::kInvalidArgument, "does not fit parameter %x"));
}

TEST(ReferenceExecutorTest, ChecksResultsAgainstTheTypesInTheIR) {
  // A wrong annotation (never checked by inference here) is caught at the op.
  Module m = ParseOrDie(R"(func @f(%x: tensor<2xf32, d0>) {
    %y = Relu(%x) : tensor<2xf64, d0>
    return %y
  })");
  EXPECT_THAT(Execute(m, *m.entry(), {T({2}, {1, 2})}),
              StatusIs(StatusCode::kInvalidArgument,
                       "Relu result %y is tensor<2xf32, d0> on the reference executor, but its "
                       "type is tensor<2xf64, d0>"));
}

TEST(ReferenceExecutorTest, RandomInputsAreSeededAndTyped) {
  Module m = ParseAndInferOrDie(R"(func @f(%w: tensor<64x32xf32, d1>, %ids: tensor<100xi64, d1>,
      %t: tuple<tensor<3xf16, d1>, scalar<f64, d1>>) {
    return %w
  })");
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> a, RandomInputs(*m.entry(), 42));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> b, RandomInputs(*m.entry(), 42));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> c, RandomInputs(*m.entry(), 43));
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a[0] == c[0]);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a[i].type(), m.entry()->param(i)->type());
  // N(0, 1) / sqrt(fan_in = 64): 2048 samples, std 1/8 within 10%, mean near 0.
  double sum = 0, sum_sq = 0;
  for (double v : a[0].tensor().values) {
    sum += v;
    sum_sq += v * v;
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));  // rounded to f32
  }
  const double n = static_cast<double>(a[0].tensor().values.size());
  EXPECT_NEAR(sum / n, 0, 0.01);
  EXPECT_NEAR(std::sqrt(sum_sq / n), 0.125, 0.0125);
  // Integers in [int_min, int_max] = [0, 1], both present.
  const std::vector<double>& ids = a[1].tensor().values;
  EXPECT_THAT(ids, ::testing::Each(::testing::AnyOf(0.0, 1.0)));
  EXPECT_THAT(ids, ::testing::Contains(1.0));
}

TEST(ReferenceExecutorTest, RandomInputOverridesLeaveOtherParametersAlone) {
  Module m = ParseAndInferOrDie(R"(func @f(%a: tensor<4xf32, d0>, %b: tensor<4xf32, d0>) {
    return %a
  })");
  RandomInputOptions options;
  options.overrides["a"] = T({4}, {1, 2, 3, 4});
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> plain, RandomInputs(*m.entry(), 5));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> overridden, RandomInputs(*m.entry(), 5, options));
  EXPECT_EQ(overridden[0], T({4}, {1, 2, 3, 4}));
  EXPECT_EQ(overridden[1], plain[1]);
  options.distribution = RandomInputOptions::Distribution::kUniform;
  options.overrides.clear();
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> uniform, RandomInputs(*m.entry(), 5, options));
  for (double v : uniform[0].tensor().values) {
    EXPECT_GT(v, -1);
    EXPECT_LT(v, 1);
  }
  options.overrides["c"] = T({4}, {1, 2, 3, 4});
  EXPECT_THAT(RandomInputs(*m.entry(), 5, options),
              StatusIs(StatusCode::kInvalidArgument, "override names %c"));
}

TEST(ReferenceExecutorTest, AllCloseReportsTheWorstElement) {
  const HostValue expected = T({2, 2}, {1, 2, 3, 4});
  EXPECT_OK(AllClose(T({2, 2}, {1, 2.01, 3, 4}), expected, 0, 0.02));
  // |diff| = [0, 0.5, 0.1, 0] against atol 0.05: two mismatches, worst [0, 1].
  EXPECT_THAT(AllClose(T({2, 2}, {1, 2.5, 3.1, 4}), expected, 0, 0.05),
              StatusIs(StatusCode::kFailedPrecondition,
                       "2 of 4 elements differ (max |diff| 0.5, rtol 0.0, atol 0.05); worst at "
                       "[0, 1]: 2.5 vs 2.0"));
  // rtol scales with the expected value: 4.3 vs 4 is within 10%.
  EXPECT_OK(AllClose(T({2, 2}, {1, 2, 3, 4.3}), expected, 0.1, 0));
  EXPECT_THAT(AllClose(T({4}, {1, 2, 3, 4}), expected, 1, 1),
              StatusIs(StatusCode::kFailedPrecondition, "types differ"));
  EXPECT_THAT(AllClose(T({1}, {NAN}), T({1}, {NAN}), 1, 1),
              StatusIs(StatusCode::kFailedPrecondition, "1 of 1 elements differ"));
  // Devices are ignored; outputs and tuple elements are named.
  EXPECT_OK(AllClose(expected.WithDevice(DeviceId(4)), expected, 0, 0));
  const std::vector<HostValue> got = {expected, HostValue::Tuple({T({1}, {1}), T({1}, {5})})};
  const std::vector<HostValue> want = {expected, HostValue::Tuple({T({1}, {1}), T({1}, {6})})};
  EXPECT_THAT(AllClose(got, want, 0, 0),
              StatusIs(StatusCode::kFailedPrecondition, "output 1: tuple element 1: 1 of 1"));
}

// ---- a whole training step against Eigen

// Two layers: h1 = Gemm(x, w1, b1), a1 = Relu(h1), h2 = a1 w2, p = Relu(h2),
// MSE loss, the backward pass and SGD with lr 0.1.
constexpr char kMlpStep[] = R"(
func @step(%w1: tensor<4x8xDT, d0>, %b1: tensor<8xDT, d0>, %w2: tensor<8x3xDT, d0>,
           %x: tensor<5x4xDT, d0>, %y: tensor<5x3xDT, d0>) {
  %h1 = Gemm(%x, %w1, %b1)
  %a1 = Relu(%h1)
  %h2 = MatMul(%a1, %w2)
  %p = Relu(%h2)
  %loss = MSELoss(%p, %y)
  %dp = MSELossGrad(%p, %y)
  %dh2 = ReluGrad(%h2, %dp)
  %da1, %dw2 = MatMulGrad(%a1, %w2, %dh2)
  %dh1 = ReluGrad(%h1, %da1)
  %db1 = ReduceSum(%dh1) {axes = [0], keepdims = 0}
  %dx, %dw1 = MatMulGrad(%x, %w1, %dh1)
  %w1_new = SGD(%w1, %dw1) {lr = 0.1}
  %b1_new = SGD(%b1, %db1) {lr = 0.1}
  %w2_new = SGD(%w2, %dw2) {lr = 0.1}
  return %loss, %w1_new, %b1_new, %w2_new
}
)";

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Matrix ToMatrix(const HostValue& v) {
  const DenseTensor& t = v.tensor();
  const int64_t rows = t.shape.size() == 1 ? 1 : t.shape[0];
  return Eigen::Map<const Matrix>(t.values.data(), rows, t.shape.back());
}

HostValue FromMatrix(const Matrix& m, const HostValue& like) {
  DenseTensor t = like.tensor();
  t.values.assign(m.data(), m.data() + m.size());
  t.dtype = DType::kF64;
  return HostValue::Tensor(t, like.device());
}

// The same step written directly with Eigen, in double.
std::vector<HostValue> EigenStep(const std::vector<HostValue>& in) {
  const Matrix w1 = ToMatrix(in[0]), b1 = ToMatrix(in[1]), w2 = ToMatrix(in[2]);
  const Matrix x = ToMatrix(in[3]), y = ToMatrix(in[4]);
  const Matrix h1 = (x * w1).rowwise() + b1.row(0);
  const Matrix a1 = h1.cwiseMax(0.0);
  const Matrix h2 = a1 * w2;
  const Matrix p = h2.cwiseMax(0.0);
  const double n = static_cast<double>(p.size());
  const double loss = (p - y).squaredNorm() / n;
  const Matrix dp = 2 * (p - y) / n;
  const Matrix dh2 = dp.cwiseProduct((h2.array() > 0).cast<double>().matrix());
  const Matrix dw2 = a1.transpose() * dh2;
  const Matrix da1 = dh2 * w2.transpose();
  const Matrix dh1 = da1.cwiseProduct((h1.array() > 0).cast<double>().matrix());
  const Matrix dw1 = x.transpose() * dh1;
  const Matrix db1 = dh1.colwise().sum();
  return {F64({}, {loss}), FromMatrix(w1 - 0.1 * dw1, in[0]), FromMatrix(b1 - 0.1 * db1, in[1]),
          FromMatrix(w2 - 0.1 * dw2, in[2])};
}

// `text` with every `key` replaced by `value`.
std::string Substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
    text.replace(at, key.size(), value);
  }
  return text;
}

TEST(ReferenceExecutorTest, MlpTrainingStepMatchesEigenInF64) {
  Module m = ParseAndInferOrDie(Substitute(kMlpStep, "DT", "f64"));
  RandomInputOptions uniform;
  uniform.distribution = RandomInputOptions::Distribution::kUniform;
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> args, RandomInputs(*m.entry(), 17, uniform));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, Execute(m, *m.entry(), args));
  // Same operations in the same order up to Eigen's summation order: 1e-12.
  EXPECT_OK(AllClose(out, EigenStep(args), 1e-12, 1e-14));
  // The step did something: the loss is positive and the weights moved.
  EXPECT_GT(out[0].tensor().values[0], 0);
  EXPECT_FALSE(AllClose(out[1], args[0], 1e-6, 0).ok());
}

TEST(ReferenceExecutorTest, MlpTrainingStepInF32StaysCloseToEigenInF64) {
  Module m = ParseAndInferOrDie(Substitute(kMlpStep, "DT", "f32"));
  RandomInputOptions uniform;
  uniform.distribution = RandomInputOptions::Distribution::kUniform;
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> args, RandomInputs(*m.entry(), 18, uniform));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, Execute(m, *m.entry(), args));
  EXPECT_EQ(out[1].type().ToString(), "tensor<4x8xf32, d0>");
  // The inputs are f32 values; every f32 result carries a relative rounding
  // error of 2^-24 ~ 6e-8 per op, a few dozen ops deep: 1e-5 is ample.
  std::vector<HostValue> expected = EigenStep(args);
  for (HostValue& v : expected) {
    DenseTensor t = v.tensor();
    t.dtype = DType::kF32;
    RoundTensorToDType(t);
    v = HostValue::Tensor(t, v.device());
  }
  EXPECT_OK(AllClose(out, expected, 1e-5, 1e-6));
}

// ---- Figure 2: pipeline parallelism against the sequential program

// The sequential twin of data/examples/mlp_pp.distir: the same two layers on
// d1 with the whole batch of 16. The pipeline sums the gradients of its two
// microbatches, each the gradient of a mean over 8 rows (MSELossGrad divides
// by the microbatch's element count), so its step equals a sequential step
// with twice the learning rate: lr 0.02 here for the pipeline's 0.01.
constexpr char kSequentialTwin[] = R"(
func @dense(%w: tuple<tensor<16x16xf32>, tensor<16xf32>>, %x: tensor<16x16xf32>) {
  %A, %b = UnpackTuple(%w)
  %h = Gemm(%x, %A, %b)
  %a = Relu(%h)
  return %a
}

func @denseGrad(%wb: tuple<tensor<16x16xf32>, tensor<16xf32>>, %x: tensor<16x16xf32>,
                %da: tensor<16x16xf32>) {
  %A, %b = UnpackTuple(%wb)
  %h = Gemm(%x, %A, %b)
  %dh = ReluGrad(%h, %da)
  %db = ReduceSum(%dh) {axes = [0], keepdims = 0}
  %dx, %dA = MatMulGrad(%x, %A, %dh)
  %dw = Tuple(%dA, %db)
  return %dw, %dx
}

func @mlp(%w1: tuple<tensor<16x16xf32, d1>, tensor<16xf32, d1>>,
          %w2: tuple<tensor<16x16xf32, d1>, tensor<16xf32, d1>>,
          %x: tensor<16x16xf32, d1>, %y: tensor<16x16xf32, d1>) {
  %a1 = @dense(%w1, %x)
  %p = @dense(%w2, %a1)
  %dp = MSELossGrad(%p, %y)
  %dw2, %da1 = @denseGrad(%w2, %a1, %dp)
  %dw1, _ = @denseGrad(%w1, %x, %da1)
  %A1, %b1 = UnpackTuple(%w1)
  %dA1, %db1 = UnpackTuple(%dw1)
  %A1_new = SGD(%A1, %dA1) {lr = LR}
  %b1_new = SGD(%b1, %db1) {lr = LR}
  %w1_new = Tuple(%A1_new, %b1_new)
  %A2, %b2 = UnpackTuple(%w2)
  %dA2, %db2 = UnpackTuple(%dw2)
  %A2_new = SGD(%A2, %dA2) {lr = LR}
  %b2_new = SGD(%b2, %db2) {lr = LR}
  %w2_new = Tuple(%A2_new, %b2_new)
  return %w1_new, %w2_new
}
)";

std::string ReadExample(const std::string& name) {
  std::string text;
  const std::string path = testing::SourcePath("data/examples/" + name);
  DISTIR_CHECK(ReadFileToString(path, &text)) << "cannot read " << path;
  return text;
}

std::vector<HostValue> RunOrDie(const std::string& text, std::vector<HostValue> args) {
  Module m = ParseAndInferOrDie(text);
  StatusOr<std::vector<HostValue>> out = Execute(m, *m.entry(), std::move(args));
  DISTIR_CHECK(out.ok()) << out.status().ToString();
  return *std::move(out);
}

TEST(ReferenceExecutorTest, Figure2PipelineEqualsTheSequentialProgram) {
  const std::string sequential = Substitute(kSequentialTwin, "LR", "0.02");
  Module seq = ParseAndInferOrDie(sequential);
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> args, RandomInputs(*seq.entry(), 2021));
  const std::vector<HostValue> expected = RunOrDie(sequential, args);
  // The pipeline holds layer 2 and the labels on d2: same values, moved there.
  const std::vector<HostValue> pp_args = {args[0], args[1].WithDevice(DeviceId(2)), args[2],
                                          args[3].WithDevice(DeviceId(2))};
  const std::vector<HostValue> pipelined = RunOrDie(ReadExample("mlp_pp.distir"), pp_args);
  EXPECT_EQ(pipelined[1].device(), DeviceId(2));
  // f32 throughout; the two programs sum in different orders (per microbatch,
  // then across): a few f32 ulps apart.
  EXPECT_OK(AllClose(pipelined, expected, 1e-5, 1e-6));
  // The swapped schedule (Figure 3, bottom) computes exactly the same values.
  EXPECT_EQ(RunOrDie(ReadExample("mlp_pp_swapped.distir"), pp_args), pipelined);
}

TEST(ReferenceExecutorTest, Figure2PipelineDiffersFromASequentialStepAtTheSameRate) {
  // The control for the test above: with the pipeline's own lr 0.01 the
  // sequential step is half as long, and the comparison catches it.
  const std::string sequential = Substitute(kSequentialTwin, "LR", "0.01");
  Module seq = ParseAndInferOrDie(sequential);
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> args, RandomInputs(*seq.entry(), 2021));
  const std::vector<HostValue> pp_args = {args[0], args[1].WithDevice(DeviceId(2)), args[2],
                                          args[3].WithDevice(DeviceId(2))};
  EXPECT_FALSE(AllClose(RunOrDie(ReadExample("mlp_pp.distir"), pp_args), RunOrDie(sequential, args),
                        1e-5, 1e-6)
                   .ok());
}

}  // namespace
}  // namespace distir
