#!/usr/bin/python3
"""Plots the results of `distir search` (an HDF5 file, docs/results_format.md).

    /usr/bin/python3 scripts/plot_results.py results.h5 [-o OUTDIR] [--batch B]
        [--top N] [--trace R] [--all-devices] [--dpi DPI]

Writes PNGs into OUTDIR (default: the results file's directory), named after the
results file <name>.h5:

  <name>_memory_throughput.png  peak memory per device against throughput, one
      panel per global batch size of /configs (with --batch B only that batch,
      written as <name>_memory_throughput_b<B>.png), one point per simulated
      configuration. Colour and marker tell the (D, T, P) strategy: one colour per
      strategy when there are at most 10, otherwise colour by P and marker by T (and
      marker size by D where D·T·P varies). Filled markers fit in memory, hollow
      ones do not; the dashed red line is the memory limit (the paper's Figures 5
      and 6), left out of a panel where it lies more than twice above every point
      and no point exceeds it. The black step line is the Pareto front of the
      configurations that fit: the least memory needed for at least that
      throughput; the star is the best one. An axis is logarithmic when its values
      span more than a factor of 50.
  <name>_breakdown.png          for each of the N best configurations whose trace
      the file holds (/traces/1..N; --top N, default 3), a stacked bar per device:
      compute, communication and idle time (the pipeline bubble and waiting: the
      iteration time less the device's busy time), summed from the trace.
  <name>_timeline.png           the per-device timeline (Gantt chart) of the best
      configuration (/traces/1; --trace R draws /traces/R into
      <name>_timeline_r<R>.png): compute and communication in two colours.
      Devices with the same event sequence (same ops, value names compared
      without their replica .rN and shard .tN indices, at the same times within
      1e-6 of the iteration time) share one row, labelled e.g. "d0-d7 (8
      identical)"; --all-devices draws one row per device.

The breakdown and the timeline need traces (the experiment's `traces` > 0).
Needs Debian's python3-h5py, python3-matplotlib and python3-numpy only.
"""

import argparse
import os
import re
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
import numpy as np  # noqa: E402

FORMAT_VERSION = 1
CONFIG_COLUMNS = ["dp", "tp", "pp", "microbatches", "batch", "status", "throughput",
                  "peak_memory_bytes", "fits"]
TRACE_COLUMNS = ["device", "start_s", "end_s", "category"]
COMPUTE_COLOR = "#4c72b0"
COMM_COLOR = "#dd8452"
IDLE_COLOR = "#c8c8c8"
LIMIT_COLOR = "#d62728"
FRONT_COLOR = "black"
LOG_RANGE = 50  # an axis whose positive values span more than this factor is logarithmic
MARKERS = ["o", "s", "^", "D", "v", "p", "h", "<", ">", "8"]
TIME_TOLERANCE = 1e-6  # of the iteration time: timeline rows closer than this are merged
# Replica and shard indices of the transform's value names (src/transforms/parallelize.cc).
REPLICA_SHARD = re.compile(r"\.[rt]\d+(?=\.|$|\s)")


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
    for name, default in (("schedule", ""), ("iteration_time_s", 0.0)):
        cols[name] = (f["configs"][name][()] if name in f["configs"]
                      else np.full(len(cols["dp"]), default))
    cols["schedule"] = decode(cols["schedule"])
    return cols


