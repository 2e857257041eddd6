// hotfuse fused kernel hf_4309bcd4611ad32f (C++), spec 4309bcd4611ad32f
// origin: graph 'bias_activation', nodes: 0:scaled 1:shifted 2:y
#include "fusion/codegen_support.h"
#include "fusion/kernel_abi.h"

namespace hf_generated::hf_4309bcd4611ad32f {
// One element: inputs and outputs in their storage types.
static HF_HD void eval(const float x0, const float x1, const float x2, float& y0) {
  const float e0 = x0;
  const float e1 = x1;
  const float e2 = x2;
  const float e3 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e0, e1);
  const float e4 = ::hf::ModeFn<::hf::Mode::ADD>::apply(e3, e2);
  const float e5 = ::hf::ModeFn<::hf::Mode::H_SWISH>::apply(e4);
  y0 = e5;
}

// n elements along the innermost dimension.
static HF_VECTOR_LOOP void seg(::hf::i64 n, const float* __restrict in0, const float x1, const float x2, float* __restrict out0) {
  for (::hf::i64 j = 0; j < n; ++j) eval(in0[j], x1, x2, out0[j]);
}

static void range(const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end) {
  if (begin >= end) return;
  const float* in0 = static_cast<const float*>(args->in[0]);
  const float* in1 = static_cast<const float*>(args->in[1]);
  const float* in2 = static_cast<const float*>(args->in[2]);
  float* out0 = static_cast<float*>(args->out[0]);
  const ::hf::i64* shape = args->shape;
  const ::hf::i64* st1 = args->in_strides[1];
  const ::hf::i64* st2 = args->in_strides[2];
  ::hf::i64 idx[4];
  ::hf::i64 rest = begin;
  for (int d = 3; d >= 0; --d) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
  }
  // Segments along the innermost dimension; the N-d index is carried, not recomputed.
  for (::hf::i64 i = begin; i < end;) {
    const ::hf::i64 avail = shape[3] - idx[3];
    const ::hf::i64 n = avail < end - i ? avail : end - i;
    const ::hf::i64 o1 = idx[1] * st1[1];
    const float x1 = in1[o1];
    const ::hf::i64 o2 = idx[1] * st2[1];
    const float x2 = in2[o2];
    seg(n, in0 + i, x1, x2, out0 + i);
    i += n;
    idx[3] += n;
    for (int d = 3; d > 0 && idx[d] == shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}
}  // namespace hf_generated::hf_4309bcd4611ad32f

extern "C" void hf_4309bcd4611ad32f(const ::hf::fusion::KernelArgs* args, long long begin, long long end) {
  ::hf_generated::hf_4309bcd4611ad32f::range(args, begin, end);
}
