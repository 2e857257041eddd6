#include "runtime/cuda/conv_fusion.h"

#include "runtime/ir/conv_post_ops.h"
#include "runtime/ir/nn_geometry.h"

namespace hf::cuda {

std::optional<CudnnConvFusion> cudnn_conv_fusion(const HeavyEpilogue& e,
                                                 const std::vector<Shape>& inputs,
                                                 const Shape& out) {
  if (e.heavy.op != OpType::Conv) return std::nullopt;
  const ConvGeometry geo =
      conv_geometry(e.heavy, inputs.at(e.heavy_inputs.at(0)), inputs.at(e.heavy_inputs.at(1)));
  const std::optional<ConvEpilogue> post = conv_epilogue(e, inputs, out, geo.nhwc);
  if (!post) return std::nullopt;
  const std::vector<ConvPostOp>& p = post->post;
  if (p.size() == 1 && p[0].kind == ConvPostOp::Relu) return CudnnConvFusion{};
  if (p.size() == 2 && p[0].kind == ConvPostOp::Add && p[0].operand >= 0 && !p[0].per_channel &&
      p[1].kind == ConvPostOp::Relu)
    return CudnnConvFusion{post->operands.at(p[0].operand)};
  return std::nullopt;
}

}  // namespace hf::cuda
