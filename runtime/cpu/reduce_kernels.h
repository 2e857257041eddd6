// The reduction kernels, templated on the storage type; included by reduce_float.cpp and
// reduce_int.cpp only.
//
// Every output is a fixed pairwise tree over its reduced elements whose leaves are
// vectorised multi-accumulator loops. The tree depends only on the shape, never on the
// thread count, so results are bitwise identical for any pool; threads take whole outputs,
// column tiles, or (for few long outputs) the top subtrees. In f32 the pairwise tree keeps
// the error of a sum of n elements near log2(n) ulp instead of n ulp.
#pragma once
#include <algorithm>
#include <type_traits>

#include "runtime/cpu/reduce_plan.h"
#include "runtime/ops/reduce_combine.h"

namespace hf::cpu::reduce_detail {

// f32 and its storage formats accumulate in f32, f64 in f64, u64 in u64 (its MIN/MAX above
// 2^63 would be wrong in i64), every other integer type and bool in wrapping i64.
template <class T>
using AccOf =
    std::conditional_t<kIsFloatStorage<T>, float,
                       std::conditional_t<std::is_same_v<T, double>, double,
                                          std::conditional_t<std::is_same_v<T, u64>, u64, i64>>>;

template <class Acc, class T>
inline Acc load(T x) {
  if constexpr (std::is_same_v<Acc, float>)
    return to_float(x);
  else
    return static_cast<Acc>(x);
}

// Independent accumulators: 4 AVX2 vectors, enough to hide the add latency.
template <class Acc>
inline constexpr int kLanes = 128 / static_cast<int>(sizeof(Acc));

template <class Op, class Acc, class T>
Acc leaf_reduce(const T* __restrict x, int64_t n) {
  constexpr int W = kLanes<Acc>;
  if (n < W) {
    Acc a = Op::template identity<Acc>();
    for (int64_t i = 0; i < n; ++i) a = Op::step(a, load<Acc>(x[i]));
    return a;
  }
  // Lanes start from the first W elements: filling them with the identity compiles to a
  // rep stosq, ~10% of a 1024-element row.
  Acc acc[W];
  for (int j = 0; j < W; ++j) acc[j] = Op::step(Op::template identity<Acc>(), load<Acc>(x[j]));
  int64_t i = W;
  for (; i + W <= n; i += W)
    for (int j = 0; j < W; ++j) acc[j] = Op::step(acc[j], load<Acc>(x[i + j]));
  // The last n % W elements go to one scalar accumulator, not into lanes: single-element
  // stores into the lanes followed by the vector loads of the combine below stall on store
  // forwarding, which cost more than the whole row of a short reduction (a pooled 7x7).
  // Generated kernels sum in this order too (codegen_support.h: lanes_and_tail).
  const bool has_tail = i < n;  // else acc alone: a sum of -0s stays -0
  Acc tail = Op::template identity<Acc>();
  for (; i < n; ++i) tail = Op::step(tail, load<Acc>(x[i]));
  const Acc lanes = combine_lanes<Op>(acc);
  return has_tail ? Op::combine(lanes, tail) : lanes;
}

// ---- the tree ---------------------------------------------------------------------------

// Where ranges of reduced elements split. With seg > 0 (contiguous segments of seg
// elements) ranges split at segment boundaries first, so every leaf lies in one segment.
struct Split {
  int64_t seg = 0;
  int64_t leaf = 0;
  bool is_leaf(int64_t n) const { return n <= leaf && (seg == 0 || n <= seg); }
  int64_t at(int64_t n) const {
    if (seg > 0 && n > seg) return (n / seg + 1) / 2 * seg;
    const int64_t h = (n + 1) / 2;
    return (h + leaf - 1) / leaf * leaf;
  }
};

template <class P, class LeafF, class CombF>
void tree(const Split& s, int64_t r0, int64_t n, P& out, const LeafF& leaf, const CombF& comb) {
  if (s.is_leaf(n)) return leaf(r0, n, out);
  const int64_t h = s.at(n);
  tree(s, r0, h, out, leaf, comb);
  P right;
  tree(s, r0 + h, n - h, right, leaf, comb);
  comb(out, right);
}

inline constexpr int kMaxTasks = 16;

struct Range {
  int64_t r0, n;
};

// The subtrees at `depth` (or shallower leaves), left to right.
inline void cut(const Split& s, int64_t r0, int64_t n, int depth, Range* out, int& count) {
  if (depth == 0 || s.is_leaf(n)) {
    out[count++] = {r0, n};
    return;
  }
  const int64_t h = s.at(n);
  cut(s, r0, h, depth - 1, out, count);
  cut(s, r0 + h, n - h, depth - 1, out, count);
}

// Combines the subtree results of cut() exactly as tree() would have.
template <class P, class CombF>
void merge(const Split& s, int64_t n, int depth, P* parts, int& i, P& out, const CombF& comb) {
  if (depth == 0 || s.is_leaf(n)) {
    out = parts[i++];
    return;
  }
  const int64_t h = s.at(n);
  merge(s, h, depth - 1, parts, i, out, comb);
  P right;
  merge(s, n - h, depth - 1, parts, i, right, comb);
  comb(out, right);
}

// tree() over [0, n), with the subtrees below the top few levels run in parallel.
template <class P, class LeafF, class CombF>
void parallel_tree(const Split& s, int64_t n, int64_t min_task, P& out, const LeafF& leaf,
                   const CombF& comb, ThreadPool& pool) {
  int depth = 0;
  while (depth < 4 && (n >> (depth + 1)) >= min_task) ++depth;
  if (depth == 0 || pool.size() == 1) return tree(s, 0, n, out, leaf, comb);
  Range tasks[kMaxTasks];
  int count = 0;
  cut(s, 0, n, depth, tasks, count);
  P parts[kMaxTasks];
  struct Ctx {
    const Split& s;
    const Range* tasks;
    P* parts;
    const LeafF& leaf;
    const CombF& comb;
  } c{s, tasks, parts, leaf, comb};
  pool.parallel_for(count, 1, [&c](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t)
      tree(c.s, c.tasks[t].r0, c.tasks[t].n, c.parts[t], c.leaf, c.comb);
  });
  int i = 0;
  merge(s, n, depth, parts, i, out, comb);
}

