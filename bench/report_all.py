#!/usr/bin/env python3
"""bench/run_all.sh's output folder -> one markdown table per part of issue 9.

    python3 bench/report_all.py OUTDIR

Reads OUTDIR/machine.txt, examples/ (bench/run_examples.sh: hf_*.json reports, cpp.json,
stream.txt), peers/*.json (peers.py and bench/peers_venv.py), jit/ (jit_bench.json and the
empty/warm-cache reports), models/table.md. Anything missing is printed as "n/a (reason)".
Times are medians; GB/s = ideal bytes / median time (each input read once, each output
written once, as ../shared/bench/peers counts); % triad against the same run's STREAM
triad at the same size and thread count.
"""
import glob
import json
import os
import re
import sys

out = sys.argv[1]
ex = f"{out}/examples"
W = {"W1": "abc", "W2": "ab_plus_c", "W3": "gelu_chain", "W4": "activation_chain",
     "W5": "adam", "W6": "layernorm"}
WNAME = {"W1": "a*b*c", "W2": "a*b+c", "W3": "GELU (erf)", "W4": "10-op chain",
         "W5": "Adam (3 outputs)", "W6": "LayerNorm rows of 1024"}
IDEAL = {"W1": 16, "W2": 16, "W3": 8, "W4": 8, "W5": 28, "W6": 8}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def sizes_present():
    s = sorted({int(m.group(1)) for p in glob.glob(f"{ex}/hf_*_all.json")
                for m in [re.search(r"_(\d+)_T\d_all\.json$", p)] if m})
    return s or [20, 24]


def hf(name, log2, t, level):
    r = load(f"{ex}/hf_{name}_{log2}_T{t}_{level}.json")
    return r["summary"] if r else None


def hf_ms(s):
    if not s:
        return None
    return s["fused_ms"] if s.get("fused_ms") is not None else s["unfused_ms"]


def f3(v):
    return f"{v:.3f}" if v is not None else "n/a"


SIZES = sizes_present()

# ---- header --------------------------------------------------------------------------------
m = dict(line.split(": ", 1) for line in read(f"{out}/machine.txt").splitlines() if ": " in line)
print(f"Machine: {m.get('model', '?')}, {m.get('cpus', '?')} CPUs ({m.get('flags', '').strip()}), "
      f"{m.get('g++', '')}; date {m.get('date', '?')}, commit {m.get('commit', '?')}"
      f"{', QUICK smoke run' if m.get('quick') == '1' else ''}; duration "
      f"{int(m.get('duration_s', 0)) / 60:.1f} min.")
print(f"Load: start `{m.get('uptime_start', '?').strip()}`; end `{m.get('uptime_end', '?').strip()}`.")
steps = re.findall(r"^== \[(\d+)s\] (.*?) \(load ([0-9.]+)\)$", read(f"{out}/run_all.log"), re.M)
if steps:
    print("1-minute load average as each step started: " +
          "; ".join(f"{name.split(':')[0][:40]} {load}" for _, name, load in steps) + ".")
print()

# ---- STREAM ----------------------------------------------------------------------------------
triad = {}
for line in read(f"{ex}/stream.txt").splitlines():
    f = line.split()  # kernel n threads reps best_GBs median_GBs best_us median_us
    if len(f) >= 5 and f[0] == "triad":
        triad[(int(f[1]), int(f[2]))] = float(f[4])

