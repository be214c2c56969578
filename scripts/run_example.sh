#!/usr/bin/env bash
# The README's main-job command: set up, build (Release) and run a small DistIR
# grid search: every D x T x P x K distribution of a tiny MLP over 8 DGX-2 GPUs
# (configs/experiments/example.yaml), simulated by 2 MPI ranks; then show the
# layout of the HDF5 results file and the ranking. Idempotent: a rerun rebuilds
# nothing that is up to date and overwrites out/example.h5.
# Usage: bash scripts/run_example.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)"
mkdir -p out
DISTIR=build/release/src/tools/distir
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# Prints the first $1 lines of a command's output (without SIGPIPE failures under pipefail).
head_of() {
  local n=$1
  shift
  "$@" > out/.head_of.txt
  head -n "$n" out/.head_of.txt
  rm -f out/.head_of.txt
}

echo "== mpirun -np 2 distir search configs/experiments/example.yaml -o out/example.h5"
mpirun -np 2 $DISTIR search configs/experiments/example.yaml -o out/example.h5
echo "== h5dump -H out/example.h5 | head -60"
head_of 60 h5dump -H out/example.h5
echo "== distir report out/example.h5 | head -20"
head_of 20 $DISTIR report out/example.h5
echo "results in out/example.h5 (docs/results_format.md); plots: /usr/bin/python3 scripts/plot_results.py out/example.h5 -o out"
