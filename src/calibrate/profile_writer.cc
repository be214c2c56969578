#include "calibrate/profile_writer.h"

#include <sstream>

#include "ir/dtype.h"

namespace distir::calibrate {
namespace {

// "<number> <unit>" with enough digits that a reload differs by < 1e-6 relative.
std::string Q(double value, const char* unit) {
  std::ostringstream os;
  os.precision(7);
  os << value << " " << unit;
  return os.str();
}

// Names are user text (a CPU model string may hold ':' or '#'): always quote.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* AlgorithmName(sim::AllReduceAlgorithm a) {
  switch (a) {
    case sim::AllReduceAlgorithm::kRing:
      return "ring";
    case sim::AllReduceAlgorithm::kTree:
      return "tree";
    case sim::AllReduceAlgorithm::kHierarchical:
      return "hierarchical";
  }
  return "ring";
}

// The tiled GEMM model's section, every key written (defaults included) so
// that the calibrated profile says what it assumes.
void EmitGemm(const sim::GemmTiling& g, std::ostream& os) {
  std::ostringstream eff;
  eff.precision(7);
  eff << g.max_efficiency;
  os << "  gemm:\n    model: tiled\n    sm_count: " << g.sm_count
     << "\n    ctas_per_sm: " << g.ctas_per_sm << "\n    tile: [" << g.tile_m << ", " << g.tile_n
     << "]\n    max_efficiency: " << eff.str()
     << "\n    tile_overhead: " << Q(g.tile_overhead_s, "s");
  if (g.split_k_min > 0) os << "\n    split_k_min: " << g.split_k_min;
  os << "\n";
}

// The tiled attention model's section, kept from the base profile (the
// calibration does not time attention), every key written.
void EmitAttention(const sim::AttentionTiling& a, std::ostream& os) {
  std::ostringstream v;
  v.precision(7);
  v << "  attention:\n    model: tiled\n    block: " << a.block
    << "\n    block_overhead: " << a.block_overhead << "\n    max_efficiency: " << a.max_efficiency
    << "\n    backward_max_efficiency: " << a.backward_max_efficiency << "\n";
  os << v.str();
}

void EmitDevice(const sim::DeviceSpec& d, std::ostream& os) {
  os << "device:\n  name: " << Quoted(d.name) << "\n  peak_flops:\n"
     << "    f16: " << Q(d.peak_flops_f16, "FLOP/s") << "\n";
  if (d.peak_flops_bf16 > 0) os << "    bf16: " << Q(d.peak_flops_bf16, "FLOP/s") << "\n";
  os << "    f32: " << Q(d.peak_flops_f32, "FLOP/s") << "\n";
  if (d.peak_flops_f64 > 0) os << "    f64: " << Q(d.peak_flops_f64, "FLOP/s") << "\n";
  os << "  vector_flops: " << Q(d.vector_flops, "FLOP/s") << "\n"
     << "  dram_bandwidth: " << Q(d.dram_bandwidth, "B/s") << "\n"
     << "  memory_capacity: " << d.memory_capacity << " B\n"
     << "  kernel_launch_overhead: " << Q(d.kernel_launch_overhead, "s") << "\n";
  if (!d.matmul_regressions.empty()) {
    os << "  matmul_regression:\n";
    for (const auto& [dtype, r] : d.matmul_regressions) {
      os << "    " << DTypeName(dtype) << ": {intercept: " << Q(r.intercept_s, "s")
         << ", per_flop: " << Q(r.per_flop_s, "s/FLOP") << ", per_byte: " << Q(r.per_byte_s, "s/B")
         << "}\n";
    }
  } else if (d.matmul_regression.has_value()) {
    const sim::MatMulRegression& r = *d.matmul_regression;
    os << "  matmul_regression:\n    intercept: " << Q(r.intercept_s, "s")
       << "\n    per_flop: " << Q(r.per_flop_s, "s/FLOP")
       << "\n    per_byte: " << Q(r.per_byte_s, "s/B") << "\n";
  }
  if (d.gemm.has_value()) EmitGemm(*d.gemm, os);
  if (d.gemm.has_value() && d.attention.has_value()) EmitAttention(*d.attention, os);
}

void EmitLink(const char* key, const sim::LinkSpec& link, std::ostream& os) {
  os << key << ":\n  name: " << Quoted(link.name) << "\n  bandwidth: " << Q(link.bandwidth, "B/s")
     << "\n  latency: " << Q(link.latency, "s") << "\n";
}

}  // namespace

std::string EmitHardwareProfileYaml(const sim::HardwareProfile& hw,
                                    const std::vector<std::string>& header) {
  std::ostringstream os;
  for (const std::string& line : header) os << "# " << line << "\n";
  os << "name: " << Quoted(hw.name) << "\n";
  EmitDevice(hw.device, os);
  os << "nodes:\n  devices_per_node: " << hw.devices_per_node << "\n  num_nodes: ";
  if (hw.num_nodes == 0) {
    os << "any\n";
  } else {
    os << hw.num_nodes << "\n";
  }
  EmitLink("intra_node", hw.intra_node, os);
  if (hw.num_nodes != 1) EmitLink("inter_node", hw.inter_node, os);
  os << "collectives:\n  allreduce: " << AlgorithmName(hw.collectives.allreduce)
     << "\n  launch_overhead: " << Q(hw.collectives.launch_overhead, "s") << "\n";
  // Written only when on: a profile without the section reads as off.
  if (hw.overlap.comm_stream) {
    std::ostringstream o;
    o.precision(7);
    o << "overlap:\n  comm_stream: true\n  compute_slowdown: " << hw.overlap.compute_slowdown
      << "\n  comm_slowdown: " << hw.overlap.comm_slowdown << "\n";
    os << o.str();
  }
  if (hw.calibrated_on.has_value()) {
    const HostInfo& h = *hw.calibrated_on;
    os << "calibrated_on:\n  host: " << Quoted(h.host) << "\n  cpu_model: " << Quoted(h.cpu_model)
       << "\n  cpus: " << h.cpus << "\n";
  }
  return os.str();
}

}  // namespace distir::calibrate
