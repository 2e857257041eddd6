#include "tests/support/reference.h"
#include "runtime/ir/constant.h"

#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "runtime/ir/op_table.h"
#include "runtime/ops/half.h"
#include "runtime/ops/reduce_mode.h"
#include "runtime/ops/scalar_math.h"
#include "tests/support/reference_nn.h"

namespace hf::test {

namespace {

// Reads/writes element `i` of a contiguous tensor in compute type C.
template <class C>
C load(const TensorView& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32:
      return static_cast<C>(t.as<float>()[i]);
    case DType::F16:
      return static_cast<C>(to_f32(t.as<f16>()[i]));
    case DType::BF16:
      return static_cast<C>(to_f32(t.as<bf16>()[i]));
    case DType::I32:
      return static_cast<C>(t.as<int32_t>()[i]);
    case DType::I64:
      return static_cast<C>(t.as<int64_t>()[i]);
    case DType::Bool:
      return static_cast<C>(t.as<uint8_t>()[i] != 0);
    case DType::U8:
      return static_cast<C>(t.as<uint8_t>()[i]);
  }
  return C{};
}

template <class C>
void store(const TensorView& t, int64_t i, C v) {
  if constexpr (std::is_same_v<C, int64_t>) {
    if (t.dtype == DType::I64) {
      t.as<int64_t>()[i] = v;
      return;
    }
  }
  store_double(t, i, static_cast<double>(v));
}

// Flat index into `from` (contiguous) for multi-index `idx` of the broadcast result `to`.
int64_t broadcast_index(const Shape& from, const Shape& to, const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  size_t off = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    flat = flat * from[d] + (from[d] == 1 ? 0 : idx[off + d]);
  return flat;
}

std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return idx;
}

template <Mode M, class C>
void elemwise_typed(const std::vector<TensorView>& in, const TensorView& out) {
  int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> idx = unravel(i, out.shape);
    C a[4] = {};
    for (size_t k = 0; k < in.size(); ++k)
      a[k] = load<C>(in[k], broadcast_index(in[k].shape, out.shape, idx));
    using F = ModeFn<M>;
    constexpr int arity = mode_info(M).arity;
    if constexpr (arity == 1)
      store(out, i, F::apply(a[0]));
    else if constexpr (arity == 2)
      store(out, i, F::apply(a[0], a[1]));
    else if constexpr (arity == 3)
      store(out, i, F::apply(a[0], a[1], a[2]));
    else
      store(out, i, F::apply(a[0], a[1], a[2], a[3]));
  }
}

template <Mode M>
void elemwise(const std::vector<TensorView>& in, const TensorView& out) {
  constexpr ModeKind k = mode_info(M).kind;
  DType t = in[0].dtype;
  if constexpr (k == ModeKind::Float || k == ModeKind::Predicate) {
    elemwise_typed<M, float>(in, out);
  } else {
    if constexpr (k != ModeKind::Int && k != ModeKind::Logic)
      if (is_float(t)) return elemwise_typed<M, float>(in, out);
    if constexpr (k == ModeKind::Logic)
      if (t == DType::Bool) return elemwise_typed<M, bool>(in, out);
    if (t == DType::I32) return elemwise_typed<M, int32_t>(in, out);
    if (t == DType::I64) return elemwise_typed<M, long long>(in, out);
    if (t == DType::U8) return elemwise_typed<M, uint8_t>(in, out);
    throw std::logic_error("reference: unsupported dtype");
  }
}

void run_elemwise(Mode m, const std::vector<TensorView>& in, const TensorView& out) {
  switch (m) {
#define X(NAME, A, K, F) \
  case Mode::NAME:       \
    return elemwise<Mode::NAME>(in, out);
#include "runtime/ops/elemwise_modes.def"
#undef X
  }
}

void run_reduce(const Node& n, const TensorView& in, const TensorView& out) {
  ReduceMode mode = *parse_reduce_mode(n.attr_str("mode"));
  std::vector<int> axes = reduce_axes(n, in.rank());
  Shape kept = in.shape;
  for (int a : axes) kept[a] = 1;
  int64_t count = numel(in.shape) / std::max<int64_t>(1, numel(kept));
  std::vector<long double> acc(numel(kept));
  for (auto& a : acc)
    a = mode == ReduceMode::PRODUCT ? 1
        : mode == ReduceMode::MIN   ? INFINITY
        : mode == ReduceMode::MAX   ? -INFINITY
                                    : 0;
  for (int64_t i = 0; i < in.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, in.shape);
    for (int a : axes) idx[a] = 0;
    int64_t o = 0;
    for (size_t d = 0; d < kept.size(); ++d) o = o * kept[d] + idx[d];
    long double x = load<double>(in, i);
    switch (mode) {
      case ReduceMode::SUM:
      case ReduceMode::MEAN:
        acc[o] += x;
        break;
      case ReduceMode::SUM_SQR:
        acc[o] += x * x;
        break;
      case ReduceMode::PRODUCT:
        acc[o] *= x;
        break;
      case ReduceMode::MIN:
        acc[o] = (x != x || x < acc[o]) ? x : acc[o];
        break;
      case ReduceMode::MAX:
        acc[o] = (x != x || x > acc[o]) ? x : acc[o];
        break;
    }
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    long double v = mode == ReduceMode::MEAN ? acc[o] / count : acc[o];
    if (is_int(out.dtype) && mode == ReduceMode::MEAN) v = std::trunc(v);
    store_double(out, o, static_cast<double>(v));
  }
}

}  // namespace

