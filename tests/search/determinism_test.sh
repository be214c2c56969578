#!/usr/bin/env bash
# The results of `distir search` do not depend on the number of MPI ranks: the
# example search run on 1, 2 and 4 ranks, and without mpirun (no MPI at all),
# gives files that differ only in /run
# (ranks, wall time, start time). Also checks `distir report --csv`.
# Usage (CTest does this): bash determinism_test.sh DISTIR_BINARY SOURCE_DIR
set -euo pipefail
DISTIR=$(realpath "$1")
SRC=$(realpath "$2")
EXPERIMENT=$SRC/configs/experiments/example.yaml
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" determinism

for n in 1 2 4; do
  mpirun -np "$n" --oversubscribe "$DISTIR" search "$EXPERIMENT" -o "$WORK/np$n.h5" --quiet \
    > "$WORK/np$n.txt" || fail "distir search on $n ranks exited with $?"
  [[ -f $WORK/np$n.h5 ]] || fail "no results file from $n ranks"
  [[ ! -e $WORK/np$n.h5.tmp ]] || fail "temporary file left behind by $n ranks"
done
# Without mpirun the search is one process that never starts MPI (search/ranks.h).
"$DISTIR" search "$EXPERIMENT" -o "$WORK/alone.h5" --quiet > "$WORK/alone.txt" \
  || fail "distir search without mpirun exited with $?"
ranks=$(h5dump -a /run/ranks "$WORK/np4.h5" | grep -o '(0): [0-9]*' | cut -d' ' -f2)
[[ $ranks == 4 ]] || fail "/run/ranks of the 4-rank file is '$ranks'"

for pair in "np1 alone" "np1 np2" "np1 np4"; do
  set -- $pair
  same_results "$WORK/$1.h5" "$WORK/$2.h5" "$1.h5 and $2.h5"
done
# The summary tables printed by rank 0 agree too.
cmp -s "$WORK/np1.txt" "$WORK/np4.txt" || fail "the printed top configurations differ"
cmp -s "$WORK/np1.txt" "$WORK/alone.txt" || fail "the top configurations printed without mpirun differ"

"$DISTIR" report --csv "$WORK/np2.h5" > "$WORK/np2.csv"
header=$(head -1 "$WORK/np2.csv")
[[ $header == rank,* ]] || fail "report --csv header is '$header'"
rows=$(($(wc -l < "$WORK/np2.csv") - 1))
[[ $rows == 56 ]] || fail "report --csv has $rows rows, expected 56"
"$DISTIR" report "$WORK/np2.h5" > "$WORK/np2.report"
grep -q '^56 configurations: ' "$WORK/np2.report" || fail "report summary: $(sed -n 2p "$WORK/np2.report")"
echo "PASS: identical results on 1, 2 and 4 ranks and without MPI; $rows configurations"
