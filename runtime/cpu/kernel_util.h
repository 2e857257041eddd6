// Private helpers shared by the CPU kernels: dtype <-> C++ type mapping, the conversions
// type_convert defines, strided layouts with dimension coalescing, and per-thread scratch.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cpu/half_bulk.h"
#include "runtime/ir/tensor.h"
#include "runtime/ops/half.h"
#include "runtime/ops/saturate.h"

namespace hf::cpu {

// ---- dtypes ---------------------------------------------------------------------------

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the storage type of `d`.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::F32:
      return f(TypeTag<float>{});
    case DType::F16:
      return f(TypeTag<f16>{});
    case DType::BF16:
      return f(TypeTag<bf16>{});
    case DType::I32:
      return f(TypeTag<i32>{});
    case DType::I64:
      return f(TypeTag<i64>{});
    case DType::Bool:
      return f(TypeTag<bool>{});
    case DType::U8:
      return f(TypeTag<u8>{});
    case DType::F64:
      return f(TypeTag<double>{});
    case DType::I8:
      return f(TypeTag<i8>{});
    case DType::I16:
      return f(TypeTag<i16>{});
    case DType::U16:
      return f(TypeTag<u16>{});
    case DType::U32:
      return f(TypeTag<u32>{});
    case DType::U64:
      return f(TypeTag<u64>{});
  }
  __builtin_unreachable();
}

// Calls f(TypeTag<U>{}) with U the unsigned integer type of `bytes` (1, 2, 4 or 8) bytes: for
// moves, which only care about the element size.
template <class F>
decltype(auto) visit_size(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(TypeTag<u8>{});
    case 2:
      return f(TypeTag<u16>{});
    case 4:
      return f(TypeTag<u32>{});
    default:
      return f(TypeTag<u64>{});
  }
}

template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
inline constexpr bool kIsFloatStorage = std::is_same_v<T, float> || kIsHalf<T>;

template <class T>
inline float to_float(T x) {
  if constexpr (kIsHalf<T>)
    return to_f32(x);
  else
    return static_cast<float>(x);
}

// Float -> integer types saturate_cast (saturate.h) does not cover (i8, i16, u16, u32,
// u64) and f64 -> any integer: truncate toward zero, saturate, NaN -> 0, as saturate_cast.
// Every f32 value is exact in double, so f32 sources take this path too.
template <class I>
inline I saturate_from_double(double d) {
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());  // 0 or -2^k
  constexpr double hi = 2.0 * static_cast<double>(I(1) << (std::numeric_limits<I>::digits - 1));
  if (d != d) return I(0);
  if (d <= lo) return std::numeric_limits<I>::min();
  if (d >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(d);
}

// The element conversion of type_convert (kernels.h): float -> int truncates and
// saturates (NaN -> 0), int -> narrower int wraps, x -> bool is x != 0 (NaN -> true),
// bool -> number is 0/1, anything -> f16/bf16 rounds through f32 (f64 -> f16 so rounds
// twice), f64 -> f32 rounds to nearest.
template <class To, class From>
inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsHalf<From>)
      return (x.bits & 0x7fffu) != 0;
    else
      return x != From(0);
  } else if constexpr (std::is_same_v<To, f16>) {
    return to_f16(to_float(x));
  } else if constexpr (std::is_same_v<To, bf16>) {
    return to_bf16(to_float(x));
  } else if constexpr (std::is_same_v<To, float>) {
    return to_float(x);
  } else if constexpr (std::is_same_v<To, double>) {
    if constexpr (kIsHalf<From>)
      return to_f32(x);
    else
      return static_cast<double>(x);
  } else if constexpr (std::is_same_v<From, double>) {
    return saturate_from_double<To>(x);
  } else if constexpr (kIsFloatStorage<From> &&
                       (std::is_same_v<To, u8> || std::is_same_v<To, i32> ||
                        std::is_same_v<To, i64>)) {
    return saturate_cast<To>(to_float(x));  // vectorises (saturate.h)
  } else if constexpr (kIsFloatStorage<From>) {
    return saturate_from_double<To>(to_float(x));
  } else {
    return static_cast<To>(x);  // integer or bool -> integer: modular (C++20)
  }
}