// ---- helpers over the plan -----------------------------------------------------------------

// Offset of kept index `o` (row-major over kept axes [0, upto)) in the input and output.
inline void kept_offsets(const ReducePlan& p, int upto, int64_t o, int64_t& in_off,
                         int64_t& out_off) {
  in_off = out_off = 0;
  for (int d = upto - 1; d >= 0; --d) {
    const int64_t i = o % p.kshape[d];
    o /= p.kshape[d];
    in_off += i * p.kin[d];
    out_off += i * p.kout[d];
  }
}

// Input offset of reduced index `r` over the reduced axes [0, upto).
inline int64_t reduced_offset(const ReducePlan& p, int upto, int64_t r) {
  int64_t off = 0;
  for (int d = upto - 1; d >= 0; --d) {
    off += (r % p.rshape[d]) * p.rin[d];
    r /= p.rshape[d];
  }
  return off;
}

template <class T, class Acc>
inline void store(const ReducePlan& p, Acc v, int64_t out_off) {
  if (p.mode == ReduceMode::MEAN) v = mean_of(v, p.L);
  reinterpret_cast<T*>(p.out)[out_off] = convert<T>(v);
}

// ---- one output at a time: a contiguous row, or gathered elements --------------------------

inline constexpr int64_t kLeaf = kBlock;  // gathered leaves fill one scratch slot
inline constexpr int64_t kMinSeg = 256;   // shorter contiguous runs are gathered

template <class Op, class T>
struct RowKernel {
  using Acc = AccOf<T>;
  const ReducePlan& p;
  Split split;
  bool seg_mode;

  explicit RowKernel(const ReducePlan& plan) : p(plan) {
    const int64_t inner = p.rshape[p.rr - 1];
    // One contiguous reduced axis is read in place however short (the tree is the same:
    // each output's elements are one segment); shorter runs of several axes are gathered.
    seg_mode = p.rin[p.rr - 1] == 1 && (inner >= kMinSeg || p.rr == 1);
    split = Split{seg_mode ? inner : 0, kLeaf};
  }

