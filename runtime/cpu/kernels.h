// The unfused CPU kernels: one function per op family.
//
// Contracts shared by all of them:
// - Views may have any strides (stride 0 = broadcast); outputs are written through their
//   strides too, but the fast paths are for contiguous outputs.
// - Element-wise kernels take inputs already broadcast to the output's shape
//   (TensorView::broadcast_to) and work in blocks: inputs that are contiguous and already in
//   the compute type are read in place, others are gathered/converted into per-thread
//   scratch; results go straight to the output when it is contiguous in the compute type.
// - No allocation on the call path (scratch is per-thread, sized once).
// - Work is split over `pool`; tiny problems stay on the calling thread.
#pragma once
#include <span>

#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/tensor.h"
#include "runtime/ops/mode.h"
#include "runtime/ops/reduce_mode.h"

namespace hf::cpu {

// out = mode(inputs...). Inputs share one dtype; out has that dtype, or bool for Compare and
// Predicate modes. f16/bf16 compute in f32. Inputs may also be given un-broadcast (lower
// rank, size-1 axes): they are read as out.shape without building a view. `out` may be the
// same memory as an input (in place), never a partial overlap. An unsupported (mode, dtype)
// throws std::invalid_argument naming both.
void elemwise(Mode mode, std::span<const TensorView> inputs, const TensorView& out,
              ThreadPool& pool);

// out = in ^ exponent (float types). Integer exponents use repeated multiplication,
// 0.5 uses sqrt, -1 a reciprocal; otherwise ModeFn<POW>.
void pow_const(const TensorView& in, float exponent, const TensorView& out, ThreadPool& pool);

// Same shape, any dtype to any dtype. Float -> integer truncates toward zero and saturates
// (NaN -> 0); anything -> bool is `!= 0` (NaN -> true); bool -> number is 0 or 1.
// Integer -> narrower integer wraps (two's complement, as NumPy's astype); integer -> f16/bf16
// rounds through f32 (a second rounding only for |x| > 2^24).
void type_convert(const TensorView& in, const TensorView& out, ThreadPool& pool);

// Same shape and dtype; materialises a strided/broadcast view (Dimshuffle, Broadcast,
// Reshape) into `out`.
void copy(const TensorView& in, const TensorView& out, ThreadPool& pool);

// Reduces `in` over `axes` (sorted, unique, non-negative). `out` has in's rank with the
// reduced axes of size 1 (keepdims layout; the caller reshapes for keepdims=0). Floats
// accumulate in f32 over a fixed pairwise tree (a SUM of 2^24 elements stays within ~1e-7
// relative), integers in wrapping i64; the tree depends only on the shapes, so results are
// bitwise the same for any pool size. MIN/MAX propagate NaN; MEAN divides at the end
// (truncating for integers).
void reduce(ReduceMode mode, const TensorView& in, std::span<const int> axes,
            const TensorView& out, ThreadPool& pool);

// NumPy matmul over the last two axes with broadcast batch axes; rank >= 2 on both sides.
// f32 through BLAS (sgemm); f16/bf16 converted to f32 and back. Operands sgemm cannot read
// in place (no unit stride) and all f16/bf16 operands go through per-thread f32 buffers that
// grow to the largest matrix seen (the first call of a new size allocates, later ones do
// not). Batches run one sgemm after another; OpenBLAS's own threads parallelise each one.
void matmul(const TensorView& a, const TensorView& b, const TensorView& out, ThreadPool& pool);

}  // namespace hf::cpu
