// The tiny GPT and LLaMA training steps against PyTorch: loss, every weight
// gradient and every AdamW-updated weight of BuildTransformerTraining, run on
// the reference executor, equal the fixture that
// scripts/torch_reference_transformer.py wrote from torch (float64). In f64
// they agree to rounding (rtol 1e-9); in f32 to rtol 1e-4 (updates: see
// CompareWithTorch).

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "interp/infer_types.h"
#include "interp/reference_executor.h"
#include "models/transformer.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using Fixture = std::map<std::string, DenseTensor>;

// `name rank dims... values...` per line, # comments (the script's format).
Fixture ReadFixture(const std::string& file) {
  std::ifstream in(std::string(DISTIR_MODELS_TEST_DATA) + "/" + file);
  DISTIR_CHECK(in.good()) << "cannot read " << file;
  Fixture fixture;
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty() || text[0] == '#') continue;
    std::istringstream line(text);
    std::string name;
    int rank = 0;
    line >> name >> rank;
    DenseTensor t{DType::kF64, std::vector<int64_t>(static_cast<size_t>(rank)), {}};
    for (int64_t& d : t.shape) line >> d;
    for (double v; line >> v;) t.values.push_back(v);
    fixture[name] = std::move(t);
  }
  return fixture;
}

// The script's options (GPT and LLaMA dicts), with AdamW lr 1e-3, wd 0.1.
TransformerOptions Options(TransformerVariant variant, DType dtype) {
  TransformerOptions o;
  o.variant = variant;
  o.num_layers = 2;
  o.hidden_size = 8;
  o.num_attention_heads = variant == TransformerVariant::kGpt ? 2 : 4;
  o.num_query_groups = 2;
  o.ffn_hidden_size = 16;
  o.vocab_size = 16;
  o.seq_length = 6;
  o.batch = 2;
  o.params_dtype = dtype;
  o.lr = 1e-3;
  o.weight_decay = 0.1;
  return o;
}

HostValue AsValue(const DenseTensor& t, DType dtype) {
  DenseTensor copy = t;
  copy.dtype = dtype;
  return HostValue::Tensor(copy, DeviceId(0));
}

// The value compared with the fixture's `<w>.grad`: the f32 main gradient
// under mixed precision (unscaled under fp16; a linear weight's own f32
// gradient under gradient accumulation fusion in bf16), else the weight
// gradient.
std::string GradName(const Function& fn, const std::string& weight, DType dtype) {
  if (dtype == DType::kF16) return weight + ".main_grad.unscaled";
  if (dtype == DType::kBF16 && fn.LookupValue(weight + ".main_grad") != nullptr)
    return weight + ".main_grad";
  return weight + ".grad";
}

// Runs the step on the fixture's inputs (masters are the fixture's weights,
// Adam's moments start at zero) and returns the loss, then every weight's
// gradient (GradName) and updated value, keyed by the fixture's names.
std::map<std::string, HostValue> RunStep(const TransformerOptions& o, const Fixture& fx) {
  StatusOr<Module> built = BuildTransformerTraining(o);
  DISTIR_CHECK(built.ok()) << built.status().ToString();
  Module m = std::move(built).value();
  Function& fn = *m.entry();
  std::vector<HostValue> args;
  std::vector<Value*> wanted = {fn.LookupValue("loss")};
  std::vector<std::string> names = {"loss"};
  for (int i = 0; i < fn.num_params(); ++i) {
    const std::string& p = fn.param(i)->name();
    const DType dtype = fn.param(i)->type().dtype();
    if (p == "tokens" || p == "labels") {
      args.push_back(AsValue(fx.at(p), DType::kI64));
    } else if (fx.count(p) != 0) {
      args.push_back(AsValue(fx.at(p), dtype));
      wanted.push_back(fn.LookupValue(GradName(fn, p, o.params_dtype)));
      names.push_back(p + ".grad");
      wanted.push_back(fn.LookupValue(p + ".new"));
      names.push_back(p + ".new");
    } else if (p.ends_with(".master")) {
      args.push_back(AsValue(fx.at(p.substr(0, p.size() - 7)), dtype));
    } else {  // Adam moments start at zero
      DenseTensor zeros{dtype, fn.param(i)->type().shape(), {}};
      zeros.values.assign(static_cast<size_t>(fn.param(i)->type().NumElements()), 0.0);
      args.push_back(HostValue::Tensor(zeros, DeviceId(0)));
    }
  }
  fn.SetReturns(wanted);
  DISTIR_CHECK(InferTypes(m).ok());
  StatusOr<std::vector<HostValue>> out = Execute(m, fn, std::move(args));
  DISTIR_CHECK(out.ok()) << out.status().ToString();
  std::map<std::string, HostValue> results;
  for (size_t i = 0; i < names.size(); ++i) results.emplace(names[i], (*out)[i]);
  return results;
}

