#include "runtime/cpu/matmul_onednn.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cpu/onednn_context.h"
#include "runtime/cpu/packed_weights.h"

namespace hf::cpu {

using dnnl::memory;
using onednn::engine;
using onednn::execute;
using onednn::mem;
using onednn::user_scratchpad;
constexpr auto kF32 = memory::data_type::f32;

namespace {

// Below this many flops a slice costs more to hand out than it saves (as sgemm.cpp's blocks).
constexpr int64_t kMinFlopsPerSlice = 1 << 18;
// Row blocks keep a and out dense, which oneDNN's brgemm kernels want (a column block of out
// is strided and gets the slower gemm kernels): slices are row blocks while each has this
// many rows, column blocks otherwise (a matrix-vector product).
constexpr int64_t kMinRowsPerSlice = 8;
constexpr int64_t kMinColumnsPerSlice = 32;

// The row stride of a plain packed b with `cols` columns: one cache line longer than the
// rows rounded to lines. Where oneDNN keeps b plain (gemm:jit, the AVX2 kernels), it packs
// a panel of b's rows on every call, and rows a multiple of 4 KiB apart (768 x 3072 floats)
// land in a few sets of the physically indexed L2: that sgemm ran at half the speed of the
// same one on padded rows (bench/RESULTS.md).
int64_t padded_row(int64_t cols) {
  return (cols + 15) / 16 * 16 + 16;
}

// The batch axes of x (its leading rank - 2 axes), right-aligned to `rank` axes.
Shape batch_of(const Shape& x, size_t rank) {
  Shape b(rank, 1);
  std::copy(x.begin(), x.end() - 2, b.end() - static_cast<std::ptrdiff_t>(x.size() - 2));
  return b;
}

}  // namespace

struct OnednnMatmul::Impl {
  int64_t batches = 1, m = 0, k = 0, n = 0;
  int64_t a_batch_stride = 0, b_batch_stride = 0;  // elements; 0: shared by every batch
  bool const_b = false;
  std::string info;

  // One primitive per slice: rows [r0, r1) and columns [c0, c1) of one batch's out.
  struct Slice {
    int64_t r0, r1, c0, c1;
    dnnl::matmul prim;
    memory::desc a, b, c, scratch;
    // Packed b (const_b): this slice's columns in the primitive's layout.
    dnnl::reorder pack;
    memory::desc b_plain, pack_scratch;
    size_t b_floats = 0;  // > 0: it packs (column blocks each, row blocks the first)
    std::shared_ptr<const std::vector<float>> b_packed;  // its own, or shared by owner
  };
  std::vector<Slice> s;
  const float* packed_from = nullptr;
  std::shared_ptr<const void> owner;  // b's constant, if known (packed_weights.h)
  std::mutex mutex;

  bool packs() const { return const_b && b_batch_stride == 0; }

