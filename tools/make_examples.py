#!/usr/bin/env python3
"""Writes the example graphs (native JSON, docs/graph-format.md).

The workloads are those of ../shared/bench/peers (W1-W6) plus a broadcast-heavy
bias+activation, so hotfuse and the peer tools run the same math:

  python3 tools/make_examples.py traces/graphs          # 2^20 elements (committed)
  python3 tools/make_examples.py /tmp/g --log2 24       # benchmark size
"""
import argparse
import json
import math
import os


class Builder:
    def __init__(self, name):
        self.g = {"format": "hotfuse-graph", "version": 1, "name": name,
                  "inputs": [], "nodes": [], "outputs": []}
        self.count = 0

    def input(self, name, shape, init=None, dtype="f32"):
        entry = {"name": name, "dtype": dtype, "shape": list(shape)}
        if init:
            entry["init"] = list(init)
        self.g["inputs"].append(entry)
        return name

    def _node(self, op, inputs, name, mode=None, attrs=None):
        self.count += 1
        name = name or f"{(mode or op).lower()}{self.count}"
        node = {"name": name, "op": op}
        if mode:
            node["mode"] = mode
        if attrs:
            node["attrs"] = attrs
        node["inputs"] = list(inputs)
        node["outputs"] = [name]
        self.g["nodes"].append(node)
        return name

    def ew(self, mode, *inputs, name=None):
        return self._node("Elemwise", inputs, name, mode=mode)

    def const(self, value, name=None):
        return self._node("Constant", [], name or f"c{self.count + 1}",
                          attrs={"dtype": "f32", "shape": [], "value": [value]})

    def op(self, op, *inputs, name=None, **attrs):
        return self._node(op, inputs, name, attrs=attrs)

    def output(self, *names):
        self.g["outputs"] += names
        return self.g


def abc(n):
    b = Builder("abc")
    a, bb, c = (b.input(k, [n], [-2, 2]) for k in "abc")
    return b.output(b.ew("MUL", b.ew("MUL", a, bb, name="ab"), c, name="y"))


def ab_plus_c(n):
    b = Builder("ab_plus_c")
    a, bb, c = (b.input(k, [n], [-2, 2]) for k in "abc")
    return b.output(b.ew("ADD", b.ew("MUL", a, bb, name="ab"), c, name="y"))


def gelu_chain(n):
    # 0.5 * x * (1 + erf(x / sqrt(2))), as separate ops (what an exporter emits).
    b = Builder("gelu_chain")
    x = b.input("x", [n], [-3, 3])
    t = b.ew("MUL", x, b.const(1 / math.sqrt(2), "inv_sqrt2"), name="scaled")
    t = b.ew("ERF", t, name="erf")
    t = b.ew("ADD", t, b.const(1.0, "one"), name="one_plus")
    t = b.ew("MUL", x, t, name="x_times")
    return b.output(b.ew("MUL", t, b.const(0.5, "half"), name="y"))


def activation_chain(n):
    # tanh(sigmoid(x*1.1 + 0.3) * x - 0.2) * exp(-x*x) + relu(x)
    b = Builder("activation_chain")
    x = b.input("x", [n], [-3, 3])
    t = b.ew("MUL", x, b.const(1.1, "k1_1"), name="mul_1_1")
    t = b.ew("ADD", t, b.const(0.3, "k0_3"), name="add_0_3")
    t = b.ew("SIGMOID", t, name="sigmoid")
    t = b.ew("MUL", t, x, name="gate")
    t = b.ew("SUB", t, b.const(0.2, "k0_2"), name="sub_0_2")
    t = b.ew("TANH", t, name="tanh")
    e = b.ew("MUL", x, x, name="x2")
    e = b.ew("NEGATE", e, name="neg_x2")
    e = b.ew("EXP", e, name="gauss")
    t = b.ew("MUL", t, e, name="damped")
    r = b.ew("RELU", x, name="relu")
    return b.output(b.ew("ADD", t, r, name="y"))


