#!/usr/bin/env python3
"""Exports torchvision's ResNet-18 and MobileNetV2 (random weights, eval mode, batch 1 and
32, f32) to ONNX at opset 17 with the TorchScript exporter (torch's default exporter
writes opset 18), and times torch eager and torch.compile on the GPU: median of 30
event-timed calls after 10 warm-ups. Run by tools/gpu-check.sh, which then runs hotfuse on
the exported files.

Each model goes to OUTDIR/<name>_b<batch>/model.onnx with, where the onnx package is there,
test_data_set_0/{input_0,output_0}.pb: the input and PyTorch's output computed on the CPU in
FP32, for `hotfuse-run --check` (how far TF32 on the GPU moves the outputs).

Usage: python3 bench/gpu_models.py OUTDIR"""
import os
import sys
import warnings

import torch
import torchvision

from gpu_peers import timed  # bench/, the directory of this script

warnings.filterwarnings("ignore")
out = sys.argv[1]
torch.manual_seed(0)

for name in ("resnet18", "mobilenet_v2"):
    model = getattr(torchvision.models, name)().eval()
    for batch in (1, 32):
        x = torch.randn(batch, 3, 224, 224)
        d = f"{out}/{name}_b{batch}"
        os.makedirs(f"{d}/test_data_set_0", exist_ok=True)
        torch.onnx.export(model, (x,), f"{d}/model.onnx", opset_version=17, dynamo=False,
                          input_names=["input"])
        try:
            from onnx import numpy_helper
            with torch.no_grad():
                y = model(x)
            for stem, t in (("input_0", x), ("output_0", y)):
                with open(f"{d}/test_data_set_0/{stem}.pb", "wb") as f:
                    f.write(numpy_helper.from_array(t.numpy()).SerializeToString())
        except ImportError:
            print(f"{name}_b{batch}: no onnx package, no test data for --check", flush=True)
        m, xc = model.cuda(), x.cuda()
        with torch.no_grad():
            eager = timed(lambda: m(xc), reps=30, warmup=10)
            compiled = torch.compile(m)
            comp = timed(lambda: compiled(xc), reps=30, warmup=10)
        print(f"{name}_b{batch}: torch eager {eager:.3f} ms, torch.compile {comp:.3f} ms", flush=True)
        model = model.cpu()
        torch._dynamo.reset()
