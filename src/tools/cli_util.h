// Helpers shared by the subcommands: reading inputs, writing outputs atomically,
// and reporting a Status the way every subcommand does.

#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "support/status_or.h"

namespace distir::tools {

/// Contents of `path`, or of standard input when `path` is "-".
StatusOr<std::string> ReadInput(const std::string& path);

/// Writes `contents` to `path` through a temporary file in the same directory
/// and a rename, so that a reader never sees a partial file. "-" is stdout.
Status WriteOutputAtomically(const std::string& path, const std::string& contents);

/// The same with the contents written by `write` to the file's stream (a large
/// output, e.g. a trace, streamed rather than held in memory).
Status WriteOutputAtomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write);

/// Prints `status` rendered with the source excerpt from `source` to stderr and
/// returns kExitInputError. REQUIRES: !status.ok().
int ReportError(const Status& status, const std::string& source = {});

/// Parses the arguments of subcommand `command` against `desc`. The option
/// named `positional` (the input file) takes the one positional argument. The
/// usage line in the caption names that argument, so --help does not list the
/// option; its long form (`--input FILE`) is still accepted. Prints `desc` for
/// --help (exit kExitOk) or the error for a bad command line (exit kExitUsage).
/// Returns the exit code to stop with, or nullopt when the command should go on
/// with `vm` filled.
std::optional<int> ParseCommandLine(const char* command, int argc, char** argv,
                                    const boost::program_options::options_description& desc,
                                    boost::program_options::variables_map& vm,
                                    const char* positional = "input");

/// Display name of an input path: "<stdin>" for "-".
std::string DisplayName(const std::string& path);

}  // namespace distir::tools
