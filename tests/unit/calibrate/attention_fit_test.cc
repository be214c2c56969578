// The fit of the tiled attention model (calibrate/attention_fit.h): the kernel
// CSV of scripts/measure_kernels_torch.py read back, and the parameters of
// kernels timed by the model itself recovered.

#include "calibrate/attention_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>

#include "sim/attention_model.h"
#include "testing/test_util.h"

namespace distir::calibrate {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kHeader[] = "kind,model,tp,tokens,name,layout,m,n,k,time_s,tflops,timing\n";

// An H200 as configs/hardware/h200.yaml describes it, without the attention section.
sim::HardwareProfile H200() {
  sim::HardwareProfile hw;
  hw.source_path = "h200.yaml";
  hw.device.peak_flops_f16 = 989e12;
  hw.device.peak_flops_bf16 = 989e12;
  hw.device.peak_flops_f32 = 67e12;
  hw.device.dram_bandwidth = 4.8e12;
  hw.device.kernel_launch_overhead = 5e-6;
  hw.device.gemm = sim::GemmTiling{};
  hw.device.gemm->sm_count = 132;
  return hw;
}

// The tiling the synthetic kernels are timed with, and that the fit must find.
constexpr sim::AttentionTiling kTruth{128, 2.5, 0.7, 0.5};

// One shape timed by the model under kTruth (compute only, as the fit predicts).
AttentionKernelTiming Timed(int64_t heads, int64_t tokens, int64_t head_dim) {
  const sim::HardwareProfile hw = H200();
  AttentionKernelTiming k{heads, tokens, head_dim, 0, 0};
  for (bool backward : {false, true}) {
    const auto s = static_cast<double>(tokens);
    const sim::AttentionShape shape{static_cast<double>(heads),    s,    s,
                                    static_cast<double>(head_dim), true, backward};
    const double t =
        sim::EstimateTiledAttention(hw.device, kTruth, 132, DType::kBF16, shape, 0).time_s;
    (backward ? k.backward_s : k.forward_s) = t;
  }
  return k;
}

// Both rows of `k` as measure_kernels_torch.py writes them (fwd_bwd is the sum).
std::string Rows(const AttentionKernelTiming& k, const std::string& layout = "causal-cudnn") {
  std::ostringstream os;
  os << std::setprecision(17);
  for (bool both : {false, true}) {
    os << "attention,gpt,1," << k.tokens << "," << (both ? "attention_fwd_bwd" : "attention_fwd")
       << "," << layout << "," << k.heads << "," << k.heads << "," << k.head_dim << ","
       << (both ? k.forward_s + k.backward_s : k.forward_s) << ",100.0,graph\n";
  }
  return os.str();
}

std::vector<AttentionKernelTiming> Synthetic() {
  std::vector<AttentionKernelTiming> out;
  for (int64_t tokens : {1024, 2048, 4096}) {
    for (int64_t heads : {4, 16, 48}) out.push_back(Timed(heads, tokens, 128));
  }
  return out;
}

TEST(AttentionFitTest, RecoversTheParametersOfSyntheticKernels) {
  std::string csv = kHeader;
  for (const AttentionKernelTiming& k : Synthetic()) csv += Rows(k);
  ASSERT_OK_AND_ASSIGN(std::vector<AttentionKernelTiming> kernels,
                       ParseAttentionKernelsCsv(csv, "k.csv", "causal-cudnn"));
  ASSERT_EQ(kernels.size(), 9u);
  ASSERT_OK_AND_ASSIGN(AttentionFit fit, FitAttentionTiling(kernels, H200(), {}));
  EXPECT_EQ(fit.tiling.block, 128);
  EXPECT_EQ(fit.tiling.block_overhead, 2.5);
  EXPECT_NEAR(fit.tiling.max_efficiency, 0.7, 1e-9);
  EXPECT_NEAR(fit.tiling.backward_max_efficiency, 0.5, 1e-9);
  EXPECT_THAT(fit.fitted_tokens, ElementsAre(1024, 2048, 4096));
  EXPECT_EQ(fit.fitted_kernels, 18);
  EXPECT_EQ(fit.held_out_kernels, 0);
  EXPECT_EQ(fit.fitted_forward.kernels, 9);
  EXPECT_LT(fit.fitted_forward.max_error, 1e-9);
  EXPECT_LT(fit.fitted_backward.max_error, 1e-9);
  EXPECT_EQ(fit.held_out_forward.kernels, 0);
}

TEST(AttentionFitTest, HoldsOutTheOtherSequenceLengths) {
  std::vector<AttentionKernelTiming> kernels = Synthetic();
  // A held-out forward 10 % slower than the model: its error is 1 - 1/1.1.
  kernels.back().forward_s *= 1.1;
  ASSERT_OK_AND_ASSIGN(AttentionFit fit, FitAttentionTiling(kernels, H200(), {{1024, 2048}}));
  EXPECT_EQ(fit.tiling.block_overhead, 2.5);
  EXPECT_NEAR(fit.tiling.max_efficiency, 0.7, 1e-9);
  EXPECT_THAT(fit.fitted_tokens, ElementsAre(1024, 2048));
  EXPECT_EQ(fit.fitted_kernels, 12);
  EXPECT_EQ(fit.held_out_kernels, 6);
  EXPECT_EQ(fit.held_out_forward.kernels, 3);
  EXPECT_NEAR(fit.held_out_forward.max_error, 1 - 1 / 1.1, 1e-9);
  EXPECT_LT(fit.held_out_forward.median_error, 1e-9);
  EXPECT_LT(fit.held_out_backward.max_error, 1e-9);
}

TEST(AttentionFitTest, KeepsTheBlockOfTheBaseProfile) {
  sim::HardwareProfile hw = H200();
  hw.device.attention = sim::AttentionTiling{64, 1, 1, 1};
  ASSERT_OK_AND_ASSIGN(AttentionFit fit, FitAttentionTiling(Synthetic(), hw, {}));
  EXPECT_EQ(fit.tiling.block, 64);
}

TEST(AttentionFitTest, CountsEachShapeOnceWithItsLastRows) {
  // Two models with one shape (the later rows count), a GEMM row and another
  // backend's rows, which are skipped.
  const std::string csv = std::string(kHeader) +
                          "attention,a,1,2048,attention_fwd,causal-cudnn,16,16,128,1e-4,1,graph\n"
                          "gemm,a,1,2048,qkv,NN,2048,6144,2048,3e-5,1,graph\n"
                          "attention,a,1,2048,attention_fwd_bwd,causal-cudnn,16,16,128,4e-4,1,g\n"
                          "attention,b,2,2048,attention_fwd,causal-cudnn,16,16,128,2e-4,1,graph\n"
                          "attention,b,2,2048,attention_fwd_bwd,causal-cudnn,16,16,128,7e-4,1,g\n"
                          "attention,b,2,2048,attention_fwd,causal,16,16,128,9e-4,1,graph\n"
                          "attention,a,1,1024,attention_fwd,causal-cudnn,8,8,64,5e-5,1,graph\r\n"
                          "attention,a,1,1024,attention_fwd_bwd,causal-cudnn,8,8,64,2e-4,1,g\r\n";
  ASSERT_OK_AND_ASSIGN(std::vector<AttentionKernelTiming> kernels,
                       ParseAttentionKernelsCsv(csv, "k.csv", "causal-cudnn"));
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].heads, 8);  // ordered by (m, tokens, k)
  EXPECT_EQ(kernels[0].tokens, 1024);
  EXPECT_EQ(kernels[0].head_dim, 64);
  EXPECT_EQ(kernels[1].heads, 16);
  EXPECT_DOUBLE_EQ(kernels[1].forward_s, 2e-4);
  EXPECT_DOUBLE_EQ(kernels[1].backward_s, 5e-4);
}

