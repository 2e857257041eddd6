// The layout the CUDA backend's Conv chains run in: HOTFUSE_CUDA_LAYOUT.
//
//   nhwc (default)  the session moves chains of Convs to NHWC (runtime/ir/nhwc_layout.h, as
//                   on the CPU): the format of cuDNN's tensor-core kernels, which otherwise
//                   transpose NCHW tensors in and out of each Conv.
//   nchw            every Conv runs in the graph's NCHW (the A/B for tools/gpu-check.sh).
//
// Pure, no device needed. Internal to runtime/cuda/ and the session's CUDA target.
#pragma once

namespace hf::cuda {

// Whether Conv chains move to NHWC; hf::Error naming the variable for any other value.
bool nhwc_conv_chains_enabled();

}  // namespace hf::cuda
