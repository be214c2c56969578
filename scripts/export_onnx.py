#!/usr/bin/python3
"""Export the ONNX fixtures of data/onnx/ (and your own models) from PyTorch.

Usage (Debian's python3-torch 1.13 and python3-onnx; run with /usr/bin/python3,
not a pyenv python3, which cannot see them):

    apt-get install -y --no-install-recommends python3-torch python3-onnx
    /usr/bin/python3 scripts/export_onnx.py [--out data/onnx] [--only NAME ...]

For every fixture NAME it writes three files:

    NAME.onnx          the model (weights as initializers)
    NAME.input.npy     a seeded input (int64 token ids, or float32 rows for the MLP)
    NAME.output.npy    torch's output for that input (float32)

The .npy files are numpy's format version 1.0 (little-endian, C order), which
tests/unit/importers/npy.cc reads without numpy. `distir import` reads the
.onnx; the GoogleTest onnx_numeric_test runs the imported function with the
reference executor on NAME.input.npy and compares with NAME.output.npy.

The fixtures (docs/onnx.md lists them):
  - a hand-written GPT-2 (token + position embeddings, pre-LayerNorm blocks with
    causal multi-head attention, GELU MLP, final LayerNorm, LM head tied to the
    token embedding) at two sizes (tiny: d=32, small: d=64), opsets 14 and 17,
    with static shapes or dynamic batch/sequence axes;
  - an MLP of nn.Linear + ReLU layers (Gemm in ONNX) whose zero biases torch
    deduplicates into one initializer plus Identity nodes;
  - "errors": unsupported-op.onnx (a Conv) and opset11.onnx, built with
    onnx.helper, for the importer's error tests.

Exporting your own model the same way: build the module, call .eval(), pick a
sample input, and call export() below (or torch.onnx.export with the same
arguments). What matters for DistIR:
  - opset 13..17 (torch 1.13 stops at 17; tril needs >= 14);
  - do_constant_folding=False keeps tied weights tied (folding stores the
    transposed embedding again as a new initializer) and keeps the shape
    computations as ops, which the importer resolves; True works as well;
  - dynamic_axes={'input_ids': {0: 'batch', 1: 'seq'}} gives symbolic
    dimensions, bound at import time with --input input_ids=BxT;
  - parameters used directly (x @ W, HuggingFace's Conv1D) keep their names as
    initializer names; nn.Linear weights are exported transposed under
    generated names (onnx::MatMul_NNN) once constant folding is on.
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

SEED = 1234


class Conv1D(nn.Module):
    """HuggingFace GPT-2's linear layer: y = x @ weight + bias, weight [in, out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.2)
        self.bias = nn.Parameter(torch.randn(n_out) * 0.1)

    def forward(self, x):
        return torch.matmul(x, self.weight) + self.bias


def randomized_layer_norm(d):
    # Fresh LayerNorms are all ones/zeros, which torch would deduplicate; random
    # parameters also make the numerical check see them.
    ln = nn.LayerNorm(d)
    with torch.no_grad():
        ln.weight.copy_(1.0 + 0.1 * torch.randn(d))
        ln.bias.copy_(0.1 * torch.randn(d))
    return ln


class Attention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = Conv1D(d, 3 * d)
        self.c_proj = Conv1D(d, d)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.n_head
        q, k, v = self.c_attn(x).split(d, dim=-1)
        q = q.reshape(b, t, self.n_head, hd).transpose(1, 2)
        k = k.reshape(b, t, self.n_head, hd).transpose(1, 2)
        v = v.reshape(b, t, self.n_head, hd).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        scores = scores.masked_fill(~causal, -10000.0)  # HuggingFace's masked_bias
        probs = torch.softmax(scores, dim=-1)
        y = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, d)
        return self.c_proj(y)


class Mlp(nn.Module):
    def __init__(self, d, approximate):
        super().__init__()
        self.c_fc = Conv1D(d, 4 * d)
        self.act = nn.GELU(approximate=approximate)
        self.c_proj = Conv1D(4 * d, d)

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d, n_head, approximate):
        super().__init__()
        self.ln_1 = randomized_layer_norm(d)
        self.attn = Attention(d, n_head)
        self.ln_2 = randomized_layer_norm(d)
        self.mlp = Mlp(d, approximate)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    """GPT-2 with HuggingFace's parameter names (wte, wpe, h.N.*, ln_f)."""

    def __init__(self, vocab, n_ctx, d, n_head, n_layer, approximate):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_ctx, d)
        self.h = nn.ModuleList([Block(d, n_head, approximate) for _ in range(n_layer)])
        self.ln_f = randomized_layer_norm(d)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        positions = torch.arange(t, dtype=torch.long)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())  # tied LM head


