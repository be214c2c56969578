#!/usr/bin/env bash
# jobs/search.sbatch and jobs/search.pbs, run by stand-ins for sbatch, qsub, srun,
# mpirun, scontrol and distir (tests/jobs/fake_commands.sh):
#   1. the #SBATCH defaults are 2 nodes x 16 tasks: 32 ranks, `srun --mpi=pmix` when
#      `srun --mpi=list` names pmix, --resume, then the report; no requeue;
#   2. `mpirun -np 64` when srun has no pmix (and `sbatch --nodes=4`), and when there
#      is no srun at all; LAUNCHER=mpirun forces mpirun;
#   3. TERM to the batch shell while the search runs (Slurm's --signal=B:TERM@120):
#      the search gets TERM, the job calls `scontrol requeue 4242` and exits non-zero
#      without a report; it does not requeue after MAX_REQUEUES restarts, and a
#      failing scontrol is reported;
#   4. the PBS job: 2 x 16 MPI slots from its select line, mpirun, --resume, report.
# Usage (CTest does this): bash search_job_test.sh SOURCE_DIR
set -euo pipefail
SRC=$(realpath "${1:-$(dirname "$0")/../..}")
# shellcheck source=../testing/shell_prelude.sh
source "$(dirname "$0")/../testing/shell_prelude.sh" search-job
# shellcheck source=fake_commands.sh
source "$(dirname "$0")/fake_commands.sh"
JOB=$SRC/jobs/search.sbatch
export DISTIR=distir
mkdir -p "$WORK/repo"
cd "$WORK/repo"
EXP=$WORK/repo/exp.yaml
echo "name: fake" > "$EXP"
OUT=$WORK/repo/out/exp.h5
SEARCH="distir search $EXP -o $OUT --resume"

grep -q '^# module load' "$JOB" || fail "search.sbatch has no commented module load block"
grep -q '^# module load' "$SRC/jobs/search.pbs" || fail "search.pbs has no commented module load block"

# 1. pmix.
FAKE_PMIX=1 sbatch "$JOB" "$EXP" "$OUT" > "$WORK/job1.txt" 2>&1 \
  || { cat "$WORK/job1.txt" >&2; fail "the job exited with $?"; }
called "srun --mpi=pmix --ntasks=32 $SEARCH" || fail "no srun --mpi=pmix on 32 ranks: $(cat "$FAKE_LOG")"
not_called_like '^mpirun' || fail "mpirun called although srun has pmix"
not_called_like '^scontrol' || fail "requeued although the search finished"
called "distir report $OUT" || fail "no report"
grep -q "ranking of $OUT" "$OUT.report.txt" || fail "no $OUT.report.txt"

# 2. mpirun when srun has no pmix, or when there is no srun.
: > "$FAKE_LOG"
FAKE_PMIX=0 sbatch --nodes=4 "$JOB" "$EXP" "$OUT" > "$WORK/job2.txt" 2>&1 \
  || { cat "$WORK/job2.txt" >&2; fail "the job without pmix exited with $?"; }
called "mpirun -np 64 $SEARCH" || fail "no mpirun -np 64 without pmix: $(cat "$FAKE_LOG")"
not_called_like '^srun' || fail "srun called although it has no pmix"
: > "$FAKE_LOG"
FAKE_PMIX=1 LAUNCHER=mpirun sbatch "$JOB" "$EXP" "$OUT" > "$WORK/job2b.txt" 2>&1 \
  || { cat "$WORK/job2b.txt" >&2; fail "the job with LAUNCHER=mpirun exited with $?"; }
called "mpirun -np 32 $SEARCH" || fail "LAUNCHER=mpirun did not run mpirun: $(cat "$FAKE_LOG")"
mkdir -p "$WORK/bin-nosrun"
for f in "$WORK"/bin/*; do [[ $f == */srun ]] || ln -s "$f" "$WORK/bin-nosrun/"; done
if PATH=$WORK/bin-nosrun:/usr/bin:/bin command -v srun > /dev/null; then
  echo "skipped: a real srun is in /usr/bin or /bin"
else
  : > "$FAKE_LOG"
  PATH=$WORK/bin-nosrun:/usr/bin:/bin FAKE_PMIX=1 sbatch "$JOB" "$EXP" "$OUT" \
    > "$WORK/job2c.txt" 2>&1 || { cat "$WORK/job2c.txt" >&2; fail "the job without srun exited with $?"; }
  called "mpirun -np 32 $SEARCH" || fail "no mpirun without srun: $(cat "$FAKE_LOG")"
fi

# 3. TERM before the time limit. Starts the job with a search that runs for 60 s,
# sends TERM to its batch shell once the search has started, and waits for the job:
# its exit status in $rc, its output in $WORK/$1.txt.
term_job() {
  : > "$FAKE_LOG"
  rm -f "$WORK/search.started"
  FAKE_PMIX=1 FAKE_SEARCH_SECONDS=60 sbatch "$JOB" "$EXP" "$OUT" > "$WORK/$1.txt" 2>&1 &
  local pid=$!
  wait_for "$WORK/search.started" || fail "the search did not start"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
}
rm -f "$OUT" "$OUT.report.txt"
SECONDS=0
term_job job3
((SECONDS < 30)) || fail "the job took ${SECONDS} s to stop after TERM"
((rc != 0)) || fail "the job exited with 0 after TERM"
called "distir search: TERM" || fail "the search did not get TERM: $(cat "$FAKE_LOG")"
called "scontrol requeue 4242" || fail "no scontrol requeue 4242: $(cat "$FAKE_LOG")"
not_called_like '^distir report' || fail "report run after TERM"
[[ ! -e $OUT.report.txt ]] || fail "a report after TERM"
grep -q "requeued job 4242" "$WORK/job3.txt" || fail "the job does not say it requeued: $(cat "$WORK/job3.txt")"

SLURM_RESTART_COUNT=10 term_job job3b
((rc != 0)) || fail "the job exited with 0 after TERM (10 restarts)"
not_called_like '^scontrol' || fail "requeued after 10 restarts (MAX_REQUEUES=10)"
grep -q "not requeued" "$WORK/job3b.txt" || fail "no 'not requeued' message: $(cat "$WORK/job3b.txt")"

FAKE_SCONTROL_RC=1 term_job job3c
((rc != 0)) || fail "the job exited with 0 after TERM (scontrol failing)"
called "scontrol requeue 4242" || fail "no scontrol requeue 4242 (scontrol failing)"
grep -q "scontrol requeue 4242 failed" "$WORK/job3c.txt" || fail "a failed requeue is not reported"

# 4. PBS.
: > "$FAKE_LOG"
qsub -v "EXPERIMENT=$EXP,OUT=$OUT,DISTIR=distir" "$SRC/jobs/search.pbs" > "$WORK/job4.txt" 2>&1 \
  || { cat "$WORK/job4.txt" >&2; fail "the PBS job exited with $?"; }
called "mpirun -np 32 $SEARCH" || fail "the PBS job did not run mpirun -np 32: $(cat "$FAKE_LOG")"
called "distir report $OUT" || fail "no report from the PBS job"
echo "PASS: search jobs (pmix/mpirun, requeue on TERM, PBS)"
