#!/usr/bin/python3
"""Exports the real models hotfuse is tested on to ONNX, with torch's outputs as test data.

    /usr/bin/python3 models/export_models.py OUT_DIR [--only NAME ...]
    VENV/bin/python models/export_models.py OUT_DIR --current [--only NAME ...]

Needs Debian's python3-torch, python3-torchvision and python3-onnx (the pyenv python3 on
PATH may lack them). Weights are random with a fixed seed; nothing is downloaded. For each
model it writes OUT_DIR/<name>/model.onnx and OUT_DIR/<name>/test_data_set_0/input_0.pb,
output_0.pb (TensorProto files, the layout of ONNX's backend tests), and skips a model
whose files are already there and newer than this script.

  resnet18     torchvision ResNet-18, eval mode, input 1x3x224x224
  mobilenet_v2 torchvision MobileNetV2, eval mode, input 1x3x224x224
  gpt2_block   a GPT-2-style pre-norm transformer block: LayerNorm, 12-head causal
               self-attention with softmax, LayerNorm, GELU MLP (d_model 768, 4x hidden),
               residuals; input 1x128x768
  resnet50     torchvision ResNet-50, eval mode, input 1x3x224x224 (about 100 MB of weights)
  bert_layer   a BERT-base encoder layer: 12-head self-attention with an additive padding
               mask, post-norm residuals, GELU (erf) MLP of 3072; inputs hidden states
               1x128x768 (f32) and attention mask 1x128 (i64, the last 16 positions padding)

--current exports what a user of a current PyTorch gets: torch.onnx.export's default
exporter (torch.export + onnxscript, torch 2.9 and later) at its default opset (20 for torch
2.15), with the batch dimension of every input symbolic ("batch"), into OUT_DIR/<name>/
(another OUT_DIR than the opset-13 export's), and three data sets at batch 1, 4 and 16 (random inputs, torch's
outputs). It needs PyPI torch, torchvision and onnxscript in a venv (Debian's torch is 1.13).

Exit code 77 (CTest's skip code here) when torch, torchvision or onnx cannot be imported.
"""
import argparse
import math
import os
import sys

SKIP = 77

try:
    import numpy as np
    import onnx
    import torch
    import torchvision
    from onnx import numpy_helper
except ImportError as e:  # the tests report this as a skip, with the reason
    print(f"export_models.py: skipped: {e} (install python3-torch python3-torchvision "
          f"python3-onnx)", file=sys.stderr)
    sys.exit(SKIP)

OPSET = 13


