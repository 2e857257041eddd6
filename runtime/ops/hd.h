// Portability macros for code shared by the host compiler, nvcc and NVRTC.
//
// Everything under runtime/ops/ that is marked HF_HD must compile in all three. Under
// NVRTC no standard header is available, so these files include nothing from the C++
// library when __CUDACC_RTC__ is defined and use only the builtin integer types.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define HF_HD __host__ __device__ __forceinline__
#else
#define HF_HD inline __attribute__((always_inline))
#endif

// True while compiling device code (nvcc device pass or NVRTC).
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define HF_DEVICE_CODE 1
#else
#define HF_DEVICE_CODE 0
#endif

namespace hf {
using i8 = signed char;
using u8 = unsigned char;
using i16 = short;
using u16 = unsigned short;
using i32 = int;
using u32 = unsigned int;
using i64 = long long;
using u64 = unsigned long long;
static_assert(sizeof(i64) == 8 && sizeof(i32) == 4 && sizeof(u16) == 2, "LP64 expected");
}  // namespace hf
