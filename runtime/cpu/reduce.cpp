// reduce(): validates, builds the canonical ReducePlan and hands it to the typed kernels.
#include <algorithm>
#include <string>

#include "runtime/cpu/kernels.h"
#include "runtime/cpu/reduce_plan.h"

namespace hf::cpu {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("reduce: " + what);
}

}  // namespace

void reduce(ReduceMode mode, const TensorView& in, std::span<const int> axes, const TensorView& out,
            ThreadPool& pool) {
  check_rank(in, "reduce");
  check_rank(out, "reduce");
  if (in.dtype != out.dtype) fail("output dtype differs from the input's");
  const int rank = in.rank();
  if (out.rank() != rank) fail("output must keep the input's rank (keepdims layout)");
  bool reduced[kMaxRank] = {};
  int prev = -1;
  for (int a : axes) {
    if (a <= prev || a >= rank) fail("axes must be sorted, unique and in [0, rank)");
    reduced[a] = true;
    prev = a;
  }
  ReducePlan p;
  p.mode = mode;
  p.dtype = in.dtype;
  p.in = static_cast<const char*>(in.data);
  p.out = static_cast<char*>(out.data);
  for (int d = 0; d < rank; ++d) {
    const int64_t want = reduced[d] ? 1 : in.shape[d];
    if (out.shape[d] != want)
      fail("output shape " + to_string(out.shape) + " does not match input " + to_string(in.shape) +
           " reduced");
    if (reduced[d]) {
      p.L *= in.shape[d];
      if (in.shape[d] == 1) continue;
      p.rshape[p.rr] = in.shape[d];
      p.rin[p.rr] = in.strides[d];
      ++p.rr;
    } else {
      p.M *= in.shape[d];
      if (in.shape[d] == 1) continue;
      const int k = p.kr;
      if (k > 0 && p.kin[k - 1] == in.strides[d] * in.shape[d] &&
          p.kout[k - 1] == out.strides[d] * in.shape[d]) {
        p.kshape[k - 1] *= in.shape[d];
        p.kin[k - 1] = in.strides[d];
        p.kout[k - 1] = out.strides[d];
        continue;
      }
      p.kshape[k] = in.shape[d];
      p.kin[k] = in.strides[d];
      p.kout[k] = out.strides[d];
      ++p.kr;
    }
  }
  if (p.M == 0) return;

  // The reduction order is free: walk the reduced axes outermost-in-memory first so that a
  // contiguous run of the input ends up innermost, then merge what memory lets us merge.
  int order[kMaxRank];
  for (int i = 0; i < p.rr; ++i) order[i] = i;
  // Insertion sort, stable: std::stable_sort would allocate a buffer.
  for (int i = 1; i < p.rr; ++i)
    for (int j = i; j > 0 && std::abs(p.rin[order[j]]) > std::abs(p.rin[order[j - 1]]); --j)
      std::swap(order[j], order[j - 1]);
  int64_t rs[kMaxRank], ri[kMaxRank];
  int rr = 0;
  for (int i = 0; i < p.rr; ++i) {
    const int64_t s = p.rshape[order[i]], st = p.rin[order[i]];
    if (rr > 0 && ri[rr - 1] == st * s) {
      rs[rr - 1] *= s;
      ri[rr - 1] = st;
      continue;
    }
    rs[rr] = s;
    ri[rr] = st;
    ++rr;
  }
  p.rr = rr;
  std::copy(rs, rs + rr, p.rshape);
  std::copy(ri, ri + rr, p.rin);

  if (p.L == 1 && mode != ReduceMode::SUM_SQR) return copy(in, out, pool);
  if (p.L == 1 && in.dtype != DType::Bool) {
    return elemwise(Mode::SQUARE, std::span<const TensorView>(&in, 1), out, pool);
  }
  if (p.L == 1) return copy(in, out, pool);  // bool: x * x == x
  if (is_float(in.dtype))
    reduce_float(p, pool);
  else
    reduce_int(p, pool);
}

}  // namespace hf::cpu