# ---- part 1 ----------------------------------------------------------------------------------
print("### 1. MegEngine's table (relative speed, `--fusion off` = 100%)")
print()
print("MegEngine reports opt0/opt2/opt3 = 100/100/150% (a*b*c) and 100/150/150% (a*b+c).")
print()
print("| expr | N | T | off ms | off (opt0) | static (opt2) | all (opt3) | adaptive (opt3) |")
print("|---|---|---|---|---|---|---|---|")
for w in ("W1", "W2"):
    for log2 in SIZES:
        for t in (1, 2):
            a = hf(W[w], log2, t, "all")
            if not a:
                print(f"| {WNAME[w]} | 2^{log2} | {t} | n/a (no report) | | | | |")
                continue
            off = a["unfused_ms"]
            pct = lambda s: f"{100 * off / hf_ms(s):.0f}%" if s else "n/a"
            print(f"| {WNAME[w]} | 2^{log2} | {t} | {off:.3f} | 100% | "
                  f"{pct(hf(W[w], log2, t, 'static'))} | {pct(a)} | "
                  f"{pct(hf(W[w], log2, t, 'adaptive'))} |")
print()

# ---- part 2 ----------------------------------------------------------------------------------
recs = {}      # (tool, w, n, t) -> median ms
errors = {}    # column -> reason
for path in [f"{ex}/cpp.json"] + sorted(glob.glob(f"{out}/peers/*.json")):
    d = load(path)
    if not d:
        continue
    for r in d.get("records", []):
        key = (r["tool"], r["workload"], r["n"], r["threads"])
        if r.get("median_s") is not None:
            recs[key] = r["median_s"] * 1e3
        elif r.get("error"):
            errors.setdefault(r["tool"], r["error"])


def find(pred, w, n, t):
    best = None
    for (tool, ww, nn, tt), v in recs.items():
        if ww == w and nn == n and tt == t and pred(tool):
            best = v if best is None else min(best, v)
    return best


COLS = [  # (header, predicate over tool names, the group's .err file, is a "tool peer")
    ("C++ -ffast-math", lambda s: s == "C++ fused -O3 -march=native -ffast-math", "cpp", False),
    ("C++ strict", lambda s: s == "C++ fused -O3 -march=native", "cpp", False),
    ("numpy", lambda s: s == "numpy eager", "numpy", True),
    ("numpy out=", lambda s: s == "numpy out= (prealloc)", "numpy", True),
    ("numexpr", lambda s: s == "numexpr", "numexpr", True),
    ("torch 1.13 eager", lambda s: s.startswith("torch eager") or s.startswith("torch native op"),
     "torch_eager", True),
    ("torch.jit legacy", lambda s: s.startswith("torch.jit legacy"), "jit_legacy", True),
    ("torch.compile", lambda s: "torch.compile" in s, "torch_compile", True),
    ("jax.jit", lambda s: s.startswith("jax"), "jax", True),
]
group_err = {}
for _, _, g, _ in COLS:
    e = read(f"{out}/peers/{g}.err")
    if e:
        group_err[g] = e.splitlines()[-1][:200]
versions = {}
for tool in {k[0] for k in recs}:
    for h, pred, _, _ in COLS:
        if pred(tool) and ("torch." in tool or tool.startswith("jax")):
            versions[h] = tool

print("### 2. Elementwise workloads vs the peers (median ms, same run)")
print()
print("hotfuse `all` = `--fusion all` (every region fused and compiled up front); `adaptive` = "
      "`--fusion adaptive --sync-compile` in its steady state. numpy is single-threaded (its "
      "T2 cells repeat nothing: n/a). torch 1.13 eager: the faster of the expression and the "
      "native op (F.gelu / F.layer_norm). Best peer: the fastest of numpy .. jax.jit (the "
      "hand-fused C++ loops are the target, not a peer).")
