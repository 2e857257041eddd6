// Det: the determinant of each matrix of a batch by LU factorisation with partial pivoting
// (the row with the largest remaining magnitude as pivot), in f64 whatever the storage
// type, so f32 results carry no accumulated rounding of their own. One matrix per task.
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/nn_kernels.h"

namespace hf::cpu {

namespace {

// Overwrites m (n x n, row-major) with its LU factors; returns the determinant.
double lu_determinant(std::vector<double>& m, int64_t n) {
  double det = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t r = k + 1; r < n; ++r)
      if (std::fabs(m[r * n + k]) > std::fabs(m[p * n + k])) p = r;
    if (m[p * n + k] == 0) {
      // A NaN in the column still propagates (0 * NaN); a zero column gives 0.
      for (int64_t r = k; r < n; ++r)
        if (std::isnan(m[r * n + k])) return m[r * n + k];
      return 0;
    }
    if (p != k) {
      for (int64_t c = 0; c < n; ++c) std::swap(m[k * n + c], m[p * n + c]);
      det = -det;
    }
    const double pivot = m[k * n + k];
    det *= pivot;
    for (int64_t r = k + 1; r < n; ++r) {
      const double f = m[r * n + k] / pivot;
      if (f == 0) continue;
      for (int64_t c = k + 1; c < n; ++c) m[r * n + c] -= f * m[k * n + c];
    }
  }
  return det;
}

}  // namespace

void determinant(const TensorView& in, const TensorView& out, ThreadPool& pool) {
  if (!in.is_contiguous() || !out.is_contiguous())
    throw std::invalid_argument("det: needs contiguous tensors");
  const int64_t n = in.shape[in.rank() - 1], batch = out.numel();
  visit_dtype(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloatStorage<T> || std::is_same_v<T, double>) {
      const T* x = in.as<const T>();
      T* y = out.as<T>();
      pool.parallel_for(batch, 1, [&](int64_t s, int64_t e) {
        std::vector<double> m(static_cast<size_t>(n * n));
        for (int64_t b = s; b < e; ++b) {
          for (int64_t k = 0; k < n * n; ++k) m[k] = convert<double>(x[b * n * n + k]);
          y[b] = convert<T>(lu_determinant(m, n));
        }
      });
    } else {
      throw std::invalid_argument("det: needs a float input");
    }
  });
}

}  // namespace hf::cpu
