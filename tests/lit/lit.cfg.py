# lit configuration for DistIR's golden-text tests (STYLE.md §7).
# Substitutions: `distir` (the built binary), `distir-break-results` (tests/testing),
# `FileCheck` and `not` (llvm-14-tools),
# %distir_src (the source tree, for data/ files).
import os

import lit.formats

config.name = "DistIR"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".distir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.distir_bin), "..", "..", "tests", "lit-out")

config.substitutions.append(("%distir_src", config.distir_src_root))
# tests/testing holds the test tools, e.g. distir-break-results (broken results files).
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.distir_bin), config.distir_test_tools_dir, config.llvm_tools_dir,
     config.environment.get("PATH", "")])

# `distir search` and `run` start MPI. Under LeakSanitizer (the sanitizer stage of
# scripts/test.sh sets LSAN_OPTIONS), keep Open MPI's plugins loaded and unwind
# fully, so that tests/lsan.supp can match their one-time allocations by library.
config.environment["OMPI_MCA_mca_base_component_disable_dlclose"] = "1"
if os.environ.get("LSAN_OPTIONS"):
    config.environment["LSAN_OPTIONS"] = os.environ["LSAN_OPTIONS"] + ":fast_unwind_on_malloc=0"
