// The subcommands of the `distir` binary, one file each.
//
// Each takes the arguments after `distir` (argv[0] is the subcommand name), parses
// them with Boost.Program_options, prints results on stdout and rendered errors on
// stderr, and returns the process exit code. Only this layer turns a Status into
// an exit code (STYLE.md §5).

#pragma once

#include <string>

namespace distir::tools {

/// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;  ///< bad input: IR, YAML, ONNX, impossible request
inline constexpr int kExitUsage = 2;       ///< bad command line

int RunOpt(int argc, char** argv);
int RunSimulate(int argc, char** argv);
int RunSearch(int argc, char** argv);
int RunReport(int argc, char** argv);
int RunRun(int argc, char** argv);
int RunCalibrate(int argc, char** argv);
int RunValidate(int argc, char** argv);
int RunImport(int argc, char** argv);

/// "distir 0.1.0 (git 0123abcd)".
std::string VersionString();
/// "0123abcd" (the git revision the binary was built from, or "unknown").
std::string GitRevision();

}  // namespace distir::tools
