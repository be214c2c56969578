#!/usr/bin/env bash
# The search over Megatron's knobs (virtual_stages, recompute kinds,
# micro_batch; tests/lit/search/megatron_space.yaml, gpt-tiny on P = 2) gives
# the same results file outside /run and the same printed ranking on 1 and 2
# MPI ranks, and its rows hold the knobs: each of v 1 and 2, recompute none,
# full and selective, micro batch 2 and 4 has simulated rows, and the micro
# batch 3 rows are invalid with the reason.
# Usage (CTest does this): bash megatron_space_test.sh DISTIR_BINARY SOURCE_DIR
set -euo pipefail
DISTIR=$(realpath "$1")
SRC=$(realpath "$2")
EXPERIMENT=$SRC/tests/lit/search/megatron_space.yaml
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" megatron-space

for n in 1 2; do
  mpirun -np "$n" --oversubscribe "$DISTIR" search "$EXPERIMENT" -o "$WORK/np$n.h5" --quiet \
    > "$WORK/np$n.txt" || fail "distir search on $n ranks exited with $?"
done
same_results "$WORK/np1.h5" "$WORK/np2.h5" "np1.h5 and np2.h5"
cmp -s "$WORK/np1.txt" "$WORK/np2.txt" || fail "the printed rankings differ on 1 and 2 ranks"

"$DISTIR" report --csv "$WORK/np2.h5" > "$WORK/np2.csv"
rows=$(($(wc -l < "$WORK/np2.csv") - 1))
[[ $rows == 30 ]] || fail "report --csv has $rows rows, expected 30"
# status is column 11; virtual_stages, recompute_kind, micro_batch the three before the
# last (sequence_parallel).
ok_with() {  # ok_with AWK_CONDITION: the number of "ok" rows that satisfy it
  awk -F, "NR > 1 && \$11 == \"ok\" && ($1) { n++ } END { print n + 0 }" "$WORK/np2.csv"
}
for cond in '$(NF-3) == 1' '$(NF-3) == 2' '$(NF-2) == "none"' '$(NF-2) == "full"' \
            '$(NF-2) == "selective"' '$(NF-1) == 2' '$(NF-1) == 4' '$NF == 0'; do
  [[ $(ok_with "$cond") -gt 0 ]] || fail "no simulated row with $cond"
done
[[ $(ok_with '1') == 18 ]] || fail "$(ok_with 1) simulated rows, expected 18"
invalid=$(grep -c ',invalid,micro_batch 3 x D 1 does not divide the batch 16' "$WORK/np2.csv" || true)
[[ $invalid == 6 ]] || fail "$invalid rows of micro batch 3 invalid with the reason, expected 6"
echo "PASS: identical results on 1 and 2 ranks; $rows configurations, 18 simulated"
