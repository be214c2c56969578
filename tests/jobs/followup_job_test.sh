#!/usr/bin/env bash
# jobs/followup.sbatch and jobs/followup.pbs, run by stand-ins for sbatch, qsub,
# mpirun and distir (tests/jobs/fake_commands.sh), each on:
#   1. an experiment whose hardware is a relative path: calibrate on it (resolved
#      beside the experiment) into configs/hardware/base-calibrated.yaml, search a
#      copy whose only change is the hardware line, now that profile's absolute path;
#   2. absolute BASE and PROFILE: used as they are (no $PWD prefix);
#   3. an experiment whose hardware is an absolute path: that file is the base;
#   4. an inline block map: it becomes the base file OUT_DIR/NAME-hardware.yaml
#      (dedented), and the searched copy has the whole map replaced, the keys
#      around it kept;
#   5. an inline flow map over two lines: the same;
#   6. BACKEND=cuda (no calibration): the experiment is searched as it is, and with
#      BASE set, on BASE;
#   7. no hardware entry: the job fails before calibrating.
# Usage (CTest does this): bash followup_job_test.sh SOURCE_DIR
set -euo pipefail
SRC=$(realpath "${1:-$(dirname "$0")/../..}")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" followup-job
# shellcheck source=fake_commands.sh
source "$(dirname "$0")/fake_commands.sh"
export DISTIR=distir
R=$WORK/repo
mkdir -p "$R/configs/hardware" "$R/configs/experiments" "$R/scripts" "$WORK/abs"
cd "$R"
echo "name: base" > configs/hardware/base.yaml
echo "name: abs-base" > "$WORK/abs/base.yaml"
echo 'import sys; print("plot", *sys.argv[1:])' > scripts/plot_validation.py
TAIL='world_size: 2
space:
  batch: [8]
  dp: all'
printf 'name: rel\nhardware: ../hardware/base.yaml   # relative to this file\n%s\n' "$TAIL" \
  > configs/experiments/rel.yaml
printf 'name: abs\nhardware: %s\n%s\n' "$WORK/abs/base.yaml" "$TAIL" > configs/experiments/abs.yaml
cat > configs/experiments/block.yaml <<EOF
name: block
model: mlp-tiny
hardware:   # inline
  name: inline-node
  devices_per_node: 2

  device:
    memory_capacity: 16 GiB
# the grid
$TAIL
EOF
cat > configs/experiments/flow.yaml <<EOF
name: flow
hardware: {name: flow-node, devices_per_node: 2,
  device: {memory_capacity: 16 GiB}}
$TAIL
EOF
printf 'name: none\n%s\n' "$TAIL" > configs/experiments/none.yaml

# Runs the follow-up job $JOB_KIND (sbatch or pbs) on experiment $1 with output
# out/$2.h5 and the environment assignments $3...; its output in $WORK/$2.txt.
followup() {
  local exp=$1 out=out/$2.h5
  shift 2
  : > "$FAKE_LOG"
  rm -f "$WORK/searched.yaml"
  if [[ $JOB_KIND == sbatch ]]; then
    env "$@" sbatch "$SRC/jobs/followup.sbatch" "$exp" "$out"
  else
    env "$@" qsub -v "EXPERIMENT=$exp,OUT=$out" "$SRC/jobs/followup.pbs"
  fi > "$WORK/${out#out/}.txt" 2>&1
}
# Checks that the job searched $1 with the hardware line `hardware: '$2'` and is
# otherwise the experiment $3 without its hardware line.
expect_searched() {
  called "mpirun -np 16 distir search $1 -o out/$(basename "$1" .calibrated.yaml).h5 --quiet" \
    || fail "$1 not searched: $(cat "$FAKE_LOG")"
  [[ $(grep '^hardware:' "$WORK/searched.yaml") == "hardware: '$2'" ]] \
    || fail "searched $(grep -c '^hardware' "$WORK/searched.yaml") hardware lines: $(cat "$WORK/searched.yaml")"
  diff <(grep -v '^hardware:' "$WORK/searched.yaml") <(grep -v '^hardware:' "$3") > /dev/null \
    || fail "the searched experiment differs from $3 outside its hardware line: $(cat "$WORK/searched.yaml")"
}
# Checks that the job calibrated base $1 into profile $2.
expect_calibrated() {
  called "mpirun -np 16 distir calibrate --backend cpu --base $1 -o $2" \
    || fail "no calibration of $1 into $2: $(cat "$FAKE_LOG")"
  [[ -f $2 ]] || fail "no calibrated profile $2"
}