print()
hdr = ["workload", "N", "T", "hotfuse all", "hotfuse adaptive"] + [c[0] for c in COLS] + \
      ["best peer", "all / -ffast-math", "all / best peer"]
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
gbps_rows = []
summary = []
for w in W:
    for log2 in SIZES:
        n = 1 << log2
        for t in (1, 2):
            a = hf_ms(hf(W[w], log2, t, "all"))
            ad = hf_ms(hf(W[w], log2, t, "adaptive"))
            cells, vals = [], {}
            for h, pred, g, _ in COLS:
                v = find(pred, w, n, t)
                vals[h] = v
                if v is not None:
                    cells.append(f"{v:.3f}")
                elif g in group_err:
                    cells.append("n/a")
                elif h.startswith("numpy") and t == 2:
                    cells.append("n/a (1T)")
                else:
                    cells.append("n/a")
            peer = [(vals[h], h) for h, _, _, tp in COLS if tp and vals[h] is not None]
            best = min(peer) if peer else None
            fast = vals["C++ -ffast-math"]
            r_fast = f"{a / fast:.2f}x" if a and fast else "n/a"
            r_best = f"{a / best[0]:.2f}x" if a and best else "n/a"
            print(f"| {WNAME[w]} | 2^{log2} | {t} | {f3(a)} | {f3(ad)} | " + " | ".join(cells) +
                  f" | {best[1] + ' ' + f3(best[0]) if best else 'n/a'} | {r_fast} | {r_best} |")
            summary.append((w, log2, t, a, fast, best))
            tri = triad.get((n, t))
            row = [WNAME[w], f"2^{log2}", str(t)]
            for v in [a, ad] + [vals[h] for h, _, _, _ in COLS]:
                if v is None:
                    row.append("n/a")
                    continue
                gb = IDEAL[w] * n / (v * 1e-3) / 1e9
                row.append(f"{gb:.1f} ({100 * gb / tri:.0f}%)" if tri else f"{gb:.1f}")
            gbps_rows.append(row)
print()
for h, pred, g, _ in COLS:
    if g in group_err:
        print(f"- {h}: n/a ({group_err[g]})")
    elif not any(pred(k[0]) for k in recs):
        print(f"- {h}: n/a (no results)")
for h, tool in sorted(versions.items()):
    print(f"- {h}: {tool}")
for tool, e in sorted(errors.items()):
    print(f"- {tool}: some configurations failed: {e[:160]}")
print()
print("Effective GB/s (ideal bytes / median time) and % of the same run's STREAM triad "
      "(best of N, same N and T): "
      + ", ".join(f"2^{k[0].bit_length() - 1} T{k[1]} {v:.1f} GB/s" for k, v in sorted(triad.items())))
print()
hdr2 = ["workload", "N", "T", "hotfuse all", "hotfuse adaptive"] + [c[0] for c in COLS]
print("| " + " | ".join(hdr2) + " |")
print("|" + "---|" * len(hdr2))
for row in gbps_rows:
    print("| " + " | ".join(row) + " |")
print()
print("Targets: within 10% of the hand-fused -ffast-math loop (all / -ffast-math <= 1.10) and "
      "faster than every peer (all / best peer < 1):")
print()
print("| workload | N | T | <= 1.10x of -ffast-math? | faster than every peer? |")
print("|---|---|---|---|---|")
for w, log2, t, a, fast, best in summary:
    c1 = "n/a" if not (a and fast) else (f"yes ({a / fast:.2f}x)" if a / fast <= 1.10
                                         else f"**no** ({a / fast:.2f}x)")
    c2 = "n/a" if not (a and best) else (f"yes ({a / best[0]:.2f}x of {best[1]})" if a < best[0]
                                         else f"**no** ({a / best[0]:.2f}x of {best[1]})")
    print(f"| {WNAME[w]} | 2^{log2} | {t} | {c1} | {c2} |")
print()

# ---- part 3 ----------------------------------------------------------------------------------
print("### 3. JIT cost")
print()
jb = load(f"{out}/jit/jit_bench.json")
if not jb:
    print(f"n/a ({read(f'{out}/jit/jit_bench.err', 'jit_bench.json missing')})")
