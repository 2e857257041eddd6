#!/usr/bin/env python3
"""The PyPI peers of issue 9 part 2, measured like ../shared/bench/peers/peers.py measures
the Debian ones (same inputs, same float64 reference, same timing: warm-up, then the median
of 15 timed calls; one group per process):

    VENV/bin/python bench/peers_venv.py --peers PEERS_DIR --group torch_compile --out F.json
    XLA_FLAGS=... VENV/bin/python bench/peers_venv.py --peers PEERS_DIR --group jax --threads 1 ...

  torch_compile  torch 2.x `torch.compile` (Inductor, C++/OpenMP backend on CPU), default
                 mode, dynamic=False; compiled afresh for every size and thread count
                 (Inductor bakes the OpenMP thread count into the kernel). The first call's
                 time (compile included) is recorded as compile_s.
  jax            `jax.jit` (XLA:CPU) on jax arrays made once from the same numpy inputs;
                 a call is timed up to block_until_ready(). Threads cannot be changed
                 inside a process: run.sh starts one process per thread count with
                 XLA_FLAGS (see bench/run_all.sh).

PEERS_DIR is a writable copy of ../shared/bench/peers (its peers.py is imported for the
inputs, the reference and the timing). Output: peers.py's JSON ({"records": [...]}); a
configuration that fails is a record with median_s null and "error".
"""
import argparse
import json
import math
import os
import sys
import time
import traceback


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", required=True, help="writable copy of shared/bench/peers")
    ap.add_argument("--group", required=True, choices=["torch_compile", "jax"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="20,24")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6")
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.peers))
    import numpy as np
    import peers as P  # noqa: E402  (the shared peer benchmark's helpers)

    sizes = [1 << int(k) for k in a.sizes.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    workloads = a.workloads.split(",")
    t0 = time.time()
    out = []

    def fail(tool, w, n, nt, e, **kw):
        msg = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
        P.log(f"{tool} {w} n={n} T{nt}: FAILED: {msg}")
        out.append(P.rec(tool, w, n, nt, {"median_s": None, "min_s": None, "reps": 0},
                         error=msg[:300], **kw))

    if a.group == "torch_compile":
        import torch
        import torch._inductor.config as inductor_config
        torch.set_grad_enabled(False)
        # Inductor writes the OpenMP thread count into the generated C++; its FX graph
        # cache would hand the 1-thread kernel to the 2-thread run, so it is off.
        inductor_config.fx_graph_cache = False
        tool = f"torch {torch.__version__.split('+')[0]} torch.compile (Inductor C++)"
        info = {"torch": torch.__version__}
        for w in workloads:
            for n in sizes:
                I = P.make_inputs(w, n)
                ref = P.reference(w, I) if n <= (1 << 20) else None
                args = P.torch_args(w, I)
                for nt in threads:
                    try:
                        torch._dynamo.reset()
                        torch.set_num_threads(nt)
                        fn = torch.compile(P.torch_exprs()[w], dynamic=False)
                        c0 = time.perf_counter()
                        first = P.to_np(fn(*args))
                        compile_s = time.perf_counter() - c0
                        err = P.max_err(first, ref) if ref is not None else None
                        res = P.bench(lambda: P.to_np(fn(*args)), n, reps=a.reps)
                        P.log(f"{tool} {w} n=2^{int(math.log2(n))} T{nt}: "
                              f"{res['median_s']*1e3:9.3f} ms err={err} compile={compile_s:.1f}s")
                        out.append(P.rec(tool, w, n, nt, res, max_abs_err=err,
                                         compile_s=compile_s, **info))
                    except Exception as e:  # noqa: BLE001  reported, never fatal
                        traceback.print_exc()
                        fail(tool, w, n, nt, e, **info)
                del I, args
    else:
        import jax
        import jax.numpy as jnp
        from jax.scipy.special import erf
        jax.config.update("jax_platforms", "cpu")
        tool = f"jax {jax.__version__} jax.jit (XLA:CPU)"
        info = {"jax": jax.__version__, "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}
        nt = threads[0]   # one thread count per process (XLA_FLAGS)
        D = P.D

        def fns():
            def w1(a, b, c):
                return a * b * c

            def w2(a, b, c):
                return a * b + c

            def w3(x):
                return 0.5 * x * (1 + erf(x / np.float32(P.SQRT2)))

            def w4(x):
                return jnp.tanh(jax.nn.sigmoid(x * 1.1 + 0.3) * x - 0.2) * jnp.exp(-x * x) \
                    + jax.nn.relu(x)

            def w5(p, g, m, v):
                m2 = 0.9 * m + 0.1 * g
                v2 = 0.999 * v + 0.001 * g * g
                p2 = p - 0.001 * (m2 / P.BC1) / (jnp.sqrt(v2 / P.BC2) + 1e-8)
                return p2, m2, v2

            def w6(x, wt, b):
                mu = x.mean(-1, keepdims=True)
                var = ((x - mu) ** 2).mean(-1, keepdims=True)
                return (x - mu) / jnp.sqrt(var + P.EPS_LN) * wt + b
            return {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W6": w6}

        keys = {"W1": "abc", "W2": "abc", "W3": "x", "W4": "x", "W5": "pgmv",
                "W6": ["x", "w", "b"]}
        F = fns()
        for w in workloads:
            for n in sizes:
                I = P.make_inputs(w, n)
                ref = P.reference(w, I) if n <= (1 << 20) else None
                try:
                    args = [jnp.asarray(I[k]) for k in keys[w]]
                    assert all(x.dtype == jnp.float32 for x in args)
                    fn = jax.jit(F[w])
                    c0 = time.perf_counter()
                    first = jax.block_until_ready(fn(*args))
                    compile_s = time.perf_counter() - c0
                    outs = first if isinstance(first, (tuple, list)) else [first]
                    err = P.max_err([np.asarray(o) for o in outs], ref) if ref is not None else None
                    res = P.bench(lambda: jax.block_until_ready(fn(*args)), n, reps=a.reps)
                    P.log(f"{tool} {w} n=2^{int(math.log2(n))} T{nt}: "
                          f"{res['median_s']*1e3:9.3f} ms err={err} compile={compile_s:.1f}s")
                    out.append(P.rec(tool, w, n, nt, res, max_abs_err=err, compile_s=compile_s,
                                     **info))
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    fail(tool, w, n, nt, e, **info)
                del I

    for r in out:
        r["group"] = a.group
        r.pop("all_s", None)
    with open(a.out, "w") as fh:
        json.dump({"group": a.group, "elapsed_s": time.time() - t0, "records": out}, fh, indent=1)
    P.log(f"[{a.group}] done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
