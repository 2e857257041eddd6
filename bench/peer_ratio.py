#!/usr/bin/env python3
# Interleaved ratio of hotfuse's fused kernel to the peers' hand-fused -ffast-math loop
# (../shared/bench/peers/fused.cpp) on one workload at 2^24 floats, 2 threads: each round runs
# `hotfuse-run --fusion all` (median of 15 iterations after 2 warm-up ones, from --report)
# and then the peer loop (median of 15 calls after 2 warm-up ones), and prints the ratio. On
# a shared machine the absolute times drift with the load; the per-round ratio, and its
# median over rounds, is what to quote.
#
# Usage (Debian's python3, which has numpy):
#   /usr/bin/python3 bench/peer_ratio.py WORKLOAD [ROUNDS] [WORKDIR]
# WORKLOAD: abc, ab_plus_c, gelu_chain, activation_chain, adam or layernorm.
# Environment: HF_RATIO_THREADS (default 2); HF_RATIO_PEER_FLAGS, extra g++ flags for the peer
# (e.g. -mno-avx512f, with HOTFUSE_CXX=$PWD/bench/cxx_avx2.sh, which appends the same to the
# kernels', to emulate an AVX2-only machine); HF_RATIO_BINS, hotfuse-run binaries separated
# by ':' (default build/hotfuse-run), each run in every round, so that old and new builds are
# interleaved.
import ctypes, json, os, statistics, subprocess, sys, time

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
which = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
work = sys.argv[3] if len(sys.argv) > 3 else os.path.join(root, "build", "bench", "peer_ratio")
os.makedirs(work, exist_ok=True)
peers = os.path.join(root, "..", "shared", "bench", "peers")
lib_path = os.path.join(work, "fused_fast.so")
# Built as run.sh / run_examples.sh build it.
subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", "-ffast-math", "-fPIC", "-shared",
                os.path.join(peers, "fused.cpp"), "-o", lib_path] +
               os.environ.get("HF_RATIO_PEER_FLAGS", "").split(), check=True)
subprocess.run([sys.executable,
                os.path.join(root, "tools", "make_examples.py"), os.path.join(work, "graphs"),
                "--log2", "24"], check=True, stdout=subprocess.DEVNULL)
lib = ctypes.CDLL(lib_path)
P, L, I, F = ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_float
lib.w1.argtypes = lib.w2.argtypes = [P, P, P, P, L, I]
lib.w3.argtypes = [P, P, L, I]
lib.w4.argtypes = [P, P, L, I]
lib.w5.argtypes = [P, P, P, P, P, P, P, F, F, L, I]
lib.w6.argtypes = [P, P, P, P, L, L, F, I]
n, nt, D = 1 << 24, int(os.environ.get("HF_RATIO_THREADS", "2")), 1024
rng = np.random.default_rng(1)
if which in ("abc", "ab_plus_c"):
    a, b, c = (rng.uniform(-2, 2, n).astype(np.float32) for _ in range(3))
    y = np.empty_like(a)
    w = lib.w1 if which == "abc" else lib.w2
    call = lambda: w(a.ctypes.data, b.ctypes.data, c.ctypes.data, y.ctypes.data, n, nt)
elif which == "adam":
    pa, ga, ma, va = (rng.uniform(-2, 2, n).astype(np.float32) for _ in range(4))
    va = np.abs(va)
    po, mo, vo = (np.empty_like(pa) for _ in range(3))
    bc1, bc2 = 1 - 0.9**10, 1 - 0.999**10
    call = lambda: lib.w5(pa.ctypes.data, ga.ctypes.data, ma.ctypes.data, va.ctypes.data,
                          po.ctypes.data, mo.ctypes.data, vo.ctypes.data, bc1, bc2, n, nt)
elif which == "gelu_chain":
    x = rng.uniform(-3, 3, n).astype(np.float32)
    y = np.empty_like(x)
    call = lambda: lib.w3(x.ctypes.data, y.ctypes.data, n, nt)
elif which == "activation_chain":
    x = rng.uniform(-4, 4, n).astype(np.float32)
    y = np.empty_like(x)
    call = lambda: lib.w4(x.ctypes.data, y.ctypes.data, n, nt)
elif which == "layernorm":
    x = rng.uniform(-2, 2, n).astype(np.float32)
    w = rng.uniform(0.5, 1.5, D).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, D).astype(np.float32)
    y = np.empty_like(x)
    call = lambda: lib.w6(x.ctypes.data, w.ctypes.data, b.ctypes.data, y.ctypes.data, n // D, D,
                          1e-5, nt)
else:
    sys.exit("workload: abc, ab_plus_c, gelu_chain, activation_chain, adam or layernorm")


def peer_ms():
    for _ in range(2):
        call()
    ts = []
    for _ in range(15):
        t0 = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


bins = os.environ.get("HF_RATIO_BINS", os.path.join(root, "build", "hotfuse-run")).split(":")


def hotfuse_ms(binary):
    rep = os.path.join(work, "report.json")
    subprocess.run([binary,
                    os.path.join(work, "graphs", which + ".json"), "--threads", str(nt), "--iters",
                    "15", "--warmup", "2", "--fusion", "all", "--report", rep],
                   check=True, stdout=subprocess.DEVNULL)
    s = json.load(open(rep))["summary"]
    return s["fused_ms"], s["kernels_after"]


ratios = [[] for _ in bins]
# (not `b`: the peer calls above read a global of that name)
for r in range(rounds):
    for i, binary in enumerate(bins):
        h, k = hotfuse_ms(binary)
        p = peer_ms()
        ratios[i].append(h / p)
        tag = f" [{binary}]" if len(bins) > 1 else ""
        print(f"round {r}: hotfuse {h:.2f} ms ({k} kernels)  peer -ffast-math {p:.2f} ms  "
              f"ratio {h / p:.2f}{tag}", flush=True)
for binary, rs in zip(bins, ratios):
    tag = f" [{binary}]" if len(bins) > 1 else ""
    print(f"{which}: median ratio {statistics.median(rs):.2f} (min {min(rs):.2f}, "
          f"max {max(rs):.2f}) over {rounds} rounds{tag}; load average {os.getloadavg()[0]:.1f}")
