// Conv's CPU kernel: dtype handling and the choice between oneDNN (conv_onednn.h, every
// geometry it accepts) and im2col + OpenBLAS (conv_im2col.h, the rest). bench/RESULTS.md
// ("Conv on the CPU") has the measurements behind the choice.
//
// f32 tensors are read and written in place; f16/bf16 go through f32 copies, per calling
// thread, grown to the largest layer seen.
#include <stdexcept>
#include <vector>

#include "runtime/cpu/conv_im2col.h"
#include "runtime/cpu/conv_onednn.h"
#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/nn_kernels.h"

namespace hf::cpu {
namespace {

struct HalfScratch {
  std::vector<float> x, w, b, y;
};

HalfScratch& half_scratch() {
  thread_local HalfScratch s;
  return s;
}

template <class T>
const float* as_f32(const TensorView& v, std::vector<float>& buf) {
  if constexpr (std::is_same_v<T, float>) {
    return v.as<const float>();
  } else {
    float* p = grow(buf, v.numel());
    convert_n(v.as<const T>(), p, v.numel());
    return p;
  }
}

// Dense f32 images `from` (n, a, b) copied to `to` as (n, b, a): NHWC <-> NCHW with
// a = H*W and b = C, or back, through the transposing copy kernel.
void transpose_images(const float* from, float* to, int64_t n, int64_t a, int64_t b,
                      ThreadPool& pool) {
  TensorView src{const_cast<float*>(from), DType::F32, {n, b, a}, {a * b, 1, b}};
  copy(src, contiguous_view(to, DType::F32, {n, b, a}), pool);
}

}  // namespace

Conv2d::Conv2d(const ConvGeometry& g, ThreadPool& pool, DType dtype, bool const_weights,
               std::shared_ptr<const void> weights_owner)
    : g_(g),
      pool_(pool),
      // f16/bf16 weights reach oneDNN through a per-thread f32 copy whose address other
      // Convs share: only f32 weights can be reordered once and kept.
      onednn_(OnednnConv::create(g, pool.size(), const_weights && dtype == DType::F32, {},
                                 dtype == DType::F32 ? std::move(weights_owner) : nullptr)) {}

Conv2d::~Conv2d() = default;

const char* Conv2d::describe() const {
  return onednn_ ? onednn_->describe() : "im2col+openblas";
}

void Conv2d::run_f32(const float* x, const float* w, const float* bias, float* y,
                     const OnBlock& on_block) {
  if (onednn_) {
    onednn_->run(x, w, bias, y, pool_, on_block);
    return;
  }
  if (!g_.nhwc) {
    conv2d_im2col_f32(g_, x, w, bias, y, pool_);
  } else {  // a geometry oneDNN refuses inside an NHWC chain: through NCHW copies
    thread_local std::vector<float> xt, yt;
    const int64_t hw = g_.win.in[0] * g_.win.in[1], ohw = g_.win.out[0] * g_.win.out[1];
    transpose_images(x, grow(xt, g_.n * hw * g_.c), g_.n, hw, g_.c, pool_);
    ConvGeometry nchw = g_;
    nchw.nhwc = false;
    conv2d_im2col_f32(nchw, xt.data(), w, bias, grow(yt, g_.n * ohw * g_.m), pool_);
    transpose_images(yt.data(), y, g_.n, g_.m, ohw, pool_);
  }
  for_each_block(g_.n * g_.m * g_.win.out[0] * g_.win.out[1], pool_, on_block);
}

void Conv2d::run(const TensorView& x, const TensorView& w, const TensorView* bias,
                 const TensorView& out, const OnBlock& on_block) {
  if (!x.is_contiguous() || !w.is_contiguous() || !out.is_contiguous() ||
      (bias && !bias->is_contiguous()))
    throw std::invalid_argument("conv2d: needs contiguous tensors");
  if (out.numel() == 0) return;
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloatStorage<T>) {
      HalfScratch& s = half_scratch();
      const float* xf = as_f32<T>(x, s.x);
      const float* wf = as_f32<T>(w, s.w);
      const float* bf = bias ? as_f32<T>(*bias, s.b) : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        run_f32(xf, wf, bf, out.as<float>(), on_block);
      } else {
        float* y = grow(s.y, out.numel());
        run_f32(xf, wf, bf, y, {});
        convert_n(y, out.as<T>(), out.numel());
        for_each_block(out.numel(), pool_, on_block);
      }
    } else {
      throw std::invalid_argument("conv2d: needs a float type");
    }
  });
}

void conv2d(const ConvGeometry& g, const TensorView& x, const TensorView& w, const TensorView* bias,
            const TensorView& out, ThreadPool& pool) {
  Conv2d(g, pool, x.dtype, false).run(x, w, bias, out);
}

}  // namespace hf::cpu
