// f32 2-D convolution through oneDNN (Debian's libdnnl), run on hotfuse's thread pool.
//
// Like every oneDNN primitive here (onednn_context.h says why), each runs on one thread and
// the pool splits the convolution into slices, one primitive each.
//
// Four plans, each made once per geometry (at plan time), measured in bench/conv_bench:
//  - 1x1, group 1: plain NCHW in and out (oneDNN's gemm path), each slice a block of output
//    channels of one image. No reorder of activations or weights.
//  - everything else: activations in NHWC, oneDNN's fast layout for direct and depthwise
//    kernels (brgconv, brdgmm). Slices are bands of output rows of one image; the pool first
//    reorders the input to NHWC band by band, then each slice convolves its band (reading
//    the rows its window needs) and reorders its rows back to NCHW. Weights are reordered
//    to the primitive's layout once when they are constant, else on every call.
//  - a Conv whose weights outweigh its activations (small images, many channels: ResNet's
//    last stages; with AVX-512 only where the bands would hold under 64 output pixels each:
//    oneDNN runs bands in brgconv, faster above that), but NCHW 1x1 ones: activations in
//    oneDNN's blocked layout
//    (blocked_layout()), slices of whole channel blocks of the output, each reading only its
//    weights. The input is
//    reordered in and each slice's channels out per call; on such images that is cheap
//    next to bands that split a few rows unevenly and each read all the weights.
//  - a Conv WinogradConv::create takes (3x3 stride-1 Convs of the graph's NHWC chains,
//    unless HOTFUSE_F32_PRECISION=highest): Winograd's F(4x4, 3x3) (conv_winograd.h).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "runtime/cpu/out_block.h"
#include "runtime/ir/conv_post_ops.h"
#include "runtime/ir/nn_geometry.h"

namespace hf::cpu {

// The blocked plan's activation layout on this machine: "nChw16c" where oneDNN runs AVX-512
// kernels (its nChw8c kernels there are the AVX2 ones, at half the width), else "nChw8c":
// a channel block is one vector register of floats.
const char* blocked_layout();

class OnednnConv {
 public:
  // nullptr when oneDNN cannot run this geometry (the caller keeps its own kernel).
  // slices: how many pieces to cut each image into (the pool's size).
  // const_weights: the weights' data and address stay the same for every run.
  // With post-ops, only the plans whose primitives write the graph's tensor in place take
  // them (NCHW 1x1, and Convs of the graph's own NHWC chains); else, or if oneDNN refuses
  // them, nullptr.
  // weights_owner: the constant the weights are (its ConstantData); its packed copy is then
  // shared with every other kernel packing it the same way (packed_weights.h).
  static std::unique_ptr<OnednnConv> create(const ConvGeometry& g, int slices, bool const_weights,
                                            const std::vector<ConvPostOp>& post = {},
                                            std::shared_ptr<const void> weights_owner = nullptr);
  ~OnednnConv();

  // y = conv(x, w) + bias (bias may be null); dense NCHW / OIHW f32. Safe to call from
  // several threads (calls on one object take turns). Each slice's block of y is passed to
  // `on_block` right after it is written.
  void run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
           const OnBlock& on_block = {});
  // With post-ops: `operands` are what their `operand` indices name (dense).
  void run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
           std::span<const float* const> operands);

  // Which plan was taken and oneDNN's implementation, e.g. "nhwc brgconv:avx512_core".
  const char* describe() const;

  struct Impl;

 private:
  explicit OnednnConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hf::cpu
