#!/usr/bin/python3
"""Simulated against measured throughput of a validated results file.

    /usr/bin/python3 scripts/plot_validation.py out/example.h5 [-o OUTDIR]

Reads /configs, /measured (written by `distir run`) and, when present,
/validation (written by `distir validate`; docs/results_format.md), and draws one
point per configuration measured "ok": simulated throughput on x, measured on y,
log-log, with the y = x line and Spearman's rho in the title. Writes
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
        status = [s.decode() if isinstance(s, bytes) else s for s in f["measured/status"][()]]
        configs = f["measured/config"][()]
        meas_tp = f["measured/throughput"][()]
        rho = f["validation"].attrs["spearman_rho"] if "validation" in f else None
        mape = f["validation"].attrs["mape_iteration_time"] if "validation" in f else None
    pairs = [(sim_tp[c], m) for c, m, s in zip(configs, meas_tp, status) if s == "ok" and sim_tp[c] > 0]
    return pairs, rho, mape


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--outdir", default=None)
    args = ap.parse_args()
    pairs, rho, mape = load(args.results)
    if not pairs:
        sys.exit(f"{args.results}: no configuration both simulated and measured ok")
    xs, ys = zip(*pairs)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(xs, ys, s=18)
    lo, hi = min(min(xs), min(ys)) / 1.5, max(max(xs), max(ys)) * 1.5
    ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="y = x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("simulated throughput (samples/s)")
    ax.set_ylabel("measured throughput (samples/s)")
    title = f"{len(pairs)} configurations"
    if rho is not None:
        title += f"\nSpearman rho = {rho:.3f}, MAPE = {mape:.1f} %"
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper left")
    outdir = args.outdir or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, os.path.splitext(os.path.basename(args.results))[0] + "_validation.png")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
