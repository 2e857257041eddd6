#include "runtime/cpu/elemwise_engine.h"

#include <algorithm>
#include <memory>

#include "runtime/cpu/stream_store.h"

namespace hf::cpu {

Scratch& thread_scratch() {
  thread_local std::unique_ptr<Scratch> s(new Scratch);
  return *s;
}

namespace {

// Parallel chunks start at multiples of this many elements, so threads never share a cache
// line of a contiguous output and each chunk starts vector-aligned.
constexpr int64_t kTile = 1024;

// Inner rows at least this long are walked row by row, so operands contiguous along the
// row are read in place; shorter rows are packed several to a block through scratch.
constexpr int64_t kMinRow = 256;

// Moves `len` elements between a strided operand (starting at multi-index idx) and a dense
// array, converting the element type.
using MoveFn = void (*)(const Layout& l, int k, void* strided, const int64_t* idx, int64_t len,
                        void* dense);

template <class Src, class Dst>
void gather(const Layout& l, int k, void* strided, const int64_t* idx0, int64_t len, void* dense) {
  const Src* src = static_cast<const Src*>(strided);
  Dst* __restrict dst = static_cast<Dst*>(dense);
  const int64_t st = l.stride[k][l.rank - 1];
  for_each_run(l, idx0, len, [&](const int64_t* idx, int64_t seg) {
    const Src* __restrict p = src + l.offset(k, idx);
    if (st == 1) {
      convert_n(p, dst, seg);
    } else if (st == 0) {
      const Dst v = convert<Dst>(p[0]);
      for (int64_t j = 0; j < seg; ++j) dst[j] = v;
    } else {
      for (int64_t j = 0; j < seg; ++j) dst[j] = convert<Dst>(p[j * st]);
    }
    dst += seg;
  });
}

template <class Src, class Dst>
void scatter(const Layout& l, int k, void* strided, const int64_t* idx0, int64_t len, void* dense) {
  Dst* dst = static_cast<Dst*>(strided);
  const Src* __restrict src = static_cast<const Src*>(dense);
  const int64_t st = l.stride[k][l.rank - 1];
  for_each_run(l, idx0, len, [&](const int64_t* idx, int64_t seg) {
    Dst* __restrict p = dst + l.offset(k, idx);
    if (st == 1) {
      convert_n(src, p, seg);
    } else {
      for (int64_t j = 0; j < seg; ++j) p[j * st] = convert<Dst>(src[j]);
    }
    src += seg;
  });
}

// Same-type moves only care about the element size.
MoveFn pick_gather(DType from, DType to) {
  if (from == to)
    return visit_size(dtype_size(from), [](auto t) -> MoveFn {
      using U = typename decltype(t)::type;
      return &gather<U, U>;
    });
  if (to == DType::F32 && from == DType::F16) return &gather<f16, float>;
  if (to == DType::F32 && from == DType::BF16) return &gather<bf16, float>;
  throw std::invalid_argument("elemwise: cannot read " + std::string(dtype_name(from)) + " as " +
                              std::string(dtype_name(to)));
}

MoveFn pick_scatter(DType from, DType to) {
  if (from == to)
    return visit_size(dtype_size(from), [](auto t) -> MoveFn {
      using U = typename decltype(t)::type;
      return &scatter<U, U>;
    });
  if (from == DType::F32 && to == DType::F16) return &scatter<float, f16>;
  if (from == DType::F32 && to == DType::BF16) return &scatter<float, bf16>;
  throw std::invalid_argument("elemwise: cannot write " + std::string(dtype_name(from)) + " as " +
                              std::string(dtype_name(to)));
}

struct Engine {
  Layout l;
  int nin = 0;
  int64_t total = 0;
  char* base[kMaxOps] = {};
  size_t size[kMaxOps] = {};
  bool flat[kMaxOps] = {};    // row-major contiguous over the whole layout, right type
  bool row_ok[kMaxOps] = {};  // contiguous along the inner row, right type
  MoveFn move[kMaxOps] = {};  // gathers for inputs, the scatter for the output
  bool row_blocks = false;
  bool stream_out = false;  // flat output written through scratch with streaming stores
  BlockFn fn = nullptr;
  const void* ctx = nullptr;

