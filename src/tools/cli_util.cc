#include "tools/cli_util.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "support/diagnostic.h"
#include "support/str_util.h"
#include "tools/commands.h"

namespace distir::tools {

std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

StatusOr<std::string> ReadInput(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::string contents;
  if (!ReadFileToString(path, &contents)) {
    return InvalidArgument(SourceLoc{path, 0, 0, ""}) << "cannot read file";
  }
  return contents;
}

Status WriteOutputAtomically(const std::string& path, const std::string& contents) {
  if (path == "-") {
    std::cout << contents << std::flush;
    return Status::Ok();
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << contents;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Internal(SourceLoc{path, 0, 0, ""}) << "cannot write output file";
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Internal(SourceLoc{path, 0, 0, ""}) << "cannot move the output into place";
  }
  return Status::Ok();
}

std::optional<int> ParseCommandLine(const char* command, int argc, char** argv,
                                    const boost::program_options::options_description& desc,
                                    boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::positional_options_description pos;
  pos.add("input", 1);
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "distir " << command << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (vm.count("help") != 0) {
    std::cout << desc << "\n";
    return kExitOk;
  }
  return std::nullopt;
}

int ReportError(const Status& status, const std::string& source) {
  std::cerr << RenderDiagnostic(status, source);
  return kExitInputError;
}

}  // namespace distir::tools
