// Materialises a strided or broadcast view: memcpy when both sides are contiguous, row
// copies when they share a contiguous inner axis, cache tiles for transposes.
#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/stream_store.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace hf::cpu {
namespace {

constexpr int64_t kTile = 1024;                    // elements; parallel chunk alignment
constexpr int64_t kGrainBytes = int64_t{1} << 18;  // below this a second thread costs more
constexpr int64_t kTransposeTile = 64;

struct CopyJob {
  Layout l;  // operand 0: in, operand 1: out
  const char* in = nullptr;
  char* out = nullptr;
  size_t size = 0;
  int64_t total = 0;
  int tdim = -1;        // transpose: the axis along which `in` is contiguous
  bool stream = false;  // output larger than the LLC: streaming stores
};

template <class T>
void copy_range(const CopyJob& j, int64_t s, int64_t e) {
  const Layout& l = j.l;
  const int64_t si = l.stride[0][l.rank - 1], so = l.stride[1][l.rank - 1];
  const T* in = reinterpret_cast<const T*>(j.in);
  T* out = reinterpret_cast<T*>(j.out);
  for_each_unary_run(l, in, out, s, e, [&](const T* __restrict pi, T* __restrict po, int64_t seg) {
    if (si == 1 && so == 1 && j.stream) {
      stream_copy(po, pi, seg * sizeof(T));
    } else if (si == 1 && so == 1) {
      std::memcpy(po, pi, seg * sizeof(T));
    } else if (si == 0) {
      const T v = *pi;
      for (int64_t k = 0; k < seg; ++k) po[k * so] = v;
    } else if (so == 1) {
      for (int64_t k = 0; k < seg; ++k) po[k] = pi[k * si];
    } else {
      for (int64_t k = 0; k < seg; ++k) po[k * so] = pi[k * si];
    }
  });
  if (j.stream) stream_fence();
}

// Tile units of a transpose: every index of the axes other than tdim and the inner one,
// times the tiles of the (tdim, inner) plane.
struct TransposePlan {
  int64_t tiles_a, tiles_b, units;
};

TransposePlan transpose_plan(const CopyJob& j) {
  const Layout& l = j.l;
  int64_t ta = (l.shape[j.tdim] + kTransposeTile - 1) / kTransposeTile;
  int64_t tb = (l.shape[l.rank - 1] + kTransposeTile - 1) / kTransposeTile;
  int64_t outer = l.numel() / (l.shape[j.tdim] * l.shape[l.rank - 1]);
  return {ta, tb, outer * ta * tb};
}

#if defined(__AVX__)
// dst[j * ds + k] = src[k * ss + j] for an 8x8 block of 4-byte elements: 8 loads, 24
// shuffles, 8 stores instead of 64 scalar (or gather) moves.
inline void transpose8x8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + k * ss);
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    u[4 * k + 0] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(dst + k * ds, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    _mm256_storeu_ps(dst + (k + 4) * ds, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}
#endif

// out[a * out_a + b] = in[a + b * in_b] for a < na, b < nb.
template <class T>
void transpose_block(const T* __restrict in, int64_t in_b, T* __restrict out, int64_t out_a,
                     int64_t na, int64_t nb) {
  int64_t a8 = 0;
#if defined(__AVX__)
  if constexpr (sizeof(T) == 4) {
    a8 = na / 8 * 8;
    const int64_t b8 = nb / 8 * 8;
    for (int64_t a = 0; a < a8; a += 8)
      for (int64_t b = 0; b < b8; b += 8)
        transpose8x8(reinterpret_cast<const float*>(in + a + b * in_b), in_b,
                     reinterpret_cast<float*>(out + a * out_a + b), out_a);
    for (int64_t a = 0; a < a8; ++a)  // the columns right of b8
      for (int64_t b = b8; b < nb; ++b) out[a * out_a + b] = in[a + b * in_b];
  }
#endif
  for (int64_t a = a8; a < na; ++a)
    for (int64_t b = 0; b < nb; ++b) out[a * out_a + b] = in[a + b * in_b];
}

template <class T>
void transpose_units(const CopyJob& j, const TransposePlan& p, int64_t u0, int64_t u1) {
  const Layout& l = j.l;
  const int r = l.rank, a_dim = j.tdim, b_dim = r - 1;
  const T* in = reinterpret_cast<const T*>(j.in);
  T* out = reinterpret_cast<T*>(j.out);
  const int64_t in_b = l.stride[0][b_dim], out_a = l.stride[1][a_dim];
  for (int64_t u = u0; u < u1; ++u) {
    // Consecutive units walk along the input's contiguous axis: a thread then reads whole
    // input rows in order (1.6x faster at 4096^2 than walking down its columns).
    int64_t ta = u % p.tiles_a, rest = u / p.tiles_a;
    int64_t tb = rest % p.tiles_b, outer = rest / p.tiles_b;
    int64_t idx[kMaxRank] = {};
    for (int d = r - 2; d >= 0; --d) {
      if (d == a_dim) continue;
      idx[d] = outer % l.shape[d];
      outer /= l.shape[d];
    }
    const int64_t a0 = ta * kTransposeTile, na = std::min(kTransposeTile, l.shape[a_dim] - a0);
    const int64_t b0 = tb * kTransposeTile, nb = std::min(kTransposeTile, l.shape[b_dim] - b0);
    const T* pi = in + l.offset(0, idx) + a0 + b0 * in_b;
    T* po = out + l.offset(1, idx) + a0 * out_a + b0;
    if (j.stream) {  // through an L1 tile, so that whole output lines can be streamed
      alignas(64) T buf[kTransposeTile * kTransposeTile];
      transpose_block(pi, in_b, buf, kTransposeTile, na, nb);
      for (int64_t a = 0; a < na; ++a)
        stream_copy(po + a * out_a, buf + a * kTransposeTile, nb * sizeof(T));
    } else {
      transpose_block(pi, in_b, po, out_a, na, nb);
    }
  }
  if (j.stream) stream_fence();
}

#if defined(__AVX2__)
// out[3i], out[3i + 1], out[3i + 2] = a[i], b[i], c[i]: three planes interleaved (an image's
// 3 channels moved last, NCHW -> NHWC), 4-byte elements. Eight pixels are 3 loads, a lane
// permute of each (every element to the position it takes in one of the three stores) and
// two blends per store, where a scalar loop writes one element at a time with stride 3.
void interleave3(const float* a, const float* b, const float* c, float* out, int64_t n) {
  const __m256i ia = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
  const __m256i ib = _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2);
  const __m256i ic = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 pa = _mm256_permutevar8x32_ps(_mm256_loadu_ps(a + i), ia);
    const __m256 pb = _mm256_permutevar8x32_ps(_mm256_loadu_ps(b + i), ib);
    const __m256 pc = _mm256_permutevar8x32_ps(_mm256_loadu_ps(c + i), ic);
    // Positions 0, 3, 6 of a store (0x49), 1, 4, 7 (0x92), the rest 2, 5.
    _mm256_storeu_ps(out + 3 * i, _mm256_blend_ps(_mm256_blend_ps(pc, pa, 0x49), pb, 0x92));
    _mm256_storeu_ps(out + 3 * i + 8, _mm256_blend_ps(_mm256_blend_ps(pb, pa, 0x92), pc, 0x49));
    _mm256_storeu_ps(out + 3 * i + 16, _mm256_blend_ps(_mm256_blend_ps(pa, pb, 0x49), pc, 0x92));
  }
  for (; i < n; ++i) {
    out[3 * i] = a[i];
    out[3 * i + 1] = b[i];
    out[3 * i + 2] = c[i];
  }
}

