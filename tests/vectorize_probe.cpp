// One loop per vm function, compiled by tests/vectorize.cmake with -fopt-info-vec-optimized:
// each HF_PROBE line must be reported as a vectorised loop.
#include "runtime/ops/scalar_math.h"

#define HF_PROBE(f)                                                       \
  void probe_##f(float* __restrict y, const float* __restrict x, int n) { \
    for (int i = 0; i < n; ++i) y[i] = hf::vm::f(x[i]);                   \
  }
#define HF_PROBE_EXPR(name, expr)                                            \
  void probe_##name(float* __restrict y, const float* __restrict x, int n) { \
    for (int i = 0; i < n; ++i) {                                            \
      const float v = x[i];                                                  \
      y[i] = expr;                                                           \
    }                                                                        \
  }
#define HF_PROBE2(f)                                                                        \
  void probe_##f(float* __restrict z, const float* __restrict x, const float* __restrict y, \
                 int n) {                                                                   \
    for (int i = 0; i < n; ++i) z[i] = hf::vm::f(x[i], y[i]);                               \
  }

HF_PROBE(exp)
HF_PROBE(expm1)
HF_PROBE(log)
HF_PROBE(log1p)
HF_PROBE(sin)
HF_PROBE(cos)
HF_PROBE(tan)
HF_PROBE(tanh)
HF_PROBE(sigmoid)
HF_PROBE(erf)
HF_PROBE(erfc)
HF_PROBE(erfinv)
HF_PROBE(erfcinv)
HF_PROBE(asin)
HF_PROBE(acos)
HF_PROBE(atan)
HF_PROBE2(atan2)
HF_PROBE(sinh)
HF_PROBE(cosh)
HF_PROBE(asinh)
HF_PROBE(acosh)
HF_PROBE(atanh)
HF_PROBE2(pow)
HF_PROBE(sqrt)
HF_PROBE(floor)
HF_PROBE(ceil)
HF_PROBE(round)
HF_PROBE(trunc)
HF_PROBE2(fmod)
HF_PROBE(fabs)
// A select with a constant arm feeding a function with range checks: without -fno-tree-pre,
// PRE splits the select into paths whose boolean phis GCC 12 cannot vectorise.
HF_PROBE_EXPR(exp_relu, hf::vm::exp(hf::relu(v)))
HF_PROBE_EXPR(tanh_relu, hf::vm::tanh(hf::relu(v)))
HF_PROBE_EXPR(exp_clip, hf::vm::exp(hf::clip(v, -1.0f, 1.0f)))
HF_PROBE_EXPR(gelu_grad, (hf::ModeFn<hf::Mode::GELU_GRAD>::apply(v, 0.5f)))
