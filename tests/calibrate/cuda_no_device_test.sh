#!/usr/bin/env bash
# `mpirun -np 2 distir calibrate --backend cuda` where rank 1 sees no GPU
# (CUDA_VISIBLE_DEVICES empty on that rank only): every rank stops before any
# benchmark, rank 0 names the first rank without a device (rank 1 on a GPU
# machine, rank 0 where neither rank has one; a build without CUDA says so
# instead), the job exits non-zero, and neither the profile nor the CSV exists.
# Usage (CTest does this): bash cuda_no_device_test.sh DISTIR_BINARY
set -euo pipefail
DISTIR=$(realpath "$1")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" calibrate-cuda

# shellcheck disable=SC2016  # expanded by the rank's own shell
rank1_without_gpu='if [[ ${OMPI_COMM_WORLD_RANK:-0} == 1 ]]; then export CUDA_VISIBLE_DEVICES=; fi
exec "$0" calibrate --backend cuda --quick -o "$1" --measurements "$2"'
if mpirun -np 2 bash -c "$rank1_without_gpu" "$DISTIR" "$WORK/p.yaml" "$WORK/m.csv" \
    > "$WORK/out.txt" 2>&1; then
  cat "$WORK/out.txt" >&2
  fail "calibrate --backend cuda succeeded although rank 1 has no GPU"
fi
grep -Eq 'error: calibrate --backend cuda: (no CUDA device is visible on rank [01]$|this distir was built without CUDA)' \
  "$WORK/out.txt" || { cat "$WORK/out.txt" >&2; fail "no clear no-device error"; }
[[ ! -e $WORK/p.yaml ]] || fail "a profile was written"
[[ ! -e $WORK/m.csv ]] || fail "a measurements CSV was written"
echo "ok: $(grep -Eo 'error: calibrate --backend cuda: .*' "$WORK/out.txt" | head -1)"
