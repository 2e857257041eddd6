"""Writes an ONNX backend-test style directory (model.onnx, test_data_set_0/ and _1/) whose
graph is a chain of six cheap element-wise ops on 1M floats: memory-bound and large enough
that the adaptive session fuses it (by a margin of ~9x, no transcendental flops for a
probe taken on a loaded machine to misjudge), so `--check --fusion adaptive` is seen to
check the plan after its swaps.

    /usr/bin/python3 tests/make_check_model.py OUT_DIR    (exit 77: no onnx/numpy)
"""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # Debian's python3-onnx and python3-numpy
    print(f"skipped: {e}")
    sys.exit(77)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
shape = [1024, 1024]
half = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")
nodes = [
    helper.make_node("Mul", ["x", "x"], ["sq"]),
    helper.make_node("Add", ["sq", "x"], ["poly"]),
    helper.make_node("Mul", ["poly", "half"], ["scaled"]),
    helper.make_node("Max", ["scaled", "x"], ["t"]),
    helper.make_node("Sub", ["t", "x"], ["d"]),
    helper.make_node("Abs", ["d"], ["y"]),
]
graph = helper.make_graph(
    nodes, "chain",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    initializer=[half])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

onnx.save(model, f"{out}/model.onnx")
for k in range(2):  # two data sets: the session settles on the first
    x = np.random.default_rng(7 + k).uniform(-2, 2, shape).astype(np.float32)
    y = np.abs(np.maximum((x * x + x) * np.float32(0.5), x) - x).astype(np.float32)
    os.makedirs(f"{out}/test_data_set_{k}", exist_ok=True)
    for name, (vname, arr) in (("input_0", ("x", x)), ("output_0", ("y", y))):
        with open(f"{out}/test_data_set_{k}/{name}.pb", "wb") as f:
            f.write(numpy_helper.from_array(arr, vname).SerializeToString())
