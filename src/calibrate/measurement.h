// One microbenchmark result: what ran (op, dtype, size), the work it did in the
// cost model's terms (FLOPs and bytes as docs/cost_model.md counts them, and the
// buffer size S of a collective in nccl-tests' convention), and the median
// time of one call. compute_benchmarks.h and comm_benchmarks.h produce them,
// profile_fit.h turns them into a hardware profile.

#pragma once

#include <string>

namespace distir::calibrate {

struct Measurement {
  std::string op;     ///< cost-model op name: MatMul, Add, Gelu, Send, AllReduce, AllGather
  std::string dtype;  ///< f16, bf16, f32, f64
  std::string shape;  ///< human-readable size, e.g. "256x512x128" or "4096 B"
  double flops = 0;   ///< compute ops: FLOPs of one call
  double bytes = 0;   ///< compute ops: bytes read + written; communication: S
  int ranks = 1;      ///< participants (communication ops)
  double time_s = 0;  ///< median seconds per call
};

}  // namespace distir::calibrate
