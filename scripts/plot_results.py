#!/usr/bin/python3
"""Plots the results of `distir search` (an HDF5 file, docs/results_format.md).

    /usr/bin/python3 scripts/plot_results.py results.h5 [-o OUTDIR]

Writes two PNGs into OUTDIR (default: the results file's directory), named after
the results file:

  <name>_memory_throughput.png  peak memory per device against throughput, one
      point per simulated configuration, coloured by its (D, T, P) strategy; the
      memory limit is a horizontal line (the paper's Figures 5 and 6). Points
      above the line do not fit.
  <name>_timeline.png           the per-device timeline (Gantt chart) of the best
      configuration (/traces/1): compute and communication in two colours. Only
      when the file holds that trace (the experiment's `traces` > 0).

Needs Debian's python3-h5py, python3-matplotlib and python3-numpy only.
"""

import argparse
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
import numpy as np  # noqa: E402

FORMAT_VERSION = 1
CONFIG_COLUMNS = ["dp", "tp", "pp", "microbatches", "batch", "status", "throughput",
                  "peak_memory_bytes", "fits"]
TRACE_COLUMNS = ["device", "start_s", "end_s", "category"]
COMPUTE_COLOR = "#4c72b0"
COMM_COLOR = "#dd8452"


class LayoutError(Exception):
    """The file is not a DistIR results file of a version this script reads."""


def decode(values):
    """Variable-length strings come back as bytes from older h5py versions."""
    return np.array([v.decode() if isinstance(v, bytes) else str(v) for v in values])


def read_configs(f, path):
    version = f.attrs.get("format_version")
    if version is None:
        raise LayoutError(f"{path}: not a DistIR results file (no format_version attribute)")
    if int(version) != FORMAT_VERSION:
        raise LayoutError(f"{path}: results format {int(version)}; this script reads "
                          f"{FORMAT_VERSION}")
    if "configs" not in f:
        raise LayoutError(f"{path}: no /configs group")
    missing = [c for c in CONFIG_COLUMNS if c not in f["configs"]]
    if missing:
        raise LayoutError(f"{path}: /configs lacks {', '.join(missing)}")
    cols = {c: f["configs"][c][()] for c in CONFIG_COLUMNS}
    cols["status"] = decode(cols["status"])
    return cols


def strategy_labels(cols, mask):
    return [f"D={d} T={t} P={p}" for d, t, p in
            zip(cols["dp"][mask], cols["tp"][mask], cols["pp"][mask])]


def attr_text(f, name, default=""):
    value = f.attrs.get(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def spans_decades(values):
    """True when the positive values span more than two decades (log axis)."""
    positive = values[values > 0]
    return len(positive) > 0 and positive.max() / positive.min() > 100


def plot_memory_throughput(f, cols, out_path):
    ok = cols["status"] == "ok"
    fig, ax = plt.subplots(figsize=(9, 6))
    if not ok.any():
        ax.text(0.5, 0.5, "no configuration simulated", ha="center", va="center",
                transform=ax.transAxes)
    labels = np.array(strategy_labels(cols, ok))
    throughput = cols["throughput"][ok]
    memory_gb = cols["peak_memory_bytes"][ok] / 1e9
    strategies = sorted(set(labels), key=lambda s: [int(x.split("=")[1]) for x in s.split()])
    cmap = plt.get_cmap("tab20" if len(strategies) > 10 else "tab10")
    for i, s in enumerate(strategies):
        sel = labels == s
        ax.scatter(throughput[sel], memory_gb[sel], s=18, alpha=0.8, color=cmap(i % cmap.N),
                   label=s, edgecolors="none")
    limit = int(f.attrs.get("memory_limit_bytes", 0))
    if limit > 0:
        ax.axhline(limit / 1e9, color="red", linestyle="--", linewidth=1.2,
                   label=f"memory limit ({limit / 1e9:.1f} GB)")
    if spans_decades(throughput):
        ax.set_xscale("log")
    if spans_decades(np.append(memory_gb, limit / 1e9)):
        ax.set_yscale("log")
    ax.set_xlabel("throughput (samples/s)")
    ax.set_ylabel("peak memory per device (GB)")
    ax.set_title(f"{attr_text(f, 'experiment')}: {attr_text(f, 'model')} on "
                 f"{attr_text(f, 'hardware')} ({int(ok.sum())} of {len(ok)} simulated)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2 if len(strategies) > 8 else 1, loc="best")
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)
    plt.close(fig)


def plot_timeline(f, out_path):
    trace = f["traces"]["1"]
    missing = [c for c in TRACE_COLUMNS if c not in trace]
    if missing:
        raise LayoutError(f"/traces/1 lacks {', '.join(missing)}")
    device, start, end, category = (trace[c][()] for c in TRACE_COLUMNS)
    row = int(trace.attrs.get("config", -1))
    title = "best configuration"
    if 0 <= row < len(f["configs"]["dp"]):
        c = f["configs"]
        title = (f"best configuration: batch {c['batch'][row]}, D={c['dp'][row]} "
                 f"T={c['tp'][row]} P={c['pp'][row]} K={c['microbatches'][row]} "
                 f"{decode(c['schedule'][row:row + 1])[0]}")
    devices = sorted(set(int(d) for d in device))
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.45 * max(len(devices), 1)))
    handles = []
    for cat, color, name in ((0, COMPUTE_COLOR, "compute"), (1, COMM_COLOR, "communication")):
        sel = category == cat
        for d in devices:
            ds = sel & (device == d)
            if ds.any():
                ax.broken_barh(list(zip(start[ds] * 1e3, (end[ds] - start[ds]) * 1e3)),
                               (d - 0.4, 0.8), facecolors=color, edgecolor="none")
        handles.append(Patch(facecolor=color, label=name))
    ax.set_yticks(devices)
    ax.set_yticklabels([f"d{d}" for d in devices])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title)
    ax.set_xlim(0, max(float(end.max()) * 1e3 if len(end) else 1.0, 1e-9) * 1.01)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)
    plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="results file written by distir search")
    parser.add_argument("-o", "--outdir", help="output directory (default: beside the file)")
    args = parser.parse_args(argv)
    outdir = args.outdir or os.path.dirname(os.path.abspath(args.results))
    stem = os.path.splitext(os.path.basename(args.results))[0]
    try:
        f = h5py.File(args.results, "r")
    except OSError as e:
        print(f"plot_results.py: cannot open '{args.results}' as an HDF5 file: {e}",
              file=sys.stderr)
        return 1
    try:
        with f:
            cols = read_configs(f, args.results)
            os.makedirs(outdir, exist_ok=True)
            written = [os.path.join(outdir, f"{stem}_memory_throughput.png")]
            plot_memory_throughput(f, cols, written[-1])
            if "traces" in f and "1" in f["traces"]:
                written.append(os.path.join(outdir, f"{stem}_timeline.png"))
                plot_timeline(f, written[-1])
            else:
                print(f"plot_results.py: {args.results} holds no /traces/1; no timeline",
                      file=sys.stderr)
    except LayoutError as e:
        print(f"plot_results.py: error: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
