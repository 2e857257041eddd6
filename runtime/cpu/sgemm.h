// Row-major C[m x n] = op(A)[m x k] * op(B)[k x n] through OpenBLAS, split over the CPU
// backend's pool.
//
// Why not OpenBLAS's own threads: they spin-wait between calls next to the pool's spinning
// workers, and on a busy 2-core machine some processes then ran 20x slower for their whole
// life (a GPT-2 block: 18 ms or 400 ms per iteration, per process at random). So OpenBLAS
// runs single-threaded (set on first use; OPENBLAS_NUM_THREADS is overridden) and the pool
// splits C into row or column blocks, one sgemm each: --threads / HOTFUSE_NUM_THREADS is the
// one knob for every kernel.
#pragma once
#include <cstdint>

#include "runtime/cpu/thread_pool.h"

namespace hf::cpu {

// lda/ldb/ldc are the row strides of A, B, C as stored (A is k x m when trans_a).
void sgemm(ThreadPool& pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace hf::cpu
