// hotfuse fused kernel hf_2e3720251787036d (C++), spec 2e3720251787036d
// origin: graph 'ab_plus_c', nodes: 0:ab 1:y
#include "fusion/codegen_support.h"
#include "fusion/kernel_abi.h"

namespace hf_generated::hf_2e3720251787036d {
// One element: inputs and outputs in their storage types.
static HF_HD void eval(const float x0, const float x1, const float x2, float& y0) {
  const float e0 = x0;
  const float e1 = x1;
  const float e2 = x2;
  const float e3 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e1);
  const float e4 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e3, e2);
  y0 = e4;
}

// n consecutive elements.
static HF_VECTOR_LOOP void seg(::hf::i64 n, const float* __restrict in0, const float* __restrict in1, const float* __restrict in2, float* __restrict out0) {
  for (::hf::i64 j = 0; j < n; ++j) eval(in0[j], in1[j], in2[j], out0[j]);
}

static void range(const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end) {
  if (begin >= end) return;
  const float* in0 = static_cast<const float*>(args->in[0]);
  const float* in1 = static_cast<const float*>(args->in[1]);
  const float* in2 = static_cast<const float*>(args->in[2]);
  float* out0 = static_cast<float*>(args->out[0]);
  seg(end - begin, in0 + begin, in1 + begin, in2 + begin, out0 + begin);
}
}  // namespace hf_generated::hf_2e3720251787036d

extern "C" void hf_2e3720251787036d(const ::hf::fusion::KernelArgs* args, long long begin, long long end) {
  ::hf_generated::hf_2e3720251787036d::range(args, begin, end);
}
