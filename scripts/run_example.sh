#!/usr/bin/env bash
# The README's main-job command: set up, build (Release) and run DistIR on the
# small built-in example: type the paper's Figure 2 pipeline-parallel program and
# simulate it on a DGX-2 profile, writing a Chrome trace.
# Usage: bash scripts/run_example.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)"
mkdir -p out
DISTIR=build/release/src/tools/distir
echo "== distir opt data/examples/mlp_pp.distir --print-types"
$DISTIR opt data/examples/mlp_pp.distir --print-types
echo "== distir simulate data/examples/mlp_pp.distir --hardware configs/hardware/dgx2-v100.yaml"
$DISTIR simulate data/examples/mlp_pp.distir --hardware configs/hardware/dgx2-v100.yaml \
  --trace out/mlp_pp_trace.json
echo "trace written to out/mlp_pp_trace.json (open it in https://ui.perfetto.dev)"
