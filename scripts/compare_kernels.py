#!/usr/bin/env python3
"""Compares measured kernel times with DistIR's cost model, kernel by kernel.

    python3 scripts/compare_kernels.py --distir build/dev/src/tools/distir \\
        --hardware configs/hardware/h200.yaml data/measured/h200-transformer-kernels.csv \\
        [--csv out.csv] [--check-median PCT] [--layout L ...] [--tokens N ...]

Reads the CSV of scripts/measure_kernels_torch.py (columns in data/measured/README.md),
writes every kernel as an op of one DistIR program on one device (a GEMM as a bf16 MatMul
of [m, k] x [k, n]; attention as FlashAttention, and for the forward + backward rows
FlashAttention followed by FlashAttentionGrad, with q [1, h, s, 128] and k, v [1, g, s, 128]),
simulates it with `distir simulate --trace` and reads each op's simulated time from the trace.
So the figures are the simulator's own, not a re-implementation of its formulas. Prints the
median and mean |error| and the signed mean per kind and name (attention also per backend, the
layout column), the sum of the times, and the rows with the largest errors. --layout and
--tokens keep only the rows of those layouts or sequence lengths (e.g. the rows a fit held out).
--check-median exits 1 when a kind's median |error| is above PCT.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile


def program(rows):
    """The DistIR text of one function with an op per row, and each row's op names."""
    params, ops, names = [], [], []
    for i, r in enumerate(rows):
        if r["kind"] == "gemm":
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            params += [f"%x{i}: tensor<{m}x{k}xbf16, d0>", f"%w{i}: tensor<{k}x{n}xbf16, d0>"]
            ops.append(f"  %y{i} = MatMul(%x{i}, %w{i})")
            names.append([f"%y{i}"])
        else:
            h, g, d, s = int(r["m"]), int(r["n"]), int(r["k"]), int(r["tokens"])
            q, kv = f"tensor<1x{h}x{s}x{d}xbf16, d0>", f"tensor<1x{g}x{s}x{d}xbf16, d0>"
            params += [f"%q{i}: {q}", f"%k{i}: {kv}", f"%v{i}: {kv}", f"%do{i}: {q}"]
            ops.append(f"  %o{i}, %lse{i} = FlashAttention(%q{i}, %k{i}, %v{i}) {{causal = 1}}")
            names.append([f"%o{i}"])
            if r["name"] == "attention_fwd_bwd":
                ops.append(f"  %dq{i}, %dk{i}, %dv{i} = FlashAttentionGrad(%q{i}, %k{i}, %v{i}, "
                           f"%o{i}, %lse{i}, %do{i}) {{causal = 1}}")
                names[-1].append(f"%dq{i}")
    text = "func @kernels(" + ", ".join(params) + ") {\n" + "\n".join(ops) + "\n  return\n}\n"
    return text, names


def simulate(distir, hardware, text):
    with tempfile.TemporaryDirectory() as tmp:
        src, trace = os.path.join(tmp, "kernels.distir"), os.path.join(tmp, "trace.json")
        with open(src, "w") as f:
            f.write(text)
        subprocess.run([distir, "simulate", src, "--hardware", hardware, "--trace", trace],
                       check=True, stdout=subprocess.DEVNULL)
        with open(trace) as f:
            data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    # An op's trace name is "<Kind> <first result>"; durations are in microseconds.
    return {e["name"].split(" ", 1)[1]: e["dur"] * 1e-6 for e in events
            if e.get("ph") == "X" and " " in e.get("name", "")}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("measured")
    p.add_argument("--distir", required=True)
    p.add_argument("--hardware", required=True)
    p.add_argument("--csv", help="write the rows with their simulated time and error")
    p.add_argument("--check-median", type=float, help="exit 1 if a kind's median |error| %% exceeds this")
    p.add_argument("--worst", type=int, default=8, help="how many of the worst rows to print")
    p.add_argument("--layout", nargs="+", help="only rows of these layouts (attention: the backend)")
    p.add_argument("--tokens", type=int, nargs="+", help="only rows of these token counts")
    args = p.parse_args()
    with open(args.measured) as f:
        rows = [r for r in csv.DictReader(f)
                if (not args.layout or r["layout"] in args.layout)
                and (not args.tokens or int(r["tokens"]) in args.tokens)]
    if not rows:
        sys.exit(f"error: compare_kernels.py: no rows of {args.measured} are selected")
    text, names = program(rows)
    sim = simulate(args.distir, args.hardware, text)
    for r, ns in zip(rows, names):
        r["simulated_s"] = sum(sim[n] for n in ns)
        r["error"] = (r["simulated_s"] - float(r["time_s"])) / float(r["time_s"])

    print(f"{args.measured} against {args.hardware}: simulated - measured, relative to measured")
    print(f"{'kind / name':40} {'rows':>5} {'median |err|':>13} {'mean |err|':>11} {'mean err':>9}"
          f" {'measured':>11} {'simulated':>11}")
    groups = {}
    for r in rows:
        groups.setdefault(r["kind"], []).append(r)
        sub = f"{r['name']} {r['layout']}" if r["kind"] == "attention" else r["name"]
        groups.setdefault(f"  {r['kind']} {sub}", []).append(r)
    failed = False
    for key in sorted(groups, key=lambda k: (k.strip().split()[0], k.startswith("  "), k)):
        g = groups[key]
        errs = [r["error"] for r in g]
        med = 100 * statistics.median(abs(e) for e in errs)
        print(f"{key:40} {len(g):5d} {med:12.1f}% {100 * statistics.mean(abs(e) for e in errs):10.1f}%"
              f" {100 * statistics.mean(errs):+8.1f}% {sum(float(r['time_s']) for r in g) * 1e3:8.2f} ms"
              f" {sum(r['simulated_s'] for r in g) * 1e3:8.2f} ms")
        if args.check_median is not None and not key.startswith(" ") and med > args.check_median:
            failed = True
    print(f"largest errors:")
    for r in sorted(rows, key=lambda r: -abs(r["error"]))[:args.worst]:
        print(f"  {r['kind']:9} {r['model']:10} t={r['tp']} {r['name']:17} {r['layout']:12}"
              f" {r['m']}x{r['n']}x{r['k']} s={r['tokens']}: measured {float(r['time_s']) * 1e6:8.1f} us"
              f" ({r['tflops']} TFLOP/s), simulated {r['simulated_s'] * 1e6:8.1f} us, {100 * r['error']:+.1f} %")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    if failed:
        print(f"error: a median |error| is above {args.check_median} %", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
