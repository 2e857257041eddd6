#include "runtime/ir/op_table.h"
#include "runtime/ir/constant.h"

#include <algorithm>
#include <cmath>

#include "runtime/ir/error.h"
#include "runtime/ir/nn_geometry.h"
#include "runtime/ir/resize_geometry.h"
#include "runtime/ir/sampling_geometry.h"
#include "runtime/ops/reduce_mode.h"

namespace hf {

namespace {

constexpr OpInfo kOps[] = {
#define X(NAME, ARITY, KIND, WHY_OPAQUE) {#NAME, ARITY, OpKind::KIND, WHY_OPAQUE},
#include "runtime/ir/op_types.def"
#undef X
};

[[noreturn]] void fail(const Node& n, const std::string& msg) {
  throw Error(describe(n) + ": " + msg);
}

bool kind_accepts(ModeKind k, DType t) {
  switch (k) {
    case ModeKind::Float:
    case ModeKind::Predicate:
      return is_float(t);
    case ModeKind::Numeric:
    case ModeKind::Compare:
      return t != DType::Bool;
    case ModeKind::Int:
      return is_int(t);
    case ModeKind::Logic:
      return t == DType::Bool || is_int(t);
  }
  return false;
}

const char* kind_text(ModeKind k) {
  switch (k) {
    case ModeKind::Float:
      return "a float type (f32, f16, bf16)";
    case ModeKind::Predicate:
      return "a float type (f32, f16, bf16)";
    case ModeKind::Numeric:
      return "a numeric type (not bool)";
    case ModeKind::Compare:
      return "a numeric type (not bool)";
    case ModeKind::Int:
      return "an integer type (i32, i64, u8)";
    case ModeKind::Logic:
      return "bool or an integer type";
  }
  return "?";
}

std::vector<ValueType> infer_elemwise(const Node& n, const std::vector<ValueType>& in) {
  const ModeInfo& m = mode_info(n.mode);
  if (static_cast<int>(in.size()) != m.arity)
    fail(n, "takes " + std::to_string(m.arity) + " inputs, got " + std::to_string(in.size()));
  Shape out = in[0].shape;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].dtype != in[0].dtype)
      fail(n, "input " + std::to_string(i) + " is " + std::string(dtype_name(in[i].dtype)) +
                  " but input 0 is " + std::string(dtype_name(in[0].dtype)) +
                  " (insert a TypeCvt)");
    auto b = broadcast_shapes(out, in[i].shape);
    if (!b)
      fail(n, "input shapes " + to_string(out) + " and " + to_string(in[i].shape) +
                  " do not broadcast");
    out = *b;
  }
  if (!kind_accepts(m.kind, in[0].dtype))
    fail(n, std::string("needs ") + kind_text(m.kind) + ", got " +
                std::string(dtype_name(in[0].dtype)));
  bool to_bool = m.kind == ModeKind::Compare || m.kind == ModeKind::Predicate;
  return {{to_bool ? DType::Bool : in[0].dtype, out}};
}

Shape reshape_target(const Node& n, const Shape& in) {
  std::vector<int64_t> spec = n.attr_ints("shape");
  Shape out(spec.begin(), spec.end());
  int infer = -1;
  Shape given;  // the dimensions besides the -1
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) fail(n, "shape has more than one -1");
      infer = static_cast<int>(i);
    } else if (out[i] < 0) {
      fail(n, "shape " + to_string(out) + " has a negative dimension");
    } else {
      given.push_back(out[i]);
    }
  }
  // Counted without overflow: a target such as [0, 2^61] must not pass as 0 elements.
  std::optional<int64_t> counted = numel_within(given);
  if (!counted) fail(n, "shape " + to_string(out) + " has more than 2^40 elements");
  const int64_t known = *counted;
  if (infer >= 0) {
    if (known == 0 || numel(in) % known != 0)
      fail(n, "cannot reshape " + to_string(in) + " to " + to_string(out));
    out[infer] = numel(in) / known;
  }
  if (numel(out) != numel(in))
    fail(n, "cannot reshape " + to_string(in) + " (" + std::to_string(numel(in)) +
                " elements) to " + to_string(out));
  return out;
}

