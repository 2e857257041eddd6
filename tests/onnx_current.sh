#!/usr/bin/env bash
# The node suite of a current ONNX release (tests/onnx_conformance.cmake):
#
#   tests/onnx_current.sh generate VENV OUT       writes OUT/node with VENV's onnx
#   tests/onnx_current.sh summary OUT RUN KNOWN SAME [hotfuse-run options...]
#                                                 tests/onnx_conformance.sh on OUT/node,
#                                                 but for the tests whose files are all
#                                                 byte-identical to SAME/<name> (Debian's
#                                                 node tests, which run on their own)
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
    run=$1 known=$2 same=$3
    shift 3
    suite=$(mktemp -d)
    trap 'rm -rf "$suite"' EXIT
    identical=0
    for dir in "$out"/node/*/; do
      name=$(basename "$dir")
      if [ -d "$same/$name" ] && diff -rq "$dir" "$same/$name" >/dev/null 2>&1; then
        identical=$((identical + 1))
      else
        ln -s "$(realpath "$dir")" "$suite/$name"
      fi
    done
    echo "$identical tests left out: identical to $same's, which run on their own"
    bash "$(dirname "$0")/onnx_conformance.sh" "$run" "$suite" "$known" "$@"
    exit 0  # (a failing summary has exited with its status: set -e)
    ;;
esac
echo "usage: onnx_current.sh generate VENV OUT | summary OUT RUN KNOWN SAME [options]" >&2
exit 2
