#!/usr/bin/env bash
# The Python test tooling from PyPI, in a venv of its own (never a dependency of hotfuse
# itself): onnx, whose backend-test generators write the node suite of a current ONNX
# release (tests/onnx_node_suite.py; Debian's libonnx-testdata stops at opset 17).
#
#   tools/test-venv.sh DIR     creates or updates the venv in DIR; idempotent, quiet when current
#
# Exits 1 with one line saying why when PyPI cannot be reached; the tests that need the
# venv then skip with that reason.
set -euo pipefail
dir=$1
requirements=(onnx==1.23.2)
stamp="$dir/.requirements"
if [ -x "$dir/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${requirements[*]}" ]; then
  exit 0
fi
/usr/bin/python3 -m venv "$dir"
if ! "$dir/bin/pip" install -q --disable-pip-version-check "${requirements[@]}" >"$dir/pip.log" 2>&1; then
  echo "test-venv: cannot install ${requirements[*]} from PyPI ($(tail -n1 "$dir/pip.log"))" >&2
  exit 1
fi
echo "${requirements[*]}" >"$stamp"
