#include "tools/cli_util.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "support/diagnostic.h"
#include "support/read_file.h"
#include "support/str_util.h"
#include "tools/commands.h"

namespace distir::tools {

std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

StatusOr<std::string> ReadInput(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  // Programs can be large (an emitted GPT-3 program is hundreds of MB): a
  // regular file's size is its own bound, the cap only stops the absurd.
  constexpr int64_t kMaxProgramBytes = int64_t{4} << 30;
  StatusOr<std::string> contents = ReadRegularFile(path, kMaxProgramBytes);
  if (contents.ok()) return contents;
  Status error = std::move(contents).status();
  error.WithLocIfMissing(SourceLoc{path, 0, 0, ""});
  return error;
}

Status WriteOutputAtomically(const std::string& path, const std::string& contents) {
  return WriteOutputAtomically(path, [&](std::ostream& out) { out << contents; });
}

Status WriteOutputAtomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout << std::flush;
    return Status::Ok();
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    write(out);
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

namespace {

// `desc` as --help prints it, without the option named `hidden` (if any).
std::string HelpText(const boost::program_options::options_description& desc,
                     const std::string& hidden) {
  namespace po = boost::program_options;
  std::ostringstream full;
  full << desc;
  // Boost cannot print a description without one of its options, nor copy its
  // caption. The hidden option's own lines, printed alone at the column width of
  // the whole description, are exactly the lines it adds: cut them out.
  po::options_description alone;
  for (const auto& option : desc.options()) {
    if (option->long_name() == hidden) alone.add(option);
  }
  if (alone.options().empty()) return full.str();
  std::ostringstream lines;
  alone.print(lines, desc.get_option_column_width());
  std::string text = full.str();
  const size_t at = text.find("\n" + lines.str());
  if (at != std::string::npos) text.erase(at + 1, lines.str().size());
  return text;
}

}  // namespace

std::optional<int> ParseCommandLine(const char* command, int argc, char** argv,
                                    const boost::program_options::options_description& desc,
                                    boost::program_options::variables_map& vm,
                                    const char* positional) {
  namespace po = boost::program_options;
  po::positional_options_description pos;
  pos.add(positional, 1);
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "distir " << command << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (vm.count("help") != 0) {
    std::cout << HelpText(desc, positional) << "\n";
    return kExitOk;
  }
  return std::nullopt;
}

int ReportError(const Status& status, const std::string& source) {
  std::cerr << RenderDiagnostic(status, source);
  return kExitInputError;
}

}  // namespace distir::tools
