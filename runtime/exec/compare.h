// Element-wise comparison of two results, as used to validate fused against unfused runs.
#pragma once
#include "runtime/ir/tensor.h"

namespace hf {

// The tolerances fused kernels are held to: f32 1e-5 relative, f16/bf16 1e-3 (they are
// computed in f32 but unfused runs round every intermediate), integers and bool exact.
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance fused_tolerance(DType t);

// What a heavy op fused with its elementwise epilogue is held to: fused_tolerance, with the
// absolute term scaled by the largest |expected| in `expected` (the slice compared). The
// fused op may run another library kernel than the unfused one (oneDNN picks by its
// post-ops), which adds its products in another order: the results then differ by rounding
// of the sums, and where the epilogue's residual add cancels the product (a ResNet block)
// the result is small while the difference is not. A wrong epilogue (a missing bias, the
// wrong activation or operand) is off by a share of the values themselves.
Tolerance heavy_epilogue_tolerance(const TensorView& expected);

// What the launcher's end-to-end check of a whole fused graph allows: f32 1e-4 relative plus
// 1e-4 absolute, f16/bf16 1e-2 and 1e-3, integers and bool exact. Every region is held to
// fused_tolerance when it is swapped in; downstream of it, a legitimately reassociated
// reduction (a fused mean over a transposed view) is amplified by what follows (a 2048-wide
// MatMul whose terms cancel to a small logit), so whole outputs get more room.
Tolerance graph_output_tolerance(DType t);

struct Mismatch {
  int64_t index = -1;  // the worst element beyond tolerance; -1 when everything matches
  int64_t count = 0;   // elements beyond tolerance
  double expected = 0, actual = 0;
  // max |actual - expected| / (atol + rtol * |expected|) over the elements that are not
  // NaN/inf: how much of the tolerance the worst element used (<= 1 when all match).
  double worst_ratio = 0;
};

// |actual - expected| <= atol + rtol * |expected|; NaN matches NaN, infinities match in
// sign. Both tensors contiguous, same dtype and shape.
Mismatch compare(const TensorView& expected, const TensorView& actual, Tolerance tol);

}  // namespace hf
