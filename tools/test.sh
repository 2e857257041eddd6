#!/usr/bin/env bash
# The README's second command: build everything, run the whole test suite, then the
# adaptive session's tests again under ThreadSanitizer (a second, smaller build, without
# CUDA: the sanitizer links every library it is given, and libcuda is absent here).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTFUSE_SANITIZE=thread \
  -DHOTFUSE_BENCH=OFF -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build build-tsan -j "$(nproc)" --target test_session
ctest --test-dir build-tsan --output-on-failure -L tsan
