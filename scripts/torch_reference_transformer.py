#!/usr/bin/python3
"""PyTorch reference for the transformer training builder (src/models/transformer.h).

Builds the tiny GPT and tiny LLaMA of tests/unit/models/transformer_torch_test.cc
in PyTorch, float64, with the same layout and names as BuildTransformerTraining
(fused QKV grouped per key/value group as [g, r + 2, d], rotate-half RoPE,
FlashAttention's causal softmax attention, SwiGLU, LayerNorm/RMSNorm,
cross-entropy averaged over all tokens), runs one training step and writes the
inputs, every weight, the loss, every weight gradient and (AdamW, decay on
matrices only, as Megatron does) every updated weight to
tests/unit/models/data/{gpt,llama}_tiny_step.txt.

Inputs and weights are multiples of 1/64 in [-0.5, 0.5) (norm scales in
[0.5, 1.5)), exact in f32 and short to print. Made with Debian bookworm's
python3-torch (1.13.x) and /usr/bin/python3:

    /usr/bin/python3 scripts/torch_reference_transformer.py

Fixture format, one tensor per line: `name rank dim0 .. dimN-1 v0 v1 ...`
(row-major); lines starting with # are comments.
"""

import math
import os

import torch
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(__file__), "..", "tests", "unit", "models", "data")

GPT = dict(variant="gpt", num_layers=2, hidden=8, heads=2, groups=2, ffn=16, vocab=16, seq=6,
           batch=2, tied=True)
LLAMA = dict(variant="llama", num_layers=2, hidden=8, heads=4, groups=2, ffn=16, vocab=16, seq=6,
             batch=2, tied=False)
EPS = 1e-5
LR, BETAS, ADAM_EPS, WEIGHT_DECAY = 1e-3, (0.9, 0.999), 1e-8, 0.1
ROTARY_BASE = 10000.0


def grid(gen, shape, low=-32, high=32):
    return torch.randint(low, high, shape, generator=gen).double() / 64


def make_weights(c, gen):
    """Weights in the builder's parameter order, with their decay flag."""
    gpt = c["variant"] == "gpt"
    h, f, d = c["hidden"], c["ffn"], c["hidden"] // c["heads"]
    qkv = (c["heads"] + 2 * c["groups"]) * d
    w = {}

    def add(name, shape, norm=False):
        w[name] = grid(gen, shape, 32, 96) if norm else grid(gen, shape)

    add("embedding.weight", (c["vocab"], h))
    if gpt:
        add("position_embedding.weight", (c["seq"], h))
    for i in range(c["num_layers"]):
        p = "layers.%d." % i
        add(p + "input_norm.weight", (h,), norm=True)
        if gpt:
            add(p + "input_norm.bias", (h,))
        add(p + "attention.qkv.weight", (h, qkv))
        if gpt:
            add(p + "attention.qkv.bias", (qkv,))
        add(p + "attention.proj.weight", (c["heads"] * d, h))
        if gpt:
            add(p + "attention.proj.bias", (h,))
        add(p + "post_attention_norm.weight", (h,), norm=True)
        if gpt:
            add(p + "post_attention_norm.bias", (h,))
            add(p + "mlp.fc1.weight", (h, f))
            add(p + "mlp.fc1.bias", (f,))
        else:
            add(p + "mlp.fc1_gate.weight", (h, f))
            add(p + "mlp.fc1_up.weight", (h, f))
        add(p + "mlp.fc2.weight", (f, h))
        if gpt:
            add(p + "mlp.fc2.bias", (h,))
    add("final_norm.weight", (h,), norm=True)
    if gpt:
        add("final_norm.bias", (h,))
    if not c["tied"]:
        add("output_layer.weight", (h, c["vocab"]))
    return w


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def attention(c, w, p, x, tables):
    b, s, _ = x.shape
    h, g = c["heads"], c["groups"]
    d, r = c["hidden"] // h, h // g
    qkv = x @ w[p + "attention.qkv.weight"]
    if c["variant"] == "gpt":
        qkv = qkv + w[p + "attention.qkv.bias"]
    grouped = qkv.view(b, s, g, r + 2, d)
    q = grouped[:, :, :, :r].reshape(b, s, h, d).transpose(1, 2)
    k = grouped[:, :, :, r:r + 1].reshape(b, s, g, d).transpose(1, 2)
    v = grouped[:, :, :, r + 1:].reshape(b, s, g, d).transpose(1, 2)
    if tables is not None:
        q, k = rope(q, *tables), rope(k, *tables)
    k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    mask = torch.ones(s, s, dtype=torch.bool).tril()
    probs = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    context = (probs @ v).transpose(1, 2).reshape(b, s, h * d)
    out = context @ w[p + "attention.proj.weight"]
    return out + w[p + "attention.proj.bias"] if c["variant"] == "gpt" else out


