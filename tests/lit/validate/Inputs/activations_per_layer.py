"""Activation memory per transformer layer, simulated by `distir simulate
--megatron-args` at GPT-3 175B's sizes (h 12288, a 96, s 2048, b 1, bf16),
against Korthikanti et al. 2022, eq. (1)-(3) and Table 2, without dropout,
which DistIR does not model: its masks (s b h per dropout after the attention
and after the MLP, a s^2 b for attention's) and attention dropout's output
(2 a s^2 b) are left out. The per-layer bytes are the difference of the own
activation peak of 3 and of 2 layers (docs/cost_model.md §4.4).

Usage: activations_per_layer.py DISTIR HARDWARE.yaml
"""
import json
import subprocess
import sys

S, B, H, A = 2048, 1, 12288, 96
SBH = S * B * H


def activations(distir, hardware, layers, extra, world):
    line = ("--num-layers %d --hidden-size %d --num-attention-heads %d --seq-length %d "
            "--max-position-embeddings %d --padded-vocab-size 51200 --micro-batch-size %d "
            "--global-batch-size %d --bf16 %s" % (layers, H, A, S, S, B, B, extra))
    out = subprocess.run([distir, "simulate", "--megatron-args", line, "--world-size", str(world),
                          "--hardware", hardware, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["devices"]["d0"]["peak_memory_by_kind"]["activations"]


def main():
    distir, hardware = sys.argv[1], sys.argv[2]
    cases = [
        # name, launch options, world, Korthikanti without dropout, its formula
        ("no recomputation, t 1", "", 1, 32 * SBH + 2 * A * S * S * B,
         "sbh(34 + 5as/h) - 2sbh - 3as^2b = 32sbh + 2as^2b"),
        ("no recomputation, t 8", "--tensor-model-parallel-size 8", 8,
         8 * SBH + 24 * SBH // 8 + 2 * A * S * S * B // 8,
         "sbh(10 + 24/t + 5as/(ht)) - 2sbh - 3as^2b/t = 8sbh + 24sbh/t + 2as^2b/t"),
        ("selective recomputation, t 1", "--recompute-granularity selective", 1, 32 * SBH,
         "34sbh - 2sbh = 32sbh"),
        ("full recomputation, t 1", "--recompute-granularity full", 1, 2 * SBH,
         "2sbh (the layer's input)"),
    ]
    for name, extra, world, expected, formula in cases:
        per_layer = (activations(distir, hardware, 3, extra, world) -
                     activations(distir, hardware, 2, extra, world))
        verdict = "equal" if per_layer == expected else "DIFFERENT"
        print("%s: simulated %d B per layer, %s = %d B: %s" %
              (name, per_layer, formula, expected, verdict))


if __name__ == "__main__":
    main()
