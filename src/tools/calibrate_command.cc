// distir calibrate --backend cpu|cuda -o PROFILE.yaml [--base BASE.yaml] [--quick]
// distir calibrate --refit RAW.csv --base BASE.yaml -o PROFILE.yaml
// distir calibrate --attention-measurements KERNELS.csv --base BASE.yaml -o PROFILE.yaml
//
// Times the executor's kernels and communication on this machine (the CPU
// executor's host kernels and MPI, or the CUDA executor's cuBLAS, kernels and
// NCCL: calibrate_backends.h), fits the hardware profile's coefficients
// (src/calibrate, docs/calibration.md), prints the fit quality and writes a
// profile that `distir simulate` and `distir search` load. Under `mpirun -np N`
// the communication benchmarks run over 2..N ranks; rank 0 fits and writes.
// --refit fits the timings an earlier run wrote with --measurements instead of
// measuring (the GPU may be gone; the fit or the base profile may have changed).
// --attention-measurements fits the tiled attention model's device.attention to
// the attention kernels scripts/measure_kernels_torch.py timed (attention_fit.h):
// alone with --base it measures nothing and keeps the rest of the base profile;
// with --refit or --backend it is fitted after the usual fit.

#include <mpi.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "calibrate/attention_fit.h"
#include "calibrate/csv_fields.h"
#include "calibrate/measurement_csv.h"
#include "calibrate/profile_fit.h"
#include "calibrate/profile_writer.h"
#include "sim/hardware_profile.h"
#include "support/check.h"
#include "support/host_info.h"
#include "support/read_file.h"
#include "tools/calibrate_backends.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct CalibrateFlags {
  std::string backend = "cpu";
  std::string matmul_dtype = "f32";  // whose MatMul samples must fit (and fit device.gemm)
  bool matmul_dtype_given = false;   // named on the command line (else device.gemm fits bf16)
  std::string output;
  std::string base;
  std::string name;
  bool quick = false;
  std::string csv;             // where to write the raw measurements, if anywhere
  std::string refit;           // earlier raw measurements to fit instead of measuring
  std::string stray;           // a positional argument, which calibrate does not take
  bool backend_given = false;  // --backend named on the command line
  std::string attention_csv;   // attention kernel timings to fit device.attention to
  std::string attention_layout = "causal-cudnn";  // whose rows (the CSV's layout column)
  std::string attention_fit_tokens;               // sequence lengths to fit, "2048,4096"; "" = all
};

// Only device.attention is fitted: nothing to measure or refit, a base to fit it onto.
bool IsAttentionOnly(const CalibrateFlags& f) {
  return !f.attention_csv.empty() && !f.base.empty() && f.refit.empty() && !f.backend_given;
}

// --attention-fit-tokens: sequence lengths >= 1 separated by commas; "" = all.
StatusOr<std::vector<int64_t>> ParseFitTokens(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  for (const calibrate::CsvField& item : calibrate::SplitCsvFields(text)) {
    int64_t tokens = 0;
    const char* end = item.text.data() + item.text.size();
    auto [ptr, ec] = std::from_chars(item.text.data(), end, tokens);
    if (ec != std::errc() || ptr != end || tokens < 1) {
      return InvalidArgument() << "--attention-fit-tokens takes sequence lengths >= 1 separated "
                                  "by commas (e.g. 2048,4096), got '"
                               << text << "'";
    }
    out.push_back(tokens);
  }
  return out;
}

StatusOr<sim::HardwareProfile> BaseProfile(const CalibrateFlags& f, int world) {
  const std::string name =
      f.name.empty() ? std::filesystem::path(f.output).stem().string() : f.name;
  if (f.base.empty()) {
    const CalibratedDevice d = DescribeCalibratedDevice(f.backend, world);
    return calibrate::DefaultBaseProfile(name, d.name, world, d.memory_bytes, d.link_name);
  }
  DISTIR_ASSIGN_OR_RETURN(sim::HardwareProfile hw, sim::LoadHardwareProfile(f.base));
  hw.name = name;
  return hw;
}

