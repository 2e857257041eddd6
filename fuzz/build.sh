#!/usr/bin/env bash
# Configures and builds the libFuzzer targets into build-fuzz/ with clang-14, AddressSanitizer
# and UndefinedBehaviorSanitizer at -O1 (docs/reliability.md). Only the fuzz targets and the
# libraries they link are built.
set -euo pipefail
cd "$(dirname "$0")/.."
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
  -DHOTFUSE_FUZZ=ON -DHOTFUSE_SANITIZE=address,undefined -DHOTFUSE_TESTS=OFF \
  -DHOTFUSE_BENCH=OFF -DHOTFUSE_VIEWER=OFF -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_onnx fuzz_graph_json fuzz_tensor_proto
