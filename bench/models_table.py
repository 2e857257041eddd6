#!/usr/bin/env python3
"""The table of a bench/models_vs_ort.sh log: per model, thread count and hotfuse binary, the
median over rounds of its median and p10 iteration times, onnxruntime's, and the ratios
hotfuse/onnxruntime of each round (each hotfuse line against the onnxruntime line after it,
run in the same minute), as Markdown.

    bench/models_table.py LOG [BINARY_SUBSTRING]

The p10 ratio compares the host's fast stretches (a shared machine's speed changes for
seconds at a time); the median ratio what a run saw, slow stretches included.
"""
import statistics as st
import sys
from collections import defaultdict


def main():
    log = sys.argv[1]
    want = sys.argv[2] if len(sys.argv) > 2 else ""
    rows = defaultdict(lambda: defaultdict(list))
    order = []
    pending = []  # hotfuse lines since the last onnxruntime line
    for line in open(log):
        p = line.split()
        # BIN MODEL TTHREADS MS ms MIB MiB p10 P10 ms
        if len(p) < 10 or p[4] != "ms" or p[7] != "p10":
            continue
        rec = (p[0], p[1], p[2], float(p[3]), int(p[5]), float(p[8]))
        if rec[0] != "onnxruntime":
            if want in rec[0]:
                pending.append(rec)
            continue
        for h in pending:
            key = (h[1], h[2], h[0])
            if key not in order:
                order.append(key)
            r = rows[key]
            r["hf"].append(h[3]), r["ort"].append(rec[3])
            r["hf10"].append(h[5]), r["ort10"].append(rec[5])
            r["ratio"].append(h[3] / rec[3]), r["ratio10"].append(h[5] / rec[5])
            r["mib"].append(h[4]), r["ort_mib"].append(rec[4])
        pending = []
    print("| model | threads | hotfuse | hotfuse ms (median / p10) | ORT ms (median / p10) "
          "| hotfuse/ORT, medians, each round | median | hotfuse/ORT, p10, each round | median "
          "| MiB hotfuse / ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in order:
        r = rows[key]
        med = lambda k: st.median(r[k])
        each = lambda k: ", ".join(f"{x:.2f}" for x in r[k])
        print(f"| {key[0]} | {key[1][1:]} | {key[2]} | {med('hf'):.2f} / {med('hf10'):.2f} "
              f"| {med('ort'):.2f} / {med('ort10'):.2f} | {each('ratio')} | **{med('ratio'):.2f}** "
              f"| {each('ratio10')} | **{med('ratio10'):.2f}** "
              f"| {max(r['mib'])} / {max(r['ort_mib'])} |")


if __name__ == "__main__":
    main()