// Whether the copy is three planes interleaved along axis rank-2 (interleave3): 4-byte
// elements, the output's innermost axis 3 long and dense, the input contiguous along the
// axis above it. Any axes further out.
bool is_interleave3(const CopyJob& j) {
  const Layout& l = j.l;
  const int r = l.rank;
  return j.size == 4 && r >= 2 && l.shape[r - 1] == 3 && l.stride[1][r - 1] == 1 &&
         l.stride[1][r - 2] == 3 && l.stride[0][r - 2] == 1;
}

void run_interleave3(const CopyJob& j, ThreadPool& pool) {
  const Layout& l = j.l;
  const int r = l.rank;
  const int64_t n = l.shape[r - 2], plane = l.stride[0][r - 1];
  constexpr int64_t kChunk = 4096;  // pixels per unit: 48 KiB written
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const int64_t outer = l.numel() / (3 * n);
  const float* in = reinterpret_cast<const float*>(j.in);
  float* out = reinterpret_cast<float*>(j.out);
  const int64_t grain = std::max<int64_t>(1, kGrainBytes / (4 * 3 * kChunk));
  pool.parallel_for(outer * chunks, grain, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      int64_t idx[kMaxRank] = {}, rest = u / chunks;
      for (int d = r - 3; d >= 0; --d) {
        idx[d] = rest % l.shape[d];
        rest /= l.shape[d];
      }
      const int64_t i0 = (u % chunks) * kChunk, len = std::min(kChunk, n - i0);
      const float* a = in + l.offset(0, idx) + i0;
      interleave3(a, a + plane, a + 2 * plane, out + l.offset(1, idx) + 3 * i0, len);
    }
  });
}
#endif

