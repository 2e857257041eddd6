// Which Conv epilogues cuDNN's fused convolution computes: cudnnConvolutionBiasActivationForward
// gives y = relu(conv(x, w) + z + bias) in one call, so a Conv whose epilogue is a ReLU, or
// the residual add of a value of the output's shape and then a ReLU (ResNet's blocks), writes
// its output once instead of once per step. Pure, no device needed. Internal to
// runtime/cuda/ and the session's CUDA target.
#pragma once
#include <optional>
#include <string>

#include "runtime/ir/conv_post_ops.h"

namespace hf::cuda {

struct CudnnConvFusion {
  int residual = -1;  // the Fused node's input added before the ReLU (z), or -1: none
};

// The fusion for `e`'s post-ops (conv_epilogue), or nullopt when cuDNN's form does not
// express them.
std::optional<CudnnConvFusion> cudnn_conv_fusion(const ConvEpilogue& e);

// Why a Conv epilogue is not fused on CUDA, for the region's reason.
inline const std::string kCudnnConvFusionForm =
    "the CUDA backend fuses into a Conv only a ReLU or a residual add then a ReLU (cuDNN's "
    "fused convolution)";

}  // namespace hf::cuda
