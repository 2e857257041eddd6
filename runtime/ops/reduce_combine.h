// The combinators of every reduction (Reduce and fused reduces): identities, element terms
// and the combination of partial results, shared by the unfused CPU and CUDA kernels and
// the generated ones so that all compute the same values. Accumulators are float for
// f32/f16/bf16, double for f64 (unfused CPU only), u64 for u64 and i64 for the other integer
// and bool types (wrapping); MIN/MAX propagate NaN. Each kernel chooses its own order of
// combination.
//
// Valid C++ for the host compiler, nvcc and NVRTC, like scalar_math.h (see hd.h).
#pragma once
#include "runtime/ops/half.h"
#include "runtime/ops/hd.h"
#include "runtime/ops/scalar_math.h"

namespace hf {

enum class RKind : unsigned char { Sum, SumSqr, Prod, Min, Max };

// identity: the result of an empty reduction; term(x): what one element contributes;
// combine: two partial results into one; step(acc, x) = combine(acc, term(x)).
template <RKind K>
struct RCombine {
  template <class A>
  HF_HD static A identity() {
    if constexpr (K == RKind::Prod)
      return A(1);
    else if constexpr (K == RKind::Min && detail::kIsFloat<A>)
      return f32_from_bits(0x7f800000u);  // +inf
    else if constexpr (K == RKind::Min && !detail::kIsSigned<A>)
      return (A)0xffffffffffffffffull;  // u64 accumulators
    else if constexpr (K == RKind::Min)
      return (A)0x7fffffffffffffffll;
    else if constexpr (K == RKind::Max && detail::kIsFloat<A>)
      return f32_from_bits(0xff800000u);  // -inf
    else if constexpr (K == RKind::Max && !detail::kIsSigned<A>)
      return A(0);
    else if constexpr (K == RKind::Max)
      return (A)(-0x7fffffffffffffffll - 1);
    else
      return A(0);
  }
  template <class A>
  HF_HD static A term(A x) {
    return K == RKind::SumSqr ? detail::mul(x, x) : x;
  }
  template <class A>
  HF_HD static A combine(A a, A b) {
    if constexpr (K == RKind::Prod)
      return detail::mul(a, b);
    else if constexpr (K == RKind::Min)
      return detail::min_nan(a, b);
    else if constexpr (K == RKind::Max)
      return detail::max_nan(a, b);
    else
      return detail::add(a, b);
  }
  template <class A>
  HF_HD static A step(A acc, A x) {
    return combine(acc, term(x));
  }
};
using RSum = RCombine<RKind::Sum>;
using RSumSqr = RCombine<RKind::SumSqr>;
using RProd = RCombine<RKind::Prod>;
using RMin = RCombine<RKind::Min>;
using RMax = RCombine<RKind::Max>;

// W independent accumulators (lanes) into one, pairwise: lane j with lane j + W/2, and so on
// down to one. The unfused CPU reduce and the generated kernels end their lanes with this,
// so both combine in the same order. Each halving is a loop of known length, so the wide
// ones compile to vector instructions (for short rows these combines are much of the work).
template <class Op, class A, int W>
HF_HD A combine_lanes(const A (&acc)[W]) {
  if constexpr (W == 1) {
    return acc[0];
  } else {
    A half[W / 2];
    for (int j = 0; j < W / 2; ++j) half[j] = Op::combine(acc[j], acc[j + W / 2]);
    return combine_lanes<Op, A, W / 2>(half);
  }
}

// MEAN sums, then divides by the count (an empty float row gives 0/0 = NaN, an empty
// integer row 0).
HF_HD float mean_of(float sum, i64 n) {
  return sum / (float)n;
}
HF_HD i64 mean_of(i64 sum, i64 n) {
  return n == 0 ? sum : sum / n;
}
HF_HD double mean_of(double sum, i64 n) {
  return sum / (double)n;
}
HF_HD u64 mean_of(u64 sum, i64 n) {
  return n == 0 ? sum : sum / (u64)n;
}

// Calls f(Op{}) with Op the combinator of reduce mode m. Mode is ReduceMode
// (reduce_mode.h), a parameter so that this header includes no standard header.
template <class Mode, class F>
HF_HD decltype(auto) visit_reduce_op(Mode m, F&& f) {
  if (m == Mode::SUM_SQR) return f(RSumSqr{});
  if (m == Mode::PRODUCT) return f(RProd{});
  if (m == Mode::MIN) return f(RMin{});
  if (m == Mode::MAX) return f(RMax{});
  return f(RSum{});  // SUM, MEAN
}

}  // namespace hf
