// ONNX ops over the order of one axis, built from comparisons, Elemwise selections and
// reduces over a second copy of that axis (x viewed as [P, n, Q] around the axis, and the
// pairs (i, j) of its positions as [P, n, n, Q]):
//   CumSum (11, 14), CumProd (26): y_i = SUM/PRODUCT over j of (j included in i ? x_j : 0/1),
//     the inclusion a constant mask of j <= i (j < i exclusive, j >= i / j > i reverse); over
//     axes longer than 64 the same in blocks of about sqrt(n), then across the block totals;
//   TopK (1, 10, 11): the rank of x_i is the number of j before it (x_j larger, or smaller, or
//     equal with j < i: ties keep the lower index first); output k is the SUM over i of
//     (rank_i == k ? x_i : 0), and of i for its index (one term is nonzero: exact);
//   ReverseSequence (10): one Gather from the flattened input at positions computed from
//     sequence_lens at run time.
// The pairs make these O(n^2) in the axis' length (blocked CumSum/CumProd O(n^1.5)); beyond
// kPairLimit elements the lowering is refused with a line that says so, rather than run for
// minutes.
#include <cmath>
#include <numeric>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

constexpr int64_t kPairLimit = int64_t(1) << 24;
// CumSum/CumProd over longer axes scan in blocks (O(n^1.5) instead of O(n^2)).
constexpr int64_t kBlockedScan = 64;

std::string str(int64_t v) {
  return std::to_string(v);
}

// x's shape around `axis` as [P, n, Q].
struct AxisView {
  int64_t P = 1, n = 1, Q = 1;
};
AxisView around(const Shape& s, int axis) {
  AxisView v;
  for (int k = 0; k < static_cast<int>(s.size()); ++k) {
    if (k < axis) v.P *= s[k];
    if (k == axis) v.n = s[k];
    if (k > axis) v.Q *= s[k];
  }
  return v;
}

// `per_row`: the pairwise elements one row of the axis needs.
void check_pairs(const AxisView& v, double per_row, const char* op) {
  const double pairs = double(v.P) * per_row * double(v.Q);
  if (pairs > double(kPairLimit))
    throw Error(std::string(op) + " over an axis of " + str(v.n) + " (with " + str(v.P * v.Q) +
                " such rows) needs " + std::to_string(static_cast<long long>(pairs)) +
                " pairwise elements, more than hotfuse's lowering allows (" + str(kPairLimit) +
                "): not supported");
}

}  // namespace

