#!/usr/bin/env bash
# scripts/bench_ranks.py (README, docs/cost_model.md §3.2): one round on the
# GPT-2 1.6B grid prints a row and the medians, each with one time per core,
# the ranks' time, the speed-up, the ideal time and speed-up and the
# efficiency, all positive; a search too short to time is refused by name.
# Skipped (77) on fewer than 2 cores.
# Usage (CTest does this): bash bench_ranks_test.sh DISTIR_BINARY SOURCE_DIR
set -euo pipefail
DISTIR=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" bench-ranks
cores=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
if (( cores < 2 )); then
  echo "SKIP: $cores core(s)"
  exit 77
fi

python3 "$SRC/scripts/bench_ranks.py" "$SRC/configs/experiments/gpt2-1.6b.yaml" --rounds 1 \
  --ranks 2 --distir "$DISTIR" > "$WORK/out" 2> "$WORK/err" \
  || fail "bench_ranks.py exited with $?: $(cat "$WORK/err")"
# Header, round 1, medians: the label, 2 one-rank times and 5 figures.
[[ $(wc -l < "$WORK/out") -eq 3 ]] || fail "expected 3 lines: $(cat "$WORK/out")"
for label in 1 med; do
  awk -v l="$label" '$1 == l {
      if (NF != 8) exit 1
      for (i = 2; i <= 8; ++i) if ($i + 0 <= 0) exit 1
      found = 1
    }
    END { exit found ? 0 : 1 }' "$WORK/out" || fail "row '$label' malformed: $(cat "$WORK/out")"
done

# One configuration: a search of hundredths of a second is refused.
sed -e 's/^  batch: .*/  batch: [128]/' -e 's/^  microbatches: .*/  microbatches: [1]/' \
  -e 's/^  dp: .*/  dp: [16]/' -e 's/^  tp: .*/  tp: [1]/' -e 's/^  pp: .*/  pp: [1]/' \
  -e "s|^hardware: .*|hardware: $SRC/configs/hardware/dgx2-v100.yaml|" \
  "$SRC/configs/experiments/gpt2-1.6b.yaml" > "$WORK/one.yaml"
if python3 "$SRC/scripts/bench_ranks.py" "$WORK/one.yaml" --rounds 1 --ranks 2 \
  --distir "$DISTIR" > /dev/null 2> "$WORK/err1"; then
  fail "a one-configuration search was timed"
fi
grep -q 'too short to time' "$WORK/err1" || fail "short search: $(cat "$WORK/err1")"
echo "PASS: $(tail -n 1 "$WORK/out")"
