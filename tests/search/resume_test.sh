#!/usr/bin/env bash
# A killed search resumes where it stopped and ends with the same results as an
# uninterrupted one (docs/configs.md, "Resuming a search"):
#   1. a reference run on 2 ranks;
#   2. the same search killed with SIGTERM to mpirun (what a batch system sends at
#      its time limit) once the journal holds some results: no results file, no
#      temporary file, a journal;
#   3. --resume on 2 ranks, killed with SIGKILL to the ranks part-way: it reports
#      the results it reused;
#   4. --resume on 1 rank to the end: it reuses more, computes only the rest, and
#      its file equals the reference outside /run (h5diff); the journal is gone.
# Usage (CTest does this): bash resume_test.sh DISTIR_BINARY SOURCE_DIR
set -euo pipefail
DISTIR=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" resume
trap 'pkill -KILL -f "$WORK/" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# 10 batches of the paper's GPT-2 1.6B grid under two schedules: 1450
# configurations, about 3.7 s on 2 ranks with --build-all-templates, so that
# there is time to kill it part-way. A SIGTERM to mpirun takes ~1-1.5 s to stop
# the ranks: with one schedule (750 configurations, 1.8 s once stealing took
# the front units, 2026-11-30) the killed search had journaled 685-742 of 750,
# and the resumed one then ended before its SIGKILL ('last resume reused 750
# results after the first reused 742'); earlier the MLP grid, 2 and then 4
# batches ended between two polls likewise as the search grew faster. The
# reference and the last resumed run write templates, so the files compared
# come from both.
TOTAL=1450
EXP=$WORK/mlp.yaml
cat > "$EXP" <<EOF
name: resume-test
model: gpt2-1.6b
hardware: $SRC/configs/hardware/dgx2-v100.yaml
world_size: 16
space:
  batch: {pow2: [6, 15]}
  dp: all
  tp: all
  pp: all
  microbatches: {pow2: [1, 7]}
  schedule: [1f1b, gpipe]
constraints: {world: equal}
traces: 1
EOF
OUT=$WORK/res.h5
JOURNAL=$OUT.journal

# Bytes of results the current run's ranks have journaled (headers excluded).
journaled() {
  local total=0 f size
  for f in "$JOURNAL"/rank*.bin; do
    [[ -f $f ]] || continue
    size=$(stat -c %s "$f")
    total=$((total + size - 16))
  done
  echo "$total"
}

# Waits until the running search has journaled about `$1` results, then returns;
# fails if the search ends first.
wait_for_results() {
  local pid=$1 want=$(($2 * 70)) i
  for i in $(seq 1 600); do
    (( $(journaled) >= want )) && return 0
    kill -0 "$pid" 2>/dev/null || fail "the search ended before it could be killed"
    sleep 0.05
  done
  fail "no results journaled after 30 s"
}

mpirun -np 2 "$DISTIR" search "$EXP" -o "$WORK/ref.h5" --quiet > /dev/null \
  || fail "reference search exited with $?"

# 2. SIGTERM to mpirun.
mpirun -np 2 "$DISTIR" search "$EXP" -o "$OUT" --quiet --build-all-templates > /dev/null 2>&1 &
pid=$!
wait_for_results "$pid" 5
kill -TERM "$pid"
wait "$pid" && fail "the search killed with SIGTERM exited with 0"
[[ ! -e $OUT ]] || fail "a killed search left $OUT"
[[ ! -e $OUT.tmp ]] || fail "a killed search left $OUT.tmp"
[[ -d $JOURNAL ]] || fail "no journal after the kill"

# 3. --resume, SIGKILL to the ranks.
mpirun -np 2 "$DISTIR" search "$EXP" -o "$OUT" --resume --build-all-templates > /dev/null \
  2> "$WORK/err2" &
pid=$!
# The old rank files count until rank 0 has consolidated them: wait for that first.
for i in $(seq 1 600); do
  grep -q '^\[search\] resuming:' "$WORK/err2" && break
  kill -0 "$pid" 2>/dev/null || fail "the resumed search ended early: $(cat "$WORK/err2")"
  sleep 0.05
done
wait_for_results "$pid" 5
pkill -KILL -f "^$DISTIR search $EXP -o $OUT --resume" || true
wait "$pid" && fail "the search killed with SIGKILL exited with 0"
[[ ! -e $OUT ]] || fail "a killed resumed search left $OUT"
done2=$(sed -n "s/^\[search\] resuming: \([0-9]*\) of $TOTAL .*/\1/p" "$WORK/err2")
[[ -n $done2 && $done2 -gt 0 && $done2 -lt $TOTAL ]] \
  || fail "first resume reused '$done2' results: $(head -3 "$WORK/err2")"

# 4. --resume on 1 rank, to the end.
mpirun -np 1 "$DISTIR" search "$EXP" -o "$OUT" --resume > /dev/null 2> "$WORK/err3" \
  || fail "the last resume exited with $?: $(tail -3 "$WORK/err3")"
done3=$(sed -n "s/^\[search\] resuming: \([0-9]*\) of $TOTAL .*/\1/p" "$WORK/err3")
[[ -n $done3 && $done3 -gt $done2 && $done3 -lt $TOTAL ]] \
  || fail "last resume reused '$done3' results after the first reused $done2"
same_results "$WORK/ref.h5" "$OUT" "the resumed search against the reference"
[[ ! -e $JOURNAL ]] || fail "the journal is still there after a complete search"

# A journal of another experiment is refused, with the file named.
mkdir -p "$JOURNAL"
cp "$SRC/configs/experiments/example.yaml" "$WORK/other.yaml"
printf 'DISTIRJ2\x01\x02\x03\x04\x05\x06\x07\x08' > "$JOURNAL/rank0.bin"
if mpirun -np 1 "$DISTIR" search "$EXP" -o "$OUT" --resume --quiet > /dev/null 2> "$WORK/err4"; then
  fail "a foreign journal was accepted"
fi
grep -q 'rank0.bin belongs to another experiment' "$WORK/err4" || fail "foreign journal: $(cat "$WORK/err4")"
echo "PASS: killed at $done2, then at $done3 of $TOTAL results; resumed results equal the reference"
