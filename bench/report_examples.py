#!/usr/bin/env python3
"""Turns bench/run_examples.sh's output folder into the markdown table of bench/RESULTS.md."""
import glob
import json
import os
import re
import sys

out = sys.argv[1]
W = {"abc": "W1", "ab_plus_c": "W2", "gelu_chain": "W3", "activation_chain": "W4",
     "adam": "W5", "layernorm": "W6", "bias_activation": "-"}
# Ideal bytes per element (inputs read once + outputs written once), as the peers count.
IDEAL = {"abc": 16, "ab_plus_c": 16, "gelu_chain": 8, "activation_chain": 8, "adam": 28,
         "layernorm": 8, "bias_activation": 8}

peers = {}
if os.path.exists(f"{out}/cpp.json"):
    for r in json.load(open(f"{out}/cpp.json"))["records"]:
        if r.get("median_s"):
            peers[(r["tool"], r["workload"], r["n"], r["threads"])] = r["median_s"] * 1e3

triad = {}
if os.path.exists(f"{out}/stream.txt"):
    for line in open(f"{out}/stream.txt"):
        f = line.split()  # kernel n threads reps best_GBs median_GBs best_us median_us
        if len(f) >= 5 and f[0] == "triad":
            triad[(int(f[1]), int(f[2]))] = float(f[4])

def report(name, log2, t, level):
    p = f"{out}/hf_{name}_{log2}_T{t}_{level}.json"
    return json.load(open(p))["summary"] if os.path.exists(p) else None

print("| workload | N | T | off ms | static ms | all ms | adaptive ms | kernels off -> all / adaptive |"
      " all GB/s | C++ hand-fused strict ms | C++ -ffast-math ms | all vs -ffast-math | compile ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for log2 in (20, 24):
    n = 1 << log2
    for name in W:
        for t in (1, 2):
            a, s = report(name, log2, t, "all"), report(name, log2, t, "static")
            ad = report(name, log2, t, "adaptive")
            if ad:
                ad_ms = f"{(ad['fused_ms'] or ad['unfused_ms']):.3f}"
                ad_k = f" / {ad['kernels_after']}"
            else:
                ad_ms, ad_k = "-", ""
            if not a:
                continue
            fused = a["fused_ms"] or a["unfused_ms"]
            gbps = IDEAL[name] * n / (fused * 1e-3) / 1e9
            strict = peers.get(("C++ fused -O3 -march=native", W[name], n, t))
            fast = peers.get(("C++ fused -O3 -march=native -ffast-math", W[name], n, t))
            ratio = f"{fused / fast:.2f}x" if fast else "-"
            fmt = lambda v: f"{v:.3f}" if v is not None else "-"
            print(f"| {name} ({W[name]}) | 2^{log2} | {t} | {a['unfused_ms']:.3f} | "
                  f"{fmt(s['fused_ms'] if s and s['fused_ms'] else (s or {}).get('unfused_ms'))} | "
                  f"{fused:.3f} | {ad_ms} | {a['kernels_before']} -> {a['kernels_after']}{ad_k} | "
                  f"{gbps:.1f} | "
                  f"{fmt(strict)} | {fmt(fast)} | {ratio} | {a['compile_ms_total']:.0f} |")
if triad:
    print()
    print("STREAM triad best-of-N (GB/s), same run: " +
          ", ".join(f"n=2^{k[0].bit_length()-1} T{k[1]}: {v:.1f}" for k, v in sorted(triad.items())))
