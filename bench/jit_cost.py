#!/usr/bin/env python3
# What fusing costs while a program runs (issue 21's `jit_cost` table): for each example
# graph and model, with an empty kernel cache and then a warm one, how long `hotfuse-run`
# (default --fusion adaptive) takes to reach steady state, and how much slower than the
# unfused median its iterations get in each phase; and, under --fusion all (compiles waited
# for, on every core), the cold compile time per kernel. Numbers come from report.json
# (summary.phases, summary.steady_after_ms, regions[].compile_ms). "fused from" is when the
# first iteration ran a plan with the final plan's kernel count (interpreted kernels count:
# docs/adaptive.md, "Interpreted first"), the validating iterations aside.
#
# Usage: /usr/bin/python3 bench/jit_cost.py HOTFUSE_RUN MODELS_DIR [ROUNDS] [THREADS]
# MODELS_DIR holds <model>/model.onnx and test_data_set_0 (models/export_models.py); a model
# not there is skipped. Each round uses fresh cache directories; the table gives the median
# over rounds of each number, and for stalls the worst round.
import json, os, statistics, subprocess, sys, tempfile

hotfuse, models = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
threads = sys.argv[4] if len(sys.argv) > 4 else "0"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = tempfile.mkdtemp(prefix="hf-jit-cost-")
graphs = os.path.join(work, "graphs")
subprocess.run([sys.executable, os.path.join(root, "tools", "make_examples.py"), graphs,
                "--log2", "22"], check=True, stdout=subprocess.DEVNULL)

workloads = []
for name in ("abc", "ab_plus_c", "gelu_chain", "activation_chain", "adam", "layernorm",
             "bias_activation"):
    workloads.append((name, [os.path.join(graphs, name + ".json")]))
for name in ("resnet18", "mobilenet_v2", "gpt2_block", "bert_layer", "resnet50"):
    d = os.path.join(models, name)
    if os.path.exists(os.path.join(d, "model.onnx")):
        workloads.append((name, [os.path.join(d, "model.onnx"), "--inputs",
                                 os.path.join(d, "test_data_set_0")]))


def run(args, cache, fusion):
    report = os.path.join(work, "r.json")
    env = dict(os.environ, HOTFUSE_CACHE_DIR=cache)
    subprocess.run([hotfuse] + args + ["--fusion", fusion, "--iters", "30", "--threads", threads,
                                       "--report", report],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(report))


def phases_of(report):
    # summary.phases and steady_after_ms, or, from a hotfuse-run older than them, the same
    # computed from the listed iterations.
    s = report["summary"]
    if "phases" in s:
        return s["phases"], s["steady_after_ms"]
    by = {}
    for it in report["iterations"]:
        by.setdefault(it["phase"], []).append(it["ms"])
    phases = {}
    for p, ms in by.items():
        ms.sort()
        phases[p] = {"p90_ms": ms[max(0, -(-9 * len(ms) // 10) - 1)],
                     "max_over_unfused": ms[-1] / s["unfused_ms"]}
    steady = next((it["start_ms"] for it in report["iterations"] if it["phase"] == "steady"), None)
    return phases, steady


def fused_from(report):
    final = report["summary"]["kernels_after"]
    if final is None or final >= report["summary"]["kernels_before"]:
        return float("nan")
    return next((it["start_ms"] for it in report["iterations"]
                 if it["phase"] != "validating" and it["kernels"] == final), float("nan"))


PHASES = ("compiling", "validating", "reprofiling")
print("| workload | kernels | cold compile ms/kernel (all) | fused from, cold (ms) | "
      "steady after, cold (ms) | steady after, warm (ms) | unfused ms | worst iteration / "
      "unfused: " + ", ".join(PHASES) + " | p90 / unfused: " + ", ".join(PHASES) + " |")
print("|" + " --- |" * 9)
for name, args in workloads:
    kernels, per_kernel, fused, cold, warm, unfused = [], [], [], [], [], []
    worst = {p: 0.0 for p in PHASES}
    p90 = {p: [] for p in PHASES}
    for r in range(rounds):
        cache_all = os.path.join(work, f"cache-all-{name}-{r}")
        cache = os.path.join(work, f"cache-{name}-{r}")
        a = run(args, cache_all, "all")
        compiled = [x for x in a["regions"] if x["compile_ms"] > 0 and not x["cache_hit"]]
        kernels.append(len(compiled))
        if compiled:  # the workers run in parallel: wall time of the wave over its kernels
            start = min(x["compile_start_ms"] for x in compiled)
            end = max(x["compile_end_ms"] for x in compiled)
            per_kernel.append((end - start) / len(compiled))
        c = run(args, cache, "adaptive")
        w = run(args, cache, "adaptive")
        s = c["summary"]
        phases, steady = phases_of(c)
        unfused.append(s["unfused_ms"])
        cold.append(steady if steady is not None else float("nan"))
        fused.append(fused_from(c))
        ws = phases_of(w)[1]
        warm.append(ws if ws is not None else float("nan"))
        for p in PHASES:
            ph = phases.get(p)
            if ph:
                worst[p] = max(worst[p], ph["max_over_unfused"])
                p90[p].append(ph["p90_ms"] / s["unfused_ms"])
    med = lambda v: statistics.median(v) if v else float("nan")
    fmt = lambda v: "-" if v != v or v == 0 else f"{v:.2f}"
    print(f"| {name} | {med(kernels):.0f} | {med(per_kernel):.0f} | {med(fused):.0f} | "
          f"{med(cold):.0f} | "
          f"{med(warm):.0f} | {med(unfused):.2f} | " +
          " / ".join(fmt(worst[p]) for p in PHASES) + " | " +
          " / ".join(fmt(med(p90[p])) for p in PHASES) + " |", flush=True)
