// hotfuse fused kernel hf_4460f21bbe4c5d4f (C++), spec 4460f21bbe4c5d4f
// origin: graph 'layernorm', nodes: 1:centered 2:sq 3:var
#include "fusion/codegen_support.h"
#include "fusion/kernel_abi.h"

namespace hf_generated::hf_4460f21bbe4c5d4f {
// One element: inputs and outputs in their storage types.
static HF_HD void eval(const float x0, const float x1, float& y0, float& r) {
  const float e0 = x0;
  const float e1 = x1;
  const float e2 = ::hf::ModeFn<::hf::Mode::SUB>::apply(e0, e1);
  const float e3 = ::hf::ModeFn<::hf::Mode::MUL>::apply(e2, e2);
  y0 = e2;
  r = e3;
}

// n elements along the innermost dimension.
static HF_VECTOR_LOOP void seg(::hf::i64 n, const float* __restrict in0, const float x1, float* __restrict out0, float* __restrict red) {
  for (::hf::i64 j = 0; j < n; ++j) eval(in0[j], x1, out0[j], red[j]);
}

static void range(const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end, float* red) {
  if (begin >= end) return;
  const float* in0 = static_cast<const float*>(args->in[0]);
  const float* in1 = static_cast<const float*>(args->in[1]);
  float* out0 = static_cast<float*>(args->out[0]);
  const ::hf::i64* shape = args->shape;
  const ::hf::i64* st1 = args->in_strides[1];
  ::hf::i64 idx[2];
  ::hf::i64 rest = begin;
  for (int d = 1; d >= 0; --d) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
  }
  // Segments along the innermost dimension; the N-d index is carried, not recomputed.
  for (::hf::i64 i = begin; i < end;) {
    const ::hf::i64 avail = shape[1] - idx[1];
    const ::hf::i64 n = avail < end - i ? avail : end - i;
    const ::hf::i64 o1 = idx[0] * st1[0];
    const float x1 = in1[o1];
    seg(n, in0 + i, x1, out0 + i, red + (i - begin));
    i += n;
    idx[1] += n;
    for (int d = 1; d > 0 && idx[d] == shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}
}  // namespace hf_generated::hf_4460f21bbe4c5d4f

extern "C" void hf_4460f21bbe4c5d4f(const ::hf::fusion::KernelArgs* args, long long begin, long long end) {
  // [begin, end) are rows of row_len elements; each is reduced by the pairwise tree of
  // the unfused reduce, its leaves computed into `red` first.
  using Op = ::hf::fusion::gen::RSum;
  const ::hf::i64 len = args->row_len;
  float* out1 = static_cast<float*>(args->out[1]);
  alignas(64) float red[::hf::fusion::gen::kReduceLeaf];
  for (::hf::i64 row = begin; row < end; ++row) {
    const ::hf::i64 base = row * len;
    float acc = ::hf::fusion::gen::reduce_tree<Op, float>(0, len, [&](::hf::i64 r0, ::hf::i64 n) {
      ::hf_generated::hf_4460f21bbe4c5d4f::range(args, base + r0, base + r0 + n, red);
      return ::hf::fusion::gen::leaf_reduce<Op>(red, n);
    });
    acc = ::hf::fusion::gen::mean_of(acc, len);
    const float v = acc;
    out1[row] = v;
  }
}
