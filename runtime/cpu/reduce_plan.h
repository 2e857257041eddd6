// A reduction reduced to its canonical form: the kept axes (one output each) and the
// reduced axes, each coalesced, with size-1 axes dropped. Built by reduce.cpp, run by
// reduce_float.cpp / reduce_int.cpp.
#pragma once
#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/ops/reduce_mode.h"

namespace hf::cpu {

struct ReducePlan {
  ReduceMode mode = ReduceMode::SUM;
  DType dtype = DType::F32;
  const char* in = nullptr;
  char* out = nullptr;
  // Kept axes, outermost first: sizes, input strides, output strides.
  int kr = 0;
  int64_t kshape[kMaxRank] = {}, kin[kMaxRank] = {}, kout[kMaxRank] = {};
  int64_t M = 1;  // outputs
  // Reduced axes, sorted by decreasing input stride, so a contiguous run comes last.
  int rr = 0;
  int64_t rshape[kMaxRank] = {}, rin[kMaxRank] = {};
  int64_t L = 1;  // elements per output
};

void reduce_float(const ReducePlan& p, ThreadPool& pool);  // f32, f16, bf16, f64
void reduce_int(const ReducePlan& p, ThreadPool& pool);    // every integer type and bool
// i8, i16, u16, u32, u64 (reduce_int_wide.cpp; reduce_int calls it): a file of their own
// so the integer instantiations compile in parallel.
void reduce_int_wide(const ReducePlan& p, ThreadPool& pool);

}  // namespace hf::cpu