def attr_text(f, name, default=""):
    value = f.attrs.get(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def needs_log(values):
    """True when the positive values span more than a factor LOG_RANGE."""
    positive = np.asarray(values)[np.asarray(values) > 0]
    return len(positive) > 0 and positive.max() / positive.min() > LOG_RANGE


def memory_unit(max_bytes):
    for scale, name in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if max_bytes >= scale:
            return scale, name
    return 1.0, "B"


def format_bytes(n):
    scale, unit = memory_unit(n)
    return f"{n / scale:.3g} {unit}"


def format_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def config_text(cols, row, with_batch=True):
    text = (f"D={cols['dp'][row]} T={cols['tp'][row]} P={cols['pp'][row]} "
            f"K={cols['microbatches'][row]}")
    if cols["pp"][row] > 1 and cols["microbatches"][row] > 1 and cols["schedule"][row]:
        text += f" {cols['schedule'][row]}"
    return (f"batch {cols['batch'][row]}, " + text) if with_batch else text


# ---------------------------------------------------------------------------------------
# Memory against throughput, one panel per batch size.


def pareto_front(throughput, memory):
    """Indices of the points no other point beats on both throughput (higher) and
    memory (lower), by memory ascending (so also by throughput ascending)."""
    order = np.lexsort((-throughput, memory))
    front, best = [], -np.inf
    for i in order:
        if throughput[i] > best:
            front.append(i)
            best = throughput[i]
    return np.array(front, dtype=int)


class StrategyStyle:
    """Colour, marker and size of each (D, T, P), legible with many strategies."""

    def __init__(self, dp, tp, pp):
        self.strategies = sorted(set(zip(dp.tolist(), tp.tolist(), pp.tolist())),
                                 key=lambda s: (s[2], s[1], s[0]))
        self.per_strategy = len(self.strategies) <= 10
        self.pp_values = sorted(set(s[2] for s in self.strategies))
        self.tp_values = sorted(set(s[1] for s in self.strategies))
        self.dp_values = sorted(set(s[0] for s in self.strategies))
        products = set(d * t * p for d, t, p in self.strategies)
        self.devices = products.pop() if len(products) == 1 else None
        self.size_by_dp = not self.per_strategy and self.devices is None
        cmap = plt.get_cmap("tab10")
        self.colors = {}
        if self.per_strategy:
            for i, s in enumerate(self.strategies):
                self.colors[s] = cmap(i)
        else:
            for i, p in enumerate(self.pp_values):
                self.colors[p] = cmap(i % 10)

    def color(self, s):
        return self.colors[s] if self.per_strategy else self.colors[s[2]]

    def marker(self, s):
        if self.per_strategy:
            return "o"
        return MARKERS[self.tp_values.index(s[1]) % len(MARKERS)]

    def size(self, s):
        if not self.size_by_dp:
            return 26
        return 12 + 14 * self.dp_values.index(s[0])

    def legend_handles(self):
        def point(label, color="dimgray", marker="o", size=6, fill=True):
            return Line2D([], [], linestyle="", marker=marker, markersize=size, label=label,
                          markerfacecolor=color if fill else "none", markeredgecolor=color)

        def header(text):
            return Line2D([], [], linestyle="", label=text)

        handles = []
        if self.per_strategy:
            handles.append(header("strategy (colour)"))
            handles += [point(f"D={d} T={t} P={p}", self.colors[(d, t, p)])
                        for d, t, p in self.strategies]
        else:
            handles.append(header("P, pipeline stages (colour)"))
            handles += [point(f"P={p}", self.colors[p]) for p in self.pp_values]
            handles.append(header("T, tensor shards (marker)"))
            handles += [point(f"T={t}", marker=MARKERS[i % len(MARKERS)])
                        for i, t in enumerate(self.tp_values)]
            if self.size_by_dp:
                handles.append(header("D, replicas (size)"))
                handles += [point(f"D={d}", size=np.sqrt(12 + 14 * i) * 1.1)
                            for i, d in enumerate(self.dp_values)]
            else:
                handles.append(header(f"D = {self.devices} / (T·P)"))
        return handles


def draw_panel(ax, cols, rows, style, limit, scale):
    """One batch size: the scatter, the memory limit and the Pareto front."""
    throughput = cols["throughput"][rows]
    memory = cols["peak_memory_bytes"][rows] / scale
    fits = cols["fits"][rows].astype(bool)
    strategies = list(zip(cols["dp"][rows].tolist(), cols["tp"][rows].tolist(),
                          cols["pp"][rows].tolist()))
    for s in sorted(set(strategies), key=lambda s: (s[2], s[1], s[0])):
        sel = np.array([x == s for x in strategies])
        color, marker, size = style.color(s), style.marker(s), style.size(s)
        if (sel & fits).any():
            ax.scatter(throughput[sel & fits], memory[sel & fits], s=size, marker=marker,
                       color=color, edgecolors="none", alpha=0.85, zorder=3)
        if (sel & ~fits).any():
            ax.scatter(throughput[sel & ~fits], memory[sel & ~fits], s=size, marker=marker,
                       facecolors="none", edgecolors=color, linewidths=0.9, alpha=0.85,
                       zorder=3)
    limit_drawn = False
    limit_v = limit / scale if limit > 0 else 0
    if limit_v > 0 and len(memory):
        # Draw the limit when some point does not fit or when it is near the points;
        # far above them it would only squash the panel.
        if (~fits).any() or limit_v <= 2 * memory.max():
            ax.axhline(limit_v, color=LIMIT_COLOR, linestyle="--", linewidth=1.2, zorder=2)
            limit_drawn = True
    if fits.any():
        fit_idx = np.flatnonzero(fits)
        front = fit_idx[pareto_front(throughput[fit_idx], memory[fit_idx])]
        ax.plot(throughput[front], memory[front], drawstyle="steps-pre", color=FRONT_COLOR,
                linewidth=1.3, zorder=4)
        ax.scatter(throughput[front], memory[front], s=34, facecolors="none",
                   edgecolors=FRONT_COLOR, linewidths=0.8, zorder=5)
        best = fit_idx[np.argmax(throughput[fit_idx])]
        ax.scatter([throughput[best]], [memory[best]], s=150, marker="*", color="gold",
                   edgecolors="black", linewidths=0.8, zorder=6)
    values_y = np.append(memory, limit_v) if limit_drawn else memory
    if needs_log(throughput):
        ax.set_xscale("log")
    if needs_log(values_y):
        ax.set_yscale("log")
    if len(memory):
        lo, hi = values_y[values_y > 0].min(), values_y.max()
        if ax.get_yscale() == "log":
            ax.set_ylim(lo / 1.6, hi * 1.6)
        else:
            pad = 0.08 * (hi - lo) if hi > lo else 0.1 * hi
            ax.set_ylim(max(0, lo - pad), hi + pad)
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.1)
    ax.tick_params(labelsize=8)
    return limit_drawn


