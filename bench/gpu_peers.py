#!/usr/bin/env python3
"""GPU peers of hotfuse's six elementwise workloads (tools/make_examples.py's math), run
with the GPU machine's PyTorch by tools/gpu-check.sh: a device-to-device copy (the
bandwidth yardstick), then torch eager and torch.compile on each workload at 2^LOG2 floats.
Median of 50 event-timed calls after 5 warm-ups, inputs drawn from make_examples' ranges.

Usage: python3 bench/gpu_peers.py [LOG2]   (default 26)
Prints 'copy: GB/s' and one line per workload: eager ms, torch.compile ms, and the time
the workload's ideal bytes (each input read once, each output written once) take at the
copy's bandwidth."""
import math
import sys

import torch

dev = "cuda"


def timed(f, reps=50, warmup=5):
    """Median ms of `reps` event-timed calls of f after `warmup` untimed ones."""
    for _ in range(warmup):
        f()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f()
        e.record()
        torch.cuda.synchronize()
        ms.append(s.elapsed_time(e))
    ms.sort()
    return ms[len(ms) // 2]


def uniform(lo, hi, *shape):
    return torch.rand(*shape, device=dev) * (hi - lo) + lo


def main():
    n = 1 << (int(sys.argv[1]) if len(sys.argv) > 1 else 26)
    torch.manual_seed(0)
    src = torch.empty(4 * n, device=dev)
    dst = torch.empty_like(src)
    copy_ms = timed(lambda: dst.copy_(src))
    gbps = 2 * src.numel() * 4 / copy_ms / 1e6
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, N = 2^{n.bit_length() - 1}")
    print(f"copy: {gbps:.0f} GB/s (read + written, {src.numel() * 4 >> 20} MiB)")
    del src, dst

    t = 10
    bc1, bc2 = 1 - 0.9 ** t, 1 - 0.999 ** t

    def adam(p, g, m, v):
        m2 = m * 0.9 + g * 0.1
        v2 = v * 0.999 + (g * g) * 0.001
        return p - (m2 / bc1) / (torch.sqrt(v2 / bc2) + 1e-8) * 0.001, m2, v2

    def layernorm(x, w, b):
        mean = x.mean(-1, keepdim=True)
        xc = x - mean
        var = (xc * xc).mean(-1, keepdim=True)
        return xc * torch.pow(var + 1e-5, -0.5) * w + b


    three = lambda: [uniform(-2, 2, n) for _ in range(3)]
    workloads = [
        ("abc", lambda a, b, c: a * b * c, three, 16),
        ("ab_plus_c", lambda a, b, c: a * b + c, three, 16),
        ("gelu_chain", lambda x: x * (torch.erf(x * (1 / math.sqrt(2))) + 1.0) * 0.5,
         lambda: [uniform(-3, 3, n)], 8),
        ("activation_chain",
         lambda x: torch.tanh(torch.sigmoid(x * 1.1 + 0.3) * x - 0.2) * torch.exp(-(x * x)) + torch.relu(x),
         lambda: [uniform(-3, 3, n)], 8),
        ("adam", adam, lambda: [uniform(-2, 2, n), uniform(-0.3, 0.3, n), uniform(-0.03, 0.03, n),
                                uniform(0, 0.01, n)], 28),
        ("layernorm", layernorm, lambda: [uniform(-2, 2, n // 1024, 1024), uniform(0.5, 1.5, 1024),
                                          uniform(-0.2, 0.2, 1024)], 8),
    ]
    for name, f, make, bytes_per in workloads:
        args = make()
        compiled = torch.compile(f)
        eager_ms = timed(lambda: f(*args))
        compiled_ms = timed(lambda: compiled(*args))
        ideal_ms = bytes_per * n / gbps / 1e6
        print(f"{name}: eager {eager_ms:.3f} ms, torch.compile {compiled_ms:.3f} ms, "
              f"copy-bound {ideal_ms:.3f} ms")
        del args
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