class GPT2Block(torch.nn.Module):
    def __init__(self, d_model=768, heads=12, seq=128):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(d_model // heads)
        self.ln1 = torch.nn.LayerNorm(d_model)
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.proj = torch.nn.Linear(d_model, d_model)
        self.ln2 = torch.nn.LayerNorm(d_model)
        self.fc = torch.nn.Linear(d_model, 4 * d_model)
        self.out = torch.nn.Linear(4 * d_model, d_model)
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale + self.mask[:t, :t]
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


class BertLayer(torch.nn.Module):
    def __init__(self, d_model=768, heads=12, hidden=3072):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(d_model // heads)
        self.q = torch.nn.Linear(d_model, d_model)
        self.k = torch.nn.Linear(d_model, d_model)
        self.v = torch.nn.Linear(d_model, d_model)
        self.proj = torch.nn.Linear(d_model, d_model)
        self.ln1 = torch.nn.LayerNorm(d_model, eps=1e-12)
        self.fc = torch.nn.Linear(d_model, hidden)
        self.out = torch.nn.Linear(hidden, d_model)
        self.ln2 = torch.nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, x, mask):
        b, t, d = x.shape
        h = self.heads
        q = self.q(x).reshape(b, t, h, d // h).transpose(1, 2)
        k = self.k(x).reshape(b, t, h, d // h).transpose(1, 2)
        v = self.v(x).reshape(b, t, h, d // h).transpose(1, 2)
        add = (1.0 - mask.to(torch.float32))[:, None, None, :] * -10000.0
        att = torch.softmax((q @ k.transpose(-2, -1)) * self.scale + add, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.proj(y))
        return self.ln2(x + self.out(torch.nn.functional.gelu(self.fc(x))))


def randomize_batchnorm(model, gen):
    # Fresh BatchNorm statistics are 0 and 1, which would hide a wrong mean or variance.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


def build(name):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    if name == "resnet18":
        m = torchvision.models.resnet18(weights=None)
        randomize_batchnorm(m, gen)
        x = torch.randn(1, 3, 224, 224, generator=gen)
    elif name == "mobilenet_v2":
        m = torchvision.models.mobilenet_v2(weights=None)
        randomize_batchnorm(m, gen)
        x = torch.randn(1, 3, 224, 224, generator=gen)
    elif name == "gpt2_block":
        m = GPT2Block()
        x = torch.randn(1, 128, 768, generator=gen)
    elif name == "resnet50":
        m = torchvision.models.resnet50(weights=None)
        randomize_batchnorm(m, gen)
        x = torch.randn(1, 3, 224, 224, generator=gen)
    elif name == "bert_layer":
        m = BertLayer()
        mask = torch.ones(1, 128, dtype=torch.int64)
        mask[:, 112:] = 0
        return m.eval(), (torch.randn(1, 128, 768, generator=gen), mask), ["input", "mask"]
    else:
        raise SystemExit(f"export_models.py: unknown model '{name}'")
    return m.eval(), (x,), ["input"]


MODELS = ["resnet18", "mobilenet_v2", "gpt2_block", "resnet50", "bert_layer"]


def export(name, out_dir):
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    model, xs, names = build(name)
    inputs = [os.path.join(data, f"input_{i}.pb") for i in range(len(xs))]
    files = [os.path.join(d, "model.onnx")] + inputs + [os.path.join(data, "output_0.pb")]
    script_time = os.path.getmtime(__file__)
    if all(os.path.exists(f) and os.path.getmtime(f) >= script_time for f in files):
        print(f"{name}: up to date in {d}")
        return
    os.makedirs(data, exist_ok=True)
    with torch.no_grad():
        y = model(*xs)
        tmp = files[0] + ".tmp"
        torch.onnx.export(model, xs, tmp, opset_version=OPSET, input_names=names,
                          output_names=["output"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(tmp))
    for f, t in list(zip(inputs, xs)) + [(files[-1], y)]:
        a = t.numpy()
        a = a.astype(np.float32) if a.dtype.kind == "f" else a
        with open(f + ".tmp", "wb") as fh:
            fh.write(numpy_helper.from_array(a).SerializeToString())
    # Renamed last, so an interrupted run never leaves a model that looks complete.
    for f in files[1:] + files[:1]:
        os.replace(f + ".tmp", f)
    shapes = ", ".join(str(tuple(x.shape)) for x in xs)
    print(f"{name}: wrote {d} (inputs {shapes}, output {tuple(y.shape)})")


CURRENT_BATCHES = (1, 4, 16)


def batch_of(x, b, gen):
    """Input x (batch 1) at batch b: fresh random floats; a mask keeps its padding pattern."""
    if x.dtype.is_floating_point:
        return torch.randn((b,) + tuple(x.shape[1:]), generator=gen)
    return x.expand((b,) + tuple(x.shape[1:])).clone()


def export_current(name, out_dir):
    d = os.path.join(out_dir, name)
    model, xs, names = build(name)
    gen = torch.Generator().manual_seed(2)
    sets = [tuple(batch_of(x, b, gen) for x in xs) for b in CURRENT_BATCHES]
    files = [os.path.join(d, "model.onnx")]
    for i, ins in enumerate(sets):
        data = os.path.join(d, f"test_data_set_{i}")
        files += [os.path.join(data, f"input_{k}.pb") for k in range(len(ins))]
        files.append(os.path.join(data, "output_0.pb"))
    script_time = os.path.getmtime(__file__)
    if all(os.path.exists(f) and os.path.getmtime(f) >= script_time for f in files):
        print(f"{name} (--current): up to date in {d}")
        return
    batch = torch.export.Dim("batch", min=1, max=1024)
    with torch.no_grad():
        outs = [model(*ins) for ins in sets]
        tmp = files[0] + ".tmp"
        os.makedirs(d, exist_ok=True)
        torch.onnx.export(model, xs, tmp, input_names=names, output_names=["output"],
                          dynamic_shapes=tuple({0: batch} for _ in xs), dynamo=True)
    m = onnx.load(tmp)
    onnx.checker.check_model(m)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    at = 1
    for i, (ins, y) in enumerate(zip(sets, outs)):
        os.makedirs(os.path.join(d, f"test_data_set_{i}"), exist_ok=True)
        for k, t in enumerate(ins):
            write_tensor(files[at + k], t, names[k])
        write_tensor(files[at + len(ins)], y, "output")
        at += len(ins) + 1
    for f in files[1:] + files[:1]:
        os.replace(f + ".tmp", f)
    print(f"{name} (--current): wrote {d} (torch {torch.__version__}, opset {opset}, symbolic "
          f"batch; data sets at batch {', '.join(map(str, CURRENT_BATCHES))})")


def write_tensor(path, t, name):
    a = t.numpy()
    a = a.astype(np.float32) if a.dtype.kind == "f" else a
    with open(path + ".tmp", "wb") as fh:
        fh.write(numpy_helper.from_array(a, name).SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", choices=MODELS, default=MODELS)
    ap.add_argument("--current", action="store_true",
                    help="torch's default exporter and opset, symbolic batch (PyPI torch)")
    args = ap.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in args.only:
        (export_current if args.current else export)(name, args.out_dir)


if __name__ == "__main__":
    main()
