// hotfuse fused kernel hf_49dc9bddb4678d2c (C++), spec 49dc9bddb4678d2c
// origin: graph 'activation_chain', nodes: 0:k1_1 1:mul_1_1 2:k0_3 3:add_0_3 4:sigmoid 5:gate 6:k0_2 7:sub_0_2 8:tanh 9:x2 10:neg_x2 11:gauss 12:damped 13:relu 14:y
#include "fusion/codegen_support.h"
#include "fusion/kernel_abi.h"

namespace hf_generated::hf_49dc9bddb4678d2c {
// One element: inputs and outputs in their storage types.
static HF_HD void eval(const float x0, float& y0) {
  const float e0 = x0;
  const float e1 = 1.10000002f;
  const float e2 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e1);
  const float e3 = 0.300000012f;
  const float e4 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e2, e3);
  const float e5 = ::hf::ModeFn<::hf::Mode::SIGMOID>::apply(e4);
  const float e6 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e5, e0);
  const float e7 = 0.200000003f;
  const float e8 = ::hf::ModeFn<::hf::Mode::SUB>::apply(e6, e7);
  const float e9 = ::hf::ModeFn<::hf::Mode::TANH>::apply(e8);
  const float e10 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e0);
  const float e11 = ::hf::ModeFn<::hf::Mode::NEGATE>::apply(e10);
  const float e12 = ::hf::ModeFn<::hf::Mode::EXP>::apply(e11);
  const float e13 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e9, e12);
  const float e14 = ::hf::ModeFn<::hf::Mode::RELU>::apply(e0);
  const float e15 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e13, e14);
  y0 = e15;
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
}  // namespace hf_generated::hf_49dc9bddb4678d2c

extern "C" void hf_49dc9bddb4678d2c(const ::hf::fusion::KernelArgs* args, long long begin, long long end) {
  ::hf_generated::hf_49dc9bddb4678d2c::range(args, begin, end);
}
