#!/usr/bin/env bash
# The GPU checklist on one GPU node (docs/backend.md, "GPU runs"): the CUDA test binaries,
# `distir calibrate --backend cuda --quick`, and the follow-up stage (search -> run on the
# GPU -> validate) of the single-GPU experiments configs/experiments/gpu-single-*.yaml.
#   scripts/gpu_checklist.sh BUILD_DIR OUT_DIR
# BUILD_DIR is a build with CUDA (cmake -DDISTIR_ENABLE_CUDA=ON); OUT_DIR gets every log,
# the calibrated profile, the raw timings, the results files and a summary.txt. Steps are
# independent: a failing or hanging step (each has a time limit) is recorded and the next
# one runs (RUN_LIMIT_S, default 240, limits each `distir run`). Needs mpirun on the PATH;
# one MPI rank, since NCCL wants one rank per GPU.
set -uo pipefail
B=$(cd "${1:?usage: gpu_checklist.sh BUILD_DIR OUT_DIR}" && pwd)
O=$(mkdir -p "${2:?usage: gpu_checklist.sh BUILD_DIR OUT_DIR}" && cd "$2" && pwd)
DISTIR=$B/src/tools/distir
export DISTIR_SOURCE_DIR=$PWD
summary=$O/summary.txt
: > "$summary"

# step NAME LIMIT_S CMD...: run CMD with a time limit, log to OUT_DIR/NAME.log, record rc.
step() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" > "$O/$name.log" 2>&1
  local rc=$?
  printf '%-28s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - t0))" | tee -a "$summary"
  tail -n 25 "$O/$name.log"
  return 0
}

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
  --format=csv | tee "$O/gpu.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
case $gpu in
  *H200*) base=configs/hardware/h200.yaml ;;
  *H100*) base=configs/hardware/h100-sxm.yaml ;;
  *A100*) base=configs/hardware/dgx-a100.yaml ;;
  *) base=configs/hardware/h100-sxm.yaml ;;
esac
echo "GPU: $gpu; base profile $base" | tee -a "$summary"

# 1. The CUDA tests (ctest -R 'Gpu|Cublas|Nccl' runs the same binaries).
for t in gpu_info_test gpu_kernels_test gpu_executor_test gpu_benchmarks_test; do
  bin=$(find "$B/tests" -name "$t" -type f -perm -u+x | head -n 1)
  step "$t" 300 "$bin" --gtest_output="xml:$O/$t.xml"
done

# 2. The quick calibration on this GPU, fitted onto the datasheet profile.
step calibrate_quick 300 mpirun -np 1 --bind-to none "$DISTIR" calibrate --backend cuda --quick \
  --base "$base" -o "$O/calibrated-quick.yaml" --measurements "$O/calibrated-quick.csv"

# 2b. The full sweep in bf16: every base above has the tiled GEMM model (device.gemm), so this
#     fits its device.gemm.max_efficiency on this GPU (docs/calibration.md §5.4).
step calibrate_gemm_bf16 300 mpirun -np 1 --bind-to none "$DISTIR" calibrate --backend cuda \
  --base "$base" --matmul-dtype bf16 -o "$O/calibrated-gemm-bf16.yaml" \
  --measurements "$O/calibrated-gemm-bf16.csv"

# 3. The follow-up stage of each single-GPU experiment on the datasheet profile and, when
#    the calibration wrote one, on the calibrated profile.
followup() {  # followup EXPERIMENT PROFILE TAG
  local exp=$1 profile=$2 tag=$3 name
  name=$(basename "$exp" .yaml)
  sed "s|^hardware:.*|hardware: '$profile'|" "$exp" > "$O/$name-$tag.yaml"
  step "$name-$tag-search" 120 mpirun -np 1 --bind-to none "$DISTIR" search "$O/$name-$tag.yaml" \
    -o "$O/$name-$tag.h5" --quiet
  step "$name-$tag-run" "${RUN_LIMIT_S:-240}" mpirun -np 1 --bind-to none "$DISTIR" run "$O/$name-$tag.h5" --top 12 \
    --backend cuda --iterations 10 --warmup 3
  step "$name-$tag-validate" 60 "$DISTIR" validate "$O/$name-$tag.h5"
}
experiments=(configs/experiments/gpu-single-mlp.yaml configs/experiments/gpu-single-gpt2.yaml)
for exp in "${experiments[@]}"; do followup "$exp" "$PWD/$base" datasheet; done
# 4. A per-op profile of the MLP's best configuration on the GPU, beside the search's simulated
#    trace of it in the same file (/traces), to see which ops the cost model mis-times.
if [[ -s $O/gpu-single-mlp-datasheet.h5 ]]; then
  cp "$O/gpu-single-mlp-datasheet.h5" "$O/mlp-profile.h5"
  step mlp-profile 120 mpirun -np 1 --bind-to none "$DISTIR" run "$O/mlp-profile.h5" --top 1 --backend cuda \
    --iterations 5 --warmup 2 --trace "$O/mlp-profile-measured.json"
fi
if [[ -s $O/calibrated-quick.yaml ]]; then
  for exp in "${experiments[@]}"; do followup "$exp" "$O/calibrated-quick.yaml" quick; done
fi
cat "$summary"
