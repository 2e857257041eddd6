#!/usr/bin/env bash
# The node suite of a current ONNX release (tests/onnx_conformance.cmake):
#
#   tests/onnx_current.sh generate VENV OUT       writes OUT/node with VENV's onnx
#   tests/onnx_current.sh summary OUT RUN KNOWN [hotfuse-run options...]
#                                                 tests/onnx_conformance.sh on OUT/node
#
# Each exits 77 (skipped) with the reason when what it needs is missing: the venv
# (tools/test-venv.sh VENV makes it; tools/test.sh does) or the generated suite.
set -euo pipefail
case $1 in
  generate)
    venv=$2 out=$3
    if [ ! -x "$venv/bin/python" ]; then
      echo "skipped: no test venv at $venv (tools/test-venv.sh $venv installs onnx from PyPI)"
      exit 77
    fi
    exec "$venv/bin/python" "$(dirname "$0")/onnx_node_suite.py" "$out"
    ;;
  summary)
    out=$2
    shift 2
    if [ ! -d "$out/node" ]; then
      echo "skipped: $out/node was not generated (see the onnx_current_generate test)"
      exit 77
    fi
    run=$1 known=$2
    shift 2
    exec bash "$(dirname "$0")/onnx_conformance.sh" "$run" "$out/node" "$known" "$@"
    ;;
esac
echo "usage: onnx_current.sh generate VENV OUT | summary OUT RUN KNOWN [options]" >&2
exit 2
