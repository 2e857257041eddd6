// CUDA kernels for the convolution, pooling and data-movement nodes (Conv through cuDNN,
// MaxPool/AveragePool and Gather as AOT kernels, Slice and Concat as strided copies), and
// Convs with a fused epilogue.
// Internal to runtime/cuda/: CudaBackend::make_kernel delegates these ops here.
#pragma once
#include <memory>

#include "runtime/exec/backend.h"

namespace hf::cuda {

class CudaBackend;

// hf::Error naming the node when the op, dtype or geometry has no CUDA kernel.
std::unique_ptr<Kernel> make_nn_kernel(CudaBackend& b, const Graph& g, const Node& n);

// A Fused node carrying a HeavyEpilogue (runtime/ir/epilogue.h) that cuDNN's fused
// convolution computes (conv_fusion.h): one call. hf::Error naming the node otherwise.
std::unique_ptr<Kernel> make_epilogue_kernel(CudaBackend& b, const Graph& g, const Node& n);

}  // namespace hf::cuda