def plot_memory_throughput(f, cols, out_path, batch=None, dpi=120):
    ok = cols["status"] == "ok"
    batches = sorted(set(cols["batch"].tolist()))
    if batch is not None:
        batches = [batch]
    n = max(len(batches), 1)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3 if n <= 9 else 4
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols + 0.6, 3.6 * nrows + 0.7),
                             squeeze=False)
    sel_all = ok & np.isin(cols["batch"], batches)
    style = StrategyStyle(cols["dp"][sel_all], cols["tp"][sel_all], cols["pp"][sel_all])
    limit = int(f.attrs.get("memory_limit_bytes", 0))
    mem_ok = cols["peak_memory_bytes"][sel_all]
    scale, unit = memory_unit(max(mem_ok.max() if len(mem_ok) else 0, 1))
    limit_hidden = False
    for i, b in enumerate(batches):
        ax = axes[i // ncols][i % ncols]
        in_batch = cols["batch"] == b
        rows = np.flatnonzero(in_batch & ok)
        nfit = int((cols["fits"][rows] != 0).sum())
        title = f"batch {b}: {len(rows)} of {int(in_batch.sum())} simulated, {nfit} fit"
        fit_rows = rows[cols["fits"][rows] != 0]
        if len(fit_rows):
            best = fit_rows[np.argmax(cols["throughput"][fit_rows])]
            title += (f"\nbest: {config_text(cols, best, with_batch=False)}, "
                      f"{format_rate(cols['throughput'][best])} samples/s")
        ax.set_title(title, fontsize=9)
        if len(rows) == 0:
            ax.text(0.5, 0.5, "no configuration simulated", ha="center", va="center",
                    transform=ax.transAxes, fontsize=9)
            continue
        limit_hidden |= not draw_panel(ax, cols, rows, style, limit, scale)
    for j in range(len(batches), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    for r in range(nrows):
        axes[r][0].set_ylabel(f"peak memory per device ({unit})", fontsize=9)
    for c in range(ncols):
        for r in range(nrows - 1, -1, -1):
            if axes[r][c].get_visible():
                axes[r][c].set_xlabel("throughput (samples/s)", fontsize=9)
                break

    handles = style.legend_handles()
    handles.append(Line2D([], [], linestyle="", label="memory"))
    handles.append(Line2D([], [], linestyle="", marker="o", markersize=6, color="dimgray",
                          label="fits"))
    handles.append(Line2D([], [], linestyle="", marker="o", markersize=6,
                          markerfacecolor="none", markeredgecolor="dimgray",
                          label="does not fit"))
    if limit > 0:
        handles.append(Line2D([], [], color=LIMIT_COLOR, linestyle="--",
                              label=f"limit {format_bytes(limit)}" +
                              ("\n(above the panel\nwhere not drawn)" if limit_hidden else "")))
    handles.append(Line2D([], [], color=FRONT_COLOR, marker="o", markerfacecolor="none",
                          markersize=5, label="Pareto front (fits)"))
    handles.append(Line2D([], [], linestyle="", marker="*", markersize=11, color="gold",
                          markeredgecolor="black", label="best (fits)"))
    fig.suptitle(f"{attr_text(f, 'experiment')}: {attr_text(f, 'model')} on "
                 f"{attr_text(f, 'hardware')}, {int(ok.sum())} of {len(ok)} configurations "
                 f"simulated", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97 if nrows > 1 else 0.94))
    legend = fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.95),
                        fontsize=8, frameon=False, handletextpad=0.4)
    headers = {h.get_label() for h in handles
               if h.get_linestyle() in ("", "None") and h.get_marker() in ("", "None")}
    for text in legend.get_texts():  # the section headers, which have no marker
        if text.get_text() in headers:
            text.set_fontweight("bold")
    fig.savefig(out_path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)


