#!/usr/bin/python3
"""Exports the real models hotfuse is tested on to ONNX, with torch's outputs as test data.

    /usr/bin/python3 models/export_models.py OUT_DIR [--only NAME ...]

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
    else:
        raise SystemExit(f"export_models.py: unknown model '{name}'")
    return m.eval(), x


MODELS = ["resnet18", "mobilenet_v2", "gpt2_block"]


def export(name, out_dir):
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    files = [os.path.join(d, "model.onnx"), os.path.join(data, "input_0.pb"),
             os.path.join(data, "output_0.pb")]
    script_time = os.path.getmtime(__file__)
    if all(os.path.exists(f) and os.path.getmtime(f) >= script_time for f in files):
        print(f"{name}: up to date in {d}")
        return
    os.makedirs(data, exist_ok=True)
    model, x = build(name)
    with torch.no_grad():
        y = model(x)
        tmp = files[0] + ".tmp"
        torch.onnx.export(model, (x,), tmp, opset_version=OPSET, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(tmp))
    for f, t in ((files[1], x), (files[2], y)):
        with open(f + ".tmp", "wb") as fh:
            fh.write(numpy_helper.from_array(t.numpy().astype(np.float32)).SerializeToString())
    # Renamed last, so an interrupted run never leaves a model that looks complete.
    for f in files[1:] + files[:1]:
        os.replace(f + ".tmp", f)
    print(f"{name}: wrote {d} (input {tuple(x.shape)}, output {tuple(y.shape)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", choices=MODELS, default=MODELS)
    args = ap.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in args.only:
        export(name, args.out_dir)


if __name__ == "__main__":
    main()
