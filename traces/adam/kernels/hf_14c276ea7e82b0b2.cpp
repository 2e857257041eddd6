// hotfuse fused kernel hf_14c276ea7e82b0b2 (C++), spec 14c276ea7e82b0b2
// origin: graph 'adam', nodes: 0:beta1 1:m_decay 2:one_minus_beta1 3:g_scaled 4:m_new 5:g_sq 6:beta2 7:v_decay 8:one_minus_beta2 9:g_sq_scaled 10:v_new 11:bias_corr1 12:m_hat 13:bias_corr2 14:v_hat 15:sqrt_v 16:eps 17:denom 18:ratio 19:lr 20:step 21:p_new
#include "fusion/codegen_support.h"
#include "fusion/kernel_abi.h"

namespace hf_generated::hf_14c276ea7e82b0b2 {
// One element: inputs and outputs in their storage types.
static HF_HD void eval(const float x0, const float x1, const float x2, const float x3, float& y0, float& y1, float& y2) {
  const float e0 = x0;
  const float e1 = x1;
  const float e2 = x2;
  const float e3 = x3;
  const float e4 = 0.899999976f;
  const float e5 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e4);
  const float e6 = 0.100000001f;
  const float e7 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e1, e6);
  const float e8 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e5, e7);
  const float e9 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e1, e1);
  const float e10 = 0.999000013f;
  const float e11 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e2, e10);
  const float e12 = 0.00100000005f;
  const float e13 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e9, e12);
  const float e14 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e11, e13);
  const float e15 = 0.65132153f;
  const float e16 = ::hf::ModeFn<::hf::Mode::TRUE_DIV>::apply(e8, e15);
  const float e17 = 0.00995511934f;
  const float e18 = ::hf::ModeFn<::hf::Mode::TRUE_DIV>::apply(e14, e17);
  const float e19 = ::hf::ModeFn<::hf::Mode::SQRT>::apply(e18);
  const float e20 = 9.99999994e-09f;
  const float e21 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e19, e20);
  const float e22 = ::hf::ModeFn<::hf::Mode::TRUE_DIV>::apply(e16, e21);
  const float e23 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e22, e12);
  const float e24 = ::hf::ModeFn<::hf::Mode::SUB>::apply(e3, e23);
  y0 = e8;
  y1 = e14;
  y2 = e24;
}

// n consecutive elements.
static HF_VECTOR_LOOP void seg(::hf::i64 n, const float* __restrict in0, const float* __restrict in1, const float* __restrict in2, const float* __restrict in3, float* __restrict out0, float* __restrict out1, float* __restrict out2) {
  for (::hf::i64 j = 0; j < n; ++j) eval(in0[j], in1[j], in2[j], in3[j], out0[j], out1[j], out2[j]);
}

static void range(const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end) {
  if (begin >= end) return;
  const float* in0 = static_cast<const float*>(args->in[0]);
  const float* in1 = static_cast<const float*>(args->in[1]);
  const float* in2 = static_cast<const float*>(args->in[2]);
  const float* in3 = static_cast<const float*>(args->in[3]);
  float* out0 = static_cast<float*>(args->out[0]);
  float* out1 = static_cast<float*>(args->out[1]);
  float* out2 = static_cast<float*>(args->out[2]);
  seg(end - begin, in0 + begin, in1 + begin, in2 + begin, in3 + begin, out0 + begin, out1 + begin, out2 + begin);
}
}  // namespace hf_generated::hf_14c276ea7e82b0b2

extern "C" void hf_14c276ea7e82b0b2(const ::hf::fusion::KernelArgs* args, long long begin, long long end) {
  ::hf_generated::hf_14c276ea7e82b0b2::range(args, begin, end);
}
