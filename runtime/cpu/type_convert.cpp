// Dtype conversion, all 7x7 pairs; the element rule is convert<To, From> in kernel_util.h.
#include <algorithm>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/stream_store.h"

namespace hf::cpu {
namespace {

constexpr int64_t kTile = 1024;
constexpr int64_t kGrain = 32768;

struct ConvertJob {
  Layout l;  // operand 0: in, operand 1: out
  const void* in = nullptr;
  void* out = nullptr;
  int64_t total = 0;
  bool stream = false;  // contiguous and larger than the LLC: streaming stores
};

// Converts through an L1 buffer so the output can be written with streaming stores.
template <class From, class To>
void convert_streaming(const From* __restrict in, To* out, int64_t n) {
  constexpr int64_t kChunk = 2048;
  alignas(64) To buf[kChunk];
  for (int64_t k0 = 0; k0 < n; k0 += kChunk) {
    const int64_t m = std::min(kChunk, n - k0);
    convert_n(in + k0, buf, m);
    stream_copy(out + k0, buf, m * sizeof(To));
  }
}

template <class From, class To>
void convert_range(const ConvertJob& j, int64_t s, int64_t e) {
  const Layout& l = j.l;
  const int64_t si = l.stride[0][l.rank - 1], so = l.stride[1][l.rank - 1];
  const From* in = static_cast<const From*>(j.in);
  To* out = static_cast<To*>(j.out);
  int64_t idx0[kMaxRank];
  l.unravel(s, idx0);
  for_each_run(l, idx0, e - s, [&](const int64_t* idx, int64_t seg) {
    const From* __restrict pi = in + l.offset(0, idx);
    To* __restrict po = out + l.offset(1, idx);
    if (si == 1 && so == 1 && j.stream) {
      convert_streaming(pi, po, seg);
    } else if (si == 1 && so == 1) {
      convert_n(pi, po, seg);
    } else {
      for (int64_t k = 0; k < seg; ++k) po[k * so] = convert<To>(pi[k * si]);
    }
  });
  if (j.stream) stream_fence();
}

}  // namespace

void type_convert(const TensorView& in, const TensorView& out, ThreadPool& pool) {
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
  const int64_t tiles = (j.total + kTile - 1) / kTile;
  visit_dtype(in.dtype, [&](auto from) {
    visit_dtype(out.dtype, [&](auto to) {
      using From = typename decltype(from)::type;
      using To = typename decltype(to)::type;
      pool.parallel_for(tiles, kGrain / kTile, [&j](int64_t b, int64_t e) {
        convert_range<From, To>(j, b * kTile, std::min(e * kTile, j.total));
      });
    });
  });
}

}  // namespace hf::cpu