class MlpModel(nn.Module):
    """nn.Linear + ReLU layers; zero biases are deduplicated by the exporter."""

    def __init__(self, widths):
        super().__init__()
        layers = []
        for i in range(len(widths) - 1):
            linear = nn.Linear(widths[i], widths[i + 1])
            nn.init.zeros_(linear.bias)
            layers.append(linear)
            if i + 2 < len(widths):
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


GPT_SIZES = {
    # name: vocab, n_ctx, d_model, n_head, n_layer
    "tiny": (64, 32, 32, 2, 2),
    "small": (256, 128, 64, 4, 2),
}

# name: (size, opset, dynamic axes, GELU approximation, constant folding, input shape)
GPT_FIXTURES = {
    "gpt2-tiny-op14": ("tiny", 14, False, "none", True, (2, 8)),
    "gpt2-tiny-op17": ("tiny", 17, False, "tanh", False, (2, 8)),
    "gpt2-tiny-op14-dyn": ("tiny", 14, True, "tanh", False, (3, 5)),
    "gpt2-tiny-op17-dyn": ("tiny", 17, True, "none", True, (3, 5)),
    "gpt2-small-op14": ("small", 14, False, "tanh", True, (2, 16)),
    "gpt2-small": ("small", 17, True, "tanh", False, (2, 16)),
}


def save_npy(path, array):
    np.save(path, np.ascontiguousarray(array))


def export(model, sample, path, input_name, opset, dynamic_axes=None, fold=False):
    """Exports `model` on `sample` to `path` and checks the file."""
    torch.onnx.export(model, (sample,), path, input_names=[input_name], output_names=["output"],
                      opset_version=opset, dynamic_axes=dynamic_axes,
                      do_constant_folding=fold)
    onnx.checker.check_model(onnx.load(path))


def export_fixture(out_dir, name, model, sample, input_name, opset, dynamic_axes, fold):
    model.eval()
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        export(model, sample, path, input_name, opset, dynamic_axes, fold)
        expected = model(sample)
    save_npy(os.path.join(out_dir, name + ".input.npy"), sample.numpy())
    save_npy(os.path.join(out_dir, name + ".output.npy"), expected.numpy().astype(np.float32))
    print(f"{path}: opset {opset}, {os.path.getsize(path)} bytes, input {tuple(sample.shape)}")


def export_gpt(out_dir, name):
    size, opset, dynamic, approximate, fold, shape = GPT_FIXTURES[name]
    vocab, n_ctx, d, n_head, n_layer = GPT_SIZES[size]
    torch.manual_seed(SEED)
    model = Gpt2(vocab, n_ctx, d, n_head, n_layer, approximate)
    ids = torch.randint(0, vocab, shape, dtype=torch.long)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}
    export_fixture(out_dir, name, model, ids, "input_ids", opset, axes if dynamic else None, fold)


def export_mlp(out_dir):
    torch.manual_seed(SEED)
    model = MlpModel([16, 32, 32, 8])
    x = torch.randn(4, 16)
    axes = {"x": {0: "batch"}, "output": {0: "batch"}}
    export_fixture(out_dir, "mlp", model, x, "x", 13, axes, True)


def export_error_models(out_dir):
    """Small hand-built models for the importer's error tests (tests/lit/import)."""
    from onnx import TensorProto, helper

    def model(node, opset, name):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([node], name, [x], [y], initializer=[
            helper.make_tensor("w", TensorProto.FLOAT, [3, 3, 1, 1], [0.5] * 9)])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        path = os.path.join(out_dir, name + ".onnx")
        onnx.save(m, path)
        print(f"{path}: opset {opset}, {os.path.getsize(path)} bytes")

    model(helper.make_node("Conv", ["x", "w"], ["y"], name="/features/conv0"), 17, "unsupported-op")
    model(helper.make_node("Relu", ["x"], ["y"], name="relu"), 11, "opset11")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data", "onnx"))
    parser.add_argument("--only", nargs="*", help="fixture names (default: all)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = args.only or list(GPT_FIXTURES) + ["mlp", "errors"]
    for name in names:
        if name == "mlp":
            export_mlp(args.out)
        elif name == "errors":
            export_error_models(args.out)
        elif name in GPT_FIXTURES:
            export_gpt(args.out, name)
        else:
            known = ", ".join(list(GPT_FIXTURES) + ["mlp", "errors"])
            sys.exit(f"unknown fixture '{name}'; known: {known}")


if __name__ == "__main__":
    main()
