#!/usr/bin/env python3
"""onnxruntime (CPU, all graph optimisations) on the model files hotfuse runs, with the same
inputs (MODELS_DIR/<model>/test_data_set_0/input_*.pb, as `hotfuse-run --inputs`):

    VENV/bin/python bench/ort_models.py MODELS_DIR OUT.json [--threads T] [--iters N]

Per model: peak resident memory (peak_rss_bytes, the process's; baseline_rss_bytes is
Python with numpy, onnx and onnxruntime imported, before any session), InferenceSession with graph_optimization_level ORT_ENABLE_ALL,
intra_op_num_threads T, inter_op_num_threads 1, sequential execution; 5 warm-up runs (and at
least 0.2 s, as hotfuse-run), then the median (and the tenth percentile, p10_ms) of --iters
timed `run()` calls. The outputs are compared with the stored output_*.pb (max abs error
recorded). A model that fails is a
record with "error" and no time.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--names", default="resnet18,mobilenet_v2,gpt2_block,resnet50,bert_layer")
    a = ap.parse_args()
    recs = []
    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
        from onnx import numpy_helper
    except Exception as e:  # noqa: BLE001
        for m in a.names.split(","):
            recs.append({"model": m, "error": f"import failed: {e}"})
        json.dump({"records": recs}, open(a.out, "w"), indent=1)
        return
    import resource
    # Peak resident memory of this process (Linux: KiB); the imports alone are the baseline.
    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    baseline = rss()
    for m in a.names.split(","):
        r = {"model": m, "threads": a.threads, "onnxruntime": ort.__version__,
             "baseline_rss_bytes": baseline}
        try:
            d = os.path.join(a.models, m)
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            so.intra_op_num_threads = a.threads
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            s = ort.InferenceSession(os.path.join(d, "model.onnx"), so,
                                     providers=["CPUExecutionProvider"])
            load = lambda f: numpy_helper.to_array(onnx.load_tensor(f))
            ins = [load(f) for f in sorted(glob.glob(os.path.join(d, "test_data_set_0", "input_*.pb")))]
            ref = [load(f) for f in sorted(glob.glob(os.path.join(d, "test_data_set_0", "output_*.pb")))]
            feed = {i.name: x for i, x in zip(s.get_inputs(), ins)}
            outs = s.run(None, feed)
            r["max_abs_err"] = max(float(np.max(np.abs(o.astype(np.float64) - e)))
                                   for o, e in zip(outs, ref)) if ref else None
            t0 = time.perf_counter()
            k = 0
            while k < 5 or time.perf_counter() - t0 < 0.2:
                s.run(None, feed)
                k += 1
            ts = []
            for _ in range(a.iters):
                t = time.perf_counter()
                s.run(None, feed)
                ts.append(time.perf_counter() - t)
            r["median_ms"] = statistics.median(ts) * 1e3
            r["min_ms"] = min(ts) * 1e3
            # The host's fast stretches (a shared machine's speed changes for seconds at a
            # time): compared with hotfuse-run's, as the medians are.
            r["p10_ms"] = sorted(ts)[len(ts) // 10] * 1e3
            r["iters"] = a.iters
            r["peak_rss_bytes"] = rss()  # over every model run so far: give one --names
            print(f"onnxruntime {m} T{a.threads}: {r['median_ms']:.2f} ms err={r['max_abs_err']}",
                  file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            r["error"] = (str(e).strip().splitlines() or [repr(e)])[0][:300]
            print(f"onnxruntime {m}: FAILED: {r['error']}", file=sys.stderr)
        recs.append(r)
    json.dump({"records": recs}, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
