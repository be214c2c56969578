#include "calibrate/profile_fit.h"

#include <algorithm>

#include "calibrate/gemm_fit.h"
#include "ir/dtype.h"

namespace distir::calibrate {
namespace {

struct Samples {
  std::vector<std::vector<double>> features;
  std::vector<double> times;
  void Add(std::vector<double> f, double t) {
    features.push_back(std::move(f));
    times.push_back(t);
  }
};

Samples Select(const std::vector<Measurement>& ms, const std::string& op, const std::string& dtype,
               std::vector<double> (*features)(const Measurement&)) {
  Samples s;
  for (const Measurement& m : ms) {
    if (m.op == op && (dtype.empty() || m.dtype == dtype)) s.Add(features(m), m.time_s);
  }
  return s;
}

std::vector<double> MatMulFeatures(const Measurement& m) { return {1.0, m.flops, m.bytes}; }
std::vector<double> BytesFeatures(const Measurement& m) { return {1.0, m.bytes}; }
std::vector<double> FlopsFeatures(const Measurement& m) { return {1.0, m.flops}; }

// The ring model's (1, steps, bus bytes) of a communication measurement.
std::vector<double> CommFeatures(const Measurement& m) {
  const double n = m.ranks, s = m.bytes;
  if (m.op == "AllReduce") return {1.0, 2 * (n - 1), 2 * (n - 1) / n * s};
  if (m.op == "AllGather") return {1.0, n - 1, (n - 1) / n * s};
  return {1.0, 1.0, s};  // Send
}

StatusOr<LinearFit> FitOp(const Samples& s, const std::string& what, size_t rate_column) {
  if (s.times.empty()) return InvalidArgument() << "calibration has no " << what << " measurements";
  DISTIR_ASSIGN_OR_RETURN(LinearFit fit, FitNonNegative(s.features, s.times));
  if (fit.coefficients[rate_column] <= 0) {
    return InvalidArgument() << "calibration of " << what
                             << ": the time does not grow with the work, so no rate can be fitted";
  }
  return fit;
}

void FitPeaks(const std::vector<Measurement>& ms, CalibrationFit& out) {
  double f16 = 0, bf16 = 0, f32 = 0, f64 = 0;
  for (const Measurement& m : ms) {
    if (m.op != "MatMul") continue;
    const double rate = m.flops / m.time_s;
    double& peak = m.dtype == "f16" ? f16 : m.dtype == "bf16" ? bf16 : m.dtype == "f64" ? f64 : f32;
    peak = std::max(peak, rate);
  }
  sim::DeviceSpec& d = out.profile.device;
  if (f32 > 0) d.peak_flops_f32 = f32;
  if (f64 > 0) d.peak_flops_f64 = f64;
  if (bf16 > 0) d.peak_flops_bf16 = bf16;
  if (f16 > 0) {
    d.peak_flops_f16 = f16;
  } else {
    // The CPU path computes f16 in f32 (host_kernels.h), so f16 costs what f32 does.
    d.peak_flops_f16 = d.peak_flops_f32;
    out.notes.push_back("no f16 MatMul measured: peak_flops.f16 set to the f32 rate");
  }
}

// A base profile that opts into the tiled GEMM model gets its efficiency fitted
// too; it must come after the peaks, bandwidth and launch overhead it builds on.
Status FitTiledGemm(const std::vector<Measurement>& ms, const std::string& dtype,
                    CalibrationFit& out) {
  if (!out.profile.device.gemm.has_value()) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(FitQuality q, FitGemmEfficiency(ms, dtype, out.profile));
  out.fits.push_back({"MatMul " + dtype + " (tiled)", q});
  out.notes.push_back(
      "device.gemm.max_efficiency fitted to the MatMul " + dtype +
      " timings; sm_count, ctas_per_sm, tile and tile_overhead kept from the base profile; the "
      "tiled model takes precedence over matmul_regression in the simulator");
  return Status::Ok();
}

// One regression per measured float dtype (device.matmul_regression.<dtype>):
// `dtype` must fit, the others are fitted when measured and left to the
// roofline at their fitted peak, with a note, when their time does not grow.
// A regression of the base profile came from another machine and is dropped.
Status FitMatMulRegressions(const std::vector<Measurement>& ms, const std::string& dtype,
                            CalibrationFit& out) {
  sim::DeviceSpec& d = out.profile.device;
  d.matmul_regression.reset();
  d.matmul_regressions.clear();
  for (const std::string name : {"f16", "bf16", "f32", "f64"}) {
    Samples mm = Select(ms, "MatMul", name, MatMulFeatures);
    if (name != dtype && mm.times.empty()) continue;
    StatusOr<LinearFit> fit = FitOp(mm, "MatMul " + name, 1);
    if (!fit.ok() && !mm.times.empty()) {
      // FLOPs and bytes grow together across a sweep, so on a noisy machine the
      // bytes term can absorb all the work and leave no FLOP rate (a sanitizer
      // build on a loaded CI runner did); the two-term fit has only the FLOPs.
      fit = FitOp(Select(ms, "MatMul", name, FlopsFeatures), "MatMul " + name, 1);
      if (fit.ok()) {
        fit->coefficients.push_back(0.0);
        out.notes.push_back("MatMul " + name +
                            ": the bytes term took all the work, so it was fitted on FLOPs alone");
      }
    }
    if (!fit.ok() && name == dtype) return fit.status();
    if (!fit.ok()) {
      out.notes.push_back(fit.status().message() + "; its MatMuls use the roofline");
      continue;
    }
    const std::vector<double>& c = fit->coefficients;
    d.matmul_regressions.emplace_back(*ParseDType(name), sim::MatMulRegression{c[0], c[1], c[2]});
    out.fits.push_back({"MatMul " + name, fit->quality});
  }
  return Status::Ok();
}

Status FitCompute(const std::vector<Measurement>& ms, const std::string& dtype,
                  const std::string& tiled_dtype, CalibrationFit& out) {
  sim::DeviceSpec& d = out.profile.device;
  DISTIR_RETURN_IF_ERROR(FitMatMulRegressions(ms, dtype, out));
  // The tiled model's max_efficiency is a fraction of the datasheet peak; a
  // peak replaced by the best measured rate would fold that fraction in twice.
  if (d.gemm.has_value()) {
    out.notes.push_back(
        "peak_flops kept from the base profile (the tiled GEMM model's "
        "max_efficiency is fitted against them)");
  } else {
    FitPeaks(ms, out);
  }
  DISTIR_ASSIGN_OR_RETURN(LinearFit add, FitOp(Select(ms, "Add", "", BytesFeatures), "Add", 1));
  d.kernel_launch_overhead = add.coefficients[0];
  d.dram_bandwidth = 1.0 / add.coefficients[1];
  out.fits.push_back({"Add", add.quality});
  DISTIR_ASSIGN_OR_RETURN(LinearFit gelu, FitOp(Select(ms, "Gelu", "", FlopsFeatures), "Gelu", 1));
  d.vector_flops = 1.0 / gelu.coefficients[1];
  out.fits.push_back({"Gelu", gelu.quality});
  return FitTiledGemm(ms, tiled_dtype.empty() ? dtype : tiled_dtype, out);
}

Status FitCommunication(const std::vector<Measurement>& ms, CalibrationFit& out) {
  Samples all;
  for (const char* op : {"Send", "AllReduce", "AllGather"}) {
    Samples s = Select(ms, op, "", CommFeatures);
    for (size_t i = 0; i < s.times.size(); ++i) all.Add(s.features[i], s.times[i]);
  }
  if (all.times.empty()) {
    out.notes.push_back(
        "no communication measured (run under mpirun -np 2 or more): "
        "intra_node and collectives.launch_overhead kept from the base profile");
    return Status::Ok();
  }
  DISTIR_ASSIGN_OR_RETURN(LinearFit fit, FitOp(all, "Send/AllReduce/AllGather", 2));
  out.profile.collectives.launch_overhead = fit.coefficients[0];
  out.profile.intra_node.latency = fit.coefficients[1];
  out.profile.intra_node.bandwidth = 1.0 / fit.coefficients[2];
  for (const char* op : {"Send", "AllReduce", "AllGather"}) {
    Samples s = Select(ms, op, "", CommFeatures);
    if (!s.times.empty())
      out.fits.push_back({op, EvaluateFit(fit.coefficients, s.features, s.times)});
  }
  return Status::Ok();
}

}  // namespace

StatusOr<CalibrationFit> FitProfile(const std::vector<Measurement>& measurements,
                                    sim::HardwareProfile base, const std::string& matmul_dtype,
                                    const std::string& tiled_dtype) {
  CalibrationFit out;
  out.profile = std::move(base);
  DISTIR_RETURN_IF_ERROR(FitCompute(measurements, matmul_dtype, tiled_dtype, out));
  DISTIR_RETURN_IF_ERROR(FitCommunication(measurements, out));
  return out;
}

std::string DefaultTiledDtype(const std::vector<Measurement>& measurements,
                              const std::string& fallback) {
  for (const char* dtype : {"bf16", "f16"}) {
    for (const Measurement& m : measurements) {
      if (m.op == "MatMul" && m.dtype == dtype) return dtype;
    }
  }
  return fallback;
}

sim::HardwareProfile DefaultBaseProfile(const std::string& name, const std::string& device_name,
                                        int devices, int64_t memory_bytes,
                                        const std::string& link_name) {
  sim::HardwareProfile hw;
  hw.name = name;
  hw.device.name = device_name;
  hw.device.memory_capacity = memory_bytes;
  // Placeholders, all overwritten by a fit (or reported as kept).
  hw.device.peak_flops_f16 = hw.device.peak_flops_f32 = 1e9;
  hw.device.vector_flops = 1e9;
  hw.device.dram_bandwidth = 1e9;
  hw.devices_per_node = std::max(devices, 1);
  hw.num_nodes = 1;
  hw.intra_node = {link_name, 1e9, 1e-6};
  hw.collectives = {sim::AllReduceAlgorithm::kRing, 0};
  return hw;
}

}  // namespace distir::calibrate
