// The transformer's value roles (memory breakdown) and model FLOPs.

#include "models/transformer_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "models/model_zoo.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using Role = TransformerValueRole;

Role Name(std::string_view name) { return ClassifyTransformerValueName(name, false, false); }
Role Param(std::string_view name) { return ClassifyTransformerValueName(name, true, false); }

TEST(TransformerMetricsTest, ParametersAreInputsWeightsOrOptimizerState) {
  EXPECT_EQ(Param("tokens"), Role::kInput);
  EXPECT_EQ(Param("labels"), Role::kInput);
  EXPECT_EQ(Param("embedding.weight"), Role::kWeight);
  EXPECT_EQ(Param("layers.3.mlp.fc1.bias"), Role::kWeight);
  EXPECT_EQ(Param("layers.3.mlp.fc1.weight.master"), Role::kOptimizerState);
  EXPECT_EQ(Param("layers.3.mlp.fc1.weight.exp_avg"), Role::kOptimizerState);
  EXPECT_EQ(Param("layers.3.mlp.fc1.weight.exp_avg_sq"), Role::kOptimizerState);
}

TEST(TransformerMetricsTest, OpResultsFollowTheSuffixConvention) {
  EXPECT_EQ(Name("layers.0.attention.qkv.weight.grad"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.attention.qkv.bias.grad"), Role::kGradient);
  EXPECT_EQ(Name("embedding.weight.grad.lookup"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.main_grad"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.main_grad.unscaled"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.main_grad.l2"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.decayed"), Role::kOptimizerState);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.master.new"), Role::kOptimizerState);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.exp_avg_sq.new"), Role::kOptimizerState);
  EXPECT_EQ(Name("layers.0.mlp.fc2.weight.new"), Role::kWeight);
  EXPECT_EQ(Name("layers.0.mlp.act"), Role::kActivation);
  EXPECT_EQ(Name("layers.0.mlp.act.grad"), Role::kActivation);  // an activation's gradient
  EXPECT_EQ(Name("logits"), Role::kActivation);
  EXPECT_EQ(ClassifyTransformerValueName("rope.cos", false, true), Role::kOther);
}

// The distributed program's names: the role of the value they were made from
// (a device's copy, a microbatch's part, a ZeRO shard, a stage's send).
TEST(TransformerMetricsTest, DistributionSuffixesKeepTheRole) {
  EXPECT_EQ(Name("layers.0.mlp.fc1.weight.grad.zero.d3"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc1.bias.grad.mb1.d0"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc1.weight.grad.sum0.d2"), Role::kGradient);
  EXPECT_EQ(Name("layers.0.mlp.fc1.weight.new.zero.d1"), Role::kWeight);
  EXPECT_EQ(Name("layers.0.mlp.fc1.weight.exp_avg.zero.step.d0"), Role::kOptimizerState);
  EXPECT_EQ(Name("layers.0.mlp.fc1.weight.decayed.zero.step.d7"), Role::kOptimizerState);
  EXPECT_EQ(Name("layers.0.mlp.fc1.mm.mb1.d3"), Role::kActivation);
  EXPECT_EQ(Name("layers.3.output.to.s1.d5"), Role::kActivation);
  EXPECT_EQ(ClassifyTransformerValueName("layers.0.mlp.fc1.weight.d2", true, false), Role::kWeight);
  EXPECT_EQ(ClassifyTransformerValueName("tokens.d0", true, false), Role::kInput);
  // The constants of a shard's slice are constants, whatever they were named for.
  EXPECT_EQ(ClassifyTransformerValueName("layers.0.mlp.fc1.weight.zero.start.d0", false, true),
            Role::kOther);
}

// The classifier as first written (three substring scans, prefix lists): the
// one-scan version must agree with it on every name.
namespace reference {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}
bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}
bool IsDecoration(std::string_view c) {
  if (c == "zero" || c == "step" || c == "to" || AllDigits(c)) return true;
  for (std::string_view prefix : {"d", "mb", "s", "sum"}) {
    if (c.size() > prefix.size() && c.substr(0, prefix.size()) == prefix &&
        AllDigits(c.substr(prefix.size())))
      return true;
  }
  return false;
}
Role Classify(std::string_view name, bool is_param, bool is_constant) {
  while (true) {
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || !IsDecoration(name.substr(dot + 1))) break;
    name = name.substr(0, dot);
  }
  std::string_view base = name;
  if (EndsWith(base, ".new")) base.remove_suffix(4);
  if (EndsWith(base, ".master") || EndsWith(base, ".exp_avg") || EndsWith(base, ".exp_avg_sq") ||
      EndsWith(base, ".decayed"))
    return Role::kOptimizerState;
  if (Contains(name, ".weight.grad") || Contains(name, ".bias.grad") ||
      Contains(name, ".main_grad") || EndsWith(name, ".l2"))
    return Role::kGradient;
  auto weight = [](std::string_view n) { return EndsWith(n, ".weight") || EndsWith(n, ".bias"); };
  if (is_param) return weight(name) ? Role::kWeight : Role::kInput;
  if (is_constant) return Role::kOther;
  if (EndsWith(name, ".new") && weight(name.substr(0, name.size() - 4))) return Role::kWeight;
  return Role::kActivation;
}

}  // namespace reference

