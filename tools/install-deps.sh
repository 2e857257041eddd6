#!/usr/bin/env bash
# Installs the Debian packages hotfuse builds against, by name. Idempotent: it asks apt
# for nothing when every package is present, and runs `apt-get update` only when it must
# install. The CUDA toolkit is optional and expected in /usr/local/cuda.
set -euo pipefail

packages=(
  build-essential cmake ninja-build python3
  nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev libopenblas-dev
  libdnnl-dev  # oneDNN: Conv on the CPU (runtime/cpu/conv_onednn.cpp)
  libonnx-dev libprotobuf-dev protobuf-compiler
  libonnx-testdata  # ONNX backend-test data: the conformance sweep (tests/onnx_conformance.cmake)
  graphviz
  # fuzz/ (docs/reliability.md): clang with libFuzzer and the sanitizer runtimes.
  clang-14 libclang-rt-14-dev
  lld  # the sanitizer trees of tools/test.sh link with it: their links are several times GNU ld's
  # models/export_models.py (the real-model tests, tests/models.cmake): Debian's torch,
  # torchvision and onnx for /usr/bin/python3.
  python3-torch python3-torchvision python3-onnx
  # hotfuse-view (viewer/, docs/viewer.md): Dear ImGui, GLFW, Graphviz's libgvc, stb; Xvfb and
  # Mesa's software OpenGL for its headless screenshot test; DejaVu fonts for the UI.
  pkg-config libimgui-dev libglfw3-dev libgl-dev libgraphviz-dev libstb-dev
  xvfb xauth libgl1-mesa-dri fonts-dejavu-core
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
