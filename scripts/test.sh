#!/usr/bin/env bash
# The README's test command: set up, build Release with warnings as errors (the
# build the README's main job uses; GCC's -O3 analyses warn where -O2 does not),
# run every test through CTest; then the same unit and golden tests under
# AddressSanitizer and UBSan. Exits non-zero on any failure.
# Both builds are unity builds with Ninja (CMAKE_UNITY_BUILD: a few sources per
# compiler run, so the big headers are parsed once per batch), and both compile the
# tests' own code with less optimisation than the libraries under test
# (DISTIR_TEST_OPT: -O1 in the Release build, -O0 in the sanitizer build; the test
# executables were over half of each build's compile time), which keeps CI on 2
# cores near 30 minutes; development builds need none of it.
# Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

JOBS=${JOBS:-$(nproc)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

stage() { echo "== $1 ($(date -u +%T), ${SECONDS} s in)"; }
UNITY=(-G Ninja -DCMAKE_UNITY_BUILD=ON)
# A build folder an older test.sh configured for Makefiles cannot switch generator.
for dir in build/test build/asan; do
  if [[ -f $dir/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
done

stage "build (Release, -Werror)"
cmake -S . -B build/test "${UNITY[@]}" -DCMAKE_BUILD_TYPE=Release -DDISTIR_WERROR=ON \
  -DDISTIR_TEST_OPT=-O1 >/dev/null
cmake --build build/test -j "$JOBS"
stage "tests"
ctest --test-dir build/test -j "$JOBS" --output-on-failure

stage "build (ASan + UBSan)"
# -O1, as the sanitizers' documentation advises for tolerable speed (at -O0 the
# golden suite alone took 14 minutes, 13x its Release time); -g1 keeps the line
# tables the reports need and drops the rest of the debug information.
cmake -S . -B build/asan "${UNITY[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
  -DDISTIR_WERROR=ON -DDISTIR_SANITIZE=address,undefined -DDISTIR_ENABLE_CUDA=OFF \
  -DDISTIR_TEST_OPT=-O0 >/dev/null
cmake --build build/asan -j "$JOBS"
stage "tests under sanitizers"
# MPI's own allocations are not ours to police; leaks inside libmpi are suppressed.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
ctest --test-dir build/asan -j "$JOBS" --output-on-failure -LE no_sanitizer
stage "done"