  Acc leaf(int64_t base, int64_t r0, int64_t n) const {
    const T* in = reinterpret_cast<const T*>(p.in);
    const int rr = p.rr;
    if (seg_mode) {
      const int64_t inner = p.rshape[rr - 1];
      const int64_t off = reduced_offset(p, rr - 1, r0 / inner) + r0 % inner;
      if constexpr (std::is_same_v<T, f16>) {  // per-element f16 loads do not vectorise
        Acc* buf = reinterpret_cast<Acc*>(thread_scratch().slot[0]);
        convert_n(in + base + off, buf, n);
        return leaf_reduce<Op, Acc>(buf, n);
      } else {
        return leaf_reduce<Op, Acc>(in + base + off, n);
      }
    }
    Acc* buf = reinterpret_cast<Acc*>(thread_scratch().slot[0]);
    const int64_t inner = p.rshape[rr - 1], st = p.rin[rr - 1];
    int64_t r = r0, k = 0;
    while (k < n) {
      const int64_t pos = r % inner;
      const int64_t seg = std::min(inner - pos, n - k);
      const T* src = in + base + reduced_offset(p, rr - 1, r / inner) + pos * st;
      if (st == 1)
        convert_n(src, buf + k, seg);
      else
        for (int64_t j = 0; j < seg; ++j) buf[k + j] = load<Acc>(src[j * st]);
      k += seg;
      r += seg;
    }
    return leaf_reduce<Op, Acc>(buf, n);
  }

  Acc reduce_one(int64_t base, ThreadPool* pool) const {
    auto lf = [this, base](int64_t r0, int64_t n, Acc& out) { out = leaf(base, r0, n); };
    auto comb = [](Acc& a, const Acc& b) { a = Op::combine(a, b); };
    Acc v{};
    if (pool)
      parallel_tree(split, p.L, int64_t{1} << 15, v, lf, comb, *pool);
    else
      tree(split, 0, p.L, v, lf, comb);
    return v;
  }

  void outputs(int64_t o0, int64_t o1) const {
    // Offsets step from output to output: a 64-bit division per row costs ~10% on rows of
    // 1024 in cache.
    int64_t idx[kMaxRank], in_off = 0, out_off = 0, o = o0;
    for (int d = p.kr - 1; d >= 0; --d) {
      idx[d] = o % p.kshape[d];
      o /= p.kshape[d];
      in_off += idx[d] * p.kin[d];
      out_off += idx[d] * p.kout[d];
    }
    for (o = o0; o < o1; ++o) {
      store<T>(p, reduce_one(in_off, nullptr), out_off);
      for (int d = p.kr - 1; d >= 0; --d) {
        in_off += p.kin[d];
        out_off += p.kout[d];
        if (++idx[d] < p.kshape[d]) break;
        in_off -= p.kin[d] * p.kshape[d];
        out_off -= p.kout[d] * p.kshape[d];
        idx[d] = 0;
      }
    }
  }

  void run(ThreadPool& pool) const {
    if (p.M >= 2 * pool.size() || p.L < (int64_t{1} << 16)) {
      const int64_t grain = std::max<int64_t>(1, 32768 / p.L);
      pool.parallel_for(p.M, grain, [this](int64_t b, int64_t e) { outputs(b, e); });
      return;
    }
    for (int64_t o = 0; o < p.M; ++o) {
      int64_t in_off, out_off;
      kept_offsets(p, p.kr, o, in_off, out_off);
      store<T>(p, reduce_one(in_off, &pool), out_off);
    }
  }
};

// ---- columns: the innermost kept axis is contiguous, the reduced ones are not -------------

inline constexpr int kTileW = 256;       // columns per tile
inline constexpr int64_t kRowLeaf = 32;  // rows summed sequentially per leaf

template <class Op, class T>
struct ColKernel {
  using Acc = AccOf<T>;
  struct Tile {
    Acc v[kTileW];
  };
  const ReducePlan& p;
  int64_t cols, tiles, units;

