#!/usr/bin/env python3
"""Times the kernels of Megatron-style transformer layers on one GPU with PyTorch.

    python3 scripts/measure_kernels_torch.py -o kernels.csv [--quick]
        [--only gemm|attention] [--attention-backend flash|cudnn|efficient ...]

What it times, in bf16 on the current CUDA device (cuBLAS through torch.matmul, and
fused attention through torch's scaled_dot_product_attention with one backend at a time:
FLASH is FlashAttention-2, CUDNN is cuDNN's fused attention, which Transformer Engine, and so
Megatron-LM, uses on Hopper):

* the four GEMMs of a transformer layer (QKV, attention projection, FC1, FC2) of GPT-3 1.3B,
  GPT-3 175B, LLaMA-2 7B and LLaMA-2 70B, split as Megatron's tensor parallelism splits them
  (column-parallel QKV/FC1, row-parallel projection/FC2) for t = 1, 2, 4, 8, for 2048 and 8192
  tokens per microbatch, each in the three layouts of a training step: the forward
  y = x W (NN), the input gradient dx = dy Wᵀ (NT) and the weight gradient dW = xᵀ dy (TN);
* causal attention of those models' heads (query and key/value heads split by t, head
  dimension 128) at sequence 2048 and 4096 (and 8192 with --long), micro batch 1, forward and
  forward + backward, once per --attention-backend (the row's `layout` column is
  `causal-<backend>`; rows of the FLASH backend keep the plain `causal` of the first files).

These are shapes from the models, not from the calibration sweep of `distir calibrate`, so
they check the cost model (docs/cost_model.md §2.2) rather than its fit. Each time is the
median of `--reps` timed calls (CUDA events around each call, after warm-up), on random
normal operands, captured in a CUDA graph (timed()). The CSV columns are documented in data/measured/README.md.
"""
import argparse
import csv
import statistics
import sys

import torch
import torch.nn.functional as F

MODELS = {  # name: hidden, ffn, heads, kv heads, gated MLP (SwiGLU: FC1 has two halves)
    "gpt3-1.3b": (2048, 8192, 16, 16, False),
    "gpt3-175b": (12288, 49152, 96, 96, False),
    "llama2-7b": (4096, 11008, 32, 32, True),
    "llama2-70b": (8192, 28672, 64, 8, True),
}


def timed_eager(fn, reps, warmup=3):
    """Median seconds of one call, events around each call (the host's launch cost included)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


EAGER = False  # --eager


def timed(fn, reps, inner=10):
    """(median seconds of one call, how it was timed). `inner` calls are captured in a CUDA
    graph and replayed, so the GPU runs them back to back as it runs a training step's
    kernels, without Python's and autograd's host time between them (which a step of big
    kernels hides, and which made small backward kernels look 250 us long when timed one
    by one). Falls back to timing each call eagerly if the capture fails."""
    if EAGER:
        return timed_eager(fn, reps), "eager"
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture (cuBLAS workspaces, autograd)
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(inner):
                fn()
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / inner)
        del graph
        torch.cuda.empty_cache()
        return statistics.median(times), "graph"
    except RuntimeError as e:
        print(f"graph capture failed ({e}); timing eagerly", file=sys.stderr)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return timed_eager(fn, reps), "eager"


def layer_gemms(hidden, ffn, heads, kv_heads, gated, tp):
    """(name, k, n) of the forward product [tokens, k] x [k, n] on one of tp GPUs."""
    d = hidden // heads
    qkv = (heads + 2 * kv_heads) * d
    fc1 = 2 * ffn if gated else ffn
    return [("qkv", hidden, qkv // tp), ("proj", hidden // tp, hidden),
            ("fc1", hidden, fc1 // tp), ("fc2", ffn // tp, hidden)]


def gemm_rows(args, writer):
    dt = torch.bfloat16
    for model, (hidden, ffn, heads, kv_heads, gated) in MODELS.items():
        for tp in args.tp:
            if heads % tp or kv_heads % tp:
                continue
            for tokens in args.tokens:
                for name, k, n in layer_gemms(hidden, ffn, heads, kv_heads, gated, tp):
                    x = torch.randn(tokens, k, device="cuda", dtype=dt)
                    w = torch.randn(k, n, device="cuda", dtype=dt)
                    dy = torch.randn(tokens, n, device="cuda", dtype=dt)
                    # (layout, m, n, k, call): the product is m x n with inner dimension k.
                    cases = [("NN", tokens, n, k, lambda: torch.matmul(x, w)),
                             ("NT", tokens, k, n, lambda: torch.matmul(dy, w.t())),
                             ("TN", k, n, tokens, lambda: torch.matmul(x.t(), dy))]
                    for layout, m, nn, kk, fn in cases:
                        t, how = timed(fn, args.reps)
                        flops = 2.0 * m * nn * kk
                        writer.writerow(dict(kind="gemm", model=model, tp=tp, tokens=tokens,
                                             name=name, layout=layout, m=m, n=nn, k=kk,
                                             time_s=f"{t:.6e}", tflops=f"{flops / t / 1e12:.1f}",
                                             timing=how))
                    del x, w, dy
            print(f"gemm {model} t={tp} done", file=sys.stderr, flush=True)


def print_kernels(backend, fn):
    """Names the GPU kernels one call of fn ran (which kernel a backend chose), on stderr."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})
    print(f"attention {backend} kernels: " + "; ".join(n[:120] for n in names), file=sys.stderr)


