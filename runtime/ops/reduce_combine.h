// The combinators of every reduction (Reduce and fused reduces): identities, element terms
// and the combination of partial results, shared by the unfused CPU and CUDA kernels and
// the generated ones so that all compute the same values. Accumulators are float for float
// types and i64 for integer and bool types (wrapping); MIN/MAX propagate NaN. Each kernel
// chooses its own order of combination.
//
// Valid C++ for the host compiler, nvcc and NVRTC, like scalar_math.h (see hd.h).
#pragma once
#include "runtime/ops/half.h"
#include "runtime/ops/hd.h"
#include "runtime/ops/scalar_math.h"

namespace hf {

// term(x): what one element contributes; step(acc, x) accumulates it.
template <class Op>
struct RStep {
  template <class A>
  HF_HD static A term(A x) {
    return x;
  }
  template <class A>
  HF_HD static A step(A acc, A x) {
    return Op::combine(acc, Op::term(x));
  }
};

struct RSum : RStep<RSum> {
  template <class A>
  HF_HD static A identity() {
    return A(0);
  }
  template <class A>
  HF_HD static A combine(A a, A b) {
    return detail::add(a, b);
  }
};
struct RSumSqr : RStep<RSumSqr> {
  template <class A>
  HF_HD static A identity() {
    return A(0);
  }
  template <class A>
  HF_HD static A term(A x) {
    return detail::mul(x, x);
  }
  template <class A>
  HF_HD static A combine(A a, A b) {
    return detail::add(a, b);
  }
};
struct RProd : RStep<RProd> {
  template <class A>
  HF_HD static A identity() {
    return A(1);
  }
  template <class A>
  HF_HD static A combine(A a, A b) {
    return detail::mul(a, b);
  }
};
struct RMin : RStep<RMin> {
  template <class A>
  HF_HD static A identity() {
    if constexpr (detail::kIsFloat<A>)
      return f32_from_bits(0x7f800000u);  // +inf
    else
      return (A)0x7fffffffffffffffll;
  }
  template <class A>
  HF_HD static A combine(A a, A b) {
    return detail::min_nan(a, b);
  }
};
struct RMax : RStep<RMax> {
  template <class A>
  HF_HD static A identity() {
    if constexpr (detail::kIsFloat<A>)
      return f32_from_bits(0xff800000u);  // -inf
    else
      return (A)(-0x7fffffffffffffffll - 1);
  }
  template <class A>
  HF_HD static A combine(A a, A b) {
    return detail::max_nan(a, b);
  }
};

// MEAN sums, then divides by the count (an empty float row gives 0/0 = NaN, an empty
// integer row 0).
HF_HD float mean_of(float sum, i64 n) {
  return sum / (float)n;
}
HF_HD i64 mean_of(i64 sum, i64 n) {
  return n == 0 ? sum : sum / n;
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
