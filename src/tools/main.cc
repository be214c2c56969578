// The `distir` command: one binary, one subcommand per stage of the workflow.

#include <hdf5.h>

#include <cstring>
#include <iostream>
#include <string_view>

#include "sim/simulator.h"
#include "tools/commands.h"

#ifdef DISTIR_HAVE_CUDA
#include "backend/gpu/gpu_info.h"
#endif

namespace {

struct Subcommand {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

constexpr Subcommand kSubcommands[] = {
    {"opt", distir::tools::RunOpt, "parse, verify, infer types and print a DistIR program"},
    {"simulate", distir::tools::RunSimulate,
     "simulate a program on a hardware profile: time, memory, trace"},
    {"search", distir::tools::RunSearch,
     "simulate every configuration of an experiment (mpirun -np N) into results.h5"},
    {"report", distir::tools::RunReport, "print the ranking of a results.h5 (or --csv)"},
    {"run", distir::tools::RunRun,
     "run the top configurations of a results.h5 for real (mpirun -np N), record /measured"},
    {"calibrate", distir::tools::RunCalibrate,
     "time kernels and MPI on this machine, fit a hardware profile (mpirun -np N)"},
    {"validate", distir::tools::RunValidate,
     "compare simulated with measured throughput: Spearman, Kendall, MAPE, top-1"},
    {"import", distir::tools::RunImport,
     "import an ONNX model (opsets 13-17) as a fully typed DistIR function"},
};

void PrintUsage(std::ostream& os) {
  os << "usage: distir <command> [options]\n"
     << "       distir --version | --help\n\ncommands:\n";
  for (const Subcommand& c : kSubcommands) {
    os << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
  }
  os << "\nRun 'distir <command> --help' for the options of a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // At exit HDF5 closes the files still open. One whose H5Fclose failed (a disk
  // full while the results were written) is half closed, and closing it again
  // segfaulted inside HDF5 after distir had reported the error (issue 20).
  // distir closes its own files; HDF5's exit handler has nothing else to do.
  // REQUIRES: before any other HDF5 call.
  H5dont_atexit();
  // Big freed blocks stay in the heap so repeated simulations do not fault
  // their side tables in again (simulator.h explains the policy).
  distir::sim::RetainFreedMemory();
  if (argc < 2) {
    PrintUsage(std::cerr);
    return distir::tools::kExitUsage;
  }
  std::string_view first = argv[1];
  if (first == "--version" || first == "version") {
    std::cout << distir::tools::VersionString() << "\n";
#ifdef DISTIR_HAVE_CUDA
    auto gpus = distir::gpu::QueryGpus();
    std::cout << (gpus.ok() ? distir::gpu::DescribeGpus(*gpus) : gpus.status().ToString()) << "\n";
#else
    std::cout << "CUDA backend: not built (no nvcc at configure time)\n";
#endif
    return distir::tools::kExitOk;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    PrintUsage(std::cout);
    return distir::tools::kExitOk;
  }
  for (const Subcommand& c : kSubcommands) {
    if (first == c.name) return c.run(argc - 1, argv + 1);
  }
  std::cerr << "distir: unknown command '" << first << "'\n\n";
  PrintUsage(std::cerr);
  return distir::tools::kExitUsage;
}
