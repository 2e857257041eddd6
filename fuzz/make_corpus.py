#!/usr/bin/python3
"""Regenerates the committed seed corpora in fuzz/corpus/<target>/ (docs/reliability.md).

    /usr/bin/python3 fuzz/make_corpus.py      (Debian's python3: it has onnx and numpy)

  graph_json    the example graphs in traces/graphs, and the hostile graphs of tests/data/hostile
  onnx          the small models of tests/onnx_models.py (one per importer feature), and the
                hostile models of tests/data/hostile (shapes whose counts overflow, ...)
  tensor_proto  every initializer and Constant value of those models, serialised alone,
                plus one tensor per encoding (raw, typed fields, external data)

Seeds are named by content hash, so regenerating changes nothing when nothing changed.
"""
import hashlib
import os
import shutil
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import external_data_helper, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import onnx_models  # noqa: E402


def write(target, data):
    d = os.path.join(ROOT, "fuzz", "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def main():
    shutil.rmtree(os.path.join(ROOT, "fuzz", "corpus"), ignore_errors=True)
    graphs = os.path.join(ROOT, "traces", "graphs")
    for name in sorted(os.listdir(graphs)):
        with open(os.path.join(graphs, name), "rb") as f:
            write("graph_json", f.read())
    # Hand-made hostile inputs (docs/reliability.md): seeds next to the fuzzer's mutations.
    hostile = os.path.join(ROOT, "tests", "data", "hostile")
    for name in sorted(os.listdir(hostile)):
        target = {".json": "graph_json", ".onnx": "onnx"}.get(os.path.splitext(name)[1])
        if target:
            with open(os.path.join(hostile, name), "rb") as f:
                write(target, f.read())
    tensors = []
    for name, fn in onnx_models.models_for_this_onnx().items():
        m = fn()
        write("onnx", m.SerializeToString())
        tensors += list(m.graph.initializer)
        for n in m.graph.node:
            tensors += [a.t for a in n.attribute if a.type == a.TENSOR]
    tensors += [
        helper.make_tensor("f", TP.FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0]),
        helper.make_tensor("h", TP.FLOAT16, [2], np.array([1, 2], np.float16).view(np.uint16)),
        helper.make_tensor("b", TP.BOOL, [3], [1, 0, 1]),
        helper.make_tensor("u", TP.UINT64, [1], [7]),
        helper.make_tensor("d", TP.DOUBLE, [1], [0.5]),
        numpy_helper.from_array(np.arange(6, dtype=np.int8).reshape(2, 3), "r"),
    ]
    ext = helper.make_tensor("e", TP.FLOAT, [4], np.zeros(4, np.float32).tobytes(), raw=True)
    external_data_helper.set_external_data(ext, "weights.bin", offset=0, length=16)
    ext.data_location = TP.EXTERNAL
    ext.ClearField("raw_data")
    tensors.append(ext)
    for t in tensors:
        write("tensor_proto", t.SerializeToString())


if __name__ == "__main__":
    main()
