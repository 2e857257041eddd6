#!/usr/bin/env python3
"""Writes the node backend tests of the installed ONNX release (PyPI onnx, tools/test-venv.sh)
into OUT/node/<test>/, in the layout of Debian's libonnx-testdata: model.onnx and
test_data_set_N/{input,output}_K.pb. Debian ships the data of ONNX 1.12 (opsets up to 17);
this suite covers the newest opsets the release defines (tests/onnx_conformance.cmake).

    VENV/bin/python tests/onnx_node_suite.py OUT

Inputs and outputs that are not tensors (sequences, maps, optionals) are not written: the
importer refuses those models before it reads any data. Exit code 77 (CTest's skip code
here) when onnx cannot be imported. Writes into OUT/node.tmp and renames it at the end, so
an interrupted run never leaves a partial suite that looks complete.
"""
import os
import shutil
import sys

try:
    import onnx
    import onnx.backend.test.case.node as node_cases
    from onnx import TensorProto, numpy_helper
except ImportError as e:
    print(f"onnx_node_suite.py: skipped: {e} (tools/test-venv.sh installs onnx from PyPI)",
          file=sys.stderr)
    sys.exit(77)


def write_case(case, root):
    d = os.path.join(root, case.name)
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for i, (ins, outs) in enumerate(case.data_sets):
        sd = os.path.join(d, f"test_data_set_{i}")
        os.makedirs(sd)
        for kind, values, declared in (("input", ins, graph.input), ("output", outs, graph.output)):
            for k, v in enumerate(values):
                if not declared[k].type.HasField("tensor_type"):
                    continue
                t = v if isinstance(v, TensorProto) else numpy_helper.from_array(v, declared[k].name)
                with open(os.path.join(sd, f"{kind}_{k}.pb"), "wb") as f:
                    f.write(t.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = os.path.join(sys.argv[1], "node")
    stamp = os.path.join(sys.argv[1], "onnx_version")
    if os.path.isdir(out) and os.path.exists(stamp) and open(stamp).read() == onnx.__version__:
        print(f"onnx {onnx.__version__} node tests: up to date in {out}")
        return
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own divide-by-zero warnings
        cases = node_cases.collect_testcases()
    for case in cases:
        write_case(case, tmp)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    with open(stamp, "w") as f:
        f.write(onnx.__version__)
    print(f"onnx {onnx.__version__} (opset {onnx.defs.onnx_opset_version()}): "
          f"wrote {len(cases)} node tests to {out}")


if __name__ == "__main__":
    main()
