#!/usr/bin/env bash
# Packs what a GPU machine without package registries needs to check hotfuse's CUDA path
# (docs/cuda.md): hotfuse-run and the test_cuda_* binaries, stripped; the shared libraries
# they NEED that are neither the C/C++ runtime nor CUDA's (OpenBLAS, oneDNN, protobuf,
# onnx_proto, gomp, gfortran, quadmath, OpenCL, zlib...); the working tree's tracked files
# (the tests read traces/ and tests/data through $HOTFUSE_SOURCE_DIR, and tools/gpu-check.sh
# is among them). CUDA's libraries are not packed: the GPU machine has them, and
# tools/gpu-check.sh puts them on LD_LIBRARY_PATH.
#
# Usage: tools/gpu-pack.sh [--no-build] [BUILD_DIR [OUT_DIR]]
#   BUILD_DIR (default build) is first built as tools/build.sh builds it (Release, CUDA),
#   unless --no-build; OUT_DIR (default .gpupack, ignored by git) receives pack.tar.xz.
# Then, on the GPU machine, from OUT_DIR's parent:
#   mkdir -p /tmp/hfpack && tar -xJf .gpupack/pack.tar.xz -C /tmp/hfpack && bash /tmp/hfpack/src/tools/gpu-check.sh
# Exit code 2 when BUILD_DIR has no CUDA backend.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=1
[ "${1:-}" = --no-build ] && { build=0; shift; }
b=${1:-$root/build}
out=${2:-$root/.gpupack}
if [ $build = 1 ]; then
  [ "$b" = "$root/build" ] || { echo "gpu-pack.sh: builds only build/; give --no-build for $b" >&2; exit 2; }
  "$root/tools/build.sh" --target hotfuse-run test_cuda_backend test_cuda_session \
    test_cuda_memory test_cuda_nn_ops >/dev/null
fi
b=$(cd "$b" && pwd)
[ -f "$b/libhf_cuda.a" ] || { echo "gpu-pack.sh: $b has no CUDA backend (was the CUDA toolkit found?)" >&2; exit 2; }
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$b/CMakeCache.txt" ||
  echo "gpu-pack.sh: note: $b is not a Release build; timings from this pack mean little" >&2

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/src" "$out"
cp "$b/hotfuse-run" "$b"/tests/test_cuda_backend "$b"/tests/test_cuda_session \
   "$b"/tests/test_cuda_memory "$b"/tests/test_cuda_nn_ops "$stage/bin/"
strip "$stage"/bin/*
# What the binaries NEED beyond what every Linux has (libc, libm, libstdc++, libgcc_s, the
# loader) and beyond CUDA (the GPU machine's toolkit and wheels), with their own needs.
for f in "$stage"/bin/*; do ldd "$f"; done | awk '/=> \// {print $3}' | sort -u | while read -r so; do
  case "$(basename "$so")" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
    libcublas*|libcudnn*|libnvrtc*|libcupti*|libcudart*|libcuda.so*|libnvJitLink*) ;;
    *) cp -L "$so" "$stage/lib/" ;;
  esac
done
# The working tree as git sees it: tracked files as they are now, and new ones not ignored.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$stage/src"
git -C "$root" rev-parse --short HEAD > "$stage/COMMIT" 2>/dev/null || echo unknown > "$stage/COMMIT"
git -C "$root" diff --quiet HEAD 2>/dev/null || echo "$(cat "$stage/COMMIT") + uncommitted edits" > "$stage/COMMIT"
tar -C "$stage" -cf - bin lib src COMMIT | xz -T2 -3 > "$out/pack.tar.xz.tmp"
mv "$out/pack.tar.xz.tmp" "$out/pack.tar.xz"
echo "gpu-pack.sh: $out/pack.tar.xz ($(du -h "$out/pack.tar.xz" | cut -f1); $(ls "$stage/bin" | wc -l) binaries, $(ls "$stage/lib" | wc -l) libraries, $(cat "$stage/COMMIT"))"