else:
    B = {}
    for b in jb["benchmarks"]:
        parts = b["name"].split("/")
        kind, graph = parts[0], parts[1]
        thr = next((p.split(":")[1] for p in parts if p.startswith("threads:")), None)
        key = (kind, graph, thr)
        if b.get("error_occurred"):
            msg = b.get("error_message", "error")
            B[key] = ("n/a (2-D)" if "1-D" in msg else "n/a (" + msg[:80] + ")", None)
            continue
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        B[key] = (b["real_time"] * unit, b.get("kernels"))
    ctx = jb.get("context", {})
    print(f"`build/bench/jit_bench` (Google Benchmark; load average at its start "
          f"{', '.join(f'{x:.2f}' for x in ctx.get('load_avg', []))}). Compiles: mean of 3 "
          "cold compiles (fresh work dir and empty disk cache each), wall time; NVRTC: CUDA "
          "source generation + NVRTC to PTX (sm_80), no GPU needed; disk load: the kernel from "
          "a warm DiskCache into an empty in-memory cache (verify, write, dlopen), mean of 20; "
          "run: one `Executor::run` of the graph at 64 elements (host overhead; the math is "
          "negligible), so (unfused - fused) / (kernels removed) is the dispatch cost of a "
          "step. The spec of the first (only) region of each example graph.")
    print()
    print("| graph | host C++ cold compile ms | NVRTC cold compile ms | disk-cache load ms | "
          "run unfused µs (steps) T1 | run fused µs (steps) T1 | run unfused / fused µs T2 | "
          "host overhead per step µs (T1) |")
    print("|---|---|---|---|---|---|---|---|")
    graphs = []
    for (kind, graph, _) in B:
        if graph not in graphs:
            graphs.append(graph)
    for g in graphs:
        def v(kind, thr=None, fmt="{:.1f}"):
            x = B.get((kind, g, thr))
            if x is None:
                return "n/a", None, None
            if isinstance(x[0], str):
                return x[0], None, None
            return fmt.format(x[0]), x[0], x[1]
        hc, nv, dl = v("BM_CompileHost")[0], v("BM_CompileNvrtc")[0], v("BM_LoadDisk", fmt="{:.3f}")[0]
        us = lambda kind, thr: v(kind, thr, "{:.3f}") if not isinstance(
            B.get((kind, g, thr), ("",))[0], float) else (
            f"{B[(kind, g, thr)][0] * 1e3:.3f}", B[(kind, g, thr)][0] * 1e3, B[(kind, g, thr)][1])
        u1, u1v, u1k = us("BM_RunUnfused", "1")
        f1, f1v, f1k = us("BM_RunFused", "1")
        u2 = us("BM_RunUnfused", "2")[0]
        f2 = us("BM_RunFused", "2")[0]
        over = (f"{u1v / u1k:.3f}" if u1v is not None and u1k else "n/a")
        print(f"| {g} | {hc} | {nv} | {dl} | {u1} ({int(u1k) if u1k else '-'}) | "
              f"{f1} ({int(f1k) if f1k else '-'}) | {u2} / {f2} | {over} |")
    print()

# The peers' first call (trace + compile) in part 2's runs, for comparison.
firsts = {}
for path in sorted(glob.glob(f"{out}/peers/*.json")):
    for r in (load(path) or {}).get("records", []):
        if r.get("compile_s") is not None and r["n"] == (1 << SIZES[0]) and r["threads"] == 1:
            firsts.setdefault(r["tool"], []).append(f"{r['workload']} {r['compile_s'] * 1e3:.0f}")
if firsts:
    print(f"For comparison, the peers' first call at 2^{SIZES[0]}, 1 thread (trace + compile "
          "+ one run, ms; torch.compile with its FX graph cache off and an empty Inductor "
          "cache dir at the start of the run): " +
          "; ".join(f"{t}: {', '.join(v)}" for t, v in firsts.items()) + ".")
    print()

wall = {}
for line in read(f"{out}/jit/wall_ms.txt").splitlines():
    f = line.split()
    if len(f) == 4:
        wall[(f[0], f[1], f[2])] = int(f[3])
