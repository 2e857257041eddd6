// How exactly f32 arithmetic must follow its definition, for the whole process:
// $HOTFUSE_F32_PRECISION, named after PyTorch's torch.set_float32_matmul_precision.
//
//   high (default)  kernels may use algorithms that round differently and more, within the
//                   bounds docs/math.md ("Precision of f32 convolutions") states: CPU 3x3
//                   Convs by Winograd's F(4x4, 3x3); CUDA Convs and MatMuls on TF32 tensor
//                   cores (runtime/cuda/cuda_math.h).
//   highest         direct algorithms only: each output a sum of f32 products in f32 (the
//                   order is the library's).
#pragma once

namespace hf {

enum class F32Precision { High, Highest };

// Read on each call (kernels are planned once); hf::Error naming the variable for a value
// other than high or highest.
F32Precision f32_precision();

}  // namespace hf