void Importer::lower_cumulative(bool product) {
  const OnnxNode& n = *cur_;
  ValueId x = rt(0);
  const DType t = dtype_of(x);
  if (t == DType::Bool) throw Error("cannot accumulate BOOL");
  const Shape xs = shape_of(x);
  const int rank = static_cast<int>(xs.size());
  if (rank == 0) throw Error("needs an input of rank >= 1");
  const std::vector<int64_t> axis = const_ints(1, "axis");
  if (axis.size() != 1) throw Error("axis must hold one value");
  const int a = norm_axis(axis[0], rank, "axis");
  const bool exclusive = n.attr_int("exclusive", 0) != 0;
  const bool reverse = n.attr_int("reverse", 0) != 0;
  const AxisView v = around(xs, a);
  if (v.P * v.n * v.Q == 0) return set_rt(0, x);
  const char* mode = product ? "PRODUCT" : "SUM";
  const char* op = product ? "CumProd" : "CumSum";
  ValueId id = scalar(t, product ? 1 : 0);
  if (v.n <= kBlockedScan) {  // one masked reduce over the pairs
    check_pairs(v, double(v.n) * double(v.n), op);
    // mask[i, j]: whether x_j is part of y_i
    ConstTensor m = make_const(pb::TensorProto::BOOL, {1, v.n, v.n, 1});
    for (int64_t i = 0; i < v.n; ++i)
      for (int64_t j = 0; j < v.n; ++j)
        m.i[i * v.n + j] = reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
    ValueId terms = where(constant(m, "included"), reshape(x, {v.P, 1, v.n, v.Q}), id);
    return set_rt(0, reshape(reduce(terms, mode, {2}, false), xs));
  }
  // Longer axes: blocks of b ~ sqrt(n), scanned within (pairs of a block) and across (pairs of
  // block totals), O(n^1.5). reverse flips the axis around a forward scan; exclusive shifts
  // the inclusive result by one, the identity in front.
  const int64_t b = static_cast<int64_t>(std::ceil(std::sqrt(double(v.n))));
  const int64_t nb = (v.n + b - 1) / b;
  check_pairs(v, double(nb) * double(b * b + nb), op);
  auto flip = [&](ValueId y) { return slice_axis(y, 1, v.n - 1, -(v.n + 1), -1); };
  auto ids = [&](int64_t len) { return broadcast_to(reshape(id, {1, 1, 1}), {v.P, len, v.Q}); };
  ValueId x3 = reshape(x, {v.P, v.n, v.Q});
  if (reverse) x3 = flip(x3);
  if (nb * b > v.n) x3 = concat_axis({x3, ids(nb * b - v.n)}, 1);
  ValueId x4 = reshape(x3, {v.P, nb, b, v.Q});
  auto lower_mask = [&](int64_t k, Shape s, bool strict) {
    ConstTensor m = make_const(pb::TensorProto::BOOL, std::move(s));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) m.i[i * k + j] = strict ? j < i : j <= i;
    return constant(m, "included");
  };
  ValueId y =
      reduce(where(lower_mask(b, {1, 1, b, b, 1}, false), reshape(x4, {v.P, nb, 1, b, v.Q}), id),
             mode, {3}, false);  // [P, nb, b, Q]: the scan within each block
  if (nb > 1) {
    ValueId totals = reshape(reduce(x4, mode, {2}, false), {v.P, 1, nb, v.Q});
    ValueId before = reduce(where(lower_mask(nb, {1, nb, nb, 1}, true), totals, id), mode, {2},
                            false);  // [P, nb, Q]: the blocks before each
    y = ew(product ? Mode::MUL : Mode::ADD, {y, reshape(before, {v.P, nb, 1, v.Q})}, "scan");
  }
  y = reshape(y, {v.P, nb * b, v.Q});
  if (nb * b > v.n) y = slice_axis(y, 1, 0, v.n);
  if (exclusive) y = concat_axis({ids(1), slice_axis(y, 1, 0, v.n - 1)}, 1);
  if (reverse) y = flip(y);
  set_rt(0, reshape(y, xs));
}

void Importer::lower_topk() {
  const OnnxNode& n = *cur_;
  ValueId x = rt(0);
  const DType t = dtype_of(x);
  if (t == DType::Bool) throw Error("cannot order BOOL");
  const Shape xs = shape_of(x);
  const int rank = static_cast<int>(xs.size());
  if (rank == 0) throw Error("needs an input of rank >= 1");
  const int a = norm_axis(n.attr_int("axis", -1), rank, "axis");
  int64_t k;
  if (n.opset < 10) {
    k = n.attr_int("k");
  } else {
    const std::vector<int64_t> kv = const_ints(1, "K");
    if (kv.size() != 1) throw Error("K must hold one value");
    k = kv[0];
  }
  const bool largest = n.opset < 11 || n.attr_int("largest", 1) != 0;
  // sorted=0 leaves the order to the implementation: these are sorted either way.
  const AxisView v = around(xs, a);
  if (k < 0 || k > v.n)
    throw Error("K = " + str(k) + " is outside [0, " + str(v.n) + "], the size of axis " + str(a));
  Shape ys = xs;
  ys[a] = k;
  if (v.P * k * v.Q == 0) {
    ConstTensor empty_v = make_const(to_elem_type(t), ys);
    ConstTensor empty_i = make_const(pb::TensorProto::INT64, ys);
    set_rt(0, constant(empty_v, "values"));
    set_rt(1, constant(empty_i, "indices"));
    return;
  }
  check_pairs(v, double(v.n) * double(std::max(v.n, k)), "TopK");
  // before[i, j]: x_j comes before x_i in the order (i on axis 1, j on axis 2).
  ValueId xi = reshape(x, {v.P, v.n, 1, v.Q}), xj = reshape(x, {v.P, 1, v.n, v.Q});
  ValueId ahead = largest ? ew(Mode::LT, {xi, xj}) : ew(Mode::LT, {xj, xi});
  ConstTensor lower = make_const(pb::TensorProto::BOOL, {1, v.n, v.n, 1});
  for (int64_t i = 0; i < v.n; ++i)
    for (int64_t j = 0; j < i; ++j) lower.i[i * v.n + j] = 1;
  ValueId tie = ew(Mode::AND, {ew(Mode::EQ, {xi, xj}), constant(lower, "j_before_i")});
  ValueId before = ew(Mode::OR, {ahead, tie}, "before");
  ValueId rank_of = reduce(cvt(before, DType::I64), "SUM", {2}, false);  // [P, n, Q]
  // picked[k, i]: x_i is output k
  ValueId picked =
      ew(Mode::EQ, {reshape(rank_of, {v.P, 1, v.n, v.Q}), iota(k, 1, 4, pb::TensorProto::INT64)},
         "picked");  // [P, k, n, Q]
  ValueId vals = reduce(where(picked, xj, scalar(t, 0)), "SUM", {2}, false);
  ValueId idx =
      reduce(where(picked, iota(v.n, 2, 4, pb::TensorProto::INT64), scalar(DType::I64, 0)), "SUM",
             {2}, false);
  set_rt(0, reshape(vals, ys));
  set_rt(1, reshape(idx, ys));
}

