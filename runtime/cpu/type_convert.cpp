// Dtype conversion, all 13x13 pairs; the element rule is convert<To, From> in kernel_util.h.
// This file instantiates the pairs from the core source types, type_convert_wide.cpp those
// from f64 and i8/i16/u16/u32/u64 (type_convert_range.h).
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/type_convert_range.h"

namespace hf::cpu {

void type_convert_wide(const convert_detail::ConvertJob& j, DType from, DType to, ThreadPool& pool);

void type_convert(const TensorView& in, const TensorView& out, ThreadPool& pool) {
  using namespace convert_detail;
  if (in.dtype == out.dtype) return copy(in, out, pool);
  check_rank(in, "type_convert");
  check_rank(out, "type_convert");
  ConvertJob j;
  j.total = out.numel();
  if (j.total == 0) return;
  j.l = unary_layout(in, out, "type_convert");
  const Layout& l = j.l;
  j.in = in.data;
  j.out = out.data;
  j.stream = l.rank == 1 && l.stride[0][0] == 1 && l.stride[1][0] == 1 &&
             should_stream(j.total * (dtype_size(in.dtype) + dtype_size(out.dtype)));
  if (is_core_dtype(in.dtype))
    run_convert<false>(j, in.dtype, out.dtype, pool);
  else
    type_convert_wide(j, in.dtype, out.dtype, pool);
}

}  // namespace hf::cpu