void PrintFits(const calibrate::CalibrationFit& fit, std::ostream& os) {
  os << std::left << std::setw(14) << "op" << std::setw(9) << "samples" << std::setw(10) << "R^2"
     << std::setw(18) << "median rel. err."
     << "max rel. err.\n";
  for (const calibrate::OpFitReport& r : fit.fits) {
    os << std::setw(14) << r.op << std::setw(9) << r.quality.n << std::setw(10) << std::fixed
       << std::setprecision(4) << r.quality.r2 << std::setw(18) << std::setprecision(1)
       << 100 * r.quality.median_relative_error << std::setprecision(1)
       << 100 * r.quality.max_relative_error << std::defaultfloat << "\n";
  }
  for (const std::string& note : fit.notes) os << "note: " << note << "\n";
}

std::vector<std::string> Header(const CalibrateFlags& f, const calibrate::CalibrationFit& fit,
                                int world) {
  const std::string how = f.refit.empty()
                              ? "Calibrated by `distir calibrate --backend " + f.backend + "` on " +
                                    std::to_string(world) + " MPI rank(s)"
                              : "Refitted by `distir calibrate --refit` from the timings in " +
                                    f.refit + " (where they were measured is not recorded there)";
  std::vector<std::string> h{
      how + " (" + VersionString() + ").",
      "Format: docs/configs.md; the fits: docs/calibration.md. Fit quality (R^2, median "
      "relative error):"};
  for (const calibrate::OpFitReport& r : fit.fits) {
    std::ostringstream line;
    line << "  " << r.op << ": " << r.quality.n << " samples, R^2 " << std::fixed
         << std::setprecision(4) << r.quality.r2 << ", median " << std::setprecision(1)
         << 100 * r.quality.median_relative_error << " %";
    h.push_back(line.str());
  }
  for (const std::string& note : fit.notes) h.push_back("note: " + note);
  return h;
}

// One line per measurement: op,dtype,shape,ranks,flops,bytes,time_s.
Status WriteMeasurementsCsv(const std::string& path,
                            const std::vector<calibrate::Measurement>& ms) {
  return WriteOutputAtomically(path, calibrate::MeasurementsCsv(ms));
}

// Reads the kernels of --attention-measurements into `kernels` (left empty
// without it). Returns the exit code to stop with on a bad file, which is
// reported, with its line, when `report` (rank 0).
std::optional<int> ReadAttentionKernels(const CalibrateFlags& f, bool report,
                                        std::vector<calibrate::AttentionKernelTiming>& kernels) {
  if (f.attention_csv.empty()) return std::nullopt;
  StatusOr<std::string> text = ReadRegularFile(f.attention_csv);
  StatusOr<std::vector<calibrate::AttentionKernelTiming>> parsed =
      text.ok() ? calibrate::ParseAttentionKernelsCsv(*text, f.attention_csv, f.attention_layout)
                : StatusOr<std::vector<calibrate::AttentionKernelTiming>>(text.status());
  if (parsed.ok()) {
    kernels = std::move(*parsed);
    return std::nullopt;
  }
  if (!report) return kExitInputError;
  return ReportError(parsed.status(), text.ok() ? *text : std::string());
}

// Fits profile.device.attention to `kernels`, prints the fit and adds it to the
// profile's `header`.
Status FitAttentionSection(const CalibrateFlags& f,
                           const std::vector<calibrate::AttentionKernelTiming>& kernels,
                           sim::HardwareProfile& profile, std::vector<std::string>& header) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<int64_t> tokens, ParseFitTokens(f.attention_fit_tokens));
  DISTIR_ASSIGN_OR_RETURN(calibrate::AttentionFit fit,
                          calibrate::FitAttentionTiling(kernels, profile, {tokens}));
  profile.device.attention = fit.tiling;
  header.push_back("device.attention fitted to the attention kernels in " + f.attention_csv +
                   " (docs/calibration.md):");
  for (const std::string& line : calibrate::AttentionFitSummary(fit, f.attention_layout)) {
    std::cout << line << "\n";
    header.push_back("  " + line);
  }
  return Status::Ok();
}

