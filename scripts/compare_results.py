#!/usr/bin/env python3
"""Compare two results files of the same search space, configuration by
configuration: the rankings (per global batch), iteration time, peak memory
and fits. Used to check that the sharding path reproduces the per-model
emitter on the paper's workloads (docs/transforms.md §12), and useful for any
two runs (another hardware profile, another commit).

    scripts/compare_results.py A.h5 B.h5 [--tolerance 0.01] [--show 20]

Prints, for B relative to A: the configurations compared, how many differ in
status or fit, the largest relative differences of time and memory (with the
configuration), how many exceed the tolerance, and whether the ranking of
each global batch is the same (the same configurations in the same order).
Exit status 0 when the files are comparable (same configurations), 1 when
they are not. Needs Debian's python3-h5py and python3-numpy only.
"""
import argparse
import sys

import h5py
import numpy as np


def load(path):
    with h5py.File(path, "r") as f:
        c = f["configs"]
        cols = {k: c[k][()] for k in c.keys()}
    for k in ("status", "schedule"):
        if k in cols:
            cols[k] = np.array([v.decode() if isinstance(v, bytes) else v for v in cols[k]])
    return cols


KNOBS = ("batch", "dp", "tp", "pp", "microbatches", "schedule", "recompute", "zero_stage")


def describe(c, i):
    return "B%d D%d T%d P%d K%d %s%s%s" % (
        c["batch"][i], c["dp"][i], c["tp"][i], c["pp"][i], c["microbatches"][i],
        c["schedule"][i], " recompute" if c["recompute"][i] else "",
        " zero=%d" % c["zero_stage"][i] if c["zero_stage"][i] else "")


def ranking(c, batch):
    ok = [i for i in range(len(c["dp"]))
          if c["batch"][i] == batch and c["status"][i] == "ok" and c["fits"][i]]
    return sorted(ok, key=lambda i: (-c["throughput"][i], i))


def spearman(ra, rb):
    """Spearman's rho over the configurations both rankings hold."""
    common = [i for i in ra if i in set(rb)]
    if len(common) < 2:
        return 1.0
    pa = {i: k for k, i in enumerate(i for i in ra if i in set(common))}
    pb = {i: k for k, i in enumerate(i for i in rb if i in set(common))}
    n = len(common)
    d2 = sum((pa[i] - pb[i]) ** 2 for i in common)
    return 1 - 6 * d2 / (n * (n * n - 1))


def rel(a, b):
    return (b - a) / a if a else (0.0 if b == a else float("inf"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--tolerance", type=float, default=0.01, help="relative (default 0.01)")
    p.add_argument("--show", type=int, default=10, help="differences to list (default 10)")
    o = p.parse_args()
    a, b = load(o.a), load(o.b)
    n = len(a["dp"])
    if len(b["dp"]) != n or any(not np.array_equal(a[k], b[k]) for k in KNOBS if k in a):
        print("error: %s and %s do not hold the same configurations" % (o.a, o.b))
        return 1
    both = [i for i in range(n) if a["status"][i] == "ok" and b["status"][i] == "ok"]
    status = [i for i in range(n) if a["status"][i] != b["status"][i]]
    fits = [i for i in both if a["fits"][i] != b["fits"][i]]
    dt = {i: rel(a["iteration_time_s"][i], b["iteration_time_s"][i]) for i in both}
    dm = {i: rel(a["peak_memory_bytes"][i], b["peak_memory_bytes"][i]) for i in both}
    print("%d configurations, %d simulated in both, %d differ in status, %d in fit"
          % (n, len(both), len(status), len(fits)))
    for name, d in (("time", dt), ("peak memory", dm)):
        if not d:
            continue
        lo = min(d, key=d.get)
        hi = max(d, key=d.get)
        over = sum(1 for v in d.values() if abs(v) > o.tolerance)
        print("%s: %+.2f %% (%s) to %+.2f %% (%s); %d beyond %.2g %%"
              % (name, 100 * d[lo], describe(a, lo), 100 * d[hi], describe(a, hi),
                 over, 100 * o.tolerance))
    same = top1 = 0
    batches = sorted(set(a["batch"]))
    for batch in batches:
        ra, rb = ranking(a, batch), ranking(b, batch)
        same += ra == rb
        top1 += bool(ra) and bool(rb) and ra[0] == rb[0]
        if ra != rb:
            first = next((k for k in range(min(len(ra), len(rb))) if ra[k] != rb[k]),
                         min(len(ra), len(rb)))
            print("batch %d: rankings differ from rank %d (%d vs %d ranked), Spearman %.4f,"
                  " top 10 %s" % (batch, first + 1, len(ra), len(rb), spearman(ra, rb),
                                  "same set" if set(ra[:10]) == set(rb[:10]) else "differ"))
    print("rankings: %d of %d batches identical, the same best configuration in %d"
          % (same, len(batches), top1))
    shown = sorted(both, key=lambda i: -max(abs(dt[i]), abs(dm[i])))[: o.show]
    for i in shown:
        if max(abs(dt[i]), abs(dm[i])) <= o.tolerance:
            break
        print("  %s: time %.4g -> %.4g s (%+.2f %%), memory %.4g -> %.4g GiB (%+.2f %%)"
              % (describe(a, i), a["iteration_time_s"][i], b["iteration_time_s"][i],
                 100 * dt[i], a["peak_memory_bytes"][i] / 2**30,
                 b["peak_memory_bytes"][i] / 2**30, 100 * dm[i]))
    for i in status[: o.show]:
        print("  %s: status %s -> %s" % (describe(a, i), a["status"][i], b["status"][i]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
