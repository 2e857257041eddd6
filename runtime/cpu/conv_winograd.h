// f32 3x3 stride-1 convolution by Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2016), for the graph's NHWC Conv
// chains (ResNet's 3x3 Convs).
//
// Each 4x4 block of outputs (a tile) comes from the 6x6 block of inputs under it:
// Y = A^T [(G g G^T) . (B^T d B)] A, where the elementwise product over the 36 positions sums
// over input channels. So the 36 positions are 36 matrix products [tiles x C] x [C x M],
// a batched GEMM (oneDNN's matmul, single-threaded on the pool like every primitive here),
// and a tile costs 36 multiply-adds per channel pair where the direct convolution costs 144.
// The price is rounding: the transforms' constants (up to 8, and 1/24 in G) make the error a
// small multiple of the direct convolution's (docs/math.md states the bound the tests check),
// which HOTFUSE_F32_PRECISION=highest declines.
//
// Weights are transformed once when constant (36/9 = 4x their size, shared like every packed
// weight). Per call, a wave of images at a time (about 4 MB of transformed input), the pool
// first transforms every input tile into a buffer of the calling thread, then each slice
// multiplies a block of tiles by a block of output channels and transforms its outputs
// back, with the bias and the post-ops applied in registers.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "runtime/cpu/out_block.h"
#include "runtime/ir/conv_post_ops.h"
#include "runtime/ir/nn_geometry.h"

namespace hf::cpu {

class WinogradConv {
 public:
  // Whether g is a Conv this kernel runs and beats the direct one on (bench/conv_bench,
  // hotfuse_nhwc against hotfuse_nhwc_direct): NHWC, group 1, 3x3, stride and dilation 1,
  // channels in multiples of 8, at least 16 output tiles of 4x4 per image.
  static bool suits(const ConvGeometry& g);
  // nullptr at f32_precision() highest (runtime/ir/f32_precision.h), or when g does not
  // suit, or oneDNN refuses the batched GEMM.
  // Arguments as for OnednnConv::create.
  static std::unique_ptr<WinogradConv> create(const ConvGeometry& g, int slices, bool const_weights,
                                              const std::vector<ConvPostOp>& post = {},
                                              std::shared_ptr<const void> weights_owner = nullptr);
  ~WinogradConv();

  // As OnednnConv::run: NHWC x and y, OIHW w; on_block gets each block as written.
  void run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
           const OnBlock& on_block, std::span<const float* const> operands);

  // e.g. "winograd F(4x4,3x3), 8 tile blocks x 1, brg:avx2".
  const char* describe() const;

  struct Impl;

 private:
  explicit WinogradConv(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hf::cpu