DType dtype_attr(const Node& n) {
  auto t = parse_dtype(n.attr_str("dtype"));
  if (!t) fail(n, "unknown dtype '" + n.attr_str("dtype") + "'");
  return *t;
}

}  // namespace

const OpInfo& op_info(OpType t) {
  return kOps[static_cast<int>(t)];
}

std::string_view op_type_name(OpType t) {
  return op_info(t).name;
}

std::optional<OpType> parse_op_type(std::string_view s) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i].name == s) return static_cast<OpType>(i);
  return std::nullopt;
}

std::vector<int> reduce_axes(const Node& n, int rank) {
  std::vector<int64_t> raw = n.attr_ints("axes", std::vector<int64_t>{});
  std::vector<int> axes;
  if (raw.empty())
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  for (int64_t a : raw) {
    auto ax = normalize_axis(a, rank);
    if (!ax)
      fail(n, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    axes.push_back(*ax);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) fail(n, "axes repeat");
  return axes;
}

std::vector<int> dimshuffle_perm(const Node& n, int in_rank) {
  std::vector<int64_t> raw = n.attr_ints("perm");
  std::vector<int> perm;
  std::vector<bool> used(in_rank, false);
  for (int64_t p : raw) {
    if (p == -1) {
      perm.push_back(-1);
      continue;
    }
    if (p < 0 || p >= in_rank || used[p])
      fail(n, "perm must list each of the " + std::to_string(in_rank) +
                  " input axes once (-1 inserts an axis)");
    used[p] = true;
    perm.push_back(static_cast<int>(p));
  }
  if (std::count(used.begin(), used.end(), true) != in_rank)
    fail(n, "perm must list each of the " + std::to_string(in_rank) + " input axes once");
  if (perm.size() > static_cast<size_t>(kMaxRank)) fail(n, "perm makes the rank too large");
  return perm;
}

namespace {

// Per op: the arity, attribute, dtype and shape rules; infer_outputs bounds the result.
std::vector<ValueType> infer_op(const Node& n, const std::vector<ValueType>& in) {
  int arity = op_info(n.op).arity;
  if (arity >= 0 && static_cast<int>(in.size()) != arity)
    fail(n, "takes " + std::to_string(arity) + " inputs, got " + std::to_string(in.size()));
  switch (n.op) {
    case OpType::Elemwise:
      return infer_elemwise(n, in);
    case OpType::PowC:
      if (!is_float(in[0].dtype)) fail(n, "needs a float input");
      refuse_f64(n, in[0].dtype);
      if (!std::isfinite(n.attr_float("exponent"))) fail(n, "exponent must be finite");
      return {in[0]};
    case OpType::TypeCvt:
      return {{dtype_attr(n), in[0].shape}};
    case OpType::Reduce: {
      auto mode = parse_reduce_mode(n.attr_str("mode"));
      if (!mode) fail(n, "unknown reduce mode '" + n.attr_str("mode") + "'");
      if (in[0].dtype == DType::Bool) fail(n, "cannot reduce bool");
      int rank = static_cast<int>(in[0].shape.size());
      std::vector<int> axes = reduce_axes(n, rank);
      bool keep = n.attr_int("keepdims", 1) != 0;
      Shape out;
      for (int i = 0; i < rank; ++i) {
        bool reduced = std::binary_search(axes.begin(), axes.end(), i);
        if (reduced && in[0].shape[i] == 0 &&
            (*mode == ReduceMode::MIN || *mode == ReduceMode::MAX))
          fail(n, "MIN/MAX over an empty axis");
        if (!reduced)
          out.push_back(in[0].shape[i]);
        else if (keep)
          out.push_back(1);
      }
      return {{in[0].dtype, out}};
    }
    case OpType::Dimshuffle: {
      std::vector<int> perm = dimshuffle_perm(n, static_cast<int>(in[0].shape.size()));
      Shape out;
      for (int p : perm) out.push_back(p < 0 ? 1 : in[0].shape[p]);
      return {{in[0].dtype, out}};
    }
    case OpType::Reshape:
      return {{in[0].dtype, reshape_target(n, in[0].shape)}};
    case OpType::Broadcast: {
      std::vector<int64_t> s = n.attr_ints("shape");
      Shape to(s.begin(), s.end());
      for (int64_t d : to)
        if (d < 0) fail(n, "shape " + to_string(to) + " has a negative dimension");
      if (!broadcasts_to(in[0].shape, to))
        fail(n, "cannot broadcast " + to_string(in[0].shape) + " to " + to_string(to));
      return {{in[0].dtype, to}};
    }
    case OpType::Constant: {
      std::vector<int64_t> s = n.attr_ints("shape", std::vector<int64_t>{});
      Shape shape(s.begin(), s.end());
      for (int64_t d : shape)
        if (d < 0) fail(n, "shape " + to_string(shape) + " has a negative dimension");
      std::optional<int64_t> elements = numel_within(shape);
      if (!elements) fail(n, "shape " + to_string(shape) + " has more than 2^40 elements");
      const int64_t count = constant_count(n);
      if (count != 1 && count != *elements)
        fail(n, "value has " + std::to_string(count) + " elements, shape " + to_string(shape) +
                    " needs 1 or " + std::to_string(*elements));
      return {{dtype_attr(n), shape}};
    }
    case OpType::MatMul: {
      const Shape& a = in[0].shape;
      const Shape& b = in[1].shape;
      if (in[0].dtype != in[1].dtype || !is_float(in[0].dtype))
        fail(n, "needs two inputs of the same float type");
      refuse_f64(n, in[0].dtype);
      if (a.size() < 2 || b.size() < 2) fail(n, "needs inputs of rank >= 2");
      if (a.back() != b[b.size() - 2])
        fail(n, "inner dimensions differ: " + to_string(a) + " x " + to_string(b));
      auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
      if (!batch)
        fail(n, "batch dimensions do not broadcast: " + to_string(a) + " x " + to_string(b));
      batch->push_back(a[a.size() - 2]);
      batch->push_back(b.back());
      return {{in[0].dtype, *batch}};
    }
    case OpType::Conv:
    case OpType::MaxPool:
    case OpType::AveragePool:
    case OpType::Concat:
    case OpType::Slice:
    case OpType::Gather:
      return infer_nn_outputs(n, in);
    case OpType::Resize: {
      ResizeGeometry g = resize_geometry(n, in[0].shape);
      if (g.mode != ResizeMode::Nearest && !is_float(in[0].dtype))
        fail(n, "linear and cubic modes need a float input");
      return {{in[0].dtype, Shape(g.out.begin(), g.out.end())}};
    }
    case OpType::GridSample: {
      GridSampleGeometry g = grid_sample_geometry(n, in[0].shape, in[1].shape);
      if (!is_float(in[0].dtype) || !is_float(in[1].dtype))
        fail(n, "x and grid must be float tensors");
      Shape out{g.n, g.c};
      out.insert(out.end(), g.out.begin(), g.out.end());
      return {{in[0].dtype, out}};
    }
    case OpType::RoiAlign: {
      RoiAlignGeometry g = roi_align_geometry(n, in[0].shape, in[1].shape, in[2].shape);
      if (!is_float(in[0].dtype) || in[1].dtype != in[0].dtype)
        fail(n, "x and rois must be float tensors of one type");
      if (in[2].dtype != DType::I64 && in[2].dtype != DType::I32)
        fail(n, "batch_indices must be i64 or i32");
      return {{in[0].dtype, {g.rois, g.c, g.out_h, g.out_w}}};
    }
    case OpType::Det: {
      const Shape& x = in[0].shape;
      if (!is_float(in[0].dtype)) fail(n, "needs a float input");
      if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
        fail(n, "needs square matrices over the last two axes, got " + to_string(x));
      return {{in[0].dtype, Shape(x.begin(), x.end() - 2)}};
    }
    case OpType::BitCast: {
      DType to = dtype_attr(n);
      if (dtype_size(to) != dtype_size(in[0].dtype))
        fail(n, "cannot reinterpret " + std::string(dtype_name(in[0].dtype)) + " as " +
                    std::string(dtype_name(to)) + ": the sizes differ");
      return {{to, in[0].shape}};
    }
    case OpType::ScatterRows: {
      if (in[1].dtype != DType::I32 && in[1].dtype != DType::I64)
        fail(n, "indices must be i32 or i64, got " + std::string(dtype_name(in[1].dtype)));
      if (in[0].shape.empty()) fail(n, "cannot scatter into a scalar");
      if (in[2].dtype != in[0].dtype) fail(n, "updates and data differ in dtype");
      Shape want = in[1].shape;
      want.insert(want.end(), in[0].shape.begin() + 1, in[0].shape.end());
      if (in[2].shape != want)
        fail(n, "updates have shape " + to_string(in[2].shape) + ", expected " + to_string(want));
      const std::string& r = n.attr_str("reduction");
      if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
        fail(n, "reduction must be none, add, mul, max or min, not '" + r + "'");
      if (r != "none" && in[0].dtype == DType::Bool) fail(n, "a reduction needs a numeric type");
      return {{in[0].dtype, in[0].shape}};
    }
    case OpType::Fused: {
      auto* sig = dynamic_cast<const FusedSignature*>(n.payload.get());
      if (!sig) fail(n, "fused node without a kernel spec");
      return sig->output_types(in);
    }
  }
  fail(n, "unknown op type");
}

}  // namespace

// Every value a node creates passes here (Graph::add_node, verify), so no shape in a graph
// has an element count that overflows, whatever its op's arithmetic: a Conv with pads that
// make the output 2^64 elements, a Broadcast to [2^32, 2^32].
std::vector<ValueType> infer_outputs(const Node& n, const std::vector<ValueType>& in) {
  std::vector<ValueType> out = infer_op(n, in);
  for (size_t i = 0; i < out.size(); ++i)
    if (!numel_within(out[i].shape))
      fail(n, "output " + std::to_string(i) + " would be " + to_string(out[i].shape) +
                  ", more than 2^40 elements");
  return out;
}

namespace {
std::vector<ValueType> input_types(const Graph& g, const Node& n) {
  std::vector<ValueType> t;
  for (ValueId v : n.inputs) t.push_back({g.value(v).dtype, g.value(v).shape});
  return t;
}
}  // namespace

double node_flops(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return 0;
  double out = static_cast<double>(numel(g.value(n.outputs[0]).shape));
  switch (n.op) {
    case OpType::Elemwise:
      return out * mode_info(n.mode).flops;
    case OpType::PowC: {
      double e = n.attr_float("exponent");
      bool small_int = e == std::round(e) && std::fabs(e) <= 4;
      return out * (small_int ? std::max(1.0, std::fabs(e) - 1) : 20);
    }
    case OpType::Reduce:
      return static_cast<double>(numel(g.value(n.inputs[0]).shape));
    case OpType::MatMul: {
      const Shape& a = g.value(n.inputs[0]).shape;
      return 2.0 * out * static_cast<double>(a.back());
    }
    case OpType::Conv: {  // a multiply-add per weight element and output element
      const Shape& w = g.value(n.inputs[1]).shape;
      return 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
    }
    case OpType::MaxPool:
    case OpType::AveragePool: {
      std::vector<int64_t> k = n.attr_ints("kernel_shape");
      return out * static_cast<double>(k[0]) * static_cast<double>(k[1]);
    }
    case OpType::Fused: {
      auto* sig = dynamic_cast<const FusedSignature*>(n.payload.get());
      return sig ? sig->flops(input_types(g, n)) : 0;
    }
    default:
      return 0;
  }
}

double node_bytes(const Graph& g, const Node& n) {
  double bytes = 0;
  for (ValueId v : n.inputs)
    bytes += static_cast<double>(numel(g.value(v).shape)) * dtype_size(g.value(v).dtype);
  for (ValueId v : n.outputs)
    bytes += static_cast<double>(numel(g.value(v).shape)) * dtype_size(g.value(v).dtype);
  return bytes;
}

}  // namespace hf
