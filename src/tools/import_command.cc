// distir import MODEL.onnx [-o OUT] [--input NAME=DIMxDIM ...] [--dtype f16]
//                          [--device d0|none] [--print-types] [--keep-gelu]

#include <boost/program_options.hpp>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

#include "importers/onnx/onnx_importer.h"
#include "ir/printer.h"
#include "tools/cli_util.h"
#include "tools/commands.h"
#include "transforms/fuse_gelu.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct ImportCliOptions {
  std::string input;
  std::string output = "-";
  std::vector<std::string> bindings;
  std::string dtype;
  std::string device = "d0";
  std::string function;
  bool print_types = false;
  bool keep_gelu = false;
};

// The library's options from the command line; the error names the flag.
StatusOr<onnx_import::ImportOptions> ToImportOptions(const ImportCliOptions& c) {
  onnx_import::ImportOptions o;
  for (const std::string& text : c.bindings) {
    DISTIR_ASSIGN_OR_RETURN(auto binding, onnx_import::ParseInputBinding(text));
    if (!o.input_shapes.emplace(binding.first, binding.second).second) {
      return InvalidArgument() << "--input " << binding.first << " is given twice";
    }
  }
  if (!c.dtype.empty()) {
    std::optional<DType> dtype = ParseDType(c.dtype);
    if (!dtype || !IsFloat(*dtype)) {
      return InvalidArgument() << "bad --dtype '" << c.dtype << "': expected f16, bf16, f32 or f64";
    }
    o.float_dtype = dtype;
  }
  if (c.device == "none") {
    o.device = DeviceId();
  } else {
    std::optional<DeviceId> device = ParseDeviceId(c.device);
    if (!device) return InvalidArgument() << "bad --device '" << c.device << "': expected d<N> or none";
    o.device = *device;
  }
  o.function_name = c.function;
  return o;
}

// Result types are dropped unless --print-types: the printed program then
// reads like a hand-written one, and `distir opt` infers them again.
void DropResultTypes(Module& m) {
  for (const auto& fn : m.functions()) {
    for (const auto& op : fn->ops()) {
      for (const auto& r : op->results()) r->set_type(Type());
    }
  }
}

int RunImportOn(const ImportCliOptions& c) {
  StatusOr<onnx_import::ImportOptions> options = ToImportOptions(c);
  if (!options.ok()) {
    std::cerr << "distir import: " << options.status().message() << "\n";
    return kExitUsage;
  }
  StatusOr<onnx_import::ImportedModel> imported = onnx_import::ImportOnnxFile(c.input, *options);
  if (!imported.ok()) return ReportError(imported.status());
  if (!c.keep_gelu) FuseGelusIn(imported->module, imported->module.entry()->name());
  if (!c.print_types) DropResultTypes(imported->module);
  Status written = WriteOutputAtomically(c.output, PrintModule(imported->module));
  if (!written.ok()) return ReportError(written);
  return kExitOk;
}

}  // namespace

int RunImport(int argc, char** argv) {
  ImportCliOptions c;
  po::options_description desc(
      "usage: distir import MODEL.onnx [options]\n\n"
      "Imports an ONNX model (opsets 13-17) as a DistIR function: the graph's inputs,\n"
      "then its weights (initializers) as parameters, one op per node. Dynamic\n"
      "dimensions must be bound with --input; every value then gets a static shape.\n"
      "See docs/onnx.md.\n\noptions");
  desc.add_options()("help,h", "print this help")(
      "input", po::value(&c.bindings)->composing(),
      "NAME=DIMxDIM...: the shape of data input NAME (repeatable), e.g. input_ids=2x16")(
      "dtype", po::value(&c.dtype), "give every float tensor this dtype (f16, bf16, f32, f64)")(
      "device", po::value(&c.device)->default_value("d0"),
      "device of the parameters and constants (d<N>), or none for a device-generic function")(
      "function", po::value(&c.function), "name of the function (default: the file's stem)")(
      "print-types", po::bool_switch(&c.print_types), "print the inferred type of every value")(
      "keep-gelu", po::bool_switch(&c.keep_gelu),
      "keep an exported GELU as its elementwise ops (by default each becomes one Gelu op, "
      "checked numerically: docs/onnx.md)")("output,o", po::value(&c.output)->default_value("-"),
                                            "output file ('-' for stdout)")(
      "model", po::value(&c.input), "the ONNX file");
  // The model file is positional; `--input` binds input shapes, so the hidden
  // option that takes it is "model" (and `--model FILE` still works).
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("import", argc, argv, desc, vm, "model")) {
    return *stop;
  }
  if (c.input.empty()) {
    std::cerr << "distir import: missing input MODEL.onnx (see --help)\n";
    return kExitUsage;
  }
  return RunImportOn(c);
}

}  // namespace distir::tools
