#!/usr/bin/env python3
"""Writes small ONNX models that exercise the importer (runtime/io/onnx_*.cpp).

Not used by the test suite (tests/test_onnx_import.cpp builds its models in C++ and needs no
Python). This script is for cross-checking hotfuse against ONNX Runtime and for trying
`.onnx` files by hand:

    pip install onnx onnxruntime numpy
    python3 tests/onnx_models.py OUT_DIR [--reference | --test-data]

For every model it writes OUT_DIR/<name>.onnx (checked with onnx.checker). With
--reference it also runs the model in ONNX Runtime on deterministic inputs and writes
OUT_DIR/<name>.io/input_<k>.bin and output_<k>.bin: the raw little-endian elements in the
tensor's own element type (bool as one byte), in the model's input and output order. With
--test-data it writes OUT_DIR/<name>/model.onnx and test_data_set_0 instead, for
`hotfuse-run --check OUT_DIR/<name>`. Models of opsets newer than the installed onnx
defines are left out.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

MODELS = {}


def model(fn):
    MODELS[fn.__name__] = fn
    return fn


def make(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        # An output is a name (its type comes from shape inference) or (name, type, shape).
        [helper.make_tensor_value_info(*n) if isinstance(n, tuple)
         else helper.make_empty_tensor_value_info(n) for n in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="hotfuse tests/onnx_models.py")
    m.ir_version = 8
    # Output types as ONNX's shape inference gives them, then the full check.
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    types = {vi.name: vi.type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in m.graph.output:
        if not out.type.HasField("tensor_type"):
            out.type.CopyFrom(types[out.name])
    onnx.checker.check_model(m, full_check=True)
    return m


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


UNARY = ["Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "Erf", "Abs", "Neg", "Reciprocal",
         "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
         "Asinh", "Acosh", "Atanh", "Sign", "Softplus", "Softsign", "HardSwish", "Identity"]


@model
def unary_ops():
    # Inputs in [1.05, 1.95] keep every op in its domain (Acosh >= 1, Asin <= 1 need two
    # inputs: x for most, y = x - 1 in (0, 1) for the inverse trig/hyperbolic ones).
    nodes, outs = [], []
    for op in UNARY:
        src = "y" if op in ("Asin", "Acos", "Atanh") else "x"
        nodes.append(node(op, [src], [op.lower()]))
        outs.append(op.lower())
    nodes += [node("HardSigmoid", ["z"], ["hsig"], alpha=0.3, beta=0.4),
              node("LeakyRelu", ["z"], ["leaky"], alpha=0.1),
              node("Elu", ["z"], ["elu"], alpha=0.7),
              node("Selu", ["z"], ["selu"]),
              node("Celu", ["z"], ["celu"], alpha=1.5),
              node("ThresholdedRelu", ["z"], ["trelu"], alpha=0.5),
              node("Round", ["z"], ["round_z"]),
              node("Sign", ["z"], ["sign_z"])]
    outs += ["hsig", "leaky", "elu", "selu", "celu", "trelu", "round_z", "sign_z"]
    return make("unary_ops", nodes,
                [("x", TP.FLOAT, [4, 16]), ("y", TP.FLOAT, [4, 16]), ("z", TP.FLOAT, [64])], outs)


@model
def binary_broadcast():
    nodes = [node(op, ["a", "b"], [op.lower()]) for op in
             ["Add", "Sub", "Mul", "Div", "Max", "Min", "Less", "LessOrEqual", "Greater",
              "GreaterOrEqual", "Equal"]]
    nodes += [node("Mod", ["a", "b"], ["mod"], fmod=1),
              node("Abs", ["a"], ["abs_a"]),
              node("Pow", ["abs_a", "b"], ["pow"]),
              node("Where", ["c", "a", "b"], ["where"]),
              node("Sum", ["a", "b", "a"], ["sum"]),
              node("Mean", ["a", "b"], ["mean"]),
              node("PRelu", ["a", "slope"], ["prelu"])]
    outs = [n.output[0] for n in nodes if n.output[0] != "abs_a"]
    return make("binary_broadcast", nodes,
                [("a", TP.FLOAT, [2, 1, 4]), ("b", TP.FLOAT, [3, 1]), ("c", TP.BOOL, [2, 3, 1]),
                 ("slope", TP.FLOAT, [4])], outs)


@model
def integer_ops():
    nodes = [node("Div", ["a", "b"], ["div"]),
             node("Mod", ["a", "b"], ["mod"]),
             node("Mod", ["a", "b"], ["fmod"], fmod=1),
             node("Mul", ["a", "b"], ["mul"]),
             node("Neg", ["a"], ["neg"]),
             node("Clip", ["a", "lo", "hi"], ["clip"]),
             node("Cast", ["a"], ["as_float"], to=TP.FLOAT),
             node("Cast", ["f"], ["as_int"], to=TP.INT32),
             node("Cast", ["f"], ["as_bool"], to=TP.BOOL)]
    return make("integer_ops", nodes,
                [("a", TP.INT32, [16]), ("b", TP.INT32, [16]), ("f", TP.FLOAT, [16])],
                [n.output[0] for n in nodes],
                inits=[("lo", np.int32(-3)), ("hi", np.int32(4))])


@model
def reductions_opset11():
    nodes, outs = [], []
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
               "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"]:
        for keep in (0, 1):
            out = f"{op.lower()}_{keep}"
            src = "p" if op == "ReduceLogSum" else "x"
            nodes.append(node(op, [src], [out], axes=[1, -1], keepdims=keep))
            outs.append(out)
    nodes.append(node("ReduceMean", ["x"], ["mean_all"], keepdims=0))
    outs.append("mean_all")
    return make("reductions_opset11", nodes, [("x", TP.FLOAT, [2, 3, 4]), ("p", TP.FLOAT, [2, 3, 4])],
                outs, opset=11)


@model
def reductions_opset13():
    nodes = [node("ReduceSum", ["x", "axes"], ["sum"], keepdims=0),
             node("ReduceSum", ["x"], ["sum_all"], keepdims=1),
             node("ReduceSum", ["x"], ["noop"], noop_with_empty_axes=1),
             node("ReduceMax", ["x"], ["max"], axes=[0])]
    return make("reductions_opset13", nodes, [("x", TP.FLOAT, [2, 3, 4])],
                ["sum", "sum_all", "noop", "max"], inits=[("axes", np.int64([0, 2]))], opset=13)


@model
def softmax_opset11():
    nodes = [node("Softmax", ["x"], ["sm1"], axis=1), node("LogSoftmax", ["x"], ["lsm1"], axis=1),
             node("Softmax", ["x"], ["sm_default"])]
    return make("softmax_opset11", nodes, [("x", TP.FLOAT, [2, 3, 4])],
                ["sm1", "lsm1", "sm_default"], opset=11)


@model
def softmax_opset13():
    nodes = [node("Softmax", ["x"], ["sm"]), node("LogSoftmax", ["x"], ["lsm"], axis=1)]
    return make("softmax_opset13", nodes, [("x", TP.FLOAT, [2, 3, 4])], ["sm", "lsm"], opset=13)


@model
def layernorm():
    rng = np.random.default_rng(1)
    nodes = [node("LayerNormalization", ["x", "scale", "bias"], ["y", "mean", "inv"], epsilon=1e-3),
             node("LayerNormalization", ["x", "scale2"], ["y2"], axis=1)]
    return make("layernorm", nodes, [("x", TP.FLOAT, [2, 3, 64])], ["y", "mean", "inv", "y2"],
                inits=[("scale", rng.uniform(0.5, 1.5, 64).astype(np.float32)),
                       ("bias", rng.uniform(-1, 1, 64).astype(np.float32)),
                       ("scale2", rng.uniform(0.5, 1.5, (3, 64)).astype(np.float32))])


@model
def layernorm_f16():
    nodes = [node("LayerNormalization", ["x", "scale", "bias"], ["y"])]
    return make("layernorm_f16", nodes, [("x", TP.FLOAT16, [4, 32]), ("scale", TP.FLOAT16, [32]),
                                         ("bias", TP.FLOAT16, [32])], ["y"])


@model
def batchnorm_hswish():
    rng = np.random.default_rng(2)
    c = 8
    nodes = [node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], epsilon=1e-5),
             node("HardSwish", ["bn"], ["y"])]
    return make("batchnorm_hswish", nodes, [("x", TP.FLOAT, [2, c, 4, 4])], ["y"], opset=15,
                inits=[("s", rng.uniform(0.5, 2, c).astype(np.float32)),
                       ("b", rng.uniform(-1, 1, c).astype(np.float32)),
                       ("m", rng.uniform(-0.5, 0.5, c).astype(np.float32)),
                       ("v", rng.uniform(0.5, 2, c).astype(np.float32))])


@model
def mlp():
    rng = np.random.default_rng(3)
    nodes = [node("Gemm", ["x", "w1", "b1"], ["h"], transB=1, alpha=0.5, beta=2.0),
             node("Relu", ["h"], ["hr"]),
             node("MatMul", ["hr", "w2"], ["o"]),
             node("Add", ["o", "b2"], ["ob"]),
             node("Softmax", ["ob"], ["y"])]
    return make("mlp", nodes, [("x", TP.FLOAT, [4, 16])], ["y"],
                inits=[("w1", rng.normal(0, 0.3, (32, 16)).astype(np.float32)),
                       ("b1", rng.normal(0, 0.1, 32).astype(np.float32)),
                       ("w2", rng.normal(0, 0.3, (32, 10)).astype(np.float32)),
                       ("b2", rng.normal(0, 0.1, 10).astype(np.float32))])


@model
def matmul_shapes():
    nodes = [node("MatMul", ["a", "b"], ["ab"]), node("MatMul", ["v", "b2"], ["vb"]),
             node("MatMul", ["b2", "w"], ["bw"])]
    return make("matmul_shapes", nodes, [("a", TP.FLOAT, [2, 1, 3, 5]), ("b", TP.FLOAT, [4, 5, 2]),
                                         ("v", TP.FLOAT, [5]), ("b2", TP.FLOAT, [3, 5, 6]),
                                         ("w", TP.FLOAT, [6])], ["ab", "vb", "bw"])


@model
def shape_folding():
    # x.view(x.size(0), -1) as PyTorch exports it, then a transpose and an expand.
    nodes = [node("Shape", ["x"], ["shp"]),
             node("Gather", ["shp", "zero"], ["n"], axis=0),
             node("Unsqueeze", ["n", "axes0"], ["n1"]),
             node("Constant", [], ["m1"], value=numpy_helper.from_array(np.int64([-1]))),
             node("Concat", ["n1", "m1"], ["target"], axis=0),
             node("Reshape", ["x", "target"], ["flat"]),
             node("Transpose", ["flat"], ["t"], perm=[1, 0]),
             node("Shape", ["t"], ["tshape"]),
             node("ConstantOfShape", ["three"], ["ones"], value=numpy_helper.from_array(np.int64([1]))),
             node("Concat", ["ones", "tshape"], ["big"], axis=0),
             node("Slice", ["big", "s0", "s1"], ["target2"]),
             node("Expand", ["t", "target2"], ["e"]),
             node("Flatten", ["x"], ["f"], axis=2),
             node("Unsqueeze", ["x", "axes_u"], ["u"]),
             node("Squeeze", ["u", "axes0"], ["sq"])]
    return make("shape_folding", nodes, [("x", TP.FLOAT, [2, 3, 4])],
                [("flat", TP.FLOAT, [2, 12]), ("t", TP.FLOAT, [12, 2]),
                 ("e", TP.FLOAT, [1, 1, 12, 2]), "f", "sq"],
                inits=[("zero", np.int64(0)), ("axes0", np.int64([0])), ("three", np.int64([3])),
                       ("s0", np.int64([1])), ("s1", np.int64([5])),
                       ("axes_u", np.int64([0, 4]))], opset=13)


@model
def gelu_chain():
    nodes = [node("Div", ["x", "sqrt2"], ["xs"]), node("Erf", ["xs"], ["e"]),
             node("Add", ["e", "one"], ["e1"]), node("Mul", ["x", "e1"], ["xe"]),
             node("Mul", ["xe", "half"], ["y"])]
    return make("gelu_chain", nodes, [("x", TP.FLOAT, [1024])], ["y"],
                inits=[("sqrt2", np.float32(np.sqrt(2))), ("one", np.float32(1)),
                       ("half", np.float32(0.5))])


@model
def clip_opset7():
    nodes = [node("Clip", ["x"], ["y"], min=-0.5, max=0.75), node("Clip", ["x"], ["z"], max=0.25)]
    return make("clip_opset7", nodes, [("x", TP.FLOAT, [32])], ["y", "z"], opset=7)


# Opsets 18-23 and the ops decomposed around an index, Pad and the layout ops; a model whose
# opset the installed onnx does not define (Debian's 1.12 stops at 17) is not written.
@model
def reductions_opset18():
    nodes = [node("ReduceMean", ["x", "axes"], ["mean"]),
             node("ReduceMax", ["x", "axes"], ["max"], keepdims=0),
             node("ReduceL2", ["x"], ["l2_all"]),
             node("ReduceLogSumExp", ["x", "axes"], ["lse"]),
             node("ReduceMin", ["x"], ["noop"], noop_with_empty_axes=1)]
    return make("reductions_opset18", nodes, [("x", TP.FLOAT, [2, 3, 4])],
                ["mean", "max", "l2_all", "lse", "noop"], inits=[("axes", np.int64([0, 2]))],
                opset=18)


@model
def activations_opset20():
    nodes = [node("Gelu", ["x"], ["g"]), node("Gelu", ["x"], ["gt"], approximate="tanh"),
             node("Mish", ["x"], ["m"]), node("BitwiseAnd", ["a", "b"], ["band"]),
             node("BitwiseXor", ["a", "b"], ["bxor"]), node("BitwiseNot", ["a"], ["bnot"])]
    return make("activations_opset20", nodes,
                [("x", TP.FLOAT, [64]), ("a", TP.INT32, [16]), ("b", TP.INT32, [16])],
                ["g", "gt", "m", "band", "bxor", "bnot"], opset=20)


@model
def norms_opset21():
    c = 4
    nodes = [node("GroupNormalization", ["x", "gs", "gb"], ["gn"], num_groups=2, epsilon=1e-3),
             node("InstanceNormalization", ["x", "gs", "gb"], ["inorm"])]
    return make("norms_opset21", nodes, [("x", TP.FLOAT, [2, c, 3, 5])],
                [("gn", TP.FLOAT, [2, c, 3, 5]), ("inorm", TP.FLOAT, [2, c, 3, 5])],
                inits=[("gs", np.float32([0.5, 1, 1.5, -2])), ("gb", np.float32([0, 1, -1, 0.25]))],
                opset=21)


@model
def index_ops():
    nodes = [node("ArgMax", ["x"], ["amax"], axis=1),
             node("ArgMin", ["x"], ["amin"], axis=-1, keepdims=0, select_last_index=1),
             node("Hardmax", ["x"], ["hard"]),
             node("Trilu", ["x", "k"], ["up"]),
             node("Trilu", ["x"], ["low"], upper=0),
             node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["nll"], ignore_index=1),
             node("SoftmaxCrossEntropyLoss", ["x", "t"], ["sce", "logp"], reduction="none")]
    return make("index_ops", nodes, [("x", TP.FLOAT, [3, 4, 5]), ("t", TP.INT64, [3, 5])],
                ["amax", "amin", "hard", "up", "low", "nll", "sce", "logp"],
                inits=[("k", np.int64(1)), ("w", np.float32([0.5, 1, 2, 1.5]))], opset=14)


@model
def pad_and_layout():
    nodes = [node("Pad", ["x", "p1", "v"], ["pc"]),
             node("Pad", ["x", "p2"], ["pe"], mode="edge"),
             node("Pad", ["x", "p2"], ["pr"], mode="reflect"),
             node("Pad", ["x", "p3", "", "ax"], ["pw"], mode="wrap"),
             node("DepthToSpace", ["x"], ["d2s"], blocksize=2, mode="CRD"),
             node("SpaceToDepth", ["x"], ["s2d"], blocksize=2),
             node("Tile", ["x", "reps"], ["tile"]),
             node("OneHot", ["i", "depth", "onoff"], ["hot"], axis=1)]
    return make("pad_and_layout", nodes, [("x", TP.FLOAT, [1, 4, 4, 6]), ("i", TP.INT64, [3, 2])],
                ["pc", "pe", "pr", "pw", "d2s", "s2d", "tile", "hot"],
                inits=[("p1", np.int64([0, 1, -1, 2, 0, 0, 2, -1])), ("v", np.float32(0.5)),
                       ("p2", np.int64([0, 0, 2, 3, 0, 0, 1, 2])),
                       ("p3", np.int64([3, 4])), ("ax", np.int64([-1])),
                       ("reps", np.int64([2, 1, 1, 2])), ("depth", np.int64(5)),
                       ("onoff", np.float32([-1, 3]))], opset=19)


@model
def resize_nearest():
    # Whole factors in the modes that are a repeat (up) or a strided pick (down).
    nodes = [node("Resize", ["x", "", "s2"], ["up2"]),
             node("Resize", ["x", "", "s3"], ["up3"], coordinate_transformation_mode="asymmetric",
                  nearest_mode="floor"),
             node("Resize", ["x", "", "", "half"], ["down2"]),
             node("Resize", ["x", "", "", "half"], ["down2c"], nearest_mode="round_prefer_ceil"),
             node("Resize", ["x", "", "s13"], ["down3"], coordinate_transformation_mode="asymmetric")]
    return make("resize_nearest", nodes, [("x", TP.FLOAT, [1, 2, 4, 6])],
                ["up2", "up3", "down2", "down2c", "down3"],
                inits=[("s2", np.float32([1, 1, 2, 2])), ("s3", np.float32([1, 1, 3, 1])),
                       ("half", np.int64([1, 2, 2, 3])), ("s13", np.float32([1, 1, 1, 1 / 3]))],
                opset=13)


def random_input(rng, name, elem, shape):
    dt = helper.tensor_dtype_to_np_dtype(elem)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dt, np.integer) and name == "t":  # class indices of index_ops
        return rng.integers(0, 4, shape).astype(dt)
    if np.issubdtype(dt, np.integer) and name == "i":  # OneHot: negative and out of range too
        return rng.integers(-6, 7, shape).astype(dt)
    if np.issubdtype(dt, np.integer):
        v = rng.integers(-20, 21, shape).astype(dt)
        if name == "b":  # divisors: no zeros (integer division by zero is undefined)
            v[v == 0] = 3
        return v
    if name == "x" and shape == [4, 16]:  # unary_ops: x in [1.05, 1.95]
        return rng.uniform(1.05, 1.95, shape).astype(dt)
    if name == "y" and shape == [4, 16]:
        return rng.uniform(-0.95, 0.95, shape).astype(dt)
    if name == "z":  # ties for Round, zeros for Sign
        return (np.arange(64) / 4.0 - 8).astype(dt)
    if name == "p":
        return rng.uniform(0.1, 2, shape).astype(dt)
    return rng.uniform(-2, 2, shape).astype(dt)


def write_test_data(m, path):
    """OUT_DIR/<name>/model.onnx and test_data_set_0 with ONNX Runtime's outputs: a
    `hotfuse-run --check` directory."""
    from onnx import numpy_helper as nh
    import onnxruntime as ort
    rng = np.random.default_rng(12345)
    feeds = {}
    for vi in m.graph.input:
        tt = vi.type.tensor_type
        feeds[vi.name] = random_input(rng, vi.name, tt.elem_type, [d.dim_value for d in tt.shape.dim])
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    data = os.path.join(path, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(m, os.path.join(path, "model.onnx"))
    for k, vi in enumerate(m.graph.input):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(nh.from_array(feeds[vi.name], vi.name).SerializeToString())
    for k, (vi, v) in enumerate(zip(m.graph.output, outs)):
        with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
            f.write(nh.from_array(np.asarray(v), vi.name).SerializeToString())


def write_reference(m, path):
    import onnxruntime as ort
    rng = np.random.default_rng(12345)
    feeds = {}
    for vi in m.graph.input:
        tt = vi.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        feeds[vi.name] = random_input(rng, vi.name, tt.elem_type, shape)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    os.makedirs(path, exist_ok=True)
    for k, vi in enumerate(m.graph.input):
        np.ascontiguousarray(feeds[vi.name]).tofile(os.path.join(path, f"input_{k}.bin"))
    for k, v in enumerate(outs):
        np.ascontiguousarray(v).tofile(os.path.join(path, f"output_{k}.bin"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--reference", action="store_true",
                    help="also write inputs and ONNX Runtime's outputs next to each model")
    ap.add_argument("--test-data", action="store_true",
                    help="write OUT_DIR/<name>/ with test_data_set_0 from ONNX Runtime "
                         "(a hotfuse-run --check directory) instead")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, fn in models_for_this_onnx().items():
        m = fn()
        if args.test_data:
            write_test_data(m, os.path.join(args.out_dir, name))
            print(name, file=sys.stderr)
            continue
        onnx.save(m, os.path.join(args.out_dir, name + ".onnx"))
        if args.reference:
            write_reference(m, os.path.join(args.out_dir, name + ".io"))
        print(name, file=sys.stderr)


NEWER_OPSET = {"reductions_opset18": 18, "activations_opset20": 20, "norms_opset21": 21,
               "pad_and_layout": 19}


def models_for_this_onnx():
    """MODELS without those of opsets the installed onnx does not define."""
    newest = onnx.defs.onnx_opset_version()
    return {n: fn for n, fn in MODELS.items() if NEWER_OPSET.get(n, 0) <= newest}


if __name__ == "__main__":
    main()
