#!/usr/bin/env python3
"""Fits the tiled attention model's device.attention section to measured attention kernels.

    python3 scripts/fit_attention.py data/measured/h200-attention-backends-2026-11-28.csv \\
        --layout causal-cudnn --fit-tokens 2048 4096 [--peak 989e12 --sm-count 132 --launch 5e-6]

Reads rows of scripts/measure_kernels_torch.py (kind `attention`; `attention_fwd` and
`attention_fwd_bwd` of one backend, chosen by --layout), takes the backward's time as the
difference, and fits block_overhead (one value for both directions, on a grid of quarter
steps) and the two efficiencies (for a given overhead, the geometric mean of predicted over
measured time, which zeroes the mean log error) to the rows whose sequence length is in
--fit-tokens; the other rows are held out and reported apart. The model is docs/cost_model.md
§2.2.2's: blocks of --block rows handed greedily to the SMs in launch order (the forward's
short causal blocks first, the backward's long ones first), each costing its block-pair steps
plus the overhead, at the efficiency times peak / SMs; the kernel launch on top. This is the
same schedule as sim/attention_model.cc (the simulator's own times are checked against the
measurements by scripts/compare_kernels.py). Pure Python: no NumPy needed.
"""
import argparse
import csv
import heapq
import math
import statistics


def makespan(heads, n, overhead, backward, sms):
    """Greedy list schedule of `heads` causal heads of n x n blocks (s = t) on `sms` SMs."""
    lengths = [overhead + (n - i if backward else i + 1) for i in range(n)]
    free = [0.0] * sms
    for _ in range(heads):
        for length in lengths:
            heapq.heapreplace(free, free[0] + length)
    return max(free)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("measured")
    p.add_argument("--layout", default="causal-cudnn", help="the backend's rows (layout column)")
    p.add_argument("--fit-tokens", type=int, nargs="+", default=[2048, 4096])
    p.add_argument("--peak", type=float, default=989e12, help="bf16 dense peak, FLOP/s")
    p.add_argument("--sm-count", type=int, default=132)
    p.add_argument("--launch", type=float, default=5e-6, help="kernel_launch_overhead, s")
    p.add_argument("--block", type=int, default=128)
    args = p.parse_args()
    kernels = {}
    for r in csv.DictReader(open(args.measured)):
        if r["kind"] == "attention" and r["layout"] == args.layout:
            key = (int(r["m"]), int(r["tokens"]), int(r["k"]))
            kernels.setdefault(key, {})[r["name"]] = float(r["time_s"])
    cases = []  # (heads, blocks, d, backward, measured seconds)
    for (h, s, d), t in sorted(kernels.items()):
        n = math.ceil(s / args.block)
        cases.append((h, n, d, False, s, t["attention_fwd"]))
        cases.append((h, n, d, True, s, t["attention_fwd_bwd"] - t["attention_fwd"]))
    if not cases:
        raise SystemExit(f"error: fit_attention.py: no attention rows of layout {args.layout}")
    fit = [c for c in cases if c[4] in args.fit_tokens]
    held = [c for c in cases if c[4] not in args.fit_tokens]

    def unit(c):  # seconds of one step at efficiency 1
        return (10.0 if c[3] else 4.0) * args.block ** 2 * c[2] / (args.peak / args.sm_count)

    def predict(c, overhead, eff):
        return makespan(c[0], c[1], overhead, c[3], args.sm_count) * unit(c) / eff[c[3]] + args.launch

    best = None
    for quarter in range(0, 33):
        overhead = quarter / 4
        eff = {}
        for backward in (False, True):
            part = [c for c in fit if c[3] == backward]
            ratios = [makespan(c[0], c[1], overhead, backward, args.sm_count) * unit(c) /
                      (c[5] - args.launch) for c in part]
            eff[backward] = math.exp(statistics.mean(math.log(x) for x in ratios))
        err = statistics.median(abs(predict(c, overhead, eff) / c[5] - 1) for c in fit)
        if best is None or err < best[0]:
            best = (err, overhead, eff)
    _, overhead, eff = best
    print(f"{args.measured}, layout {args.layout}: fitted to {len(fit)} kernels "
          f"(sequence {', '.join(map(str, args.fit_tokens))}), {len(held)} held out")
    print(f"  attention:\n    model: tiled\n    block: {args.block}\n    block_overhead: {overhead:g}"
          f"\n    max_efficiency: {eff[False]:.3f}\n    backward_max_efficiency: {eff[True]:.3f}")
    for name, part in (("fitted", fit), ("held out", held)):
        for backward in (False, True):
            errs = [abs(predict(c, overhead, eff) / c[5] - 1) for c in part if c[3] == backward]
            if errs:
                print(f"  {name:8} {'backward' if backward else 'forward':8} {len(errs):3d} kernels: "
                      f"median |error| {100 * statistics.median(errs):.1f} %, largest {100 * max(errs):.1f} %")


if __name__ == "__main__":
    main()