// Makes axis d the innermost of the loop nest (every operand's stride with it).
void move_axis_last(Layout& l, int d) {
  std::rotate(l.shape + d, l.shape + d + 1, l.shape + l.rank);
  for (int k = 0; k < l.nops; ++k)
    std::rotate(l.stride[k] + d, l.stride[k] + d + 1, l.stride[k] + l.rank);
}

template <class T>
void run_copy(const CopyJob& j, ThreadPool& pool) {
  const int64_t grain = std::max<int64_t>(kGrainBytes / static_cast<int64_t>(sizeof(T)), kTile);
  if (j.tdim >= 0) {
    const TransposePlan p = transpose_plan(j);
    const int64_t unit_elems = kTransposeTile * kTransposeTile;
    struct Ctx {
      const CopyJob& j;
      const TransposePlan& p;
    } c{j, p};
    pool.parallel_for(p.units, std::max<int64_t>(1, grain / unit_elems),
                      [&c](int64_t b, int64_t e) { transpose_units<T>(c.j, c.p, b, e); });
    return;
  }
  const int64_t tiles = (j.total + kTile - 1) / kTile;
  pool.parallel_for(tiles, std::max<int64_t>(1, grain / kTile), [&j](int64_t b, int64_t e) {
    copy_range<T>(j, b * kTile, std::min(e * kTile, j.total));
  });
}

}  // namespace

void copy(const TensorView& in, const TensorView& out, ThreadPool& pool) {
  check_rank(in, "copy");
  check_rank(out, "copy");
  if (in.dtype != out.dtype)
    throw std::invalid_argument("copy: dtypes differ (" + std::string(dtype_name(in.dtype)) +
                                " -> " + std::string(dtype_name(out.dtype)) + ")");
  CopyJob j;
  j.total = out.numel();
  if (j.total == 0) return;
  j.l = unary_layout(in, out, "copy");
  const Layout& l = j.l;
  j.in = static_cast<const char*>(in.data);
  j.out = static_cast<char*>(out.data);
  j.size = dtype_size(in.dtype);

  const int r = l.rank;
  const bool big = should_stream(2 * j.total * j.size);
  j.stream = big && r == 1 && l.stride[0][0] == 1 && l.stride[1][0] == 1;
  if (r >= 2 && l.stride[1][r - 1] == 1 && l.stride[0][r - 1] != 1 &&
      l.shape[r - 1] >= kTransposeTile / 4) {
    for (int d = r - 2; d >= 0; --d)
      if (l.stride[0][d] == 1 && l.shape[d] >= kTransposeTile / 4) j.tdim = d;
    j.stream = big && j.tdim >= 0;
  }
#if defined(__AVX2__)
  if (!j.stream && is_interleave3(j)) {
    run_interleave3(j, pool);
    return;
  }
#endif
  // A small innermost output axis (an image's 3 channels moved last, NCHW -> NHWC): runs of
  // a few elements pay a loop set-up each, 4.5 ns per element. The input's contiguous axis
  // walked innermost instead gives long runs, written with that small stride.
  if (r >= 2 && j.tdim < 0 && l.stride[1][r - 1] == 1 && l.stride[0][r - 1] != 1) {
    for (int d = r - 2; d >= 0; --d)
      if (l.stride[0][d] == 1 && l.shape[d] >= kTransposeTile) {
        move_axis_last(j.l, d);
        break;
      }
  }
  visit_size(j.size, [&](auto t) { run_copy<typename decltype(t)::type>(j, pool); });
}

}  // namespace hf::cpu