def norm(c, w, name, x):
    if c["variant"] == "gpt":
        return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], EPS)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w[name + ".weight"]


def mlp(c, w, p, x):
    if c["variant"] == "gpt":
        a = F.gelu(x @ w[p + "mlp.fc1.weight"] + w[p + "mlp.fc1.bias"], approximate="tanh")
        return a @ w[p + "mlp.fc2.weight"] + w[p + "mlp.fc2.bias"]
    gate, up = x @ w[p + "mlp.fc1_gate.weight"], x @ w[p + "mlp.fc1_up.weight"]
    return (gate * torch.sigmoid(gate) * up) @ w[p + "mlp.fc2.weight"]


def loss_of(c, w, tokens, labels):
    s, d = c["seq"], c["hidden"] // c["heads"]
    x = w["embedding.weight"][tokens]
    tables = None
    if c["variant"] == "gpt":
        x = x + w["position_embedding.weight"][torch.arange(s)]
    else:
        inv_freq = 1 / ROTARY_BASE ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
        angles = torch.arange(s, dtype=torch.float64)[:, None] * inv_freq[None, :]
        tables = (angles.cos(), angles.sin())
    for i in range(c["num_layers"]):
        p = "layers.%d." % i
        x = x + attention(c, w, p, norm(c, w, p + "input_norm", x), tables)
        x = x + mlp(c, w, p, norm(c, w, p + "post_attention_norm", x))
    x = norm(c, w, "final_norm", x)
    head = w["embedding.weight"].t() if c["tied"] else w["output_layer.weight"]
    logits = x @ head
    return F.cross_entropy(logits.reshape(-1, c["vocab"]), labels.reshape(-1))


def line(name, t):
    t = t.detach().contiguous()
    dims = " ".join(str(n) for n in t.shape)
    values = " ".join(repr(float(v)) for v in t.reshape(-1).tolist())
    return "%s %d %s %s\n" % (name, t.dim(), dims, values) if t.dim() else "%s 0 %s\n" % (name, values)


def write_case(c, seed, path):
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=gen)
    labels = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=gen)
    w = make_weights(c, gen)
    params = {n: t.clone().requires_grad_(True) for n, t in w.items()}
    loss = loss_of(c, params, tokens, labels)
    loss.backward()
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=ADAM_EPS)
    grads = {n: p.grad.clone() for n, p in params.items()}
    opt.step()
    with open(path, "w") as f:
        f.write("# %s, made by scripts/torch_reference_transformer.py with torch %s\n"
                % (c, torch.__version__))
        f.write(line("tokens", tokens.double()))
        f.write(line("labels", labels.double()))
        f.write(line("loss", loss))
        for n in w:
            f.write(line(n, w[n]))
            f.write(line(n + ".grad", grads[n]))
            f.write(line(n + ".new", params[n]))


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    write_case(GPT, 1234, os.path.join(OUT_DIR, "gpt_tiny_step.txt"))
    write_case(LLAMA, 5678, os.path.join(OUT_DIR, "llama_tiny_step.txt"))


if __name__ == "__main__":
    main()