// The error of parsing `text` for layout causal-cudnn, location and notes included.
std::string ParseError(const std::string& text) {
  StatusOr<std::vector<AttentionKernelTiming>> r =
      ParseAttentionKernelsCsv(text, "k.csv", "causal-cudnn");
  if (r.ok()) return "ok";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().ToString();
}

TEST(AttentionFitTest, LocatesBadLines) {
  const std::string h = kHeader;
  const std::string fwd = "attention,a,1,2048,attention_fwd,causal-cudnn,16,16,128,1e-4,1,g\n";
  EXPECT_THAT(ParseError(""), HasSubstr("k.csv:1:1: error: empty file"));
  EXPECT_THAT(ParseError("op,dtype,shape,ranks,flops,bytes,time_s\n"),
              HasSubstr("k.csv:1:1: error: expected the header 'kind,model,tp,tokens,name,"));
  EXPECT_THAT(ParseError(h + "attention,a,1,2048\n"),
              HasSubstr("k.csv:2:1: error: expected 12 fields"));
  EXPECT_THAT(ParseError(h + "attention,a,1,2048,attention_bwd,causal-cudnn,16,16,128,1,1,g\n"),
              HasSubstr("k.csv:2:20: error: unknown attention kernel 'attention_bwd'"));
  EXPECT_THAT(ParseError(h + "attention,a,1,2048,attention_fwd,causal-cudnn,0,16,128,1,1,g\n"),
              HasSubstr("k.csv:2:47: error: m must be a whole number >= 1, got '0'"));
  EXPECT_THAT(ParseError(h + "attention,a,1,2048,attention_fwd,causal-cudnn,16,16,128,x,1,g\n"),
              HasSubstr("k.csv:2:57: error: time_s must be a finite number >= 0, got 'x'"));
  EXPECT_THAT(ParseError(h + fwd),
              HasSubstr("k.csv:2:57: error: attention_fwd of heads 16, sequence 2048, head dim "
                        "128 has no attention_fwd_bwd row"));
  EXPECT_THAT(
      ParseError(h + fwd +
                 "attention,a,1,2048,attention_fwd_bwd,causal-cudnn,16,16,128,1e-4,1,g\n"),
      HasSubstr("k.csv:3:61: error: attention_fwd_bwd of heads 16, sequence 2048, head dim 128 "
                "must take longer than its attention_fwd"));
  EXPECT_THAT(ParseError(h + "attention,a,1,2048,attention_fwd,causal,16,16,128,1e-4,1,g\n" +
                         "attention,a,1,2048,attention_fwd,causal-x,16,16,128,1e-4,1,g\n"),
              HasSubstr("k.csv: error: no attention rows of layout 'causal-cudnn'\nnote: its "
                        "attention layouts: causal, causal-x"));
}

