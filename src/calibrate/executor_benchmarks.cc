#include "calibrate/executor_benchmarks.h"

#include <mpi.h>

#include <memory>
#include <sstream>
#include <string>

#include "backend/cpu/cpu_executor.h"
#include "backend/executor.h"
#include "interp/infer_types.h"
#include "ir/parser.h"

namespace distir::calibrate {
namespace {

// func @main(%x: tensor<nxf32, d0>) { %y1 = Add(%x, %x); %y2 = Add(%y1, %x); ... }
// (or Relu(%x), Relu(%y1), ... when `relu`).
std::string ChainProgram(int64_t n, int chain, bool relu) {
  const std::string type = "tensor<" + std::to_string(n) + "xf32, d0>";
  const auto op = [&](const std::string& in) {
    return relu ? "Relu(" + in + ")" : "Add(" + in + ", %x)";
  };
  std::ostringstream os;
  os << "func @main(%x: " << type << ") {\n  %y1 = " << op("%x") << " : " << type << "\n";
  for (int i = 2; i <= chain; ++i)
    os << "  %y" << i << " = " << op("%y" + std::to_string(i - 1)) << " : " << type << "\n";
  os << "  return %y" << chain << "\n}\n";
  return os.str();
}

StatusOr<Measurement> TimeChain(int64_t n, const ExecutorSweep& sweep, bool relu) {
  DISTIR_ASSIGN_OR_RETURN(Module module,
                          ParseModule(ChainProgram(n, sweep.chain, relu), "<chain>"));
  DISTIR_RETURN_IF_ERROR(InferTypes(module));
  const Function* fn = module.entry();
  if (fn == nullptr) return Internal() << "the Add chain has no @main";
  DISTIR_ASSIGN_OR_RETURN(backend::ExecutionPlan plan, backend::PrepareExecution(module, *fn));
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<backend::Executor> exec,
                          backend::CreateCpuExecutor(plan, MPI_COMM_SELF));
  DISTIR_RETURN_IF_ERROR(exec->SetInputs(backend::RandomRankInputs(*exec->program(), 7)));
  Status failed = Status::Ok();
  const double run_s = MedianSecondsPerCall(
      [&] {
        if (Status s = exec->Run(); !s.ok() && failed.ok()) failed = s;
      },
      sweep.timing);
  DISTIR_RETURN_IF_ERROR(failed);
  const double elements = static_cast<double>(n);
  if (relu)
    return Measurement{"Relu",         "f32", std::to_string(n),  elements,
                       8.0 * elements, 1,     run_s / sweep.chain};
  return Measurement{"Add",           "f32", std::to_string(n),  elements,
                     12.0 * elements, 1,     run_s / sweep.chain};
}

}  // namespace

ExecutorSweep DefaultExecutorSweep() {
  ExecutorSweep s;
  for (int64_t n = 1; n <= (int64_t{1} << 22); n *= 4) s.sizes.push_back(n);
  s.relu_sizes = {4096, 65536, 262144};
  s.timing.min_sample_s = 5e-3;
  s.timing.min_total_s = 0.05;
  s.timing.warmup_s = 2e-3;
  return s;
}

ExecutorSweep QuickExecutorSweep() {
  ExecutorSweep s;
  s.sizes = {1, 256, 4096};
  s.chain = 8;
  s.timing.min_samples = 3;
  s.timing.min_total_s = 1e-4;
  return s;
}

StatusOr<std::vector<Measurement>> RunExecutorElementwiseBenchmarks(const ExecutorSweep& sweep) {
  std::vector<Measurement> out;
  for (int64_t n : sweep.sizes) {
    DISTIR_ASSIGN_OR_RETURN(Measurement m, TimeChain(n, sweep, false));
    out.push_back(std::move(m));
  }
  for (int64_t n : sweep.relu_sizes) {
    DISTIR_ASSIGN_OR_RETURN(Measurement m, TimeChain(n, sweep, true));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace distir::calibrate