std::vector<HostTensor> reference_run(const Graph& g, const std::vector<HostTensor>& inputs) {
  std::map<ValueId, HostTensor> vals;
  for (size_t i = 0; i < g.inputs().size(); ++i) vals[g.inputs()[i]] = inputs.at(i);
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    std::vector<TensorView> in;
    for (ValueId v : n.inputs) in.push_back(vals.at(v).view());
    const Value& ov = g.value(n.outputs.at(0));
    HostTensor out(ov.dtype, ov.shape);
    const TensorView& o = out.view();
    int64_t count = o.numel();
    switch (n.op) {
      case OpType::Elemwise:
        run_elemwise(n.mode, in, o);
        break;
      case OpType::PowC: {
        double e = n.attr_float("exponent");
        for (int64_t i = 0; i < count; ++i) store_double(o, i, std::pow(element(in[0], i), e));
        break;
      }
      case OpType::TypeCvt:
        for (int64_t i = 0; i < count; ++i) store_double(o, i, element(in[0], i));
        break;
      case OpType::Reduce:
        run_reduce(n, in[0], o);
        break;
      case OpType::Dimshuffle: {
        std::vector<int> perm = dimshuffle_perm(n, in[0].rank());
        Strides src = contiguous_strides(in[0].shape);
        for (int64_t i = 0; i < count; ++i) {
          std::vector<int64_t> idx = unravel(i, o.shape);
          int64_t flat = 0;
          for (size_t d = 0; d < perm.size(); ++d)
            if (perm[d] >= 0) flat += idx[d] * src[perm[d]];
          store_double(o, i, element(in[0], flat));
        }
        break;
      }
      case OpType::Reshape:
        for (int64_t i = 0; i < count; ++i) store_double(o, i, element(in[0], i));
        break;
      case OpType::BitCast:  // the bytes as they are
        std::memcpy(o.data, in[0].data, static_cast<size_t>(count) * dtype_size(o.dtype));
        break;
      case OpType::Broadcast:
        for (int64_t i = 0; i < count; ++i)
          store_double(o, i,
                       element(in[0], broadcast_index(in[0].shape, o.shape, unravel(i, o.shape))));
        break;
      case OpType::Constant: {
        const int64_t stored = constant_count(n);
        for (int64_t i = 0; i < count; ++i) store_double(o, i, constant_at(n, stored == 1 ? 0 : i));
        break;
      }
      case OpType::MatMul: {
        const Shape &a = in[0].shape, &b = in[1].shape;
        int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
        Shape batch(o.shape.begin(), o.shape.end() - 2);
        Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
        for (int64_t bi = 0; bi < numel(batch); ++bi) {
          std::vector<int64_t> idx = unravel(bi, batch);
          int64_t ao = broadcast_index(ab, batch, idx) * M * K;
          int64_t bo = broadcast_index(bb, batch, idx) * K * N;
          for (int64_t r = 0; r < M; ++r)
            for (int64_t c = 0; c < N; ++c) {
              long double s = 0;
              for (int64_t k = 0; k < K; ++k)
                s += static_cast<long double>(element(in[0], ao + r * K + k)) *
                     element(in[1], bo + k * N + c);
              store_double(o, bi * M * N + r * N + c, static_cast<double>(s));
            }
        }
        break;
      }
      case OpType::Conv:
      case OpType::MaxPool:
      case OpType::AveragePool:
      case OpType::Concat:
      case OpType::Slice:
      case OpType::Gather:
      case OpType::ScatterRows:
      case OpType::Det:
        reference_nn(n, in, o);
        break;
      case OpType::Resize:
      case OpType::GridSample:
      case OpType::RoiAlign:  // their own tests hold a reference (test_resample_ops.cpp)
        throw std::logic_error("reference: resampling ops are not interpreted");
      case OpType::Fused:
        throw std::logic_error("reference: fused nodes are not interpreted");
    }
    vals[n.outputs[0]] = out;
  }
  std::vector<HostTensor> outs;
  for (ValueId v : g.outputs()) outs.push_back(vals.at(v));
  return outs;
}

}  // namespace hf::test