  void run(int64_t s, int64_t e) const {
    const int r = l.rank;
    const int out = nin;
    Scratch* sc = nullptr;
    int64_t idx[kMaxRank];
    const void* in_ptr[kMaxOps - 1];
    while (s < e) {
      l.unravel(s, idx);
      int64_t len = e - s;
      if (row_blocks) len = std::min(len, l.shape[r - 1] - idx[r - 1]);
      bool direct[kMaxOps];
      bool all_direct = true;
      for (int k = 0; k <= nin; ++k) {
        direct[k] = flat[k] || (row_blocks && row_ok[k]);
        all_direct = all_direct && direct[k];
      }
      if (stream_out) direct[out] = all_direct = false;
      if (!all_direct) {
        len = std::min(len, kBlock);
        if (!sc) sc = &thread_scratch();
      }
      for (int k = 0; k < nin; ++k) {
        if (direct[k]) {
          in_ptr[k] = base[k] + (flat[k] ? s : l.offset(k, idx)) * size[k];
        } else {
          move[k](l, k, base[k], idx, len, sc->slot[k]);
          in_ptr[k] = sc->slot[k];
        }
      }
      void* out_ptr =
          direct[out]
              ? static_cast<void*>(base[out] + (flat[out] ? s : l.offset(out, idx)) * size[out])
              : static_cast<void*>(sc->slot[out]);
      fn(in_ptr, out_ptr, len, ctx);
      if (stream_out)
        stream_copy(base[out] + s * size[out], sc->slot[out], len * size[out]);
      else if (!direct[out])
        move[out](l, out, base[out], idx, len, sc->slot[out]);
      s += len;
    }
    if (stream_out) stream_fence();
  }
};

}  // namespace

void run_elemwise(std::span<const TensorView> inputs, const TensorView& out, const ElemJob& job,
                  ThreadPool& pool) {
  const int nin = static_cast<int>(inputs.size());
  if (nin < 1 || nin > kMaxOps - 1) throw std::invalid_argument("elemwise: 1 to 4 inputs expected");
  check_rank(out, "elemwise");
  const int64_t total = out.numel();
  if (total == 0) return;

  Engine eng;
  eng.nin = nin;
  eng.total = total;
  eng.fn = job.fn;
  eng.ctx = job.ctx;
  eng.l = Layout::over(out, nin);
  Layout& l = eng.l;
  for (int k = 0; k < nin; ++k) {
    check_rank(inputs[k], "elemwise");
    set_operand(l, k, inputs[k], out.shape, "elemwise");
    eng.base[k] = static_cast<char*>(inputs[k].data);
    eng.size[k] = dtype_size(inputs[k].dtype);
    eng.move[k] = pick_gather(inputs[k].dtype, job.compute);
  }
  eng.base[nin] = static_cast<char*>(out.data);
  eng.size[nin] = dtype_size(out.dtype);
  eng.move[nin] = pick_scatter(job.result, out.dtype);
  l.coalesce();

  const int r = l.rank;
  for (int k = 0; k <= nin; ++k) {
    DType want = k < nin ? job.compute : job.result;
    DType have = k < nin ? inputs[k].dtype : out.dtype;
    bool type_ok = want == have;
    int64_t expect = 1;
    bool flat = true;
    for (int d = r - 1; d >= 0; --d) {
      flat = flat && l.stride[k][d] == expect;
      expect *= l.shape[d];
    }
    eng.flat[k] = type_ok && flat;
    eng.row_ok[k] = type_ok && l.stride[k][r - 1] == 1;
  }
  eng.row_blocks = l.shape[r - 1] >= kMinRow;
  size_t bytes = total * eng.size[nin];
  for (int k = 0; k < nin; ++k) bytes += eng.flat[k] ? total * eng.size[k] : 0;
  eng.stream_out = eng.flat[nin] && should_stream(bytes, static_cast<double>(job.flops) *
                                                             static_cast<double>(total));

  const int64_t tiles = (total + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, job.grain / kTile);
  pool.parallel_for(tiles, grain, [&eng](int64_t b, int64_t e) {
    eng.run(b * kTile, std::min(e * kTile, eng.total));
  });
}

}  // namespace hf::cpu
