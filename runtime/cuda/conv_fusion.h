// Which Conv epilogues cuDNN's fused convolution computes: cudnnConvolutionBiasActivationForward
// gives y = relu(conv(x, w) + z + bias) in one call, so a Conv whose epilogue is a ReLU, or
// the residual add of a value of the output's shape and then a ReLU (ResNet's blocks), writes
// its output once instead of once per step. Pure, no device needed. Internal to
// runtime/cuda/ and the session's CUDA target.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "runtime/ir/epilogue.h"
#include "runtime/ir/shape.h"

namespace hf::cuda {

struct CudnnConvFusion {
  int residual = -1;  // the Fused node's input added before the ReLU (z), or -1: none
};

// The fusion for a Fused node's epilogue `e` (its inputs' shapes `inputs`, its output shape
// `out`), or nullopt when `e` is not a Conv's or cuDNN's form does not express its steps.
// The session's CUDA target asks it before detection claims a chain, the backend when it
// makes the kernel.
std::optional<CudnnConvFusion> cudnn_conv_fusion(const HeavyEpilogue& e,
                                                 const std::vector<Shape>& inputs,
                                                 const Shape& out);

// Why a Conv epilogue is not fused on CUDA, for the region's reason.
inline const std::string kCudnnConvFusionForm =
    "the CUDA backend fuses into a Conv only a ReLU or a residual add then a ReLU (cuDNN's "
    "fused convolution)";

}  // namespace hf::cuda
