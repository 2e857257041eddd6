#!/usr/bin/env python3
"""Fails unless GCC vectorises every loop of tests/vectorize_probe.cpp.

Usage: check_vectorized.py CXX SOURCE_DIR OBJECT. Compiles the probe as the kernels are
compiled (-O3 -march=native -fno-math-errno -fno-trapping-math -fno-tree-pre
-fno-loop-unroll-and-jam -ffp-contract=off, no -ffast-math)
with -fopt-info-vec-optimized and checks that each HF_PROBE line is reported as a vectorised
loop.
"""
import re
import subprocess
import sys

cxx, src, obj = sys.argv[1:4]
probe = f"{src}/tests/vectorize_probe.cpp"
cmd = [cxx, "-std=c++20", "-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math",
       "-fno-tree-pre", "-fno-loop-unroll-and-jam", "-ffp-contract=off", "-fopt-info-vec-optimized",
       f"-I{src}", "-c", probe, "-o", obj]
run = subprocess.run(cmd, capture_output=True, text=True)
if run.returncode != 0:
    sys.exit(f"probe failed to compile:\n{run.stderr}")
vectorized = {}  # line -> widest vector size reported
for m in re.finditer(r"vectorize_probe\.cpp:(\d+):\d+: optimized: loop vectorized using (\d+) byte",
                     run.stderr):
    line, size = int(m[1]), int(m[2])
    vectorized[line] = max(size, vectorized.get(line, 0))
missing = []
with open(probe) as f:
    for n, text in enumerate(f, 1):
        m = re.match(r"HF_PROBE(?:2|_EXPR)?\((\w+)[,)]", text)
        if m:
            size = vectorized.get(n)
            print(f"{m[1]:8} {'vectorised, ' + str(size) + ' byte vectors' if size else 'NOT vectorised'}")
            if not size:
                missing.append(m[1])
if missing:
    sys.exit(f"not vectorised: {' '.join(missing)}")
print(f"{len(vectorized)} loops vectorised")