// Writes `profile` to `path` atomically and reads it back, as `distir simulate` will.
StatusOr<sim::HardwareProfile> WriteAndLoadBack(const std::string& path,
                                                const sim::HardwareProfile& profile,
                                                const std::vector<std::string>& header) {
  DISTIR_RETURN_IF_ERROR(
      WriteOutputAtomically(path, calibrate::EmitHardwareProfileYaml(profile, header)));
  return sim::LoadHardwareProfile(path);
}

// Rank 0: fit, print, write, and check that the file loads back. `attention`:
// the kernels of --attention-measurements, fitted after the rest (empty without).
Status FitAndWrite(const CalibrateFlags& f, const std::vector<calibrate::Measurement>& ms,
                   sim::HardwareProfile base, int world,
                   const std::vector<calibrate::AttentionKernelTiming>& attention) {
  DISTIR_ASSIGN_OR_RETURN(calibrate::CalibrationFit fit,
                          calibrate::FitProfile(ms, std::move(base), f.matmul_dtype,
                                                f.matmul_dtype_given ? f.matmul_dtype
                                                                     : calibrate::DefaultTiledDtype(
                                                                           ms, f.matmul_dtype)));
  PrintFits(fit, std::cout);
  // Rank 0's machine: `distir validate` compares it with the machine of the runs.
  // A refit does not know where its timings were taken.
  if (f.refit.empty()) {
    fit.profile.calibrated_on = CurrentHost();
  } else {
    fit.profile.calibrated_on.reset();
  }
  std::vector<std::string> header = Header(f, fit, world);
  // After the usual fit: the attention model builds on its peak and launch overhead.
  if (!f.attention_csv.empty()) {
    DISTIR_RETURN_IF_ERROR(FitAttentionSection(f, attention, fit.profile, header));
  }
  DISTIR_ASSIGN_OR_RETURN(sim::HardwareProfile back,
                          WriteAndLoadBack(f.output, fit.profile, header));
  const sim::DeviceSpec& d = back.device;
  std::cout << std::setprecision(4) << "wrote " << f.output << ": MatMul peak f32 "
            << d.peak_flops_f32 / 1e9 << ", f16 " << d.peak_flops_f16 / 1e9;
  if (d.peak_flops_bf16 > 0) std::cout << ", bf16 " << d.peak_flops_bf16 / 1e9;
  std::cout << " GFLOP/s, memory " << d.dram_bandwidth / 1e9 << " GB/s, launch "
            << d.kernel_launch_overhead * 1e6 << " us, link " << back.intra_node.bandwidth / 1e9
            << " GB/s + " << back.intra_node.latency * 1e6 << " us\n";
  return Status::Ok();
}

Status CheckAttentionFlags(const CalibrateFlags& f) {
  if (f.attention_csv.empty()) {
    if (f.attention_fit_tokens.empty()) return Status::Ok();
    return InvalidArgument() << "--attention-fit-tokens needs --attention-measurements";
  }
  // A base without device.gemm fails the fit too, but a missing one fails even
  // before the benchmarks run: the default base has no device.gemm.
  if (f.base.empty()) {
    return InvalidArgument() << "--attention-measurements needs --base BASE.yaml: the profile of "
                                "the GPU the kernels ran on (its peak, SMs and launch overhead)";
  }
  if (f.attention_layout.empty()) return InvalidArgument() << "--attention-layout is empty";
  return ParseFitTokens(f.attention_fit_tokens).status();
}

Status CheckFlags(const CalibrateFlags& f) {
  if (!f.stray.empty())
    return InvalidArgument() << "calibrate takes no input file, got '" << f.stray << "'";
  if (f.output.empty()) return InvalidArgument() << "calibrate needs -o PROFILE.yaml";
  if (f.backend != "cpu" && f.backend != "cuda") {
    return InvalidArgument() << "unknown backend '" << f.backend << "'; expected cpu or cuda";
  }
  if (f.matmul_dtype != "f32" && f.matmul_dtype != "f16" && f.matmul_dtype != "bf16" &&
      f.matmul_dtype != "f64") {
    return InvalidArgument() << "unknown --matmul-dtype '" << f.matmul_dtype
                             << "'; expected f32, f16, bf16 or f64";
  }
  return CheckAttentionFlags(f);
}

