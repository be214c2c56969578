#!/usr/bin/env python3
"""How close the random and anneal search strategies get to the exhaustive optimum.

For an experiment small enough to search whole, runs `distir search` once with
its own strategy (the grid: the optimum) and then with `strategy: {kind: K,
budget: N, seed: S}` for every kind, budget and seed asked for, and prints per
kind and budget the best throughput found as a fraction of the optimum
(median, worst and best over the seeds) and how often the optimum itself was
found. The objective is the strategies' own: the highest throughput among the
configurations that simulate and fit in memory, over the whole space.

    python3 scripts/strategy_gap.py configs/experiments/gpt2-1.6b.yaml \
        --distir build/dev/src/tools/distir --budgets 50,100,200 --seeds 1-10

Needs h5py (Debian: python3-h5py). The YAML is copied with the strategy and
output keys replaced; its relative paths are resolved against its directory.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def parse_seeds(text):
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def best_throughput(path):
    with h5py.File(path, "r") as f:
        c = f["/configs"]
        ok = (c["status"][()] == b"ok") & (c["fits"][()] == 1)
        t = np.where(ok, c["throughput"][()], 0.0)
        return float(t.max()) if len(t) else 0.0


def variant(yaml_text, directory, strategy, output):
    """The experiment with its strategy and output replaced, paths made absolute."""
    lines = []
    for line in yaml_text.splitlines():
        if re.match(r"^(strategy|output|traces):", line):
            continue
        # hardware: ../x.yaml and model files: relative to the experiment file.
        line = re.sub(r"^(hardware:\s*)(\.\.?/\S+)",
                      lambda m: m.group(1) + os.path.join(directory, m.group(2)), line)
        lines.append(line)
    if strategy:
        lines.append("strategy: " + strategy)
    lines.append("output: " + output)
    lines.append("traces: 0")
    return "\n".join(lines) + "\n"


def search(distir, text, workdir, name, ranks):
    path = os.path.join(workdir, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    cmd = [distir, "search", path, "--quiet"]
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks)] + cmd
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=workdir)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("experiment")
    p.add_argument("--distir", default="build/dev/src/tools/distir")
    p.add_argument("--kinds", default="random,anneal")
    p.add_argument("--budgets", default="50,100,200")
    p.add_argument("--seeds", default="1-10")
    p.add_argument("--ranks", type=int, default=1)
    a = p.parse_args()
    distir = os.path.abspath(a.distir)
    directory = os.path.dirname(os.path.abspath(a.experiment))
    with open(a.experiment) as f:
        yaml_text = f.read()
    with tempfile.TemporaryDirectory() as work:
        grid = os.path.join(work, "grid.h5")
        search(distir, variant(yaml_text, directory, "{kind: grid}", grid), work, "grid", a.ranks)
        optimum = best_throughput(grid)
        with h5py.File(grid, "r") as f:
            n = len(f["/configs/index"])
        print(f"{a.experiment}: {n} configurations, optimum {optimum:.1f} samples/s")
        print("kind    budget  share of the space  best/optimum: median  worst   best  optimum found")
        for kind in a.kinds.split(","):
            for budget in [int(b) for b in a.budgets.split(",")]:
                shares = []
                for seed in parse_seeds(a.seeds):
                    out = os.path.join(work, f"{kind}-{budget}-{seed}.h5")
                    strategy = f"{{kind: {kind}, budget: {budget}, seed: {seed}}}"
                    search(distir, variant(yaml_text, directory, strategy, out), work, "s",
                           a.ranks)
                    shares.append(best_throughput(out) / optimum if optimum > 0 else 0.0)
                found = sum(1 for s in shares if s >= 1.0 - 1e-12)
                print(f"{kind:7s} {budget:6d}  {budget / n:17.1%}  {statistics.median(shares):20.4f}"
                      f"  {min(shares):6.4f} {max(shares):6.4f}  {found}/{len(shares)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
