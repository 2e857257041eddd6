#include "runtime/exec/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "runtime/ops/half.h"

namespace hf {

Tolerance fused_tolerance(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F64:  // never fused itself, but downstream of fused f32 values
      return {1e-5, 1e-6};
    case DType::F16:
    case DType::BF16:
      return {1e-3, 1e-3};
    default:
      return {0, 0};
  }
}

Tolerance heavy_epilogue_tolerance(const TensorView& expected) {
  Tolerance t = fused_tolerance(expected.dtype);
  if (!is_float(expected.dtype)) return t;
  double largest = 0;
  if (expected.dtype == DType::F32 && expected.is_contiguous()) {
    const float* p = static_cast<const float*>(expected.data);
    float m = 0;
    for (int64_t i = 0, n = expected.numel(); i < n; ++i)
      m = std::max(m, std::isfinite(p[i]) ? std::fabs(p[i]) : 0.0f);
    largest = m;
  } else {
    for (int64_t i = 0, n = expected.numel(); i < n; ++i) {
      const double x = load_double(expected, i);
      if (std::isfinite(x)) largest = std::max(largest, std::fabs(x));
    }
  }
  t.atol = std::max(t.atol, t.rtol * largest);
  return t;
}

Tolerance graph_output_tolerance(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F64:
      return {1e-4, 1e-4};
    case DType::F16:
    case DType::BF16:
      return {1e-2, 1e-3};
    default:
      return {0, 0};
  }
}

namespace {

// Contiguous f32 with a positive atol, the case of every fused f32 region: one tight pass
// over the floats. Whether any element fails (NaN and infinities included; equal
// infinities match) is all it decides: then the general loop below finds
// which, with the same arithmetic.
std::optional<Mismatch> compare_f32(const TensorView& e, const TensorView& a, Tolerance tol) {
  if (e.dtype != DType::F32 || a.dtype != DType::F32 || !(tol.atol > 0) || !e.is_contiguous() ||
      !a.is_contiguous())
    return std::nullopt;
  const float* x = static_cast<const float*>(e.data);
  const float* y = static_cast<const float*>(a.data);
  const int64_t n = e.numel();
  double worst = 0;
  bool fails = false;
  // A fused kernel often computes bit for bit what the ops did: a block whose bytes are
  // equal adds nothing (each element's ratio is 0), and comparing bytes is several times
  // cheaper than the arithmetic below.
  constexpr int64_t kBlock = 4096;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t end = std::min(n, b + kBlock);
    if (std::memcmp(x + b, y + b, static_cast<size_t>(end - b) * sizeof(float)) == 0) continue;
    // Branch-free but for the rare new worst: equal and unequal elements alternate
    // unpredictably (an activation's zeros), and a mispredicted branch per element would
    // cost more than the arithmetic.
    for (int64_t i = b; i < end; ++i) {
      const double xi = x[i], yi = y[i];
      const bool same = xi == yi;  // equal infinities match (their difference is NaN)
      const double diff = std::fabs(xi - yi);
      const double allowed = tol.atol + tol.rtol * std::fabs(xi);
      fails |= !same & !(diff - allowed <= 0);  // opposite infinities give NaN, and fail
      if ((diff > worst * allowed) & !same) worst = diff / allowed;
    }
  }
  if (fails) return std::nullopt;
  Mismatch m;
  m.worst_ratio = worst;
  return m;
}

}  // namespace

Mismatch compare(const TensorView& e, const TensorView& a, Tolerance tol) {
  if (std::optional<Mismatch> fast = compare_f32(e, a, tol)) return *fast;
  Mismatch worst;
  double worst_excess = 0;
  // Integers compare exactly by their bytes: i64 and u64 values beyond 2^53 that differ can
  // be equal as doubles.
  const bool exact = !is_float(e.dtype) && e.dtype == a.dtype;
  const size_t es = dtype_size(e.dtype);
  for (int64_t i = 0; i < e.numel(); ++i) {
    double x = load_double(e, i), y = load_double(a, i);
    if (exact) {
      if (std::memcmp(static_cast<const char*>(e.data) + i * es,
                      static_cast<const char*>(a.data) + i * es, es) == 0)
        continue;
      if (x == y) y = std::nextafter(y, x > 0 ? INFINITY : -INFINITY);  // show a difference
    }
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::isinf(x) && x == y) continue;
    double diff = std::fabs(x - y);
    double allowed = tol.atol + tol.rtol * std::fabs(x);
    if (std::isfinite(diff))
      worst.worst_ratio = std::max(worst.worst_ratio, allowed > 0 ? diff / allowed
                                                      : diff > 0  ? INFINITY
                                                                  : 0);
    double excess = diff - allowed;
    if (!(excess <= 0)) ++worst.count;
    if (!(excess <= 0) && (worst.index < 0 || !(excess <= worst_excess))) {
      worst.index = i;
      worst.expected = x;
      worst.actual = y;
      worst_excess = excess;
    }
  }
  return worst;
}

}  // namespace hf
