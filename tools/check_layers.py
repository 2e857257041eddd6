#!/usr/bin/env python3
"""Fails when an #include "folder/..." line points from a layer to one above it.

Usage: check_layers.py [SOURCE_DIR]. Scans the *.cpp, *.h, *.cu and *.cuh files of every
folder in LAYERS; a file may include its own folder and any folder of a lower layer, not a
peer in its own layer (the CPU and CUDA backends stay independent) nor anything above.
CMakeLists.txt builds one library per layer folder in the same order.
"""
import os
import re
import sys

# Bottom to top. The backends implement runtime/exec's Backend interface, so execution sits
# below them; the op table is part of the IR, and runtime/ops is only the math kernels
# compile.
LAYERS = [
    ["runtime/ops"],
    ["runtime/ir"],
    ["runtime/exec"],
    ["runtime/cpu", "runtime/cuda"],
    ["runtime/io"],
    ["profiler"],
    ["fusion"],
    ["session"],
    ["dump"],
    ["tools", "viewer"],
    ["tests", "bench", "fuzz"],
]
LEVEL = {folder: i for i, layer in enumerate(LAYERS) for folder in layer}
ROOTS = {folder.split("/")[0] for folder in LEVEL}

INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')


def folder_of(path):
    """The layer folder of a repository path, or None for a path outside the layers."""
    parts = path.split("/")
    if parts[0] not in ROOTS or len(parts) < 2:
        return None
    return "/".join(parts[:2]) if parts[0] == "runtime" else parts[0]


def problems(root):
    for top in sorted(ROOTS):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".cpp", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                src = folder_of(path)
                if src not in LEVEL:
                    yield f"{path}: not in a layer folder (tools/check_layers.py LAYERS)"
                    continue
                with open(os.path.join(root, path), errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or folder_of(m[1]) is None:
                            continue
                        inc, dst = m[1], folder_of(m[1])
                        if dst == src:
                            continue
                        if dst not in LEVEL:
                            yield f"{path}:{n}: includes {inc}, outside every layer folder"
                        elif LEVEL[dst] >= LEVEL[src]:
                            where = "a peer of" if LEVEL[dst] == LEVEL[src] else "above"
                            yield f"{path}:{n}: includes {inc}: {dst} is {where} {src}"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = list(problems(root))
    for p in found:
        print(p)
    if found:
        print(f"{len(found)} include(s) against the layers (bottom to top): " +
              " < ".join("{" + ", ".join(layer) + "}" for layer in LAYERS))
        return 1
    print("includes follow the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