// convert() over contiguous arrays. f16 goes through the bulk routines of half_bulk.h, via
// an f32 buffer for pairs without f32, since per-element f16 code does not vectorise.
template <class From, class To>
void convert_n(const From* __restrict in, To* __restrict out, int64_t n) {
  if constexpr (std::is_same_v<From, To>) {
    std::memcpy(out, in, n * sizeof(To));
  } else if constexpr (std::is_same_v<From, f16> && std::is_same_v<To, float>) {
    to_f32_n(in, out, n);
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, f16>) {
    to_f16_n(in, out, n);
  } else if constexpr (std::is_same_v<From, f16> || std::is_same_v<To, f16>) {
    constexpr int64_t kChunk = 512;
    alignas(32) float buf[kChunk];
    for (int64_t k0 = 0; k0 < n; k0 += kChunk) {
      const int64_t m = n - k0 < kChunk ? n - k0 : kChunk;
      convert_n(in + k0, buf, m);
      convert_n(buf, out + k0, m);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = convert<To>(in[i]);
  }
}

// ---- strided layouts ------------------------------------------------------------------

inline constexpr int kMaxOps = 5;  // up to 4 inputs and an output

// A loop nest shared by several operands: one shape, a stride set per operand.
struct Layout {
  int rank = 0;
  int nops = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[kMaxOps][kMaxRank] = {};

  // The loop nest over `out`, which is operand `k` and the last; set_operand adds the others.
  static Layout over(const TensorView& out, int k) {
    Layout l;
    l.rank = out.rank();
    l.nops = k + 1;
    for (int d = 0; d < l.rank; ++d) {
      l.shape[d] = out.shape[d];
      l.stride[k][d] = out.strides[d];
    }
    return l;
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= shape[d];
    return n;
  }

  // Drops size-1 dimensions and merges neighbours that every operand walks as one, so a
  // contiguous problem becomes rank 1 and a row broadcast rank 2.
  void coalesce() {
    int r = 0;
    for (int d = 0; d < rank; ++d) {
      if (shape[d] == 1) continue;
      if (r > 0) {
        bool merge = true;
        for (int k = 0; k < nops; ++k) merge = merge && stride[k][r - 1] == stride[k][d] * shape[d];
        if (merge) {
          shape[r - 1] *= shape[d];
          for (int k = 0; k < nops; ++k) stride[k][r - 1] = stride[k][d];
          continue;
        }
      }
      shape[r] = shape[d];
      for (int k = 0; k < nops; ++k) stride[k][r] = stride[k][d];
      ++r;
    }
    rank = r;
    if (rank == 0) {  // a single element
      rank = 1;
      shape[0] = 1;
      for (int k = 0; k < nops; ++k) stride[k][0] = 0;
    }
  }

  // Element offset of operand k at multi-index idx.
  int64_t offset(int k, const int64_t* idx) const {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) o += idx[d] * stride[k][d];
    return o;
  }

  // Multi-index of linear (row-major) position `linear`.
  void unravel(int64_t linear, int64_t* idx) const {
    for (int d = rank - 1; d > 0; --d) {
      idx[d] = linear % shape[d];
      linear /= shape[d];
    }
    idx[0] = linear;
  }
};

// Reads `v` as shape `to` (right-aligned NumPy broadcasting) into operand k of `l`, whose
// shape must already be `to`. No allocation, unlike TensorView::broadcast_to.
inline void set_operand(Layout& l, int k, const TensorView& v, const Shape& to, const char* what) {
  int off = static_cast<int>(to.size()) - v.rank();
  if (off < 0) throw std::invalid_argument(std::string(what) + ": operand has higher rank");
  for (int d = 0; d < off; ++d) l.stride[k][d] = 0;
  for (int d = 0; d < v.rank(); ++d) {
    int64_t s = v.shape[d], t = to[off + d];
    if (s != t && s != 1)
      throw std::invalid_argument(std::string(what) + ": shape " + to_string(v.shape) +
                                  " does not broadcast to " + to_string(to));
    l.stride[k][off + d] = (s == 1) ? 0 : v.strides[d];
  }
}

inline void check_rank(const TensorView& v, const char* what) {
  if (v.rank() > kMaxRank) throw std::invalid_argument(std::string(what) + ": rank above kMaxRank");
  if (v.strides.size() != v.shape.size())
    throw std::invalid_argument(std::string(what) + ": strides and shape differ in rank");
}

// A copy or conversion: operand 0 `in` broadcast to out's shape, operand 1 `out`; coalesced.
inline Layout unary_layout(const TensorView& in, const TensorView& out, const char* what) {
  Layout l = Layout::over(out, 1);
  set_operand(l, 0, in, out.shape, what);
  l.coalesce();
  return l;
}

// Calls f(idx, n) for the runs of `len` positions (row-major) from multi-index idx0 along the
// innermost dimension: n positions from multi-index idx each, the index carried, not
// recomputed.
template <class F>
void for_each_run(const Layout& l, const int64_t* idx0, int64_t len, F&& f) {
  const int r = l.rank;
  int64_t idx[kMaxRank];
  for (int d = 0; d < r; ++d) idx[d] = idx0[d];
  while (len > 0) {
    const int64_t n = len < l.shape[r - 1] - idx[r - 1] ? len : l.shape[r - 1] - idx[r - 1];
    f(static_cast<const int64_t*>(idx), n);
    len -= n;
    idx[r - 1] += n;
    for (int d = r - 1; d > 0 && idx[d] == l.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

// Calls f(in_run, out_run, n) over the flat elements [s, e) of a unary layout (operand 0
// `in`, operand 1 `out`), once per run along the innermost dimension, with each operand's
// address of the run's first element: the walk of every copy-like kernel (copy, TypeCvt).
template <class In, class Out, class F>
void for_each_unary_run(const Layout& l, const In* in, Out* out, int64_t s, int64_t e, F&& f) {
  int64_t idx0[kMaxRank];
  l.unravel(s, idx0);
  for_each_run(l, idx0, e - s, [&](const int64_t* idx, int64_t n) {
    f(in + l.offset(0, idx), out + l.offset(1, idx), n);
  });
}

// ---- per-thread scratch ---------------------------------------------------------------

// Elements per block of the element-wise engine: a few blocks of gathered operands
// (8 bytes each at most) stay in L1/L2 while a block is computed.
inline constexpr int64_t kBlock = 2048;

struct alignas(64) Scratch {
  alignas(64) unsigned char slot[kMaxOps][kBlock * 8];
};

// Allocated on a thread's first use and kept for its lifetime.
Scratch& thread_scratch();

// A kernel's per-thread (thread_local) f32 buffer, grown to at least n elements and never
// shrunk: the largest layer seen sets its size.
inline float* grow(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n);
  return v.data();
}

}  // namespace hf::cpu