def attention_rows(args, writer):
    for backend in args.attention_backend:
        try:
            attention_rows_of(args, writer, backend)
        except RuntimeError as e:  # a backend this torch or GPU lacks: the others still run
            print(f"attention backend {backend} failed: {e}", file=sys.stderr, flush=True)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


def attention_rows_of(args, writer, backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    chosen = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
              "efficient": SDPBackend.EFFICIENT_ATTENTION}[backend]
    layout = "causal" if backend == "flash" else f"causal-{backend}"
    dt = torch.bfloat16
    for model, (hidden, _, heads, kv_heads, _) in MODELS.items():
        d = hidden // heads
        for tp in args.tp:
            if heads % tp or kv_heads % tp:
                continue
            h, g = heads // tp, kv_heads // tp
            for seq in args.seq:
                q = torch.randn(1, h, seq, d, device="cuda", dtype=dt, requires_grad=True)
                k = torch.randn(1, g, seq, d, device="cuda", dtype=dt, requires_grad=True)
                v = torch.randn(1, g, seq, d, device="cuda", dtype=dt, requires_grad=True)
                if g != h:  # the fused backends want as many key/value heads as query heads
                    k2 = k.detach().repeat_interleave(h // g, dim=1).requires_grad_()
                    v2 = v.detach().repeat_interleave(h // g, dim=1).requires_grad_()
                else:
                    k2, v2 = k, v
                do = torch.randn(1, h, seq, d, device="cuda", dtype=dt)
                with sdpa_kernel(chosen):
                    fwd, how_fwd = timed(lambda: F.scaled_dot_product_attention(q, k2, v2, is_causal=True),
                                args.reps)

                    def step():
                        o = F.scaled_dot_product_attention(q, k2, v2, is_causal=True)
                        o.backward(do)
                    both, how_both = timed(step, args.reps)
                    if model == "gpt3-1.3b" and tp == 1 and seq == args.seq[0]:
                        print_kernels(backend, step)
                flops_fwd = 4.0 * h * seq * seq * d / 2  # causal: half (docs/cost_model.md 2.2.2)
                for name, t, how, flops in (("attention_fwd", fwd, how_fwd, flops_fwd),
                                            ("attention_fwd_bwd", both, how_both, 3.5 * flops_fwd)):
                    writer.writerow(dict(kind="attention", model=model, tp=tp, tokens=seq,
                                         name=name, layout=layout, m=h, n=g, k=d,
                                         time_s=f"{t:.6e}", tflops=f"{flops / t / 1e12:.1f}",
                                         timing=how))
                del q, k, v, k2, v2, do
            print(f"attention {backend} {model} t={tp} done", file=sys.stderr, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--eager", action="store_true",
                   help="time each call alone, host launch cost included (no CUDA graph)")
    p.add_argument("--quick", action="store_true", help="t = 1 and 8, 2048 tokens, 5 reps")
    p.add_argument("--only", choices=["gemm", "attention"], help="time one kind of kernel only")
    p.add_argument("--attention-backend", nargs="+", default=["flash"],
                   choices=["flash", "cudnn", "efficient"],
                   help="scaled_dot_product_attention backends to time, each alone (default flash)")
    p.add_argument("--long", action="store_true", help="attention at sequence 8192 too")
    args = p.parse_args()
    global EAGER
    EAGER = args.eager
    args.tp, args.tokens, args.seq = [1, 2, 4, 8], [2048, 8192], [2048, 4096]
    if args.long:
        args.seq.append(8192)
    if args.quick:
        args.tp, args.tokens, args.seq, args.reps = [1, 8], [2048], [2048], 5
    if not torch.cuda.is_available():
        sys.exit("error: measure_kernels_torch.py: no CUDA device")
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__} cuda {torch.version.cuda}",
          file=sys.stderr)
    with open(args.output, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["kind", "model", "tp", "tokens", "name", "layout",
                                               "m", "n", "k", "time_s", "tflops", "timing"])
        writer.writeheader()
        if args.only != "attention":
            gemm_rows(args, writer)
        if args.only != "gemm":
            attention_rows(args, writer)


if __name__ == "__main__":
    main()