def adam(n):
    # m' = 0.9 m + 0.1 g; v' = 0.999 v + 0.001 g^2; p' = p - 0.001 (m'/bc1) / (sqrt(v'/bc2) + 1e-8)
    t = 10
    bc1, bc2 = 1 - 0.9 ** t, 1 - 0.999 ** t
    b = Builder("adam")
    p = b.input("p", [n], [-2, 2])
    g = b.input("g", [n], [-0.3, 0.3])
    m = b.input("m", [n], [-0.03, 0.03])
    v = b.input("v", [n], [0, 0.01])
    m2 = b.ew("ADD", b.ew("MUL", m, b.const(0.9, "beta1"), name="m_decay"),
              b.ew("MUL", g, b.const(0.1, "one_minus_beta1"), name="g_scaled"), name="m_new")
    g2 = b.ew("MUL", g, g, name="g_sq")
    v2 = b.ew("ADD", b.ew("MUL", v, b.const(0.999, "beta2"), name="v_decay"),
              b.ew("MUL", g2, b.const(0.001, "one_minus_beta2"), name="g_sq_scaled"),
              name="v_new")
    mhat = b.ew("TRUE_DIV", m2, b.const(bc1, "bias_corr1"), name="m_hat")
    vhat = b.ew("TRUE_DIV", v2, b.const(bc2, "bias_corr2"), name="v_hat")
    den = b.ew("ADD", b.ew("SQRT", vhat, name="sqrt_v"), b.const(1e-8, "eps"), name="denom")
    step = b.ew("MUL", b.ew("TRUE_DIV", mhat, den, name="ratio"), b.const(0.001, "lr"),
                name="step")
    p2 = b.ew("SUB", p, step, name="p_new")
    return b.output(p2, m2, v2)


def layernorm(n, d=1024):
    b = Builder("layernorm")
    rows = n // d
    x = b.input("x", [rows, d], [-2, 2])
    w = b.input("w", [d], [0.5, 1.5])
    bias = b.input("b", [d], [-0.2, 0.2])
    mean = b.op("Reduce", x, name="mean", mode="MEAN", axes=[-1], keepdims=1)
    xc = b.ew("SUB", x, mean, name="centered")
    var = b.op("Reduce", b.ew("MUL", xc, xc, name="sq"), name="var", mode="MEAN", axes=[-1],
               keepdims=1)
    rstd = b.op("PowC", b.ew("ADD", var, b.const(1e-5, "eps"), name="var_eps"), name="rstd",
                exponent=-0.5)
    y = b.ew("MUL", xc, rstd, name="normed")
    y = b.ew("MUL", y, w, name="scaled")
    return b.output(b.ew("ADD", y, bias, name="y"))


def bias_activation(n, c=64, h=32):
    # NCHW activations with per-channel scale and bias (a folded BatchNorm), then h-swish.
    b = Builder("bias_activation")
    w = n // (8 * c * h)
    x = b.input("x", [8, c, h, w], [-4, 4])
    scale = b.input("scale", [c, 1, 1], [0.5, 1.5])
    shift = b.input("shift", [c, 1, 1], [-0.5, 0.5])
    t = b.ew("MUL", x, scale, name="scaled")
    t = b.ew("ADD", t, shift, name="shifted")
    return b.output(b.ew("H_SWISH", t, name="y"))


def dumps(g):
    """One input or node per line: readable, and diffs stay small."""
    line = lambda x: json.dumps(x, separators=(", ", ": "))
    out = ["{"]
    for key in ("format", "version", "name"):
        out.append(f'  "{key}": {line(g[key])},')
    for key in ("inputs", "nodes"):
        out.append(f'  "{key}": [')
        out.append(",\n".join("    " + line(x) for x in g[key]))
        out.append("  ],")
    out.append(f'  "outputs": {line(g["outputs"])}')
    out.append("}")
    return "\n".join(out) + "\n"


EXAMPLES = [abc, ab_plus_c, gelu_chain, activation_chain, adam, layernorm, bias_activation]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--log2", type=int, default=20, help="elements per tensor = 2^LOG2 (>= 15)")
    args = ap.parse_args()
    if args.log2 < 15:
        ap.error("--log2 must be at least 15 (the layouts need 2^15 elements)")
    os.makedirs(args.outdir, exist_ok=True)
    for make in EXAMPLES:
        g = make(1 << args.log2)
        path = os.path.join(args.outdir, g["name"] + ".json")
        with open(path, "w") as f:
            f.write(dumps(g))
        print(path)


if __name__ == "__main__":
    main()