names = sorted({k[0] for k in wall})
if names:
    print("Empty vs warm kernel cache (HOTFUSE_CACHE_DIR), 2^20 examples, 2 threads, one run "
          "each: `all` = `hotfuse-run G --fusion all --iters 5 --warmup 0` (compile_ms_total: "
          "generate + compile, or load, before the first fused iteration; process wall time "
          "includes the unfused measurement and a 0.2 s warm-up floor); adaptive = "
          "`--fusion adaptive --sync-compile --iters 5 --warmup 0`: its first iteration "
          "(unfused, it never waits for a compile) and when its first fused iteration starts "
          "(after profiling and the compile or load).")
    print()
    print("| graph | all: kernel ms empty / warm | all: process wall ms empty / warm | "
          "adaptive: 1st iteration ms empty / warm | adaptive: 1st fused iteration at ms "
          "empty / warm | adaptive: wall ms empty / warm |")
    print("|---|---|---|---|---|---|")
    for g in names:
        def rep(c, s):
            return load(f"{out}/jit/{g}_{c}_{s}.json")

        def ck(s):
            r = rep("all", s)
            return f"{r['summary']['compile_ms_total']:.1f}" if r else "n/a"

        def first(s):
            r = rep("adaptive", s)
            it = (r or {}).get("iterations") or []
            return f"{it[0]['ms']:.2f}" if it else "n/a"

        def fused_at(s):
            r = rep("adaptive", s)
            if not r:
                return "n/a"
            kb = r["summary"]["kernels_before"]
            it = [i for i in r.get("iterations", []) if i["kernels"] < kb]
            return f"{it[0]['start_ms']:.0f}" if it else "never (kept unfused)"
        w = lambda c, s: str(wall.get((g, c, s), "n/a"))
        print(f"| {g} | {ck('empty')} / {ck('warm')} | {w('all', 'empty')} / {w('all', 'warm')} | "
              f"{first('empty')} / {first('warm')} | {fused_at('empty')} / {fused_at('warm')} | "
              f"{w('adaptive', 'empty')} / {w('adaptive', 'warm')} |")
    print()

# ---- part 4 ----------------------------------------------------------------------------------
print("### 4. Adaptive end to end: models and examples")
print()
print("ONNX models (models/export_models.py), 2 threads, their stored inputs; median of the "
      "per-run medians (bench/run_models.sh); planned MiB = report.json "
      "summary.peak_bytes_before -> peak_bytes_after (the plan's buffers, graph inputs not "
      "counted); onnxruntime: CPU provider, ORT_ENABLE_ALL, intra_op_num_threads 2, same model "
      "file and inputs (bench/ort_models.py).")
print()
print(read(f"{out}/models/table.md", "n/a (models/table.md missing)"))
ortd = load(f"{out}/models/ort.json")
if ortd and ortd.get("records"):
    v = ortd["records"][0].get("onnxruntime")
    if v:
        print(f"\nonnxruntime {v}.")
elif read(f"{out}/models/ort.err"):
    print(f"\nonnxruntime: n/a ({read(f'{out}/models/ort.err')[:200]})")
print()
print("Examples, 2 threads (the same runs as part 2):")
print()
print("| graph | N | kernels unfused -> all / adaptive | unfused ms | all ms | adaptive ms | "
      "planned MiB unfused -> all / adaptive |")
print("|---|---|---|---|---|---|---|")
mib = lambda b: f"{b / 2 ** 20:.1f}" if b is not None else "n/a"
for log2 in SIZES:
    for name in list(W.values()) + ["bias_activation"]:
        a, d = hf(name, log2, 2, "all"), hf(name, log2, 2, "adaptive")
        if not a:
            continue
        print(f"| {name} | 2^{log2} | {a['kernels_before']} -> {a['kernels_after']} / "
              f"{d['kernels_after'] if d else 'n/a'} | {a['unfused_ms']:.3f} | {f3(hf_ms(a))} | "
              f"{f3(hf_ms(d))} | {mib(a.get('peak_bytes_before'))} -> "
              f"{mib(a.get('peak_bytes_after'))} / {mib(d.get('peak_bytes_after') if d else None)} |")
