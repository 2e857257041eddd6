#!/usr/bin/env python3
"""Writes a synthetic dump of a MobileNet-like model (~300 nodes) with ONNX-style scoped names.

Usage: make_scoped_dump.py OUT_DIR   (committed as tests/data/viewer/scoped300/)

What hotfuse-run --dump writes for an ONNX model (docs/dumps.md), in small: before.dot,
after.dot and report.json (no trace.json: the graph view does not need one). Names are the
ONNX exporter's ("/features/features.3/conv/conv.1/conv.1.0/Conv/conv", weights
"onnx::Conv_517" without a scope), so the viewer's grouping by name scope, its middle
elision of long names and its layout at model scale can be tested and looked at without
the ONNX models (tests/viewer.cmake, tests/test_viewer_graph.cpp). Deterministic: the same
files every run. Op times are made up, shaped like a CPU MobileNetV2 profile.
"""
import json
import os
import random
import sys

BLOCKS = 23  # inverted residual blocks (MobileNetV2 has 17; more for ~300 nodes)


def main(out):
    rnd = random.Random(24)
    nodes = []  # dicts: id, name, op, shape, ms, scope-free weights have ms 0
    edges = []  # (from id, to id, shape)

    def node(name, op, shape, ms=0.0):
        nodes.append({"id": len(nodes), "name": name, "op": op, "shape": shape, "ms": ms})
        return len(nodes) - 1

    weight_no = [500]

    def weight(shape):
        weight_no[0] += 1
        return node(f"onnx::Conv_{weight_no[0]}", "Constant", shape)

    def conv_clip(scope, w_shape, out_shape, ms, clip=True):
        """Conv (+ weights) and optionally its ReLU6 (Clip: min, max, CLIP), as the importer splits them."""
        c = node(f"{scope}/Conv/conv", "Conv", out_shape, ms)
        edges.append((weight(w_shape), c, w_shape))
        last = c
        if clip:
            clip_scope = scope[: scope.rfind(".")] + ".2" if scope.endswith(".0") else scope
            lo = node(f"{clip_scope}/Clip/min", "Constant", "f32[]")
            hi = node(f"{clip_scope}/Clip/max", "Constant", "f32[]")
            cl = node(f"{clip_scope}/Clip/CLIP", "Elemwise CLIP", out_shape, ms * 0.3)
            edges.extend([(c, cl, out_shape), (lo, cl, "f32[]"), (hi, cl, "f32[]")])
            last = cl
        return c, last

    x = node("input", "Input", "f32[1,3,224,224]")
    t = node("input/to_nhwc", "Dimshuffle", "f32[1,224,224,3]", 0.24)
    edges.append((x, t, "f32[1,3,224,224]"))
    first, prev = conv_clip("/features/features.0/features.0.0", "f32[32,3,3,3]",
                            "f32[1,112,112,32]", 0.5)
    edges.append((t, first, "f32[1,224,224,3]"))
    size, ch = 112, 32
    for b in range(1, BLOCKS + 1):
        s = f"/features/features.{b}/conv"
        if b in (2, 4, 7, 14, 20):
            size //= 2
        out_ch = ch if b % 3 else ch + 16
        hid = ch * 6
        shape_h = f"f32[1,{size},{size},{hid}]"
        shape_o = f"f32[1,{size},{size},{out_ch}]"
        block_in = prev
        c0, a = conv_clip(f"{s}/conv.0/conv.0.0", f"f32[{hid},{ch},1,1]", shape_h,
                          rnd.uniform(0.08, 0.35))
        edges.append((prev, c0, f"f32[1,{size},{size},{ch}]"))
        c1, a2 = conv_clip(f"{s}/conv.1/conv.1.0", f"f32[{hid},1,3,3]", shape_h,
                           rnd.uniform(0.05, 0.2))
        edges.append((a, c1, shape_h))
        c2, _ = conv_clip(f"{s}/conv.2", f"f32[{out_ch},{hid},1,1]", shape_o,
                          rnd.uniform(0.08, 0.3), clip=False)
        edges.append((a2, c2, shape_h))
        prev = c2
        if out_ch == ch and b > 1:
            add = node(f"/features/features.{b}/Add/ADD", "Elemwise ADD", shape_o,
                       rnd.uniform(0.02, 0.06))
            edges += [(c2, add, shape_o), (block_in, add, shape_o)]
            prev = add
        ch = out_ch
    pool = node("/GlobalAveragePool/reduce_MEAN", "Reduce", f"f32[1,1,1,{ch}]", 0.05)
    edges.append((prev, pool, f"f32[1,{size},{size},{ch}]"))
    flat = node("/Flatten/Reshape", "Reshape", f"f32[1,{ch}]", 0.001)
    edges.append((pool, flat, f"f32[1,1,1,{ch}]"))
    gemm = node("/classifier/classifier.1/Gemm/matmul", "MatMul", "f32[1,1000]", 0.16)
    bias = node("/classifier/classifier.1/Gemm/bias", "Elemwise ADD", "f32[1,1000]", 0.002)
    wt = node("classifier.1.weight", "Constant", f"f32[{ch},1000]")
    bt = node("classifier.1.bias", "Constant", "f32[1000]")
    edges += [(flat, gemm, f"f32[1,{ch}]"), (wt, gemm, f"f32[{ch},1000]"),
              (gemm, bias, "f32[1,1000]"), (bt, bias, "f32[1000]")]
    y = node("output", "Output", "f32[1,1000]")
    edges.append((bias, y, "f32[1,1000]"))

    # Regions: each expansion Conv with its Clip; most kept, some reverted or rejected.
    regions = []
    for n in nodes:
        if n["op"] == "Elemwise CLIP" and "conv.0.2" in n["name"]:
            conv = next(e[0] for e in edges if e[1] == n["id"] and nodes[e[0]]["op"] == "Conv")
            k = len(regions)
            state = "reverted" if k % 5 == 3 else "rejected" if k % 7 == 6 else "swapped"
            regions.append({"id": k, "conv": conv, "clip": n["id"], "state": state})
    total = sum(n["ms"] for n in nodes)

    def label(n, share):
        if n["op"] in ("Input", "Output"):
            return f'{n["name"]}\\n{n["shape"]}'
        lines = [n["name"], n["op"], n["shape"]]
        if n["ms"] > 0:
            lines.append(f'{n["ms"] * 1000:.1f} us, {share * 100:.1f}%')
        return "\\n".join(lines)

    def node_line(n, share, indent="  "):
        if n["op"] == "Input":
            return f'{indent}in0 [shape=ellipse, fillcolor="#e3f2fd", label="{label(n, 0)}"];'
        if n["op"] == "Output":
            return f'{indent}out0 [shape=ellipse, fillcolor="#f3e5f5", label="{label(n, 0)}"];'
        extra = ', fillcolor="#eeeeee", fontsize=8, color="#9e9e9e"' if n["op"] == "Constant" else ""
        return f'{indent}n{n["id"]} [label="{label(n, share)}"{extra}];'

    def dot_name(n):
        return "in0" if n["op"] == "Input" else "out0" if n["op"] == "Output" else f'n{n["id"]}'

    head = ('digraph hotfuse {\n'
            '  graph [rankdir=TB, fontname="Helvetica", fontsize=12, labelloc=t, labeljust=l, '
            'nodesep=0.25, ranksep=0.35, label="{title}"];\n'
            '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", '
            'fontsize=10];\n'
            '  edge [fontname="Helvetica", fontsize=8, color="#616161", fontcolor="#424242"];\n')
    saved = sum(nodes[r["clip"]]["ms"] * 0.9 for r in regions if r["state"] == "swapped")
    after_ms = total - saved
    speedup = total / after_ms

    # before.dot
    lines = [head.replace("{title}", f"'scoped300' as imported: {len(nodes)} nodes, "
                          f"{total:.3f} ms per iteration\\nunfused profile (synthetic)")]
    for n in nodes:
        lines.append(node_line(n, n["ms"] / total))
    for a, b, s in edges:
        lines.append(f'  {dot_name(nodes[a])} -> {dot_name(nodes[b])} [label="{s}"];')
    lines.append("}")
    with open(os.path.join(out, "before.dot"), "w") as f:
        f.write("\n".join(lines) + "\n")

    # after.dot: kept regions become one fused node in a green cluster; the others keep
    # their nodes in a dashed (reverted) or dotted (rejected) cluster.
    fused_id = {}
    replaced = {}
    next_id = len(nodes)
    for r in regions:
        if r["state"] == "swapped":
            fused_id[r["id"]] = next_id
            replaced[r["conv"]] = replaced[r["clip"]] = next_id
            next_id += 1
    lines = [head.replace("{title}", f"'scoped300' as executed: {total:.3f} ms -> "
                          f"{after_ms:.3f} ms per iteration ({speedup:.2f}x)\\n"
                          "phase steady (synthetic)")]
    in_region = {}
    for r in regions:
        if r["state"] != "swapped":
            in_region[r["conv"]] = in_region[r["clip"]] = r
    style = {"swapped": ("kept", 'style="rounded,filled,bold", color="#2e7d32", fillcolor="#e8f5e9"'),
             "reverted": ("reverted", 'style="dashed", color="#c62828"'),
             "rejected": ("rejected", 'style="dotted", color="#9e9e9e"')}
    for r in regions:
        kind, st = style[r["state"]]
        lines.append(f'  subgraph cluster_{kind}_{r["id"]} {{')
        lines.append(f'    graph [{st}, fontsize=10, label="region {r["id"]}: {r["state"]}"];')
        if r["state"] == "swapped":
            conv = nodes[r["conv"]]
            ms = conv["ms"] + nodes[r["clip"]]["ms"] * 0.1
            lines.append(f'    n{fused_id[r["id"]]} [label="fused_{conv["name"]}\\nFused Conv+CLIP\\n'
                         f'{conv["shape"]}\\n{ms * 1000:.1f} us, {ms / after_ms * 100:.1f}%", '
                         'peripheries=2, color="#2e7d32"];')
        else:
            for i in (r["conv"], r["clip"]):
                lines.append(node_line(nodes[i], nodes[i]["ms"] / after_ms, "    "))
        lines.append("  }")
    for n in nodes:
        if n["id"] in replaced or n["id"] in in_region:
            continue
        if n["op"] == "Constant" and all(replaced.get(b) is not None and nodes[b]["op"] == "Elemwise CLIP"
                                         for a, b, _ in edges if a == n["id"]):
            continue  # the Clip bounds were folded into the fused kernel
        lines.append(node_line(n, n["ms"] / after_ms))
    seen = set()
    kept_constants = {n["id"] for n in nodes if n["op"] != "Constant" or any(
        replaced.get(b) is None or nodes[b]["op"] != "Elemwise CLIP" for a, b, _ in edges if a == n["id"])}
    for a, b, s in edges:
        if a not in kept_constants:
            continue
        ra, rb = replaced.get(a), replaced.get(b)
        fa = f"n{ra}" if ra is not None else dot_name(nodes[a])
        fb = f"n{rb}" if rb is not None else dot_name(nodes[b])
        if fa == fb or (fa, fb) in seen:
            continue
        seen.add((fa, fb))
        lines.append(f'  {fa} -> {fb} [label="{s}"];')
    lines.append("}")
    with open(os.path.join(out, "after.dot"), "w") as f:
        f.write("\n".join(lines) + "\n")

    # report.json: the rows the viewer colours nodes and tells shares with.
    def row(n, ms, region=-1, fused=False, name=None, node_id=None, op=None):
        r = {"node": name or n["name"], "node_id": n["id"] if node_id is None else node_id,
             "op": op or n["op"], "time_ms": round(ms, 4)}
        if region >= 0:  # the defaults are left out: the file stays small
            r.update(region=region, fused=fused)
        return r
    ops = [row(n, n["ms"]) for n in nodes if n["ms"] > 0]
    ops_after = []
    for n in nodes:
        if n["ms"] > 0 and n["id"] not in replaced:
            ops_after.append(row(n, n["ms"]))
    for r in regions:
        if r["state"] == "swapped":
            conv = nodes[r["conv"]]
            ops_after.append(row(conv, conv["ms"] + nodes[r["clip"]]["ms"] * 0.1, r["id"], True,
                                 "fused_" + conv["name"], fused_id[r["id"]], "Fused"))
    report = {
        "summary": {"graph": "scoped300", "fusion": "adaptive", "phase": "steady",
                    "unfused_ms": round(total, 6), "fused_ms": round(after_ms, 6),
                    "speedup": round(speedup, 6), "kernels_before": len(ops),
                    "kernels_after": len(ops_after), "regions_detected": len(regions),
                    "regions_selected": len(regions),
                    "regions_kept": sum(r["state"] == "swapped" for r in regions),
                    "regions_reverted": sum(r["state"] == "reverted" for r in regions),
                    "regions_failed": 0, "iterations": 0},
        "ops": ops,
        "ops_after": ops_after,
        "regions": [{"id": r["id"], "state": r["state"], "node_ids": [r["conv"], r["clip"]],
                     "nodes": [nodes[r["conv"]]["name"], nodes[r["clip"]]["name"]]}
                    for r in regions],
    }
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    print(f"{out}: {len(nodes)} nodes, {len(edges)} edges, {len(regions)} regions")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