TEST(AttentionFitTest, RejectsWhatItCannotFit) {
  sim::HardwareProfile no_gemm = H200();
  no_gemm.device.gemm.reset();
  EXPECT_THAT(FitAttentionTiling(Synthetic(), no_gemm, {}),
              testing::StatusIs(StatusCode::kInvalidArgument, "no device.gemm section"));
  EXPECT_THAT(
      FitAttentionTiling(Synthetic(), H200(), {{2048, 8192}}),
      testing::StatusIs(StatusCode::kInvalidArgument,
                        "no measured attention kernel has the fitted sequence length 8192"));
  std::vector<AttentionKernelTiming> fast = Synthetic();
  fast[0].backward_s = 4e-6;
  EXPECT_THAT(FitAttentionTiling(fast, H200(), {}),
              testing::StatusIs(StatusCode::kInvalidArgument,
                                "not more than the profile's kernel_launch_overhead"));
  sim::HardwareProfile slow_peak = H200();
  slow_peak.device.peak_flops_bf16 = 100e12;
  EXPECT_THAT(FitAttentionTiling(Synthetic(), slow_peak, {}),
              testing::StatusIs(StatusCode::kInvalidArgument, "max_efficiency"));
}

TEST(AttentionFitTest, SummarizesTheFitAsTheScriptDid) {
  AttentionFit fit;
  fit.tiling = {128, 3.75, 0.81154, 0.58179};
  fit.fitted_tokens = {2048, 4096};
  fit.fitted_kernels = 40;
  fit.held_out_kernels = 20;
  fit.fitted_forward = {20, 0.02327, 0.10823};
  fit.fitted_backward = {20, 0.02776, 0.13299};
  fit.held_out_forward = {10, 0.12451, 0.19277};
  fit.held_out_backward = {10, 0.03307, 0.07616};
  EXPECT_THAT(
      AttentionFitSummary(fit, "causal-cudnn"),
      ElementsAre("attention (causal-cudnn): 40 kernels fitted (sequence 2048, 4096), 20 held out",
                  "block 128, block_overhead 3.75, max_efficiency 0.812, "
                  "backward_max_efficiency 0.582",
                  "fitted   forward   20 kernels: median |error| 2.3 %, largest 10.8 %",
                  "fitted   backward  20 kernels: median |error| 2.8 %, largest 13.3 %",
                  "held out forward   10 kernels: median |error| 12.5 %, largest 19.3 %",
                  "held out backward  10 kernels: median |error| 3.3 %, largest 7.6 %"));
  fit.held_out_kernels = 0;
  EXPECT_EQ(AttentionFitSummary(fit, "causal").size(), 4u);
}

}  // namespace
}  // namespace distir::calibrate