for JOB_KIND in sbatch pbs; do
  # 1. Relative path.
  followup configs/experiments/rel.yaml rel BACKEND=cpu || fail "$JOB_KIND rel: exit $?"
  expect_calibrated "$R/configs/experiments/../hardware/base.yaml" "$R/configs/hardware/base-calibrated.yaml"
  expect_searched out/rel.calibrated.yaml "$R/configs/hardware/base-calibrated.yaml" configs/experiments/rel.yaml
  called "mpirun -np 16 distir run out/rel.h5 --top 5 --sample 20 --seed 1 --backend cpu" || fail "no run"
  called "distir validate out/rel.h5" || fail "no validate"

  # 2. Absolute BASE and PROFILE.
  followup configs/experiments/rel.yaml rel BACKEND=cpu BASE="$WORK/abs/base.yaml" \
    PROFILE="$WORK/abs/$JOB_KIND.yaml" || fail "$JOB_KIND absolute BASE, PROFILE: exit $?"
  expect_calibrated "$WORK/abs/base.yaml" "$WORK/abs/$JOB_KIND.yaml"
  expect_searched out/rel.calibrated.yaml "$WORK/abs/$JOB_KIND.yaml" configs/experiments/rel.yaml

  # 3. Absolute path in the experiment.
  followup configs/experiments/abs.yaml abs BACKEND=cpu || fail "$JOB_KIND abs: exit $?"
  expect_calibrated "$WORK/abs/base.yaml" "$R/configs/hardware/base-calibrated.yaml"
  expect_searched out/abs.calibrated.yaml "$R/configs/hardware/base-calibrated.yaml" configs/experiments/abs.yaml

  # 4. Inline block map.
  followup configs/experiments/block.yaml block BACKEND=cpu || fail "$JOB_KIND block: exit $?"
  expect_calibrated "$R/out/block-hardware.yaml" "$R/configs/hardware/block-hardware-calibrated.yaml"
  diff - out/block-hardware.yaml <<EOF || fail "bad inline base profile"
name: inline-node
devices_per_node: 2

device:
  memory_capacity: 16 GiB
EOF
  diff - "$WORK/searched.yaml" <<EOF || fail "bad searched experiment (block map)"
name: block
model: mlp-tiny
hardware: '$R/configs/hardware/block-hardware-calibrated.yaml'
# the grid
$TAIL
EOF

  # 5. Inline flow map.
  followup configs/experiments/flow.yaml flow BACKEND=cpu || fail "$JOB_KIND flow: exit $?"
  expect_calibrated "$R/out/flow-hardware.yaml" "$R/configs/hardware/flow-hardware-calibrated.yaml"
  diff - out/flow-hardware.yaml <<EOF || fail "bad inline base profile (flow map)"
{name: flow-node, devices_per_node: 2,
device: {memory_capacity: 16 GiB}}
EOF
  diff - "$WORK/searched.yaml" <<EOF || fail "bad searched experiment (flow map)"
name: flow
hardware: '$R/configs/hardware/flow-hardware-calibrated.yaml'
$TAIL
EOF

  # 6. No calibration: the experiment as it is, or on BASE.
  followup configs/experiments/block.yaml block BACKEND=cuda || fail "$JOB_KIND cuda: exit $?"
  not_called_like "distir calibrate" || fail "calibrated with BACKEND=cuda"
  called "mpirun -np 16 distir search configs/experiments/block.yaml -o out/block.h5 --quiet" \
    || fail "the experiment not searched as it is: $(cat "$FAKE_LOG")"
  called "mpirun -np 16 distir run out/block.h5 --top 5 --sample 20 --seed 1 --backend cuda" \
    || fail "no run with cuda"
  followup configs/experiments/block.yaml block BACKEND=cuda BASE="$WORK/abs/base.yaml" \
    || fail "$JOB_KIND cuda with BASE: exit $?"
  not_called_like "distir calibrate" || fail "calibrated with BACKEND=cuda"
  diff - "$WORK/searched.yaml" <<EOF || fail "bad searched experiment (cuda, BASE)"
name: block
model: mlp-tiny
hardware: '$WORK/abs/base.yaml'
# the grid
$TAIL
EOF

  # 7. No hardware entry.
  if followup configs/experiments/none.yaml none BACKEND=cpu; then fail "$JOB_KIND none: exit 0"; fi
  grep -q "no hardware: entry in configs/experiments/none.yaml" "$WORK/none.h5.txt" \
    || fail "no error for a missing hardware entry: $(cat "$WORK/none.h5.txt")"
  not_called_like "distir calibrate" || fail "calibrated without a hardware entry"
  rm -rf out configs/hardware/*-calibrated.yaml
done
echo "PASS: follow-up jobs (relative, absolute and inline profiles; Slurm and PBS)"
