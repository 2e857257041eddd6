#!/usr/bin/env bash
# Runs a command that needs `hotfuse-run --backend cuda` only where there is a usable CUDA
# device; elsewhere exits 77 (CTest's SKIP_RETURN_CODE in tests/cuda.cmake) with
# hotfuse-run's own reason, so a machine without a GPU shows the test as skipped, not passed.
#
#   tests/cuda_or_skip.sh HOTFUSE_RUN COMMAND [ARGS...]
set -uo pipefail
run=$1
shift
# The backend is chosen before DIR is read: without a device this is the one refusal line.
why=$("$run" --check /nonexistent --backend cuda --fusion off 2>&1)
if grep -q -- '--backend cuda: ' <<<"$why"; then
  echo "skipped: ${why#hotfuse-run: --backend cuda: }"
  exit 77
fi
exec "$@"
