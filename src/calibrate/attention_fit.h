// Calibrating the tiled attention model (sim/attention_model.h): fits a
// profile's device.attention section to attention kernels timed by
// scripts/measure_kernels_torch.py, for `distir calibrate --attention-measurements`.
//
// The model is not linear in its parameters: the block overhead changes the
// greedy block schedule itself. So the fit is a search over the overhead (a grid
// of quarter steps) with, for each overhead, the efficiency of each direction in
// closed form: the geometric mean of predicted over measured compute time, which
// zeroes the mean log error. The overhead whose model has the smallest median
// |relative error| wins. The schedule is the simulator's own (sim::GreedyMakespan
// through sim::EstimateTiledAttention), so the fitted numbers mean what the
// simulator does with them. Derivation: docs/cost_model.md §2.2.2; the fit and
// its figures on an H200: docs/calibration.md §5.5.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/hardware_profile.h"
#include "support/status_or.h"

namespace distir::calibrate {

/// One causal attention shape, timed forward and forward + backward.
struct AttentionKernelTiming {
  int64_t heads = 0;      ///< batch x query heads on the GPU (the CSV's `m`)
  int64_t tokens = 0;     ///< sequence length: queries = keys (`tokens`)
  int64_t head_dim = 0;   ///< head dimension (`k`)
  double forward_s = 0;   ///< the `attention_fwd` row's time_s, > 0
  double backward_s = 0;  ///< `attention_fwd_bwd` minus `attention_fwd`, > 0
};

/// The attention kernels of layout `layout` (the backend, e.g. "causal-cudnn")
/// in `text`, the CSV that scripts/measure_kernels_torch.py writes under the
/// header `kind,model,tp,tokens,name,layout,m,n,k,time_s,tflops,timing`, one per
/// distinct (m, tokens, k), ordered by them. Rows of kind `attention` and of that
/// layout count; when several models share a shape, the later row of each name
/// replaces the earlier. Every row is causal (the script times no other mask).
/// `path` names the file in errors.
/// Errors (InvalidArgument at path:line:col): another header or an empty file;
/// a line without 12 fields; a kernel name other than attention_fwd and
/// attention_fwd_bwd; m, tokens or k not a whole number >= 1; a time_s that is
/// not a finite number > 0; a shape with only one of its two rows, or whose
/// forward + backward is not longer than its forward; no row of `layout` at all
/// (at path, naming the attention layouts the file has).
StatusOr<std::vector<AttentionKernelTiming>> ParseAttentionKernelsCsv(const std::string& text,
                                                                      const std::string& path,
                                                                      const std::string& layout);

/// Which kernels to fit; the others are held out and only reported.
struct AttentionFitOptions {
  /// Sequence lengths whose kernels are fitted; empty: all kernels.
  std::vector<int64_t> fit_tokens;
};

/// How well the fitted model predicts one group of kernels.
struct AttentionFitQuality {
  int kernels = 0;
  double median_error = 0;  ///< median |predicted / measured − 1|
  double max_error = 0;     ///< largest |predicted / measured − 1|
};

/// The fitted section and its quality. A shape gives two kernels, its forward
/// and its backward.
struct AttentionFit {
  sim::AttentionTiling tiling;
  std::vector<int64_t> fitted_tokens;  ///< distinct sequence lengths fitted, ascending
  int fitted_kernels = 0;
  int held_out_kernels = 0;
  AttentionFitQuality fitted_forward;
  AttentionFitQuality fitted_backward;
  AttentionFitQuality held_out_forward;  ///< kernels == 0 when nothing is held out
  AttentionFitQuality held_out_backward;
};

/// Fits device.attention to `kernels` on the device of `base`, whose peak
/// (MatrixFlops(bf16), as the simulator times bf16 attention: the measured
/// kernels are bf16), SM count (device.gemm.sm_count) and kernel launch
/// overhead are taken as they stand, as is the block (base's device.attention
/// block, else 128). block_overhead is chosen among 0, 0.25, ..., 8 (the first
/// of equal ones); each direction's efficiency is exp(mean(log(model compute
/// time at efficiency 1 / (measured − launch)))) over its fitted kernels. A
/// kernel is predicted as sim::EstimateTiledAttention with no bytes (the
/// kernels are compute bound). `base` is left unchanged.
/// Errors (InvalidArgument): `kernels` empty; a sequence length of
/// options.fit_tokens with no kernel; base without device.gemm or with a bf16
/// peak of 0 (located at base.source_path); a measured time not above the launch
/// overhead; a fitted efficiency above 1 (the kernels beat the peak).
StatusOr<AttentionFit> FitAttentionTiling(const std::vector<AttentionKernelTiming>& kernels,
                                          const sim::HardwareProfile& base,
                                          const AttentionFitOptions& options);

/// The fit as text lines (no line ends), for the console and the written
/// profile's header, e.g.
///   attention (causal-cudnn): 40 kernels fitted (sequence 2048, 4096), 20 held out
///   block 128, block_overhead 3.75, max_efficiency 0.812, backward_max_efficiency 0.582
///   fitted   forward   20 kernels: median |error| 2.3 %, largest 10.8 %
/// then fitted backward and, when kernels are held out, held out forward and backward.
std::vector<std::string> AttentionFitSummary(const AttentionFit& fit, const std::string& layout);

}  // namespace distir::calibrate