  void plan(int threads) {
    const int64_t flops = 2 * m * n * k;
    int64_t want = std::max<int64_t>(1, (threads + batches - 1) / batches);
    want = std::min(want, std::max<int64_t>(1, flops / kMinFlopsPerSlice));
    const bool by_columns = m / want < kMinRowsPerSlice;
    const int64_t slices = std::max<int64_t>(
        1, std::min(want, by_columns ? n / kMinColumnsPerSlice : m / kMinRowsPerSlice));
    for (int64_t i = 0; i < slices; ++i) {
      Slice sl;
      if (by_columns) {
        sl.r0 = 0, sl.r1 = m, sl.c0 = n * i / slices, sl.c1 = n * (i + 1) / slices;
      } else {
        sl.r0 = m * i / slices, sl.r1 = m * (i + 1) / slices, sl.c0 = 0, sl.c1 = n;
      }
      const int64_t rows = sl.r1 - sl.r0, cols = sl.c1 - sl.c0;
      sl.a = memory::desc({rows, k}, kF32, memory::dims{k, 1});
      sl.c = memory::desc({rows, cols}, kF32, memory::dims{n, 1});
      sl.b_plain = memory::desc({k, cols}, kF32, memory::dims{n, 1});
      // Packed: column blocks each get their own layout; row blocks share the first one's.
      memory::desc b_want = sl.b_plain;
      if (packs())
        b_want =
            by_columns || i == 0 ? memory::desc({k, cols}, kF32, memory::format_tag::any) : s[0].b;
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(sl.a, b_want, sl.c), user_scratchpad(),
                                      engine());
      if (packs() && (by_columns || i == 0) &&
          pd.weights_desc() == memory::desc({k, cols}, kF32, memory::format_tag::ab)) {
        b_want = memory::desc({k, cols}, kF32, memory::dims{padded_row(cols), 1});
        pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(sl.a, b_want, sl.c), user_scratchpad(),
                                          engine());
      }
      if (pd.src_desc() != sl.a || pd.dst_desc() != sl.c ||
          (!packs() && pd.weights_desc() != sl.b_plain) ||
          (packs() && !by_columns && i > 0 && pd.weights_desc() != s[0].b))
        throw dnnl::error(dnnl_unimplemented, "layouts refused");
      sl.b = pd.weights_desc();
      sl.scratch = pd.scratchpad_desc();
      sl.prim = dnnl::matmul(pd);
      if (packs() && (by_columns || i == 0)) {
        dnnl::reorder::primitive_desc rpd(engine(), sl.b_plain, engine(), sl.b, user_scratchpad());
        sl.pack = dnnl::reorder(rpd);
        sl.pack_scratch = rpd.scratchpad_desc();
        sl.b_floats = sl.b.get_size() / sizeof(float) + 1;
      }
      if (i == 0) info = pd.impl_info_str();
      s.push_back(std::move(sl));
    }
    info = std::to_string(slices) + (by_columns ? " column" : " row") +
           (slices == 1 ? " block" : " blocks") + (packs() ? ", packed b, " : ", ") + info;
  }

  // The packed weights slice i reads: its own (column blocks) or the first slice's.
  const float* packed(size_t i) const { return (s[i].b_floats ? s[i] : s[0]).b_packed->data(); }

  void pack(const float* b) {
    for (Slice& sl : s) {
      if (!sl.b_floats) continue;
      auto fill = [&](float* to) {
        execute(sl.pack, sl.pack_scratch,
                {{DNNL_ARG_FROM, mem(sl.b_plain, b + sl.c0)}, {DNNL_ARG_TO, mem(sl.b, to)}});
      };
      if (owner) {
        const dnnl_memory_desc_t& d = sl.b.data;
        std::string layout(reinterpret_cast<const char*>(&d), sizeof d);
        layout += "@" + std::to_string(sl.c0);
        sl.b_packed = shared_packed_weights(owner, layout, sl.b_floats, fill);
      } else {
        auto own = std::const_pointer_cast<std::vector<float>>(sl.b_packed);
        if (!own) own = std::make_shared<std::vector<float>>(sl.b_floats);
        fill(own->data());
        sl.b_packed = own;
      }
    }
    packed_from = b;
  }

  void run(const float* a, const float* b, float* out, ThreadPool& pool, const OnBlock& on_block) {
    std::lock_guard<std::mutex> lock(mutex);
    if (packs() && (owner ? !packed_from : packed_from != b)) pack(b);
    const int64_t per = static_cast<int64_t>(s.size());
    pool.parallel_for(batches * per, 1, [&](int64_t first, int64_t last) {
      for (int64_t it = first; it < last; ++it) {
        const int64_t t = it / per;
        const size_t i = static_cast<size_t>(it % per);
        const Slice& sl = s[i];
        const float* bt = packs() ? packed(i) : b + t * b_batch_stride + sl.c0;
        execute(sl.prim, sl.scratch,
                {{DNNL_ARG_SRC, mem(sl.a, a + t * a_batch_stride + sl.r0 * k)},
                 {DNNL_ARG_WEIGHTS, mem(sl.b, bt)},
                 {DNNL_ARG_DST, mem(sl.c, out + t * m * n + sl.r0 * n + sl.c0)}});
        if (on_block) on_block({t * m * n + sl.r0 * n + sl.c0, sl.r1 - sl.r0, sl.c1 - sl.c0, n});
      }
    });
  }
};

OnednnMatmul::OnednnMatmul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnednnMatmul::~OnednnMatmul() = default;

std::unique_ptr<OnednnMatmul> OnednnMatmul::create(const Shape& a, const Shape& b, const Shape& out,
                                                   int threads, bool const_b,
                                                   std::shared_ptr<const void> b_owner) {
  const size_t rank = out.size();
  if (a.size() < 2 || b.size() < 2 || rank != std::max(a.size(), b.size())) return nullptr;
  auto impl = std::make_unique<Impl>();
  Impl& p = *impl;
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  if (b[b.size() - 2] != p.k || out[rank - 2] != p.m || out.back() != p.n) return nullptr;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return nullptr;
  const Shape ab = batch_of(a, rank - 2), bb = batch_of(b, rank - 2), ob = batch_of(out, rank - 2);
  const int64_t a_batches = numel(ab), b_batches = numel(bb);
  p.batches = numel(ob);
  // Each operand either walks out's batches or is one matrix shared by all of them.
  if ((a_batches != 1 && ab != ob) || (b_batches != 1 && bb != ob)) return nullptr;
  p.a_batch_stride = a_batches == 1 ? 0 : p.m * p.k;
  p.b_batch_stride = b_batches == 1 ? 0 : p.k * p.n;
  if (p.b_batch_stride == 0 && p.a_batch_stride != 0) {  // fold a's batches into rows
    p.m *= p.batches;
    p.batches = 1;
  }
  p.const_b = const_b;
  p.owner = std::move(b_owner);
  // Primitives record the thread count they are made for: one, like every call.
  onednn_single_threaded();
  try {
    p.plan(std::max(1, threads));
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<OnednnMatmul>(new OnednnMatmul(std::move(impl)));
}

void OnednnMatmul::run(const float* a, const float* b, float* out, ThreadPool& pool,
                       const OnBlock& on_block) {
  impl_->run(a, b, out, pool, on_block);
}

const char* OnednnMatmul::describe() const {
  return impl_->info.c_str();
}

}  // namespace hf::cpu
