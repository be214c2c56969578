# The common start of the shell tests that CTest runs (tests/*/*_test.sh):
# Open MPI allowed to run as root and to oversubscribe the cores, a scratch
# directory $WORK removed on exit, and fail(), which reports and exits 1.
# Usage, after `set -euo pipefail`:
#   source "$(dirname "$0")/../testing/shell_prelude.sh" NAME   # $WORK: distir-NAME.XXXXXX
# A test that must also stop processes on exit replaces the EXIT trap.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/distir-$1.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# same_results A.h5 B.h5 WHAT: fails unless the two results files are equal
# outside /run (the run's host and timing), printing the first differences.
same_results() {
  if ! h5diff --exclude-path /run "$1" "$2"; then
    h5diff -r --exclude-path /run "$1" "$2" | head -40 >&2 || true
    fail "$3: the results differ outside /run"
  fi
}
