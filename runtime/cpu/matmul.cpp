// NumPy matmul on OpenBLAS sgemm. Operands BLAS can read in place (unit stride along rows
// or columns) are passed as they are; others, and all f16/bf16 operands, are packed into
// f32 per-thread buffers that grow to the largest matrix seen and are then reused, so the
// steady state does not allocate. Batches run one after another; each product is split over
// the pool (sgemm.h says why OpenBLAS's own threads are not used).
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/sgemm.h"

namespace hf::cpu {
namespace {

// A matrix as BLAS takes it (row-major): data, leading dimension, transposed or not.
struct BlasMat {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
};

// rows x cols matrix with element strides (rs, cs): can sgemm read it in place?
bool blas_view(const float* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, BlasMat& m) {
  if (cs == 1 || cols == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) {
      m = {p, ld, false};
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) {
      m = {p, ld, true};
      return true;
    }
  }
  return false;
}

template <class T>
void pack(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, float* dst) {
  for (int64_t i = 0; i < rows; ++i) {
    if (cs == 1)
      convert_n(p + i * rs, dst + i * cols, cols);
    else
      for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = to_float(p[i * rs + j * cs]);
  }
}

template <class T>
void unpack(const float* src, int64_t rows, int64_t cols, T* p, int64_t rs, int64_t cs) {
  for (int64_t i = 0; i < rows; ++i) {
    if (cs == 1)
      convert_n(src + i * cols, p + i * rs, cols);
    else
      for (int64_t j = 0; j < cols; ++j) p[i * rs + j * cs] = convert<T>(src[i * cols + j]);
  }
}

struct MatmulBufs {
  std::vector<float> a, b, c;
};

MatmulBufs& thread_bufs() {
  thread_local MatmulBufs bufs;
  return bufs;
}

struct Problem {
  Layout batch;  // operands: a, b, out
  int64_t m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
};

template <class T>
void run(const Problem& p, const T* a, const T* b, T* c, ThreadPool& pool) {
  constexpr bool kF32 = std::is_same_v<T, float>;
  MatmulBufs& bufs = thread_bufs();
  const Layout& l = p.batch;
  const int64_t batches = l.numel();
  const int64_t m = p.m, n = p.n, k = p.k;
  const T* last_b = nullptr;  // a shared (broadcast) b is packed once
  BlasMat bm;
  int64_t idx[kMaxRank] = {};
  for (int64_t t = 0; t < batches; ++t) {
    l.unravel(t, idx);
    const T* pa = a + l.offset(0, idx);
    const T* pb = b + l.offset(1, idx);
    T* pc = c + l.offset(2, idx);
    BlasMat am;
    if (!kF32 || !blas_view(reinterpret_cast<const float*>(pa), m, k, p.a_rs, p.a_cs, am)) {
      float* s = grow(bufs.a, m * k);
      pack(pa, m, k, p.a_rs, p.a_cs, s);
      am = {s, std::max<int64_t>(k, 1), false};
    }
    if (pb != last_b) {
      if (!kF32 || !blas_view(reinterpret_cast<const float*>(pb), k, n, p.b_rs, p.b_cs, bm)) {
        float* s = grow(bufs.b, k * n);
        pack(pb, k, n, p.b_rs, p.b_cs, s);
        bm = {s, std::max<int64_t>(n, 1), false};
      }
      last_b = pb;
    }
    if (kF32 && (p.c_cs == 1 || n == 1) && (m == 1 || p.c_rs >= n)) {
      sgemm(pool, am.trans, bm.trans, m, n, k, am.data, am.ld, bm.data, bm.ld,
            reinterpret_cast<float*>(pc), m == 1 ? n : p.c_rs);
    } else {
      float* s = grow(bufs.c, m * n);
      sgemm(pool, am.trans, bm.trans, m, n, k, am.data, am.ld, bm.data, bm.ld, s, n);
      unpack(s, m, n, pc, p.c_rs, p.c_cs);
    }
  }
}

// A b shared by every batch, with a and out walking their batches as one tall matrix,
// is a single sgemm with m * batches rows (a Linear layer on [batch, seq, hidden]).
bool fold_batches(Problem& p) {
  Layout& l = p.batch;
  if (l.rank != 1 || l.shape[0] == 1 || l.stride[1][0] != 0) return false;
  if (p.a_cs != 1 || p.c_cs != 1 || p.a_rs < p.k || p.c_rs < p.n) return false;
  if (l.stride[0][0] != p.m * p.a_rs || l.stride[2][0] != p.m * p.c_rs) return false;
  p.m *= l.shape[0];
  l.shape[0] = 1;
  return true;
}

}  // namespace

void matmul(const TensorView& a, const TensorView& b, const TensorView& out, ThreadPool& pool) {
  check_rank(a, "matmul");
  check_rank(b, "matmul");
  check_rank(out, "matmul");
  if (a.dtype != b.dtype || a.dtype != out.dtype)
    throw std::invalid_argument("matmul: operand dtypes differ");
  if (!is_float(a.dtype) || a.dtype == DType::F64)  // sgemm: f32 only
    throw std::invalid_argument("matmul does not support dtype " +
                                std::string(dtype_name(a.dtype)));
  if (a.rank() < 2 || b.rank() < 2 || out.rank() != std::max(a.rank(), b.rank()))
    throw std::invalid_argument("matmul: operands need rank >= 2 and out the larger rank");
  const int ra = a.rank(), rb = b.rank(), rc = out.rank();
  Problem p;
  p.m = a.shape[ra - 2];
  p.k = a.shape[ra - 1];
  p.n = b.shape[rb - 1];
  if (b.shape[rb - 2] != p.k || out.shape[rc - 2] != p.m || out.shape[rc - 1] != p.n)
    throw std::invalid_argument("matmul: shapes " + to_string(a.shape) + " x " +
                                to_string(b.shape) + " -> " + to_string(out.shape) +
                                " do not match");
  p.a_rs = a.strides[ra - 2];
  p.a_cs = a.strides[ra - 1];
  p.b_rs = b.strides[rb - 2];
  p.b_cs = b.strides[rb - 1];
  p.c_rs = out.strides[rc - 2];
  p.c_cs = out.strides[rc - 1];
  if (out.numel() == 0) return;

  // Batch axes: out's leading axes, with a and b broadcast to them.
  Layout& l = p.batch;
  l.rank = rc - 2;
  l.nops = 3;
  for (int d = 0; d < l.rank; ++d) {
    l.shape[d] = out.shape[d];
    l.stride[2][d] = out.strides[d];
  }
  const TensorView* ops[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    const TensorView& v = *ops[k];
    const int off = l.rank - (v.rank() - 2);
    for (int d = 0; d < off; ++d) l.stride[k][d] = 0;
    for (int d = 0; d < v.rank() - 2; ++d) {
      if (v.shape[d] != l.shape[off + d] && v.shape[d] != 1)
        throw std::invalid_argument("matmul: batch axes of " + to_string(v.shape) +
                                    " do not broadcast to " + to_string(out.shape));
      l.stride[k][off + d] = v.shape[d] == 1 ? 0 : v.strides[d];
    }
  }
  l.coalesce();
  if (a.dtype == DType::F32) fold_batches(p);

  visit_dtype(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloatStorage<T>)
      run<T>(p, a.as<const T>(), b.as<const T>(), out.as<T>(), pool);
  });
}

}  // namespace hf::cpu