# ---------------------------------------------------------------------------------------
# Traces: the per-device breakdown and the timeline.


def read_trace(f, r):
    trace = f["traces"][str(r)]
    missing = [c for c in TRACE_COLUMNS if c not in trace]
    if missing:
        raise LayoutError(f"/traces/{r} lacks {', '.join(missing)}")
    data = {c: trace[c][()] for c in TRACE_COLUMNS}
    data["label"] = decode(trace["label"][()]) if "label" in trace else None
    data["config"] = int(trace.attrs.get("config", -1))
    return data


def trace_ranks(f):
    if "traces" not in f:
        return []
    return sorted(int(k) for k in f["traces"].keys() if k.isdigit())


def busy_times(trace):
    """Per device: compute and communication seconds (a device runs one op at a time)."""
    devices, slot = np.unique(trace["device"], return_inverse=True)
    length = trace["end_s"] - trace["start_s"]
    is_comm = trace["category"] != 0
    compute = np.bincount(slot, weights=np.where(is_comm, 0.0, length), minlength=len(devices))
    comm = np.bincount(slot, weights=np.where(is_comm, length, 0.0), minlength=len(devices))
    return devices, compute, comm


def plot_breakdown(f, cols, ranks, out_path, dpi=120):
    n = len(ranks)
    ncols = 2 if n > 4 else 1
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, squeeze=False,
                             figsize=(11 if ncols == 1 else 15, 1.0 + 2.3 * nrows))
    for ax, r in zip(axes.flat, ranks):
        trace = read_trace(f, r)
        devices, compute, comm = busy_times(trace)
        row = trace["config"]
        iteration = float(trace["end_s"].max()) if len(trace["end_s"]) else 0.0
        if 0 <= row < len(cols["dp"]) and cols["iteration_time_s"][row] > 0:
            iteration = float(cols["iteration_time_s"][row])
        idle = np.maximum(0.0, iteration - compute - comm)
        scale, unit = (1e3, "ms") if iteration >= 1e-3 else (1e6, "µs")
        x = np.arange(len(devices))
        width = 0.8 if len(devices) > 1 else 0.5
        ax.bar(x, compute * scale, width, color=COMPUTE_COLOR)
        ax.bar(x, comm * scale, width, bottom=compute * scale, color=COMM_COLOR)
        ax.bar(x, idle * scale, width, bottom=(compute + comm) * scale, color=IDLE_COLOR)
        step = max(1, int(np.ceil(len(devices) / (32 // ncols))))
        ax.set_xticks(x[::step])
        ax.set_xticklabels([f"d{d}" for d in devices[::step]], fontsize=7,
                           rotation=90 if len(devices) > 16 else 0)
        ax.set_xlim(-0.6, len(devices) - 0.4)
        ax.set_ylabel(f"time ({unit})", fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        total = iteration * len(devices)
        shares = (f"compute {100 * compute.sum() / total:.0f} %, communication "
                  f"{100 * comm.sum() / total:.0f} %, idle {100 * idle.sum() / total:.0f} %"
                  if total > 0 else "")
        known = 0 <= row < len(cols["dp"])
        what = config_text(cols, row) if known else f"row {row}"
        tput = f", {format_rate(cols['throughput'][row])} samples/s" if known else ""
        ax.set_title(f"#{r}: {what}: {iteration * scale:.4g} {unit}{tput}\n{shares}",
                     fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("device", fontsize=9)
    handles = [Patch(facecolor=c, label=l) for c, l in
               ((COMPUTE_COLOR, "compute"), (COMM_COLOR, "communication"),
                (IDLE_COLOR, "idle (pipeline bubble, waiting)"))]
    fig.suptitle(f"{attr_text(f, 'experiment')}: time per device of the "
                 f"{'best configuration' if n == 1 else f'{n} best configurations'}",
                 fontsize=11, y=1 - 0.12 / fig.get_figheight(), va="top")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))
    fig.legend(handles=handles, loc="upper center", ncol=3, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.38 / fig.get_figheight()))
    fig.savefig(out_path, dpi=dpi)
    plt.close(fig)


def device_groups(trace, collapse=True):
    """Devices in groups with identical event sequences: [(representative, [devices])].

    Identical: the same number of events, each of the same category and op (the label
    without the replica and shard indices of its value names), starting and ending at
    the same times to within TIME_TOLERANCE of the iteration time."""
    device = trace["device"]
    devices = sorted(set(int(d) for d in device))
    if not collapse or not devices:
        return [(d, [d]) for d in devices]
    labels = trace["label"]
    ops = (np.array([REPLICA_SHARD.sub("", s) for s in labels]) if labels is not None
           else np.zeros(len(device), dtype=int))
    tolerance = TIME_TOLERANCE * max(float(trace["end_s"].max()), 1e-30)
    order = np.argsort(device, kind="stable")
    bounds = np.searchsorted(device[order], devices + [devices[-1] + 1])
    buckets = {}  # (categories, ops) -> [(times, members)]
    for k, d in enumerate(devices):
        idx = order[bounds[k]:bounds[k + 1]]
        times = np.concatenate((trace["start_s"][idx], trace["end_s"][idx]))
        key = (tuple(trace["category"][idx].tolist()), tuple(ops[idx].tolist()))
        for rep_times, members in buckets.setdefault(key, []):
            if np.abs(rep_times - times).max(initial=0.0) <= tolerance:
                members.append(d)
                break
        else:
            buckets[key].append((times, [d]))
    return sorted((members[0], members) for groups in buckets.values()
                  for _, members in groups)


def group_label(members):
    """"d0-d7 (8 identical)", "d1-d3, d9-d11, …, d57-d59 (24 identical)"."""
    if len(members) == 1:
        return f"d{members[0]}"
    runs = []
    for m in members:
        if runs and m == runs[-1][1] + 1:
            runs[-1][1] = m
        else:
            runs.append([m, m])
    names = [f"d{a}" if a == b else f"d{a}-d{b}" for a, b in runs]
    if len(names) > 3:
        names = names[:2] + ["…", names[-1]]
    return f"{', '.join(names)} ({len(members)} identical)"


def plot_timeline(f, cols, r, out_path, collapse=True, dpi=120):
    trace = read_trace(f, r)
    device, start, end, category = (trace[c] for c in TRACE_COLUMNS)
    row = trace["config"]
    title = f"#{r} configuration"
    if 0 <= row < len(cols["dp"]):
        title = f"#{r} configuration: {config_text(cols, row)}"
    groups = device_groups(trace, collapse)
    rows = len(groups)
    if collapse and rows < len(set(device.tolist())):
        title += (f"\n{len(set(device.tolist()))} devices in {rows} "
                  f"{'row' if rows == 1 else 'rows'}: devices with "
                  f"the same ops at the same times (within {TIME_TOLERANCE:g} of the "
                  f"iteration time) share a row")
    horizon = float(end.max()) if len(end) else 1e-3
    scale, unit = (1e3, "ms") if horizon >= 1e-3 else (1e6, "µs")
    fig, ax = plt.subplots(figsize=(12, 1.5 + 0.42 * max(rows, 1)))
    for y, (rep, _) in enumerate(groups):
        sel = device == rep
        for cat, color in ((0, COMPUTE_COLOR), (1, COMM_COLOR)):
            ds = sel & (category == cat)
            if ds.any():
                ax.broken_barh(list(zip(start[ds] * scale, (end[ds] - start[ds]) * scale)),
                               (y - 0.4, 0.8), facecolors=color, edgecolor="none")
    ax.set_yticks(range(rows))
    ax.set_yticklabels([group_label(m) for _, m in groups], fontsize=8)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(title, fontsize=10)
    ax.set_xlim(0, max(horizon * scale, 1e-9) * 1.01)
    handles = [Patch(facecolor=COMPUTE_COLOR, label="compute"),
               Patch(facecolor=COMM_COLOR, label="communication"),
               Patch(facecolor="white", edgecolor="gray", label="idle")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    fig.savefig(out_path, dpi=dpi)
    plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="results file written by distir search")
    parser.add_argument("-o", "--outdir", help="output directory (default: beside the file)")
    parser.add_argument("--batch", type=int, help="draw the memory chart of this global "
                        "batch only (default: one panel per batch)")
    parser.add_argument("--top", type=int, metavar="N",
                        help="configurations in the breakdown chart (default 3; at most "
                        "the traces the file holds)")
    parser.add_argument("--trace", type=int, default=1, metavar="R",
                        help="draw the timeline of /traces/R, the R-th best (default 1)")
    parser.add_argument("--all-devices", action="store_true",
                        help="one timeline row per device (no collapsing)")
    parser.add_argument("--dpi", type=int, default=120, help="resolution (default 120)")
    args = parser.parse_args(argv)
    if args.top is not None and args.top < 0:
        parser.error("--top must be >= 0")
    outdir = args.outdir or os.path.dirname(os.path.abspath(args.results))
    stem = os.path.splitext(os.path.basename(args.results))[0]
    try:
        f = h5py.File(args.results, "r")
    except OSError as e:
        print(f"plot_results.py: cannot open '{args.results}' as an HDF5 file: {e}",
              file=sys.stderr)
        return 1
    written = []
    try:
        with f:
            cols = read_configs(f, args.results)
            if args.batch is not None and args.batch not in set(cols["batch"].tolist()):
                known = ", ".join(str(b) for b in sorted(set(cols["batch"].tolist())))
                raise LayoutError(f"{args.results} has no batch {args.batch} (batches: "
                                  f"{known})")
            os.makedirs(outdir, exist_ok=True)
            suffix = "" if args.batch is None else f"_b{args.batch}"
            written.append(os.path.join(outdir, f"{stem}_memory_throughput{suffix}.png"))
            plot_memory_throughput(f, cols, written[-1], args.batch, args.dpi)
            ranks = trace_ranks(f)
            if not ranks:
                print(f"plot_results.py: {args.results} holds no /traces; no breakdown or "
                      f"timeline", file=sys.stderr)
            else:
                top = [r for r in ranks if r <= (3 if args.top is None else args.top)]
                if args.top is not None and args.top > len(top):
                    print(f"plot_results.py: {args.results} holds {len(ranks)} traces; the "
                          f"breakdown shows {len(top)}", file=sys.stderr)
                if top:
                    written.append(os.path.join(outdir, f"{stem}_breakdown.png"))
                    plot_breakdown(f, cols, top, written[-1], args.dpi)
                if args.trace in ranks:
                    name = "timeline" if args.trace == 1 else f"timeline_r{args.trace}"
                    written.append(os.path.join(outdir, f"{stem}_{name}.png"))
                    plot_timeline(f, cols, args.trace, written[-1], not args.all_devices,
                                  args.dpi)
                else:
                    print(f"plot_results.py: {args.results} holds no /traces/{args.trace}; "
                          f"no timeline", file=sys.stderr)
    except LayoutError as e:
        print(f"plot_results.py: error: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
