// hotfuse fused kernel hf_0565480d48789fc6 (C++), spec 0565480d48789fc6
// origin: graph 'gelu_chain', nodes: 0:inv_sqrt2 1:scaled 2:erf 3:one 4:one_plus 5:x_times 6:half 7:y
#include "fusion/codegen_support.h"
#include "fusion/kernel_abi.h"

namespace hf_generated::hf_0565480d48789fc6 {
// One element: inputs and outputs in their storage types.
static HF_HD void eval(const float x0, float& y0) {
  const float e0 = x0;
  const float e1 = 0.707106769f;
  const float e2 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e1);
  const float e3 = ::hf::ModeFn<::hf::Mode::ERF>::apply(e2);
  const float e4 = 1.0f;
  const float e5 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e3, e4);
  const float e6 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e5);
  const float e7 = 0.5f;
  const float e8 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e6, e7);
  y0 = e8;
}

// n consecutive elements.
static HF_VECTOR_LOOP void seg(::hf::i64 n, const float* __restrict in0, float* __restrict out0) {
  for (::hf::i64 j = 0; j < n; ++j) eval(in0[j], out0[j]);
}

static void range(const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end) {
  if (begin >= end) return;
  const float* in0 = static_cast<const float*>(args->in[0]);
  float* out0 = static_cast<float*>(args->out[0]);
  seg(end - begin, in0 + begin, out0 + begin);
}
}  // namespace hf_generated::hf_0565480d48789fc6

extern "C" void hf_0565480d48789fc6(const ::hf::fusion::KernelArgs* args, long long begin, long long end) {
  ::hf_generated::hf_0565480d48789fc6::range(args, begin, end);
}
