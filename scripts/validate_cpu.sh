#!/usr/bin/env bash
# Issue 7, item 7 (CPU half): calibrate the CPU path on this machine, search a small
# MLP experiment over 2 ranks, run 25 of its configurations on the CPU executor with
# `mpirun -np 2`, validate the simulator against them and plot the result.
# docs/calibration.md, "Measured on a 2-core CPU machine", has the figures.
#
# Usage: [DISTIR=path/to/distir] [NP=2] [ITERATIONS=10] [PROFILE=...] bash scripts/validate_cpu.sh
#   DISTIR      the distir binary (default build/test/src/tools/distir; build it first:
#               cmake --build build/test --target distir)
#   PROFILE     the profile to write; the experiment reads configs/hardware/cpu-local.yaml,
#               so another path only calibrates (default configs/hardware/cpu-local.yaml)
# Writes configs/hardware/cpu-local.yaml, out/cpu-validation.h5 (/configs, /measured,
# /validation), out/cpu-calibration.csv (every microbenchmark timing) and the plot in out/.
#
#   AUTOGROUP_NICE  the scheduling priority of this script's processes against other
#               sessions (default -15; empty: leave it). Linux shares the cores fairly
#               between sessions (autogroups, /proc/sys/kernel/sched_autogroup_enabled),
#               so on a machine where other people build, the 2 ranks get a share of the
#               cores that rises and falls with the number of other busy sessions; a
#               plain `nice` does not help across sessions. The script runs in a session
#               of its own whose autogroup gets this nice value (needs CAP_SYS_NICE for a
#               negative one; otherwise it warns and goes on), so that calibration and
#               runs measure the machine rather than the neighbours.
#
# Calibrate immediately before running, on the same load: whatever share of its core a
# rank still gets is in the calibrated rates too (src/calibrate/timer.h).
set -euo pipefail
cd "$(dirname "$0")/.."
AUTOGROUP_NICE=${AUTOGROUP_NICE--15}
if [[ -n "$AUTOGROUP_NICE" && -z "${DISTIR_VALIDATE_IN_SESSION:-}" ]]; then
  exec setsid --wait env DISTIR_VALIDATE_IN_SESSION=1 bash "$0" "$@"
fi
if [[ -n "$AUTOGROUP_NICE" ]]; then
  echo "$AUTOGROUP_NICE" > /proc/self/autogroup 2>/dev/null ||
    echo "warning: could not set the autogroup's nice to $AUTOGROUP_NICE; measuring at the default priority" >&2
  echo "scheduling: $(cat /proc/self/autogroup 2>/dev/null || echo 'no autogroup')"
fi
DISTIR=${DISTIR:-build/test/src/tools/distir}
NP=${NP:-2}
ITERATIONS=${ITERATIONS:-10}
PROFILE=${PROFILE:-configs/hardware/cpu-local.yaml}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p out

run() {
  echo "== $*"
  "$@"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run mpirun -np "$NP" "$DISTIR" calibrate --backend cpu -o "$PROFILE" \
  --measurements out/cpu-calibration.csv
run mpirun -np "$NP" "$DISTIR" search configs/experiments/cpu-validation.yaml \
  -o out/cpu-validation.h5
run mpirun -np "$NP" "$DISTIR" run out/cpu-validation.h5 --top 10 --sample 15 --seed 1 \
  --iterations "$ITERATIONS" --warmup 2
run "$DISTIR" validate out/cpu-validation.h5
if /usr/bin/python3 -c 'import h5py, matplotlib' 2>/dev/null; then
  run /usr/bin/python3 scripts/plot_validation.py out/cpu-validation.h5 -o out
else
  echo "(h5py or matplotlib missing: no plot)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