// Every rank fails the same way on bad flags, a missing backend or a bad base
// profile, so no rank goes on to the collective benchmarks alone.
StatusOr<sim::HardwareProfile> Prepare(const CalibrateFlags& f, int world) {
  DISTIR_RETURN_IF_ERROR(CheckFlags(f));
  DISTIR_RETURN_IF_ERROR(CheckBackendAvailable(f.backend));
  return BaseProfile(f, world);
}

// --refit: rank 0 fits the CSV onto --base; nothing is measured.
int Refit(const CalibrateFlags& f, int world) {
  if (!f.csv.empty()) {
    return ReportError(InvalidArgument() << "--refit reads timings; --measurements would write "
                                            "them again: give one of the two");
  }
  if (f.base.empty()) {
    return ReportError(InvalidArgument()
                       << "--refit needs --base BASE.yaml: the profile of the machine the "
                          "timings came from (this machine may be another)");
  }
  StatusOr<sim::HardwareProfile> base = BaseProfile(f, world);
  if (!base.ok()) return ReportError(base.status());
  StatusOr<std::string> text = ReadRegularFile(f.refit);
  if (!text.ok()) return ReportError(text.status());
  StatusOr<std::vector<calibrate::Measurement>> ms =
      calibrate::ParseMeasurementsCsv(*text, f.refit);
  if (!ms.ok()) return ReportError(ms.status(), *text);
  std::vector<calibrate::AttentionKernelTiming> attention;
  if (std::optional<int> stop = ReadAttentionKernels(f, true, attention)) return *stop;
  Status written = FitAndWrite(f, *ms, std::move(*base), world, attention);
  return written.ok() ? kExitOk : ReportError(written);
}

// --attention-measurements with --base alone: rank 0 fits device.attention onto
// the base profile, keeps the rest, and measures nothing.
int FitAttentionOnly(const CalibrateFlags& f, int world) {
  if (Status s = CheckFlags(f); !s.ok()) return ReportError(s);
  if (!f.csv.empty()) {
    return ReportError(InvalidArgument()
                       << "--measurements writes the timings calibrate measures, and "
                          "--attention-measurements with --base alone measures none: add "
                          "--backend to measure too");
  }
  StatusOr<sim::HardwareProfile> profile = BaseProfile(f, world);
  if (!profile.ok()) return ReportError(profile.status());
  std::vector<calibrate::AttentionKernelTiming> kernels;
  if (std::optional<int> stop = ReadAttentionKernels(f, true, kernels)) return *stop;
  std::vector<std::string> header{
      "Fitted by `distir calibrate --attention-measurements`: " + f.base +
          " with its device.attention fitted, everything else kept (" + VersionString() + ").",
      "Format: docs/configs.md; the fit: docs/calibration.md."};
  if (Status s = FitAttentionSection(f, kernels, *profile, header); !s.ok()) {
    return ReportError(s);
  }
  StatusOr<sim::HardwareProfile> back = WriteAndLoadBack(f.output, *profile, header);
  if (!back.ok()) return ReportError(back.status());
  DISTIR_CHECK(back->device.attention.has_value()) << "the fitted device.attention did not load";
  const sim::AttentionTiling& a = *back->device.attention;
  std::cout << std::setprecision(7) << "wrote " << f.output << ": device.attention block "
            << a.block << ", block_overhead " << a.block_overhead << ", max_efficiency "
            << a.max_efficiency << ", backward_max_efficiency " << a.backward_max_efficiency
            << "\n";
  return kExitOk;
}

int Calibrate(const CalibrateFlags& f, int rank, int world) {
  if (IsAttentionOnly(f)) return rank == 0 ? FitAttentionOnly(f, world) : kExitOk;
  if (!f.refit.empty()) {
    if (Status s = CheckFlags(f); !s.ok()) return rank == 0 ? ReportError(s) : kExitInputError;
    return rank == 0 ? Refit(f, world) : kExitOk;
  }
  StatusOr<sim::HardwareProfile> base = Prepare(f, world);
  if (!base.ok()) return rank == 0 ? ReportError(base.status()) : kExitInputError;
  // Every rank reads the attention kernels before measuring, so that a bad file
  // stops them all before the collective benchmarks.
  std::vector<calibrate::AttentionKernelTiming> attention;
  if (std::optional<int> stop = ReadAttentionKernels(f, rank == 0, attention)) return *stop;
  StatusOr<std::vector<calibrate::Measurement>> ms =
      MeasureBackend(f.backend, f.quick, rank, world);
  if (!ms.ok()) return rank == 0 ? ReportError(ms.status()) : kExitInputError;
  if (rank != 0) return kExitOk;
  if (!f.csv.empty()) {
    Status csv = WriteMeasurementsCsv(f.csv, *ms);
    if (!csv.ok()) return ReportError(csv);
  }
  Status written = FitAndWrite(f, *ms, std::move(*base), world, attention);
  return written.ok() ? kExitOk : ReportError(written);
}

}  // namespace