// Every name of up to three parts from parts that matter to the rules (and
// near misses), and a few written out, as the reference classifies them.
TEST(TransformerMetricsTest, ClassifiesEveryNameAsTheReference) {
  const std::vector<std::string> parts = {
      "layers",  "3",          "mlp",     "weight", "bias",  "grad",       "main_grad", "master",
      "exp_avg", "exp_avg_sq", "decayed", "new",    "l2",    "zero",       "step",      "to",
      "s1",      "d3",         "d",       "mb",     "mb1",   "sum",        "sum2",      "s",
      "m1",      "lookup",     "gradx",   "xgrad",  "main_", "weightgrad", "",          "12"};
  std::vector<std::string> names = {"",
                                    ".",
                                    "grad",
                                    ".weight.grad",
                                    "x.bias.gradgrad",
                                    "a.main_grad",
                                    "a.main_.grad",
                                    "a.weight.weight.grad.d"};
  for (const std::string& a : parts) {
    names.push_back(a);
    for (const std::string& b : parts) {
      names.push_back(a + "." + b);
      for (const std::string& c : parts) names.push_back(a + "." + b + "." + c);
    }
  }
  int64_t checked = 0;
  for (const std::string& name : names) {
    for (bool is_param : {false, true}) {
      for (bool is_constant : {false, true}) {
        ASSERT_EQ(ClassifyTransformerValueName(name, is_param, is_constant),
                  reference::Classify(name, is_param, is_constant))
            << name << " param " << is_param << " constant " << is_constant;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

// Every weight of a built mixed-precision step has a gradient, a master, two
// moments and their updates: the roles of the values come in those numbers.
TEST(TransformerMetricsTest, EveryValueOfABuiltStepHasTheExpectedRole) {
  TransformerOptions o;
  o.variant = TransformerVariant::kLlama;
  o.num_layers = 2;
  ASSERT_OK_AND_ASSIGN(Module m, BuildTransformerTraining(o));
  const Function& fn = *m.entry();
  std::map<Role, int> params;
  for (const auto& p : fn.params()) ++params[ClassifyTransformerValue(*p)];
  const int weights = params[Role::kWeight];
  EXPECT_GT(weights, 0);
  EXPECT_EQ(params[Role::kInput], 2);
  EXPECT_EQ(params[Role::kOptimizerState], 3 * weights);  // master, exp_avg, exp_avg_sq
  EXPECT_EQ(params.size(), 3u);
  int new_weights = 0, grads = 0;
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) {
      const std::string& n = r->name();
      const Role role = ClassifyTransformerValue(*r);
      if (n.size() > 11 && n.substr(n.size() - 11) == ".weight.new") {
        ++new_weights;
        EXPECT_EQ(role, Role::kWeight) << n;
      }
      if (n.size() > 12 && n.substr(n.size() - 12) == ".weight.grad") {
        ++grads;
        EXPECT_EQ(role, Role::kGradient) << n;
      }
    }
  }
  EXPECT_EQ(new_weights, weights);
  EXPECT_EQ(grads, weights);
}

// Narayanan et al. 2021, eq. (3) without recomputation: 72 B s l H^2
// (1 + s / (6 H) + V / (12 l H)).
double MegatronGptFlops(double B, double s, double l, double H, double V) {
  return 72 * B * s * l * H * H * (1 + s / (6 * H) + V / (12 * l * H));
}

TEST(TransformerMetricsTest, GptFlopsAreMegatronsFormula) {
  for (const char* name : {"gpt3-1.3b", "gpt3-175b"}) {
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(name));
    const TransformerOptions& o = spec.transformer;
    const double expected = MegatronGptFlops(o.batch, o.seq_length, o.num_layers, o.hidden_size,
                                             o.vocab_size);
    EXPECT_NEAR(TransformerModelFlops(o) / expected, 1, 1e-12) << name;
  }
}

// LLaMA: QKV H (h + 2g) d, output h d H, SwiGLU 3 H F, attention 4 s h d per
// token and layer (x2 for multiply-adds), head 2 H V; x3 for the backward.
TEST(TransformerMetricsTest, LlamaFlopsCountSwigluAndGroupedQueries) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("llama-7b-2l"));
  const TransformerOptions& o = spec.transformer;
  ASSERT_EQ(o.hidden_size, 4096);
  ASSERT_EQ(o.num_layers, 2);
  ASSERT_EQ(o.ffn_hidden_size, 11008);
  ASSERT_EQ(o.seq_length, 2048);
  const double qkv = 4096.0 * (32 + 2 * 32) * 128, proj = 4096.0 * 4096, mlp = 3 * 4096.0 * 11008;
  const double layer = 2 * (qkv + proj + mlp) + 4 * 2048.0 * 4096;  // 438,304,768
  const double per_token = 2 * layer + 2 * 4096.0 * 32000;          // 1,138,753,536
  EXPECT_DOUBLE_EQ(layer, 438304768.0);
  EXPECT_DOUBLE_EQ(TransformerModelFlops(o), 3 * per_token * 2048 * o.batch);
  // Grouped queries: 8 key/value groups shrink the QKV matrix only.
  TransformerOptions gqa = o;
  gqa.num_query_groups = 8;
  const double saved = 3.0 * 2 * 2 * 4096 * (2 * (32 - 8)) * 128 * 2048 * o.batch;
  EXPECT_DOUBLE_EQ(TransformerModelFlops(o) - TransformerModelFlops(gqa), saved);
}

}  // namespace
}  // namespace distir
