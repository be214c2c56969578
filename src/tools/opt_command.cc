// distir opt FILE [--print-types] [--domain mixed|shape] [-o OUT]

#include <boost/program_options.hpp>
#include <iostream>
#include <vector>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct OptOptions {
  std::string input;
  std::string output = "-";
  bool print_types = false;
  std::string domain = "mixed";
};

// Types that the input did not spell out are dropped again before printing
// unless --print-types asks for them, so plain `opt` reproduces its input.
std::vector<std::vector<bool>> RecordAnnotated(const Module& m) {
  std::vector<std::vector<bool>> annotated;
  for (const auto& fn : m.functions()) {
    std::vector<bool> known(fn->num_values(), false);
    for (const auto& op : fn->ops()) {
      for (const auto& r : op->results()) known[r->id()] = !r->type().is_unknown();
    }
    annotated.push_back(std::move(known));
  }
  return annotated;
}

void DropInferred(Module& m, const std::vector<std::vector<bool>>& annotated) {
  for (size_t f = 0; f < m.functions().size(); ++f) {
    for (const auto& op : m.functions()[f]->ops()) {
      for (const auto& r : op->results()) {
        if (!annotated[f][r->id()]) r->set_type(Type());
      }
    }
  }
}

int RunOptOn(const OptOptions& o) {
  StatusOr<std::string> text = ReadInput(o.input);
  if (!text.ok()) return ReportError(text.status());
  StatusOr<Module> parsed = ParseModule(*text, DisplayName(o.input));
  if (!parsed.ok()) return ReportError(parsed.status(), *text);
  Module m = std::move(parsed).value();
  Status verified = VerifyModule(m);
  if (!verified.ok()) return ReportError(verified, *text);
  std::vector<std::vector<bool>> annotated = RecordAnnotated(m);
  InferOptions infer;
  infer.domain = o.domain == "shape" ? InferDomain::kShape : InferDomain::kMixed;
  Status inferred = InferTypes(m, infer);
  if (!inferred.ok()) return ReportError(inferred, *text);
  if (!o.print_types) DropInferred(m, annotated);
  Status written = WriteOutputAtomically(o.output, PrintModule(m));
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

}  // namespace

int RunOpt(int argc, char** argv) {
  OptOptions o;
  po::options_description desc(
      "usage: distir opt FILE [options]\n\n"
      "Parses FILE ('-' for stdin), verifies it, infers the type of every value and\n"
      "prints the program in canonical form. Errors are printed as file:line:col.\n\noptions");
  desc.add_options()("help,h", "print this help")(
      "print-types", po::bool_switch(&o.print_types), "print the inferred type of every value")(
      "domain", po::value(&o.domain)->default_value("mixed"),
      "type inference domain: mixed (abstract tensors, concrete shapes) or shape")(
      "output,o", po::value(&o.output)->default_value("-"), "output file ('-' for stdout)")(
      "input", po::value(&o.input), "input file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("opt", argc, argv, desc, vm)) return *stop;
  if (o.input.empty() || (o.domain != "mixed" && o.domain != "shape")) {
    std::cerr << "distir opt: " << (o.input.empty() ? "missing input FILE" : "bad --domain")
              << " (see --help)\n";
    return kExitUsage;
  }
  return RunOptOn(o);
}

}  // namespace distir::tools
