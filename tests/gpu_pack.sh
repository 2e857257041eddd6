#!/usr/bin/env bash
# tools/gpu-pack.sh's pack starts on a machine that has nothing but what it carries
# (tests/gpu_pack.cmake): usage: gpu_pack.sh BUILD_DIR. Packs BUILD_DIR, unpacks it, and
# with `env -i` and LD_LIBRARY_PATH only into the pack: every binary finds every library
# it NEEDS, hotfuse-run starts and runs (on a GPU, or on the CPU saying why not), a GPU
# test binary runs (or skips with the runtime's reason) reading the carried tree through
# HOTFUSE_SOURCE_DIR; the pack stays under 48 MiB.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
b=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$root/tools/gpu-pack.sh" --no-build "$b" "$tmp/out" || fail "gpu-pack.sh failed"
bytes=$(stat -c %s "$tmp/out/pack.tar.xz")
[ "$bytes" -lt $((48 << 20)) ] || fail "the pack is $bytes bytes, over 48 MiB"
mkdir "$tmp/p" && tar -xJf "$tmp/out/pack.tar.xz" -C "$tmp/p" || fail "the pack does not unpack"
p=$tmp/p
[ -x "$p/src/tools/gpu-check.sh" ] && [ -f "$p/src/traces/graphs/abc.json" ] || fail "the tree is not in the pack"
bare() { (cd "$tmp" && env -i LD_LIBRARY_PATH="$p/lib" HOTFUSE_CACHE_DIR="$tmp/cache" TMPDIR="$tmp" "$@"); }
for f in "$p"/bin/*; do
  missing=$(bare ldd "$f" | grep 'not found' | grep -vE 'libcublas|libcudnn|libnvrtc|libcupti|libcudart')
  [ -z "$missing" ] || fail "$(basename "$f") misses: $missing"
done
out=$(bare "$p/bin/hotfuse-run" "$p/src/traces/graphs/abc.json" --backend auto --fusion off --iters 2 2>&1) ||
  fail "hotfuse-run from the pack: $out"
echo "$out" | grep -Eq '^backend auto: using (cpu \(.+\)|cuda \()' || fail "auto did not say where it ran: $out"
echo "$out" | grep -q '^nothing fused: kernels 2 -> 2' || fail "hotfuse-run did not run the graph: $out"
out=$(bare HOTFUSE_SOURCE_DIR="$p/src" "$p/bin/test_cuda_backend" --gtest_filter='CudaToolchain.*:CudaFusion.*' 2>&1) ||
  fail "test_cuda_backend from the pack: $out"
echo "$out" | grep -Eq '^\[  (PASSED|SKIPPED) ' || fail "test_cuda_backend ran no test: $out"
# The carried tree, not the configure-time one, is what the tests read.
out=$(bare HOTFUSE_SOURCE_DIR=/nonexistent "$p/bin/test_cuda_backend" --gtest_filter='CudaToolchain.KernelKeyDependsOnSpecArchAndFormat' 2>&1) &&
  fail "test_cuda_backend ignored HOTFUSE_SOURCE_DIR: $out"
echo "ok: $(du -h "$tmp/out/pack.tar.xz" | cut -f1) pack; $(ls "$p/bin" | wc -l) binaries and $(ls "$p/lib" | wc -l) libraries start with only the pack"
