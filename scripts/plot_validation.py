#!/usr/bin/python3
"""Simulated against measured throughput of a validated results file.

    /usr/bin/python3 scripts/plot_validation.py out/example.h5 [-o OUTDIR]

Reads /configs, /measured (written by `distir run`) and, when present,
/validation (written by `distir validate`; docs/results_format.md), and draws one
point per configuration measured "ok": simulated throughput on x, measured on y,
log-log, with the y = x line, the measured interquartile range as an error bar (when
/measured has time_q1_s and time_q3_s), and Spearman's rho with its bootstrap
interval in the title ("rho undefined" and the reason when it is). Writes
OUTDIR/<stem>_validation.png (OUTDIR defaults to the file's directory).
Needs Debian's python3-h5py and python3-matplotlib (use /usr/bin/python3).
"""
import argparse
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with h5py.File(path, "r") as f:
        if "measured" not in f:
            sys.exit(f"{path}: no /measured group: run `distir run` first")
        sim_tp = f["configs/throughput"][()]
        batch = f["configs/batch"][()]
        measured = f["measured"]
        status = [s.decode() if isinstance(s, bytes) else s for s in measured["status"][()]]
        configs = measured["config"][()]
        meas_tp = measured["throughput"][()]
        spread = "time_q1_s" in measured and "time_q3_s" in measured
        q1 = measured["time_q1_s"][()] if spread else meas_tp
        q3 = measured["time_q3_s"][()] if spread else meas_tp
        v = dict(f["validation"].attrs) if "validation" in f else None
    points = []
    for i, (c, m, s) in enumerate(zip(configs, meas_tp, status)):
        if s != "ok" or not sim_tp[c] > 0:
            continue
        low, high = (batch[c] / q3[i], batch[c] / q1[i]) if spread and q1[i] > 0 else (m, m)
        points.append((sim_tp[c], m, m - low, high - m))
    return points, v


def title_of(n, v):
    title = f"{n} configurations"
    if v is None:
        return title
    reason = v.get("rank_undefined_reason", b"")
    reason = reason.decode() if isinstance(reason, bytes) else reason
    if reason:
        return title + f"\nrho undefined: {reason}\nMAPE = {v['mape_iteration_time']:.1f} %"
    rho = f"Spearman rho = {v['spearman_rho']:.3f}"
    if "rho_ci_low" in v:
        rho += f" [{v['rho_ci_low']:.2f}, {v['rho_ci_high']:.2f}]"
    return title + f"\n{rho}, MAPE = {v['mape_iteration_time']:.1f} %"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--outdir", default=None)
    args = ap.parse_args()
    points, v = load(args.results)
    if not points:
        sys.exit(f"{args.results}: no configuration both simulated and measured ok")
    xs, ys, below, above = zip(*points)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.errorbar(xs, ys, yerr=[below, above], fmt="o", markersize=4, elinewidth=1, capsize=2)
    lo, hi = min(min(xs), min(ys)) / 1.5, max(max(xs), max(ys)) * 1.5
    ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="y = x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("simulated throughput (samples/s)")
    ax.set_ylabel("measured throughput (samples/s)")
    ax.set_title(title_of(len(points), v), fontsize=10)
    ax.legend(loc="upper left")
    outdir = args.outdir or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, os.path.splitext(os.path.basename(args.results))[0] + "_validation.png")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
