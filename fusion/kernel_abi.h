// The calling convention of generated host (C++) kernels. Included by generated sources,
// so it uses only hd.h types and no standard header.
//
// A kernel computes part of its iteration space (rank, shape at run time):
//   extern "C" void hf_<hash>(const hf::fusion::KernelArgs* args, long long begin, long long end);
// Without a reduce, [begin, end) are flat element indices of the iteration space. With a
// trailing reduce over axes [first_axis, rank), they are row indices: a row is one
// element of the reduced output, and the kernel reduces its whole row. A multi-stage row
// kernel (KernelSpec::row_axis, fusion/row_stages.h) is launched like a flat one, over flat
// element indices, and does every row whose first element lies in [begin, end): any split
// of [0, numel) does each row once, so the runtime needs no row-aware launch (rows and
// row_len are not read; the row length comes from shape). The runtime splits the range over
// its thread pool.
#pragma once
#include "runtime/ops/hd.h"

namespace hf::fusion {

inline constexpr int kAbiMaxRank = 8;
inline constexpr int kAbiMaxInputs = 64;
inline constexpr int kAbiMaxOutputs = 16;

struct KernelArgs {
  const void* in[kAbiMaxInputs];
  void* out[kAbiMaxOutputs];
  i64 shape[kAbiMaxRank];                    // iteration space
  i64 in_strides[kAbiMaxInputs][kAbiMaxRank];  // elements; 0 on broadcast dimensions
  i64 numel;                                 // product of shape
  i64 rows;                                  // reduce kernels: numel / row_len
  i64 row_len;                               // reduce kernels: elements per reduced row
  // Flat kernels without a reduce: nonzero when the outputs should bypass the cache
  // (fusion/host_stream.h); the runtime decides from the bytes moved.
  i64 stream_out;
};

using HostKernelFn = void (*)(const KernelArgs* args, i64 begin, i64 end);

}  // namespace hf::fusion
