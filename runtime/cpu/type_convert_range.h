// The TypeCvt loop over one (From, To) pair, shared by type_convert.cpp (core source types)
// and type_convert_wide.cpp (f64 and i8/i16/u16/u32/u64 sources): 13x13 instantiations in
// one file took about 50 s to compile, two files compile in parallel.
#pragma once
#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/stream_store.h"
#include "runtime/cpu/thread_pool.h"

namespace hf::cpu::convert_detail {

inline constexpr int64_t kTile = 1024;
inline constexpr int64_t kGrain = 32768;

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
  for_each_unary_run(l, in, out, s, e,
                     [&](const From* __restrict pi, To* __restrict po, int64_t seg) {
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

// The source types type_convert_wide.cpp instantiates.
template <class T>
inline constexpr bool kWideSource =
    std::is_same_v<T, double> || std::is_same_v<T, i8> || std::is_same_v<T, i16> ||
    std::is_same_v<T, u16> || std::is_same_v<T, u32> || std::is_same_v<T, u64>;

// Runs the job over every To for the sources of one half (Wide: kWideSource types); the
// other half's types are instantiated in the other file and never reach here.
template <bool Wide>
void run_convert(const ConvertJob& j, DType from, DType to, ThreadPool& pool) {
  const int64_t tiles = (j.total + kTile - 1) / kTile;
  visit_dtype(from, [&](auto f) {
    using From = typename decltype(f)::type;
    if constexpr (kWideSource<From> == Wide) {
      visit_dtype(to, [&](auto t) {
        using To = typename decltype(t)::type;
        pool.parallel_for(tiles, kGrain / kTile, [&j](int64_t b, int64_t e) {
          convert_range<From, To>(j, b * kTile, std::min(e * kTile, j.total));
        });
      });
    } else {
      throw std::logic_error("type_convert: source dtype sent to the wrong file");
    }
  });
}

}  // namespace hf::cpu::convert_detail

namespace hf::cpu {
// run_convert<true>, in type_convert_wide.cpp.
void type_convert_wide(const convert_detail::ConvertJob& j, DType from, DType to, ThreadPool& pool);
}  // namespace hf::cpu
