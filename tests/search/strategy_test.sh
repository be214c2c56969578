#!/usr/bin/env bash
# The search strategies are reproducible whatever the number of ranks: random
# and anneal (tests/lit/search/strategy.yaml, budget 40 of 136) give the same
# results file outside /run and the same printed ranking on 1 and 2 MPI
# ranks, and evaluate exactly the budget.
# Usage (CTest does this): bash strategy_test.sh DISTIR_BINARY SOURCE_DIR
set -euo pipefail
DISTIR=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" strategy

for kind in random anneal; do
  sed -e "s/kind: random/kind: $kind/" -e "s#\.\./\.\./\.\./#$SRC/#" \
    "$SRC/tests/lit/search/strategy.yaml" > "$WORK/$kind.yaml"
  for n in 1 2; do
    mpirun -np "$n" --oversubscribe "$DISTIR" search "$WORK/$kind.yaml" -o "$WORK/$kind$n.h5" \
      --quiet > "$WORK/$kind$n.txt" || fail "$kind on $n ranks exited with $?"
  done
  same_results "$WORK/${kind}1.h5" "$WORK/${kind}2.h5" "$kind on 1 and 2 ranks"
  cmp -s "$WORK/${kind}1.txt" "$WORK/${kind}2.txt" || fail "$kind: the printed rankings differ"
  "$DISTIR" report --csv "$WORK/${kind}2.h5" > "$WORK/$kind.csv"
  evaluated=$(awk -F, 'NR > 1 && $11 != "skipped"' "$WORK/$kind.csv" | wc -l)
  [[ $evaluated == 40 ]] || fail "$kind evaluated $evaluated configurations, expected 40"
done
echo "PASS: random and anneal give the same results on 1 and 2 ranks, 40 evaluated each"
