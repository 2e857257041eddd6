#!/usr/bin/env bash
# Configures and builds hotfuse into build/ (Release, Ninja). Uses the CUDA toolkit in
# /usr/local/cuda when present; the CPU-only build needs nothing from it.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cuda=()
[ -x /usr/local/cuda/bin/nvcc ] && cuda=(-DCUDAToolkit_ROOT=/usr/local/cuda)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" >/dev/null
cmake --build build -j "$(nproc)" "$@"
