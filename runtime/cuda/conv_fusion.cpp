#include "runtime/cuda/conv_fusion.h"

namespace hf::cuda {

std::optional<CudnnConvFusion> cudnn_conv_fusion(const ConvEpilogue& e) {
  const std::vector<ConvPostOp>& p = e.post;
  if (p.size() == 1 && p[0].kind == ConvPostOp::Relu) return CudnnConvFusion{};
  if (p.size() == 2 && p[0].kind == ConvPostOp::Add && p[0].operand >= 0 && !p[0].per_channel &&
      p[1].kind == ConvPostOp::Relu)
    return CudnnConvFusion{e.operands.at(p[0].operand)};
  return std::nullopt;
}

}  // namespace hf::cuda
