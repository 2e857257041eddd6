// KernelSpec -> CUDA C++ for NVRTC (-std=c++17, any --gpu-architecture from compute_80).
// The source includes only fusion/codegen_support.h and the embedded headers it pulls in;
// values follow the same rules as the C++ generator (codegen_cpp.h): f16/bf16 expressions
// are rounded to their storage type, conversions and pow_const as runtime/cpu/.
//
// Kernel:  extern "C" __global__ void <name>(hf_generated::<name>::Params p)
//
// Params, passed by value (cuLaunchKernel's kernelParams = { buffer }): a struct of 8-byte
// fields, so offsets are 8 * position and there is no padding. In this order:
//   in<k>           const T*   every input k, its storage type (scalar inputs: element 0)
//   out<o>          T*         every output o (reduced outputs: one element per row)
//   shape[R]        i64        iteration space        (only when the spec is not flat)
//   in<k>_strides[R] i64       element strides         (only for strided inputs: neither
//                                                      dense nor scalar; 0 where broadcast)
//   numel           i64        elements of the iteration space
//   rows, row_len   i64        reduced rows and their length (only with a reduce; a
//                              row-stage kernel derives its rows from shape and numel)
// cuda_param_layout() lists exactly these fields with their offsets, and
// pack_cuda_params() fills the buffer from the KernelArgs the host kernels take, holding
// device pointers.
//
// Launch (cuda_launch_config() computes one):
// - without a reduce: any grid and block; a grid-stride loop covers [0, numel). Flat specs
//   move vector_width elements per thread and step with 16-byte loads/stores when every
//   pointer is aligned (checked at run time; scalar code otherwise).
// - with a reduce: blockDim.x a multiple of 32, at most 1024. Rows of at most
//   kCudaWarpRowMax elements take one warp each (shuffle reduction), longer rows one block
//   each (shuffles, then 32 partials in shared memory); rows are grid-strided.
// - row stages (KernelSpec::row_axis): blockDim.x a multiple of 32, at most 1024. Rows of
//   at most kCudaWarpRowStagesMax elements take one warp each (each phase's reduce a warp
//   shuffle every lane receives: many rows in flight, no barrier), longer rows one block
//   each (a block reduction every thread receives); rows are grid-strided.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fusion/kernel_abi.h"
#include "fusion/spec.h"

namespace hf::fusion {

std::string generate_cuda(const KernelSpec& spec, const std::string& kernel_name,
                          const std::string& origin_comment);

inline constexpr int kCudaBlock = 256;
inline constexpr long long kCudaWarpRowMax = 512;
// A row-stage kernel reads its row once per phase: a warp takes longer rows than a single
// reduction's, so that a normalisation over a transformer's hidden size (768-4096) runs as
// many rows at once as the device holds warps.
inline constexpr long long kCudaWarpRowStagesMax = 4096;

struct CudaParam {
  enum class Kind : uint8_t { Input, Output, Shape, InStrides, Numel, Rows, RowLen };
  Kind kind = Kind::Input;
  int index = -1;    // the input (Input, InStrides) or output (Output); -1 otherwise
  std::string name;  // the field in Params
  size_t offset = 0;
  size_t size = 0;  // bytes: 8, or 8 * rank for shape and strides
};

struct CudaParamLayout {
  std::vector<CudaParam> fields;
  size_t size = 0;  // sizeof(Params)
  size_t alignment = 8;
};

CudaParamLayout cuda_param_layout(const KernelSpec& spec);
inline std::vector<CudaParam> cuda_params(const KernelSpec& spec) {
  return cuda_param_layout(spec).fields;
}

// The Params bytes for `args` (device pointers in args.in / args.out).
std::vector<unsigned char> pack_cuda_params(const KernelSpec& spec, const KernelArgs& args);

// Elements per thread and step on the flat path (16 bytes of the widest element type).
int cuda_vector_width(const KernelSpec& spec);

struct CudaLaunch {
  unsigned grid = 1;
  unsigned block = kCudaBlock;
};
// A launch for `args` on a device with sm_count multiprocessors: enough blocks to cover
// the work, capped at a few waves (the loops are grid-strided). grid 0: nothing to do.
CudaLaunch cuda_launch_config(const KernelSpec& spec, const KernelArgs& args, int sm_count);

}  // namespace hf::fusion
