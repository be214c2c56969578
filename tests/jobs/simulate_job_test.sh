#!/usr/bin/env bash
# jobs/simulate.sbatch, run by stand-ins for sbatch, qsub and distir
# (tests/jobs/fake_commands.sh) over three profiles, alpha, small and zeta:
#   1. `distir simulate` fails on small (the program does not fit it, after writing
#      half a JSON object): the job still simulates zeta, writes the JSON summaries
#      and traces of alpha and zeta, leaves no small JSON (nor any temporary or
#      empty file), names small as failed and exits 1;
#   2. every profile fits: three summaries and exit 0;
#   3. submitted with qsub (its #PBS lines), the same.
# Usage (CTest does this): bash simulate_job_test.sh SOURCE_DIR
set -euo pipefail
SRC=$(realpath "${1:-$(dirname "$0")/../..}")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" simulate-job
# shellcheck source=fake_commands.sh
source "$(dirname "$0")/fake_commands.sh"
JOB=$SRC/jobs/simulate.sbatch
export DISTIR=distir
mkdir -p "$WORK/repo/configs/hardware"
cd "$WORK/repo"
for hw in alpha small zeta; do echo "name: $hw" > "configs/hardware/$hw.yaml"; done
echo "func @main() {}" > prog.distir

# Checks that OUT_DIR $1 holds exactly the summaries and traces of profiles $2...
expect_outputs() {
  local dir=$1 hw want=()
  shift
  for hw in "$@"; do
    want+=("prog_$hw.json" "prog_${hw}_trace.json")
    grep -q '"iteration_time_s": 0.25' "$dir/prog_$hw.json" || fail "bad $dir/prog_$hw.json"
  done
  local got
  got=$(find "$dir" -mindepth 1 -printf '%f\n' | sort)
  [[ $got == "$(printf '%s\n' "${want[@]}" | sort)" ]] || fail "$dir holds: $got"
  [[ -z $(find "$dir" -empty) ]] || fail "empty files in $dir: $(find "$dir" -empty)"
}

# 1. One profile does not fit.
rc=0
FAKE_SIMULATE_FAIL=small sbatch "$JOB" prog.distir out1 > "$WORK/job1.txt" 2>&1 || rc=$?
((rc == 1)) || { cat "$WORK/job1.txt" >&2; fail "the job with a failing profile exited with $rc"; }
called_like '^distir simulate prog.distir --hardware configs/hardware/zeta.yaml' \
  || fail "the job stopped at the failing profile: $(cat "$FAKE_LOG")"
expect_outputs out1 alpha zeta
grep -q "failed on 1 of 3 profiles: small" "$WORK/job1.txt" \
  || fail "the failed profile is not named: $(cat "$WORK/job1.txt")"
grep -q "alpha: \"iteration_time_s\": 0.25" "$WORK/job1.txt" || fail "no iteration time of alpha"

# 2. Every profile fits.
sbatch "$JOB" prog.distir out2 > "$WORK/job2.txt" 2>&1 \
  || { cat "$WORK/job2.txt" >&2; fail "the job exited with $?"; }
expect_outputs out2 alpha small zeta

# 3. PBS.
rc=0
FAKE_SIMULATE_FAIL="alpha zeta" qsub -v PROGRAM=prog.distir,OUT_DIR=out3 "$JOB" \
  > "$WORK/job3.txt" 2>&1 || rc=$?
((rc == 1)) || { cat "$WORK/job3.txt" >&2; fail "the PBS job with two failing profiles exited with $rc"; }
expect_outputs out3 small
grep -q "failed on 2 of 3 profiles: alpha zeta" "$WORK/job3.txt" \
  || fail "the failed profiles are not named: $(cat "$WORK/job3.txt")"
echo "PASS: simulate job (a failing profile, no empty file, PBS)"
