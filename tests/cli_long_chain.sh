#!/usr/bin/env bash
# A 100,000-node elementwise chain under --fusion all: planned, detected, fused and checked
# (issue 23, item 9). Graph::consumers scanned the whole graph, so planning and fusing were
# quadratic: 44 s unfused and over two minutes fused; so were building each region's
# validation graph (a whole-graph topological sort per region) and the merge's cycle check
# (a walk of everything downstream, per candidate pair). CTest's TIMEOUT (tests/cli.cmake)
# is the bound, with ample headroom for a loaded machine.
#
#   tests/cli_long_chain.sh HOTFUSE_RUN
set -euo pipefail
run=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 - "$dir/chain.json" <<'PY'
import json, sys
nodes, prev = [], "x"
for i in range(100000):
    nodes.append({"name": f"n{i}", "op": "Elemwise", "mode": "RELU" if i % 2 else "NEGATE",
                  "inputs": [prev]})
    prev = f"n{i}:0"
json.dump({"format": "hotfuse-graph", "version": 1, "name": "chain",
           "inputs": [{"name": "x", "dtype": "f32", "shape": [64]}], "nodes": nodes,
           "outputs": [prev]}, open(sys.argv[1], "w"))
PY
out=$("$run" "$dir/chain.json" --fusion all --iters 2 --warmup 1 --backend cpu)
echo "$out" | tail -n 1
echo "$out" | grep -q "kernels 100000 -> " || { echo "cli_long_chain: no fusion summary" >&2; exit 1; }
echo "$out" | grep -q "outputs match unfused" || { echo "cli_long_chain: outputs not checked" >&2; exit 1; }
