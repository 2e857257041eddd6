#include "runtime/cpu/sgemm.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>

namespace hf::cpu {
namespace {

void blas_single_threaded() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void sgemm_block(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c,
              static_cast<blasint>(ldc));
}

// Blocks below ~256 kflop cost more to hand out than they save.
constexpr int64_t kMinFlopsPerBlock = 1 << 18;

}  // namespace

void sgemm(ThreadPool& pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
           int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  blas_single_threaded();
  // The loop bodies capture one pointer: std::function then holds them without allocating.
  struct Job {
    bool ta, tb;
    int64_t m, n, k;
    const float* a;
    int64_t lda;
    const float* b;
    int64_t ldb;
    float* c;
    int64_t ldc;
  } job{ta, tb, m, n, k, a, lda, b, ldb, c, ldc};
  const Job* j = &job;
  if (m >= n) {  // row blocks: rows of op(A) and of C
    const int64_t grain = std::max<int64_t>(1, kMinFlopsPerBlock / (2 * n * k));
    pool.parallel_for(m, grain, [j](int64_t r0, int64_t r1) {
      sgemm_block(j->ta, j->tb, r1 - r0, j->n, j->k, j->ta ? j->a + r0 : j->a + r0 * j->lda, j->lda,
                  j->b, j->ldb, j->c + r0 * j->ldc, j->ldc);
    });
  } else {  // column blocks: columns of op(B) and of C
    const int64_t grain = std::max<int64_t>(1, kMinFlopsPerBlock / (2 * m * k));
    pool.parallel_for(n, grain, [j](int64_t c0, int64_t c1) {
      sgemm_block(j->ta, j->tb, j->m, c1 - c0, j->k, j->a, j->lda,
                  j->tb ? j->b + c0 * j->ldb : j->b + c0, j->ldb, j->c + c0, j->ldc);
    });
  }
}

}  // namespace hf::cpu
