#include "calibrate/attention_fit.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "calibrate/csv_fields.h"
#include "sim/attention_model.h"
#include "support/status.h"
#include "support/str_util.h"

namespace distir::calibrate {
namespace {

constexpr char kKernelsHeader[] = "kind,model,tp,tokens,name,layout,m,n,k,time_s,tflops,timing";
constexpr size_t kKernelsFields = 12;

// The block_overhead grid: 0, 0.25, ..., 8 steps, as docs/calibration.md §5.5 fitted it.
constexpr int kOverheadQuarters = 32;

// The two rows of one shape as read so far; a later row of a name replaces the earlier.
struct ShapeRows {
  std::optional<double> forward_s;
  std::optional<double> both_s;
  SourceLoc forward_loc;  // the forward row's time_s
  SourceLoc both_loc;     // the forward + backward row's time_s
};

using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;  // (m, tokens, k)

// The CSV read so far: the rows of the chosen layout and every attention layout seen.
struct KernelRows {
  std::map<ShapeKey, ShapeRows> shapes;
  std::set<std::string> layouts;
};

std::string AttentionShapeName(const ShapeKey& key) {
  std::ostringstream os;
  os << "heads " << std::get<0>(key) << ", sequence " << std::get<1>(key) << ", head dim "
     << std::get<2>(key);
  return os.str();
}

// Adds one data line to `rows` when it is an attention row of `layout`.
Status ReadKernelLine(const std::string& line, const SourceLoc& loc, const std::string& layout,
                      KernelRows& rows) {
  const std::vector<CsvField> f = SplitCsvFields(line);
  if (f.size() != kKernelsFields) {
    return InvalidArgument(loc) << "expected " << kKernelsFields << " fields (" << kKernelsHeader
                                << "), got " << f.size();
  }
  if (f[0].text != "attention") return Status::Ok();
  rows.layouts.insert(f[5].text);
  if (f[5].text != layout) return Status::Ok();
  const std::string& name = f[4].text;
  if (name != "attention_fwd" && name != "attention_fwd_bwd") {
    return InvalidArgument(FieldLoc(loc, f[4]))
           << "unknown attention kernel '" << name << "': expected attention_fwd or "
           << "attention_fwd_bwd";
  }
  DISTIR_ASSIGN_OR_RETURN(int64_t heads, ParseCsvCount(f[6], "m", loc));
  DISTIR_ASSIGN_OR_RETURN(int64_t tokens, ParseCsvCount(f[3], "tokens", loc));
  DISTIR_ASSIGN_OR_RETURN(int64_t head_dim, ParseCsvCount(f[8], "k", loc));
  DISTIR_ASSIGN_OR_RETURN(double time_s, ParseCsvNumber(f[9], "time_s", loc));
  if (time_s <= 0) {
    return InvalidArgument(FieldLoc(loc, f[9])) << "time_s must be > 0, got '" << f[9].text << "'";
  }
  ShapeRows& shape = rows.shapes[{heads, tokens, head_dim}];
  if (name == "attention_fwd") {
    shape.forward_s = time_s;
    shape.forward_loc = FieldLoc(loc, f[9]);
  } else {
    shape.both_s = time_s;
    shape.both_loc = FieldLoc(loc, f[9]);
  }
  return Status::Ok();
}

// The timing of one shape, once both its rows are there and the backward is positive.
StatusOr<AttentionKernelTiming> ShapeTiming(const ShapeKey& key, const ShapeRows& rows) {
  if (!rows.both_s.has_value()) {
    return InvalidArgument(rows.forward_loc)
           << "attention_fwd of " << AttentionShapeName(key) << " has no attention_fwd_bwd row: "
           << "the backward's time is their difference";
  }
  if (!rows.forward_s.has_value()) {
    return InvalidArgument(rows.both_loc)
           << "attention_fwd_bwd of " << AttentionShapeName(key) << " has no attention_fwd row: "
           << "the backward's time is their difference";
  }
  if (*rows.both_s <= *rows.forward_s) {
    return InvalidArgument(rows.both_loc)
           << "attention_fwd_bwd of " << AttentionShapeName(key) << " must take longer than its "
           << "attention_fwd (" << *rows.forward_s << " s at line " << rows.forward_loc.line
           << "), got " << *rows.both_s << " s";
  }
  return AttentionKernelTiming{std::get<0>(key), std::get<1>(key), std::get<2>(key),
                               *rows.forward_s, *rows.both_s - *rows.forward_s};
}

Status NoRowsError(const std::string& path, const std::string& layout,
                   const std::set<std::string>& layouts) {
  Status s = InvalidArgument(SourceLoc{path, 0, 0, ""})
             << "no attention rows of layout '" << layout << "'";
  if (layouts.empty()) return s.AddNote("the file has no attention rows at all");
  return s.AddNote("its attention layouts: " +
                   Join(std::vector<std::string>(layouts.begin(), layouts.end()), ", "));
}

// One kernel to predict: a shape's forward or backward and its measured seconds.
struct AttentionCase {
  const AttentionKernelTiming* kernel = nullptr;
  bool backward = false;
  double measured_s = 0;
};

// What the fit holds fixed: the base profile's device and its SMs.
struct FitContext {
  const sim::DeviceSpec* device = nullptr;
  int sm_count = 0;
};

// The model's time of `c` under `tiling`; with efficiencies of 1, its compute
// time is the makespan · one step at the SM's peak share, the script's "unit".
sim::TiledAttentionEstimate EstimateCase(const FitContext& ctx, const sim::AttentionTiling& tiling,
                                         const AttentionCase& c) {
  const auto tokens = static_cast<double>(c.kernel->tokens);
  const sim::AttentionShape shape{static_cast<double>(c.kernel->heads),
                                  tokens,
                                  tokens,
                                  static_cast<double>(c.kernel->head_dim),
                                  /*causal=*/true,
                                  c.backward};
  // No bytes: the measured kernels are compute bound, and the fit predicts only
  // the compute side of the model.
  return sim::EstimateTiledAttention(*ctx.device, tiling, ctx.sm_count, DType::kBF16, shape, 0);
}

double MedianValue(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The efficiency of one direction at `overhead`: the geometric mean of model
// compute time at efficiency 1 over measured compute time, so that the
// direction's mean log error is zero. REQUIRES: some case of that direction.
double FitEfficiency(const FitContext& ctx, const std::vector<AttentionCase>& cases, int64_t block,
                     double overhead, bool backward) {
  const sim::AttentionTiling unit{block, overhead, 1, 1};
  double sum_log = 0;
  int n = 0;
  for (const AttentionCase& c : cases) {
    if (c.backward != backward) continue;
    const double compute_s = c.measured_s - ctx.device->kernel_launch_overhead;
    sum_log += std::log(EstimateCase(ctx, unit, c).compute_s / compute_s);
    ++n;
  }
  return std::exp(sum_log / n);
}

// |predicted / measured − 1| of each case (of one direction, or of both when
// `direction` is empty).
std::vector<double> RelativeErrors(const FitContext& ctx, const sim::AttentionTiling& tiling,
                                   const std::vector<AttentionCase>& cases,
                                   std::optional<bool> direction) {
  std::vector<double> out;
  for (const AttentionCase& c : cases) {
    if (direction.has_value() && c.backward != *direction) continue;
    out.push_back(std::abs(EstimateCase(ctx, tiling, c).time_s / c.measured_s - 1));
  }
  return out;
}

AttentionFitQuality QualityOf(const FitContext& ctx, const sim::AttentionTiling& tiling,
                              const std::vector<AttentionCase>& cases, bool backward) {
  const std::vector<double> errors = RelativeErrors(ctx, tiling, cases, backward);
  if (errors.empty()) return {};
  return {static_cast<int>(errors.size()), MedianValue(errors),
          *std::max_element(errors.begin(), errors.end())};
}

// The tiling of the overhead grid point whose model has the least median error
// over `fitted`; the first of equal ones, as the grid ascends.
sim::AttentionTiling SearchOverhead(const FitContext& ctx, const std::vector<AttentionCase>& fitted,
                                    int64_t block) {
  sim::AttentionTiling best;
  double best_error = 0;
  for (int quarter = 0; quarter <= kOverheadQuarters; ++quarter) {
    sim::AttentionTiling t{block, quarter / 4.0, 1, 1};
    t.max_efficiency = FitEfficiency(ctx, fitted, block, t.block_overhead, false);
    t.backward_max_efficiency = FitEfficiency(ctx, fitted, block, t.block_overhead, true);
    const double error = MedianValue(RelativeErrors(ctx, t, fitted, std::nullopt));
    if (quarter == 0 || error < best_error) {
      best = t;
      best_error = error;
    }
  }
  return best;
}

// The device's SM count and peak, checked, with base.source_path as the location.
StatusOr<FitContext> CheckBase(const sim::HardwareProfile& base) {
  const SourceLoc at{base.source_path, 0, 0, ""};
  if (!base.device.gemm.has_value()) {
    return InvalidArgument(at) << "the profile has no device.gemm section: the tiled attention "
                                  "model runs on device.gemm.sm_count SMs";
  }
  if (base.device.MatrixFlops(DType::kBF16) <= 0) {
    return InvalidArgument(at) << "the profile's bf16 peak (device.peak_flops.bf16, else f32) "
                                  "is 0: the attention efficiencies are fractions of it";
  }
  return FitContext{&base.device, base.device.gemm->sm_count};
}

bool IsFitted(const AttentionFitOptions& options, int64_t tokens) {
  return options.fit_tokens.empty() ||
         std::count(options.fit_tokens.begin(), options.fit_tokens.end(), tokens) > 0;
}

// Both kernels of every shape, fitted or held out; each measured time must
// exceed the launch overhead, which the model adds to the compute time.
Status SplitCases(const std::vector<AttentionKernelTiming>& kernels, double launch_s,
                  const AttentionFitOptions& options, std::vector<AttentionCase>& fitted,
                  std::vector<AttentionCase>& held_out) {
  for (const AttentionKernelTiming& k : kernels) {
    for (bool backward : {false, true}) {
      const double t = backward ? k.backward_s : k.forward_s;
      if (t <= launch_s) {
        return InvalidArgument() << "the " << (backward ? "backward" : "forward") << " of "
                                 << AttentionShapeName({k.heads, k.tokens, k.head_dim}) << " took "
                                 << t << " s, not more than the profile's kernel_launch_overhead "
                                 << launch_s << " s";
      }
      (IsFitted(options, k.tokens) ? fitted : held_out).push_back({&k, backward, t});
    }
  }
  return Status::Ok();
}

Status CheckFitTokens(const std::vector<AttentionKernelTiming>& kernels,
                      const AttentionFitOptions& options) {
  for (int64_t tokens : options.fit_tokens) {
    const bool found =
        std::any_of(kernels.begin(), kernels.end(),
                    [&](const AttentionKernelTiming& k) { return k.tokens == tokens; });
    if (!found) {
      return InvalidArgument() << "no measured attention kernel has the fitted sequence length "
                               << tokens;
    }
  }
  return Status::Ok();
}

Status CheckEfficiency(double efficiency, const char* key) {
  if (efficiency <= 1) return Status::Ok();
  return InvalidArgument() << "the fitted " << key << " " << efficiency
                           << " exceeds 1: the kernels ran faster than the profile's bf16 peak "
                              "allows";
}

std::string Percent(double fraction) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * fraction << " %";
  return os.str();
}

std::string QualityLine(const char* group, const char* direction, const AttentionFitQuality& q) {
  std::ostringstream os;
  os << std::left << std::setw(8) << group << " " << std::setw(8) << direction << " " << std::right
     << std::setw(3) << q.kernels << " kernels: median |error| " << Percent(q.median_error)
     << ", largest " << Percent(q.max_error);
  return os.str();
}

}  // namespace

StatusOr<std::vector<AttentionKernelTiming>> ParseAttentionKernelsCsv(const std::string& text,
                                                                      const std::string& path,
                                                                      const std::string& layout) {
  KernelRows rows;
  DISTIR_RETURN_IF_ERROR(
      ForEachCsvRow(text, path, kKernelsHeader, [&](const std::string& line, const SourceLoc& loc) {
        return ReadKernelLine(line, loc, layout, rows);
      }));
  if (rows.shapes.empty()) return NoRowsError(path, layout, rows.layouts);
  std::vector<AttentionKernelTiming> out;
  for (const auto& [key, shape] : rows.shapes) {
    DISTIR_ASSIGN_OR_RETURN(AttentionKernelTiming timing, ShapeTiming(key, shape));
    out.push_back(timing);
  }
  return out;
}

StatusOr<AttentionFit> FitAttentionTiling(const std::vector<AttentionKernelTiming>& kernels,
                                          const sim::HardwareProfile& base,
                                          const AttentionFitOptions& options) {
  if (kernels.empty()) return InvalidArgument() << "no attention kernels to fit";
  DISTIR_ASSIGN_OR_RETURN(FitContext ctx, CheckBase(base));
  DISTIR_RETURN_IF_ERROR(CheckFitTokens(kernels, options));
  std::vector<AttentionCase> fitted, held_out;
  DISTIR_RETURN_IF_ERROR(
      SplitCases(kernels, base.device.kernel_launch_overhead, options, fitted, held_out));
  const int64_t block = base.device.attention.has_value() ? base.device.attention->block : 128;
  AttentionFit fit;
  fit.tiling = SearchOverhead(ctx, fitted, block);
  DISTIR_RETURN_IF_ERROR(CheckEfficiency(fit.tiling.max_efficiency, "max_efficiency"));
  DISTIR_RETURN_IF_ERROR(
      CheckEfficiency(fit.tiling.backward_max_efficiency, "backward_max_efficiency"));
  for (const AttentionCase& c : fitted) fit.fitted_tokens.push_back(c.kernel->tokens);
  std::sort(fit.fitted_tokens.begin(), fit.fitted_tokens.end());
  fit.fitted_tokens.erase(std::unique(fit.fitted_tokens.begin(), fit.fitted_tokens.end()),
                          fit.fitted_tokens.end());
  fit.fitted_kernels = static_cast<int>(fitted.size());
  fit.held_out_kernels = static_cast<int>(held_out.size());
  fit.fitted_forward = QualityOf(ctx, fit.tiling, fitted, false);
  fit.fitted_backward = QualityOf(ctx, fit.tiling, fitted, true);
  fit.held_out_forward = QualityOf(ctx, fit.tiling, held_out, false);
  fit.held_out_backward = QualityOf(ctx, fit.tiling, held_out, true);
  return fit;
}

std::vector<std::string> AttentionFitSummary(const AttentionFit& fit, const std::string& layout) {
  std::ostringstream head;
  head << "attention (" << layout << "): " << fit.fitted_kernels << " kernels fitted (sequence "
       << JoinInts(fit.fitted_tokens, ", ") << "), " << fit.held_out_kernels << " held out";
  const sim::AttentionTiling& t = fit.tiling;
  std::ostringstream tiling;
  tiling << "block " << t.block << ", block_overhead " << t.block_overhead << std::fixed
         << std::setprecision(3) << ", max_efficiency " << t.max_efficiency
         << ", backward_max_efficiency " << t.backward_max_efficiency;
  std::vector<std::string> lines{head.str(), tiling.str(),
                                 QualityLine("fitted", "forward", fit.fitted_forward),
                                 QualityLine("fitted", "backward", fit.fitted_backward)};
  if (fit.held_out_kernels == 0) return lines;
  lines.push_back(QualityLine("held out", "forward", fit.held_out_forward));
  lines.push_back(QualityLine("held out", "backward", fit.held_out_backward));
  return lines;
}

}  // namespace distir::calibrate
