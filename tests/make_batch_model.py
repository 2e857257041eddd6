"""Writes an ONNX backend-test style directory whose model has a symbolic batch dimension:
x [batch, 64] -> an element-wise chain with a broadcast bias, then a row LayerNorm-like
reduction (opset 18's ReduceMean with axes as an input), y [batch, 64]; three data sets at
batch 1, 4 and 16, outputs from NumPy. `hotfuse-run --check` must plan each batch size
separately and compile nothing after the first (tests/cli_shapes.sh).

    /usr/bin/python3 tests/make_batch_model.py OUT_DIR    (exit 77: no onnx/numpy)
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
rng = np.random.default_rng(11)
bias = rng.uniform(-1, 1, [64]).astype(np.float32)
inits = [numpy_helper.from_array(bias, "bias"),
         numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
         numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")]
nodes = [
    helper.make_node("Add", ["x", "bias"], ["a"]),
    helper.make_node("Tanh", ["a"], ["t"]),
    helper.make_node("Mul", ["t", "half"], ["h"]),
    helper.make_node("ReduceMean", ["h", "axes"], ["m"]),
    helper.make_node("Sub", ["h", "m"], ["y"]),
]
graph = helper.make_graph(
    nodes, "batch_chain",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 64])],
    initializer=inits)
# Debian's onnx 1.12 writes opset 18 models but its checker stops at 17: not checked here.
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
model.ir_version = 8
onnx.save(model, f"{out}/model.onnx")
for k, batch in enumerate((1, 4, 16)):
    x = rng.uniform(-2, 2, [batch, 64]).astype(np.float32)
    h = np.tanh(x + bias) * np.float32(0.5)
    y = (h - h.mean(axis=1, keepdims=True)).astype(np.float32)
    os.makedirs(f"{out}/test_data_set_{k}", exist_ok=True)
    for name, (vname, arr) in (("input_0", ("x", x)), ("output_0", ("y", y))):
        with open(f"{out}/test_data_set_{k}/{name}.pb", "wb") as f:
            f.write(numpy_helper.from_array(arr, vname).SerializeToString())