// out[t, b, ...] = x[t < len_b ? len_b - 1 - t : t, b, ...] for time_axis t and batch_axis b.
void Importer::lower_reverse_sequence() {
  const OnnxNode& n = *cur_;
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  const int rank = static_cast<int>(xs.size());
  if (rank < 2) throw Error("needs an input of rank >= 2");
  const int64_t ta = n.attr_int("time_axis", 0), ba = n.attr_int("batch_axis", 1);
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
    throw Error("time_axis and batch_axis must be 0 and 1 (either way round), not " + str(ta) +
                " and " + str(ba));
  const int64_t T = xs[ta], B = xs[ba];
  if (shape(1) != Shape{B})
    throw Error("sequence_lens has shape " + to_string(shape(1)) + ", expected [" + str(B) + "]");
  if (is_const(1))
    for (int64_t l : cst(1).ints())
      if (l < 0 || l > T)
        throw Error("sequence_lens holds " + str(l) + ", outside [0, " + str(T) + "]");
  const int64_t numel = checked_numel(xs, "the input");
  if (numel == 0) return set_rt(0, x);
  // Row-major strides; the flat position is sum(index_k * stride_k).
  std::vector<int64_t> stride(rank, 1);
  for (int k = rank - 2; k >= 0; --k) stride[k] = stride[k + 1] * xs[k + 1];
  // The constant part: every axis but time.
  ConstTensor base = make_const(pb::TensorProto::INT64, xs);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t rem = e, pos = 0;
    for (int k = 0; k < rank; ++k) {
      int64_t idx = rem / stride[k];
      rem %= stride[k];
      if (k != ta) pos += idx * stride[k];
    }
    base.i[e] = pos;
  }
  Shape ls(rank, 1);
  ls[ba] = B;
  ValueId len = reshape(cvt(rt(1), DType::I64), ls);
  ValueId tt = iota(T, static_cast<int>(ta), rank, pb::TensorProto::INT64);
  ValueId flipped = ew(Mode::SUB, {ew(Mode::SUB, {len, scalar(DType::I64, 1)}), tt});
  ValueId src = where(ew(Mode::LT, {tt, len}), flipped, tt);  // [T, B] or [B, T] (+ 1s)
  ValueId pos = ew(Mode::FUSE_MUL_ADD3,
                   {src, scalar(DType::I64, stride[ta]), constant(base, "base")}, "position");
  Node g;
  g.op = OpType::Gather;
  g.attrs["axis"] = int64_t(0);
  g.inputs = {reshape(x, {numel}), pos};
  set_rt(0, emit(std::move(g), "gather"));
}

}  // namespace hf::onnx_detail
