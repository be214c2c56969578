// Helpers of the simulator tests: a hardware profile with round numbers and
// single typed ops built by hand (no type inference needed).

#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"
#include "sim/hardware_profile.h"

namespace distir::sim::testing {

/// 8 devices per node, 2 nodes; f32 matrix 1e13 FLOP/s, f16 1e14, vector
/// 1e12 FLOP/s, DRAM 1e11 B/s, launch 1e-5 s, 1 GiB per device; NVLink-like
/// 1e10 B/s with 1e-6 s latency inside a node, 1e9 B/s and 1e-5 s between.
inline HardwareProfile TestHardware() {
  HardwareProfile hw;
  hw.name = "test";
  hw.device.name = "test-gpu";
  hw.device.peak_flops_f16 = 1e14;
  hw.device.peak_flops_bf16 = 1e14;
  hw.device.peak_flops_f32 = 1e13;
  hw.device.peak_flops_f64 = 5e12;
  hw.device.vector_flops = 1e12;
  hw.device.dram_bandwidth = 1e11;
  hw.device.memory_capacity = int64_t{1} << 30;
  hw.device.kernel_launch_overhead = 1e-5;
  hw.devices_per_node = 8;
  hw.num_nodes = 2;
  hw.intra_node = {"test-nvlink", 1e10, 1e-6};
  hw.inter_node = {"test-ib", 1e9, 1e-5};
  return hw;
}

/// A function holding one op of `kind` on parameters of `inputs` types, with
/// its results typed `results` by hand.
struct OneOp {
  std::unique_ptr<Function> fn;
  Op* op = nullptr;
};

inline OneOp MakeOp(OpKind kind, const std::vector<Type>& inputs, const std::vector<Type>& results,
                    AttrMap attrs = {}) {
  OneOp out;
  out.fn = std::make_unique<Function>("f");
  std::vector<Value*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args.push_back(out.fn->AddParam("x" + std::to_string(i), inputs[i]));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < results.size(); ++i) names.push_back("y" + std::to_string(i));
  out.op = out.fn->AddOp(kind, args, std::move(attrs), names);
  for (size_t i = 0; i < results.size(); ++i) out.op->result(static_cast<int>(i))->set_type(results[i]);
  return out;
}

inline Type F32(std::vector<int64_t> shape, int device = -1) {
  return Type::Tensor(DType::kF32, std::move(shape), device >= 0 ? DeviceId(device) : DeviceId());
}
inline Type F16(std::vector<int64_t> shape, int device = -1) {
  return Type::Tensor(DType::kF16, std::move(shape), device >= 0 ? DeviceId(device) : DeviceId());
}
inline Type I64(std::vector<int64_t> shape, int device = -1) {
  return Type::Tensor(DType::kI64, std::move(shape), device >= 0 ? DeviceId(device) : DeviceId());
}

}  // namespace distir::sim::testing