int RunCalibrate(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  CalibrateFlags f;
  po::options_description desc(
      "usage: [mpirun -np N] distir calibrate --backend cpu|cuda -o PROFILE.yaml\n"
      "                                      [--base BASE.yaml] [--name NAME] [--quick]\n"
      "                                      [--matmul-dtype f32|f16|bf16]\n"
      "       distir calibrate --refit RAW.csv --base BASE.yaml -o PROFILE.yaml\n"
      "       distir calibrate --attention-measurements KERNELS.csv --base BASE.yaml\n"
      "                        -o PROFILE.yaml [--attention-layout NAME]\n"
      "                        [--attention-fit-tokens 2048,4096]\n\n"
      "Times MatMul, elementwise ops and communication with the executor's kernels (cpu:\n"
      "host kernels and MPI; cuda: cuBLAS, CUDA kernels and NCCL, one rank per GPU),\n"
      "fits the hardware profile's coefficients by non-negative least squares, prints\n"
      "the fit quality and writes the profile (docs/calibration.md). With\n"
      "--attention-measurements it also fits device.attention (the tiled attention model)\n"
      "to measured attention kernels; with --base alone and neither --refit nor --backend\n"
      "it fits only that, measures nothing and keeps the rest of the base profile.\n\noptions");
  desc.add_options()("help,h", "print this help")(
      "backend", po::value(&f.backend)->default_value("cpu"), "cpu or cuda")(
      "output,o", po::value(&f.output), "the profile to write")(
      "base", po::value(&f.base),
      "profile whose structure (nodes, links, algorithm) to keep; default: one node of N ranks")(
      "name", po::value(&f.name), "the profile's name (default: the output file's stem)")(
      "matmul-dtype", po::value(&f.matmul_dtype)->default_value("f32"),
      "f32, f16 or bf16: the MatMul timings that must fit (and that fit device.gemm; without "
      "this option device.gemm fits bf16, else f16, when measured); every measured dtype gets "
      "its own device.matmul_regression")("quick", po::bool_switch(&f.quick),
                                          "a small sweep (seconds; for tests)")(
      "measurements", po::value(&f.csv), "also write every timing as CSV to this file")(
      "refit", po::value(&f.refit),
      "fit the timings of an earlier --measurements CSV instead of measuring (needs --base)")(
      "attention-measurements", po::value(&f.attention_csv),
      "fit device.attention to the attention kernels of this CSV of "
      "scripts/measure_kernels_torch.py (needs --base, whose device.gemm gives the SMs)")(
      "attention-layout", po::value(&f.attention_layout)->default_value("causal-cudnn"),
      "the rows to fit: the attention backend in the CSV's layout column (causal-cudnn: "
      "cuDNN's fused attention; causal: FlashAttention-2)")(
      "attention-fit-tokens", po::value(&f.attention_fit_tokens),
      "sequence lengths whose kernels to fit, e.g. 2048,4096 (default: all); the others are "
      "held out and reported apart")("input", po::value(&f.stray), "(none)");
  po::variables_map vm;
  int code = kExitOk;
  if (std::optional<int> stop = ParseCommandLine("calibrate", argc, argv, desc, vm)) {
    code = *stop;
  } else {
    f.matmul_dtype_given = vm.count("matmul-dtype") > 0 && !vm["matmul-dtype"].defaulted();
    f.backend_given = vm.count("backend") > 0 && !vm["backend"].defaulted();
    code = Calibrate(f, rank, world);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}

}  // namespace distir::tools
