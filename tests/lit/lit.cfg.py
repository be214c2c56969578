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

# A build with sanitizers (scripts/test.sh's second stage) has the feature `sanitizer`. The
# few tests that only repeat, at a size, code that smaller tests already run under the
# sanitizers say `UNSUPPORTED: sanitizer`: they run in the Release stage alone, which keeps
# CI on two cores under its 30 minutes (ASan at -O1 runs the simulator 5-20x slower).
if getattr(config, "distir_sanitize", ""):
    config.available_features.add("sanitizer")

config.substitutions.append(("%distir_src", config.distir_src_root))

# %python_h5py: a Python that imports h5py (scripts that read results files). Debian's
# python3-h5py is for /usr/bin/python3; the python3 first on a PATH (pyenv, a venv) may
# lack it. Tests that need it say `REQUIRES: h5py`.
import subprocess
import sys

for candidate in (sys.executable, "/usr/bin/python3"):
    if candidate and subprocess.run([candidate, "-c", "import h5py"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        config.substitutions.append(("%python_h5py", candidate))
        config.available_features.add("h5py")
        break
# A source tree that is a git checkout (not an unpacked archive) has the feature
# `git-checkout`: the revision `distir --version` prints is then its HEAD's.
if subprocess.run(["git", "-C", config.distir_src_root, "rev-parse", "HEAD"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("git-checkout")
# tests/testing holds the test tools, e.g. distir-break-results (broken results files).
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.distir_bin), config.distir_test_tools_dir, config.llvm_tools_dir,
     config.environment.get("PATH", "")])

# `distir search`, `run` and `calibrate` start MPI. Under LeakSanitizer (the sanitizer
# stage of scripts/test.sh sets LSAN_OPTIONS), Open MPI's plugins stay loaded and those
# commands unwind fully on every allocation, so that tests/lsan.supp can match MPI's
# one-time allocations by library. Full unwinding costs 10-50x under ASan, so only those
# commands get it: a substitution prefixes them with `env` (other commands start no MPI).
config.environment["OMPI_MCA_mca_base_component_disable_dlclose"] = "1"

# Open MPI puts a job's session directory under <tmpdir>/ompi.<host>.<uid>. Shared by two
# tests that start MPI at the same moment, it failed one of them: both found it missing
# and one failed its mkdir ("File exists": Open MPI 4.1 checks, then creates), also after
# this file had made it, because a job that ends removes it when it is empty. So every
# command that starts MPI runs under own_mpi_session.sh, which gives it a fresh directory
# of its own under one short base (PMIx's sockets live below it, and a Unix socket path
# has at most 107 bytes), removed when lit exits.
import atexit
import shutil
import tempfile

ompi_tmp = tempfile.mkdtemp(prefix="distir-lit-ompi-", dir="/tmp")
atexit.register(shutil.rmtree, ompi_tmp, ignore_errors=True)
config.environment["DISTIR_LIT_OMPI_BASE"] = ompi_tmp
own_session = "sh " + os.path.join(config.test_source_root, "own_mpi_session.sh")
# %mpi_env prefixes a command that starts those distir commands itself (a script) the same way.
if os.environ.get("LSAN_OPTIONS"):
    mpi_lsan = os.environ["LSAN_OPTIONS"] + ":fast_unwind_on_malloc=0"
    mpi_env = "%s env 'LSAN_OPTIONS=%s'" % (own_session, mpi_lsan)
else:
    mpi_env = own_session + " env"
config.substitutions.append(("%mpi_env", mpi_env))
config.substitutions.append((r"(?<![\w%/.-])distir (search|run|calibrate)\b", mpi_env + " distir \\1"))