// `update_atol`: Adam's first step moves a weight by lr·g/(|g| + eps), about
// lr·sign(g); a gradient that is zero in exact arithmetic (the key bias: softmax
// ignores a shift of all scores) is ~1e-17 in f64 and ~1e-9 in f32, which moves
// the weight by up to lr. So f32 updates are compared to within 2 lr; the
// gradients, which decide the rest, to rtol.
void CompareWithTorch(TransformerVariant variant, DType dtype, const std::string& file, double rtol,
                      double atol, double update_atol, bool flash_attention = true) {
  const Fixture fx = ReadFixture(file);
  TransformerOptions o = Options(variant, dtype);
  o.flash_attention = flash_attention;
  const std::map<std::string, HostValue> got = RunStep(o, fx);
  int compared = 0;
  for (const auto& [name, value] : got) {
    SCOPED_TRACE(name);
    ASSERT_EQ(fx.count(name), 1u);
    const bool update = name.ends_with(".new");
    EXPECT_OK(AllClose(AsValue(value.tensor(), DType::kF64), AsValue(fx.at(name), DType::kF64),
                       rtol, update ? update_atol : atol));
    ++compared;
  }
  // The loss, and a gradient and an update for every weight of the fixture.
  int weights = 0;
  for (const auto& entry : fx) weights += entry.first.ends_with(".grad") ? 1 : 0;
  EXPECT_EQ(compared, 1 + 2 * weights);
  EXPECT_GE(weights, 17);  // 17 in the tiny LLaMA, 28 in the tiny GPT
}

// Mixed precision, as Megatron runs it: fp16 with a loss scale of 1024 (the
// unscaled f32 main gradients must be PyTorch's) and bf16. One rounding per op
// to 11 (fp16) or 8 (bf16) significant bits, over some 60 ops of backward:
// rtol 2e-2 and 6e-2, atol 2e-3 and 6e-3; a missing or doubled unscaling would
// be off by a factor of 1024. The updated weights are within 2 lr plus the
// rounding of the weight itself (fp16 2^-11, bf16 2^-8 of its at most 0.5).
TEST(TransformerTorchTest, TinyGptStepMatchesPyTorchInFp16WithLossScaling) {
  TransformerOptions o = Options(TransformerVariant::kGpt, DType::kF16);
  o.loss_scale = 1024;
  const Fixture fx = ReadFixture("gpt_tiny_step.txt");
  const std::map<std::string, HostValue> got = RunStep(o, fx);
  for (const auto& [name, value] : got) {
    SCOPED_TRACE(name);
    EXPECT_OK(AllClose(AsValue(value.tensor(), DType::kF64), AsValue(fx.at(name), DType::kF64),
                       2e-2, name.ends_with(".new") ? 2e-3 + 2.5e-4 : 2e-3));
  }
}

// With and without gradient accumulation fusion (the linear layers' weight
// gradients written in f32 by their MatMulGrad, or in bf16 and cast).
TEST(TransformerTorchTest, TinyLlamaStepMatchesPyTorchInBf16) {
  const Fixture fx = ReadFixture("llama_tiny_step.txt");
  for (bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "fused" : "unfused");
    TransformerOptions o = Options(TransformerVariant::kLlama, DType::kBF16);
    o.gradient_accumulation_fusion = fused;
    const std::map<std::string, HostValue> got = RunStep(o, fx);
    for (const auto& [name, value] : got) {
      SCOPED_TRACE(name);
      EXPECT_OK(AllClose(AsValue(value.tensor(), DType::kF64), AsValue(fx.at(name), DType::kF64),
                         6e-2, name.ends_with(".new") ? 2e-3 + 2e-3 : 6e-3));
    }
  }
}

TEST(TransformerTorchTest, TinyGptStepMatchesPyTorchInF64) {
  CompareWithTorch(TransformerVariant::kGpt, DType::kF64, "gpt_tiny_step.txt", 1e-9, 1e-12, 1e-12);
}

// Megatron's unfused core attention (QKᵀ, causal mask, softmax, ·V as ops of
// their own, use_flash_attn false) computes the same step as PyTorch's SDPA:
// the fixture's 2 heads have 2 key/value groups, as unfused attention needs.
TEST(TransformerTorchTest, TinyGptStepWithUnfusedAttentionMatchesPyTorchInF64) {
  CompareWithTorch(TransformerVariant::kGpt, DType::kF64, "gpt_tiny_step.txt", 1e-9, 1e-12, 1e-12,
                   /*flash_attention=*/false);
}

TEST(TransformerTorchTest, TinyLlamaStepMatchesPyTorchInF64) {
  CompareWithTorch(TransformerVariant::kLlama, DType::kF64, "llama_tiny_step.txt", 1e-9, 1e-12,
                   1e-12);
}

TEST(TransformerTorchTest, TinyGptStepMatchesPyTorchInF32) {
  CompareWithTorch(TransformerVariant::kGpt, DType::kF32, "gpt_tiny_step.txt", 1e-4, 1e-6, 2e-3);
}

TEST(TransformerTorchTest, TinyLlamaStepMatchesPyTorchInF32) {
  CompareWithTorch(TransformerVariant::kLlama, DType::kF32, "llama_tiny_step.txt", 1e-4, 1e-6,
                   2e-3);
}

}  // namespace
}  // namespace distir