  explicit ColKernel(const ReducePlan& plan) : p(plan) {
    cols = p.kshape[p.kr - 1];
    tiles = (cols + kTileW - 1) / kTileW;
    units = p.M / cols * tiles;
  }

  void leaf(const T* base, int64_t w, int64_t r0, int64_t n, Tile& t) const {
    for (int j = 0; j < kTileW; ++j) t.v[j] = Op::template identity<Acc>();
    const int rr = p.rr;
    int64_t idx[kMaxRank];
    int64_t r = r0;
    for (int d = rr - 1; d >= 0; --d) {
      idx[d] = r % p.rshape[d];
      r /= p.rshape[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int d = 0; d < rr; ++d) off += idx[d] * p.rin[d];
      if constexpr (std::is_same_v<T, f16>) {
        alignas(32) float row[kTileW];
        convert_n(base + off, row, w);
        for (int64_t j = 0; j < w; ++j) t.v[j] = Op::step(t.v[j], row[j]);
      } else {
        const T* __restrict x = base + off;
        for (int64_t j = 0; j < w; ++j) t.v[j] = Op::step(t.v[j], load<Acc>(x[j]));
      }
      for (int d = rr - 1; d >= 0 && ++idx[d] == p.rshape[d]; --d) idx[d] = 0;
    }
  }

  void unit(int64_t u, ThreadPool* pool) const {
    const int64_t o = u / tiles, c0 = (u % tiles) * kTileW;
    const int64_t w = std::min<int64_t>(kTileW, cols - c0);
    int64_t in_off, out_off;
    kept_offsets(p, p.kr - 1, o, in_off, out_off);
    const T* base = reinterpret_cast<const T*>(p.in) + in_off + c0;
    auto lf = [this, base, w](int64_t r0, int64_t n, Tile& t) { leaf(base, w, r0, n, t); };
    auto comb = [](Tile& a, const Tile& b) {
      for (int j = 0; j < kTileW; ++j) a.v[j] = Op::combine(a.v[j], b.v[j]);
    };
    const Split split{0, kRowLeaf};
    Tile t;
    if (pool)
      parallel_tree(split, p.L, std::max<int64_t>(kRowLeaf, 8192 / w), t, lf, comb, *pool);
    else
      tree(split, 0, p.L, t, lf, comb);
    const int64_t os = p.kout[p.kr - 1];
    for (int64_t j = 0; j < w; ++j) store<T>(p, t.v[j], out_off + (c0 + j) * os);
  }

  void run(ThreadPool& pool) const {
    if (units >= 2 * pool.size() || p.L * kTileW < (int64_t{1} << 16)) {
      const int64_t grain = std::max<int64_t>(1, 32768 / (p.L * std::min<int64_t>(cols, kTileW)));
      pool.parallel_for(units, grain, [this](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) unit(u, nullptr);
      });
      return;
    }
    for (int64_t u = 0; u < units; ++u) unit(u, &pool);
  }
};

template <class Op, class T>
void run_op(const ReducePlan& p, ThreadPool& pool) {
  if (p.L == 0) {  // empty reduction: the identity (MEAN: 0/0)
    using Acc = AccOf<T>;
    for (int64_t o = 0; o < p.M; ++o) {
      int64_t in_off, out_off;
      kept_offsets(p, p.kr, o, in_off, out_off);
      Acc v = Op::template identity<Acc>();
      if constexpr (std::is_floating_point_v<Acc>)
        if (p.mode == ReduceMode::MEAN) v = Acc(__builtin_nanf(""));
      reinterpret_cast<T*>(p.out)[out_off] = convert<T>(v);
    }
    return;
  }
  const bool columns = p.kr >= 1 && p.kin[p.kr - 1] == 1 && p.rin[p.rr - 1] != 1;
  if (columns)
    ColKernel<Op, T>(p).run(pool);
  else
    RowKernel<Op, T>(p).run(pool);
}

template <class T>
void reduce_typed(const ReducePlan& p, ThreadPool& pool) {
  visit_reduce_op(p.mode, [&](auto op) { run_op<decltype(op), T>(p, pool); });
}

}  // namespace hf::cpu::reduce_detail
