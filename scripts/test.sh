#!/usr/bin/env bash
# The README's test command: set up, build Release with warnings as errors (the
# build the README's main job uses; GCC's -O3 analyses warn where -O2 does not),
# run every test through CTest; then the same unit and golden tests under
# AddressSanitizer and UBSan. Exits non-zero on any failure.
# Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

JOBS=${JOBS:-$(nproc)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

echo "== build (Release, -Werror)"
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=Release -DDISTIR_WERROR=ON >/dev/null
cmake --build build/test -j "$JOBS"
echo "== tests"
ctest --test-dir build/test -j "$JOBS" --output-on-failure

echo "== build (ASan + UBSan)"
# -O0: at -O1 GCC 12 reports -Wmaybe-uninitialized inside libstdc++'s <regex> under
# the sanitizers (a false positive that -Werror turns into a failed build).
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DDISTIR_WERROR=ON \
  -DDISTIR_SANITIZE=address,undefined -DDISTIR_ENABLE_CUDA=OFF >/dev/null
cmake --build build/asan -j "$JOBS"
echo "== tests under sanitizers"
# MPI's own allocations are not ours to police; leaks inside libmpi are suppressed.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
ctest --test-dir build/asan -j "$JOBS" --output-on-failure -LE no_sanitizer
