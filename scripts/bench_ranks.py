#!/usr/bin/env python3
"""How much faster N ranks search than one, and how much of that the cores allow.

    scripts/bench_ranks.py EXPERIMENT.yaml [--rounds 5] [--distir PATH] [--ranks N]

(--distir defaults to the README's build, build/release/src/tools/distir.)

Issue #18 asks two ranks to be at least 1.8 times as fast as one. On a VM the
cores need not run at one speed: on the project's 2-core VM the second core has
run the same one-rank search up to 1.7x slower than the first (docs/cost_model.md
§3.2), and `mpirun -np 1` binds its rank to the first core. So each round runs,
one after the other in the same minutes:
  - one rank on each core (`mpirun -np 1 --bind-to none taskset -c C distir search`),
  - N ranks (`mpirun -np N distir search`, one rank per core),
and takes the search's own time from its last line (`[search] ... in X s`: the
search, without mpirun's start and the results file). It prints, per round and
as medians over the rounds:
  - speed-up: one rank on core 0 against N ranks (what the issue measures),
  - ideal: the N-rank time the cores allow if the work split perfectly by their
    measured speeds, 1 / sum(1 / t_c), and the speed-up that would give,
  - efficiency: ideal / N-rank time (1.0: the ranks lose nothing to each other).
Results files go to a temporary folder and are compared: each run's /ranking
must equal the first's (h5diff), else the script fails.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(r"\[search\] \d+ configurations on (\d+) ranks in ([0-9.]+) s")


def search_seconds(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench_ranks: {' '.join(cmd)} failed (rc {out.returncode}):\n{out.stderr[-2000:]}")
    found = LINE.findall(out.stdout + out.stderr)
    if not found:
        sys.exit(f"bench_ranks: no '[search] ... in X s' line from {' '.join(cmd)}")
    return float(found[-1][1])


def same_ranking(a, b):
    return subprocess.run(["h5diff", a, b, "/ranking", "/ranking"], capture_output=True).returncode == 0


def row_line(label, row, cores):
    """One printed row: the label, a one-rank time per core, then the N-rank time,
    speed-up, ideal time, ideal speed-up and efficiency."""
    many, speedup, ideal, ideal_x, eff = row[cores:]
    return (f"{label:>5} " + " ".join(f"{t:>10.3f}" for t in row[:cores]) +
            f" {many:>9.3f} {speedup:>8.2f} {ideal:>7.3f} {ideal_x:>7.2f} {eff:>6.2f}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment")
    p.add_argument("--rounds", type=int, default=5)
    # The README's build (scripts/run_example.sh, "Tests").
    p.add_argument("--distir", default=os.path.join(here, "..", "build", "release", "src", "tools", "distir"))
    p.add_argument("--ranks", type=int, default=len(os.sched_getaffinity(0)))
    a = p.parse_args()
    if a.ranks < 2:
        sys.exit("bench_ranks: needs at least 2 cores (or --ranks N with N >= 2)")
    if not os.access(a.distir, os.X_OK):
        sys.exit(f"bench_ranks: no distir binary at {a.distir} (build it, or pass --distir PATH)")
    if shutil.which("mpirun") is None:
        sys.exit("bench_ranks: mpirun is not on the PATH")
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    cores = sorted(os.sched_getaffinity(0))[: a.ranks]
    tmp = tempfile.mkdtemp(prefix="bench_ranks.")
    first = os.path.join(tmp, f"one{cores[0]}.h5")  # the ranking the others must equal
    rows = []
    print(f"{'round':>5} " + " ".join(f"{'1 rank c' + str(c):>10}" for c in cores) +
          f" {str(a.ranks) + ' ranks':>9} {'speed-up':>8} {'ideal':>7} {'ideal x':>7} {'effic.':>6}")
    try:
        for r in range(a.rounds):
            ones = []
            for c in cores:
                out = os.path.join(tmp, f"one{c}.h5")
                ones.append(search_seconds(["mpirun", "-np", "1", "--bind-to", "none", "taskset", "-c",
                                            str(c), a.distir, "search", a.experiment, "-o", out], env))
                if not same_ranking(first, out):
                    sys.exit(f"bench_ranks: {out}'s /ranking differs from {first}'s")
            out = os.path.join(tmp, "many.h5")
            many = search_seconds(["mpirun", "-np", str(a.ranks), a.distir, "search", a.experiment,
                                   "-o", out], env)
            if not same_ranking(first, out):
                sys.exit(f"bench_ranks: the {a.ranks}-rank /ranking differs from one rank's")
            if min(ones + [many]) < 0.05:
                sys.exit(f"bench_ranks: a search took {min(ones + [many]):.2f} s, too short to time "
                         "(its line has hundredths of a second): use a larger experiment")
            ideal = 1.0 / sum(1.0 / t for t in ones)
            row = ones + [many, ones[0] / many, ideal, ones[0] / ideal, ideal / many]
            rows.append(row)
            print(row_line(r + 1, row, len(cores)), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(row_line("med", [statistics.median(col) for col in zip(*rows)], len(cores)))


if __name__ == "__main__":
    main()
