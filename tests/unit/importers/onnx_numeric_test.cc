// The numerical check of the ONNX importer: every fixture of data/onnx/ is
// imported and run by the reference executor on the seeded input saved next to
// it, and must match the output torch computed for that input
// (scripts/export_onnx.py). The tolerances are in docs/onnx.md: torch computes
// in f32, the reference executor in double rounded to f32 after every op.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "importers/onnx/onnx_importer.h"
#include "interp/reference_executor.h"
#include "npy.h"
#include "testing/test_util.h"
#include "transforms/fuse_gelu.h"

namespace distir::onnx_import {
namespace {

using ::distir::testing::ReadNpy;
using ::distir::testing::SourcePath;

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-4;

struct Fixture {
  const char* name;
  const char* input;  // the data input's ONNX name
};

constexpr Fixture kFixtures[] = {
    {"gpt2-tiny-op14", "input_ids"},     {"gpt2-tiny-op17", "input_ids"},
    {"gpt2-tiny-op14-dyn", "input_ids"}, {"gpt2-tiny-op17-dyn", "input_ids"},
    {"gpt2-small-op14", "input_ids"},    {"gpt2-small", "input_ids"},
    {"mlp", "x"},
};

std::string FixturePath(const std::string& name, const std::string& suffix) {
  return SourcePath("data/onnx/" + name + suffix);
}

// The first `rows` entries of dim 0 and `cols` of dim 1 of `t`.
DenseTensor Crop(const DenseTensor& t, int64_t rows, int64_t cols) {
  DenseTensor out{t.dtype, t.shape, {}};
  out.shape[0] = rows;
  out.shape[1] = cols;
  int64_t inner = 1;
  for (size_t i = 2; i < t.shape.size(); ++i) inner *= t.shape[i];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      auto from = t.values.begin() + (r * t.shape[1] + c) * inner;
      out.values.insert(out.values.end(), from, from + inner);
    }
  }
  return out;
}

// Imports fixture `f` with its data input bound to `input`'s shape and runs it
// on `input` with the weights stored in the file.
StatusOr<HostValue> RunImported(const Fixture& f, const DenseTensor& input,
                                std::optional<DType> float_dtype = std::nullopt,
                                bool fuse_gelu = false) {
  ImportOptions options;
  options.load_weights = true;
  options.float_dtype = float_dtype;
  options.input_shapes[f.input] = input.shape;
  DISTIR_ASSIGN_OR_RETURN(ImportedModel m, ImportOnnxFile(FixturePath(f.name, ".onnx"), options));
  if (fuse_gelu) {
    const bool gpt = std::string(f.name).rfind("gpt2", 0) == 0;
    // Every GPT-2 block's GELU is fused; the MLP has none.
    if (FuseGelusIn(m.module, m.module.entry()->name()) != gpt)
      return Internal() << "fuse-gelu " << (gpt ? "found no" : "found a") << " GELU";
    for (const auto& op : m.module.entry()->ops()) {
      if (op->kind() == OpKind::kTanh || op->kind() == OpKind::kErf)
        return Internal() << op->Name() << " is left after fuse-gelu";
    }
  }
  const Function& fn = *m.module.entry();
  std::vector<HostValue> args;
  DenseTensor data = input;
  data.dtype = fn.param(0)->type().dtype();
  args.push_back(HostValue::Tensor(std::move(data), options.device));
  for (const DenseTensor& w : m.weights) args.push_back(HostValue::Tensor(w, options.device));
  DISTIR_ASSIGN_OR_RETURN(std::vector<HostValue> out, Execute(m.module, fn, std::move(args)));
  if (out.size() != 1) return Internal() << "expected one output, got " << out.size();
  return out[0];
}

HostValue Expected(const DenseTensor& t, DType dtype = DType::kF32) {
  DenseTensor e = t;
  e.dtype = dtype;
  RoundTensorToDType(e);
  return HostValue::Tensor(std::move(e));
}

class OnnxNumericTest : public ::testing::TestWithParam<Fixture> {};

TEST_P(OnnxNumericTest, MatchesTorch) {
  const Fixture& f = GetParam();
  ASSERT_OK_AND_ASSIGN(DenseTensor input, ReadNpy(FixturePath(f.name, ".input.npy")));
  ASSERT_OK_AND_ASSIGN(DenseTensor output, ReadNpy(FixturePath(f.name, ".output.npy")));
  ASSERT_OK_AND_ASSIGN(HostValue got, RunImported(f, input));
  EXPECT_OK(AllClose(got, Expected(output), kRtol, kAtol));
}

// The exported GELUs fused into Gelu ops (transforms/fuse_gelu.h, what the
// search and `distir import` run): the same outputs within the same tolerance.
TEST_P(OnnxNumericTest, MatchesTorchWithGeluFused) {
  const Fixture& f = GetParam();
  ASSERT_OK_AND_ASSIGN(DenseTensor input, ReadNpy(FixturePath(f.name, ".input.npy")));
  ASSERT_OK_AND_ASSIGN(DenseTensor output, ReadNpy(FixturePath(f.name, ".output.npy")));
  ASSERT_OK_AND_ASSIGN(HostValue got, RunImported(f, input, std::nullopt, /*fuse_gelu=*/true));
  EXPECT_OK(AllClose(got, Expected(output), kRtol, kAtol));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxNumericTest, ::testing::ValuesIn(kFixtures),
                         [](const ::testing::TestParamInfo<Fixture>& p) {
                           std::string name = p.param.name;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// A dynamic fixture bound to a smaller shape than the one torch ran: the model
// is causal and rows are independent, so its output is the matching crop.
TEST(OnnxNumericTest, DynamicAxesBoundToAnotherShape) {
  const Fixture f{"gpt2-tiny-op17-dyn", "input_ids"};
  ASSERT_OK_AND_ASSIGN(DenseTensor input, ReadNpy(FixturePath(f.name, ".input.npy")));
  ASSERT_OK_AND_ASSIGN(DenseTensor output, ReadNpy(FixturePath(f.name, ".output.npy")));
  ASSERT_EQ(input.shape, (std::vector<int64_t>{3, 5}));
  ASSERT_OK_AND_ASSIGN(HostValue got, RunImported(f, Crop(input, 2, 3)));
  EXPECT_OK(AllClose(got, Expected(Crop(output, 2, 3)), kRtol, kAtol));
}

// --dtype f16: every float tensor in half precision. One rounding per op to
// 11 significant bits: a 2% tolerance on logits of order 1.
TEST(OnnxNumericTest, HalfPrecisionImportStaysClose) {
  const Fixture f{"gpt2-tiny-op17", "input_ids"};
  ASSERT_OK_AND_ASSIGN(DenseTensor input, ReadNpy(FixturePath(f.name, ".input.npy")));
  ASSERT_OK_AND_ASSIGN(DenseTensor output, ReadNpy(FixturePath(f.name, ".output.npy")));
  ASSERT_OK_AND_ASSIGN(HostValue got, RunImported(f, input, DType::kF16));
  EXPECT_EQ(got.type().dtype(), DType::kF16);
  EXPECT_OK(AllClose(got, Expected(output, DType::kF16), 2e-2, 2e-2));
}

}  // namespace
}  // namespace distir::onnx_import
