#!/usr/bin/env bash
# The README's second command: build everything and run the whole test suite, then
#  - ThreadSanitizer: the adaptive session's and the concurrency tests (build-tsan),
#  - AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer: the test suite (build-asan),
#  - libFuzzer: each fuzz target for HOTFUSE_FUZZ_SECONDS (default 20) from its committed
#    seeds (build-fuzz, fuzz/run.sh; 0 skips it).
# The sanitizer trees are built without CUDA (the sanitizers link every library they are
# given, and libcuda is absent here). docs/reliability.md has what each costs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, for keeping the whole run inside CI's budget (docs/reliability.md).
start=$SECONDS
step() {  # <name> <command...>: its status, whether it passed or not
  local t=$SECONDS rc=0
  "${@:2}" || rc=$?
  echo "tools/test.sh: $1 took $((SECONDS - t)) s ($((SECONDS - start)) s so far)"
  return $rc
}
step build tools/build.sh
# PyPI test tooling (the current ONNX node suite); without PyPI those tests skip, saying so.
tools/test-venv.sh build/test-venv || true
step ctest ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"

sanitized_tree() {  # <dir> <sanitizers> <optimisation>
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTFUSE_SANITIZE="$2" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$3 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$3 -DNDEBUG" \
    -DHOTFUSE_BENCH=OFF -DHOTFUSE_VIEWER=OFF -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld >/dev/null
}

# -O1: a race is the same in scalar code, and the compile a third cheaper than at -O2.
sanitized_tree build-tsan thread -O1
step tsan-build cmake --build build-tsan -j "$(nproc)" --target test_session test_session_target \
  test_concurrency hotfuse-run
step tsan-ctest ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" -L tsan

# -O1, as AddressSanitizer's documentation advises: far cheaper to compile than -O2, and the
# tests it runs are short.
sanitized_tree build-asan address,undefined -O1
step asan-build cmake --build build-asan -j "$(nproc)"
step asan-ctest ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -L asan

seconds=${HOTFUSE_FUZZ_SECONDS:-20}
[ "$seconds" = 0 ] || step fuzz fuzz/run.sh "$seconds"
