# shellcheck shell=bash
# Stand-ins for the commands the batch jobs call, for tests/jobs/*_test.sh.
# Sourced after tests/testing/shell_prelude.sh: writes sbatch, qsub, srun, mpirun,
# scontrol and distir into $WORK/bin, puts that first on PATH, and logs every call
# as one line `COMMAND ARGS...` in $FAKE_LOG. What they do:
#   sbatch [--nodes=N] [--ntasks-per-node=M] SCRIPT ARGS: runs the job in place of
#     itself (same pid) with SLURM_JOB_ID=4242, SLURM_SUBMIT_DIR=$PWD and
#     SLURM_NTASKS = nodes x tasks per node, from the options or the #SBATCH lines;
#   qsub [-v K=V,...] [-l select=...] SCRIPT: the same for PBS, with PBS_O_WORKDIR,
#     PBS_JOBID and a PBS_NODEFILE of N x mpiprocs lines (`select=N:...:mpiprocs=M`);
#   srun --mpi=list: lists pmix when FAKE_PMIX=1; srun and mpirun otherwise drop their
#     options and exec the program (same pid, so a signal to them reaches it);
#   scontrol: exits with $FAKE_SCONTROL_RC (0);
#   distir search EXP -o OUT: copies EXP to $WORK/searched.yaml, runs for
#     $FAKE_SEARCH_SECONDS (0) after touching $WORK/search.started, exits 143 on
#     TERM (logged as `distir search: TERM`), else writes OUT;
#   distir simulate ... --hardware P --trace T: fails (exit 1, after printing half a
#     JSON object) when P's name without .yaml is in $FAKE_SIMULATE_FAIL, else writes
#     T and prints a JSON summary;
#   distir calibrate --base B -o P: copies B to P (fails when B is missing);
#   distir report / run / validate: print a line.
# Helpers: called LINE (an exact line of the log), called_like REGEX, not_called_like
# REGEX, and wait_for FILE.
FAKE_LOG=$WORK/calls.log
export FAKE_LOG WORK
mkdir -p "$WORK/bin"
: > "$FAKE_LOG"

cat > "$WORK/bin/sbatch" <<'EOF'
#!/usr/bin/env bash
echo "sbatch $*" >> "$FAKE_LOG"
nodes= per_node=
while [[ $1 == -* ]]; do
  case $1 in
    --nodes=*) nodes=${1#*=} ;;
    --ntasks-per-node=*) per_node=${1#*=} ;;
  esac
  shift
done
script=$1
shift
directive() { sed -n "s/^#SBATCH --$1=\([0-9]*\).*/\1/p" "$script" | head -1; }
nodes=${nodes:-$(directive nodes)} per_node=${per_node:-$(directive ntasks-per-node)}
ntasks=$(directive ntasks)
export SLURM_JOB_ID=4242 SLURM_SUBMIT_DIR=$PWD
export SLURM_NTASKS=${ntasks:-$((${nodes:-1} * ${per_node:-1}))}
exec bash "$script" "$@"
EOF

cat > "$WORK/bin/qsub" <<'EOF'
#!/usr/bin/env bash
echo "qsub $*" >> "$FAKE_LOG"
vars= select=
while [[ $1 == -* ]]; do
  case $1 in
    -v) vars=$2; shift ;;
    -l) [[ $2 == select=* ]] && select=$2; shift ;;
  esac
  shift
done
script=$1
select=${select:-$(sed -n 's/^#PBS -l \(select=[^ ]*\).*/\1/p' "$script" | head -1)}
chunks=${select#select=}
chunks=${chunks%%:*}
procs=$(echo "$select" | sed -n 's/.*mpiprocs=\([0-9]*\).*/\1/p')
export PBS_O_WORKDIR=$PWD PBS_JOBID=4242.fake PBS_NODEFILE=$WORK/nodefile
: > "$PBS_NODEFILE"
for ((i = 0; i < ${chunks:-1} * ${procs:-1}; i++)); do echo "node$i" >> "$PBS_NODEFILE"; done
IFS=, read -ra assignments <<< "$vars"
for a in "${assignments[@]}"; do export "${a%%=*}=${a#*=}"; done
exec bash "$script"
EOF

cat > "$WORK/bin/srun" <<'EOF'
#!/usr/bin/env bash
if [[ $1 == --mpi=list ]]; then
  echo "MPI plugin types are..."
  printf '\t%s\n' none cray_shasta pmi2
  if [[ ${FAKE_PMIX:-0} == 1 ]]; then printf '\t%s\n' pmix "specific pmix plugin versions available: pmix_v4"; fi
  exit 0
fi
echo "srun $*" >> "$FAKE_LOG"
while [[ $1 == -* ]]; do shift; done
exec "$@"
EOF

cat > "$WORK/bin/mpirun" <<'EOF'
#!/usr/bin/env bash
echo "mpirun $*" >> "$FAKE_LOG"
while [[ $1 == -* ]]; do
  case $1 in -np | -n) shift 2 ;; *) shift ;; esac
done
exec "$@"
EOF

cat > "$WORK/bin/scontrol" <<'EOF'
#!/usr/bin/env bash
echo "scontrol $*" >> "$FAKE_LOG"
exit "${FAKE_SCONTROL_RC:-0}"
EOF

cat > "$WORK/bin/distir" <<'EOF'
#!/usr/bin/env bash
echo "distir $*" >> "$FAKE_LOG"
# The value of option $1 among the other arguments.
opt() {
  local name=$1
  shift
  while (($# > 1)); do
    if [[ $1 == "$name" ]]; then echo "$2"; return; fi
    shift
  done
}
case $1 in
  search)
    cp "$2" "$WORK/searched.yaml"
    if [[ ${FAKE_SEARCH_SECONDS:-0} != 0 ]]; then
      sleep "$FAKE_SEARCH_SECONDS" &
      sleeper=$!
      trap 'echo "distir search: TERM" >> "$FAKE_LOG"; kill "$sleeper"; exit 143' TERM
      touch "$WORK/search.started"
      wait "$sleeper"
    fi
    echo results > "$(opt -o "$@")" ;;
  simulate)
    hw=$(basename "$(opt --hardware "$@")" .yaml)
    if [[ " ${FAKE_SIMULATE_FAIL:-} " == *" $hw "* ]]; then
      echo '{"iteration_time_s": '
      echo "$2: error: the program uses 16 devices, $hw has 2" >&2
      exit 1
    fi
    trace=$(opt --trace "$@")
    if [[ -n $trace ]]; then echo '{"traceEvents": []}' > "$trace"; fi
    printf '{\n  "hardware": "%s",\n  "iteration_time_s": 0.25,\n  "throughput": 4.0\n}\n' "$hw" ;;
  calibrate) cp "$(opt --base "$@")" "$(opt -o "$@")" ;;
  report) echo "ranking of $2" ;;
  validate) echo "spearman rho 1.0" ;;
esac
EOF
chmod +x "$WORK"/bin/*
export PATH=$WORK/bin:$PATH

called() { grep -qxF -- "$1" "$FAKE_LOG"; }
called_like() { grep -qE -- "$1" "$FAKE_LOG"; }
not_called_like() { ! grep -qE -- "$1" "$FAKE_LOG"; }
# Waits up to 10 s for FILE to exist.
wait_for() {
  local _
  for _ in $(seq 1 200); do
    [[ -e $1 ]] && return 0
    sleep 0.05
  done
  return 1
}
