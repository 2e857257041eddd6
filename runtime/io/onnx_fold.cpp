// Constant folding at import time: Constant, Shape and Size always; every other foldable op
// when all its inputs are known. This is what makes shape subgraphs (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape) static. Float results are rounded to their type after
// each op, as the runtime stores them, so a folded value equals the computed one for the
// basic arithmetic folded here.
#include <algorithm>
#include <cmath>
#include <functional>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

using TP = pb::TensorProto;

void copy_elem(const ConstTensor& from, int64_t k, ConstTensor& to, int64_t at) {
  if (from.floating())
    to.f[at] = from.f[k];
  else
    to.i[at] = from.i[k];
}

Strides strides_of(const Shape& s) {
  Strides st(s.size(), 1);
  for (int k = static_cast<int>(s.size()) - 2; k >= 0; --k) st[k] = st[k + 1] * s[k + 1];
  return st;
}

// Calls f(e, pos) for every element e of `shape`, row-major, pos its multi-index.
template <class F>
void for_each_position(const Shape& shape, F&& f) {
  std::vector<int64_t> pos(shape.size(), 0);
  const int64_t n = numel(shape);
  for (int64_t e = 0; e < n; ++e) {
    f(e, pos);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
  }
}

// For each element of the broadcast output, the index of the element of `in` it reads.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  std::vector<int64_t> idx(static_cast<size_t>(numel(out)));
  Strides in_st = strides_of(in);
  size_t off = out.size() - in.size();
  for_each_position(out, [&](int64_t e, const std::vector<int64_t>& pos) {
    int64_t k = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != 1) k += pos[off + d] * in_st[d];
    idx[e] = k;
  });
  return idx;
}

int64_t trunc_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  return a / b;
}

int64_t c_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}

}  // namespace

// HannWindow, HammingWindow and BlackmanWindow (opset 17): generalized cosine windows of
// `size` values, periodic (the default: the period is size) or symmetric (size - 1),
// computed in double and converted to output_datatype as Cast converts.
void Importer::fold_window(const ConstTensor& size) {
  if (size.size() != 1 || size.floating()) throw Error("size must be one integer");
  const int64_t n = size.i[0];
  if (n < 0) throw Error("size must be >= 0, not " + std::to_string(n));
  if (!fold_fits(n))
    throw Error("a window of " + std::to_string(n) + " values is too large to compute here");
  const int32_t type = static_cast<int32_t>(cur_->attr_int("output_datatype", TP::FLOAT));
  if (!is_numeric_elem(type))
    throw Error("output_datatype " + elem_type_name(type) + " is not supported");
  const std::string& op = cur_->op();
  const double a0 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 25.0 / 46.0 : 0.42;
  const double a1 = op == "BlackmanWindow" ? 0.5 : 1.0 - a0;
  const double a2 = op == "BlackmanWindow" ? 0.08 : 0.0;
  const double period = static_cast<double>(cur_->attr_int("periodic", 1) != 0 ? n : n - 1);
  ConstTensor w = make_const(TP::DOUBLE, {n});
  for (int64_t k = 0; k < n; ++k) {
    const double x = 2.0 * M_PI * static_cast<double>(k) / period;
    w.f[k] = a0 - a1 * std::cos(x) + a2 * std::cos(2.0 * x);
  }
  ConstTensor out = make_const(type, {n});
  for (int64_t k = 0; k < n; ++k) cast_element(w, k, out, k);
  set_const(0, std::move(out));
}

bool Importer::try_fold() {
  const std::string& op = cur_->op();

  // --- ops whose result is always known --------------------------------------------------
  if (op == "Constant") {
    ConstTensor t;
    if (const pb::TensorProto* v = cur_->attr_tensor("value")) {
      t = decode_tensor(*v, dir_);
    } else if (cur_->has_attr("value_float")) {
      t = make_const(TP::FLOAT, {});
      t.f[0] = round_to(TP::FLOAT, cur_->attr_float("value_float"));
    } else if (cur_->has_attr("value_floats")) {
      std::vector<double> v = cur_->attr_floats("value_floats");
      t = make_const(TP::FLOAT, {static_cast<int64_t>(v.size())});
      t.f = v;
    } else if (cur_->has_attr("value_int")) {
      t = int64_tensor({}, {cur_->attr_int("value_int")});
    } else if (cur_->has_attr("value_ints")) {
      std::vector<int64_t> v = *cur_->attr_ints("value_ints");
      t = int64_tensor({static_cast<int64_t>(v.size())}, v);
    } else if (cur_->has_attr("sparse_value")) {
      unsupported("sparse_value");
    } else if (cur_->has_attr("value_string") || cur_->has_attr("value_strings")) {
      unsupported("string constants");
    } else {
      throw Error("has no value");
    }
    set_const(0, std::move(t));
    return true;
  }
  if (op == "Shape") {
    Shape s = shape(0);
    int64_t rank = static_cast<int64_t>(s.size());
    int64_t start = cur_->opset >= 15 ? cur_->attr_int("start", 0) : 0;
    int64_t end = cur_->opset >= 15 ? cur_->attr_int("end", rank) : rank;
    auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
    start = clampi(start);
    end = std::max(start, clampi(end));
    set_const(
        0, int64_tensor({end - start}, std::vector<int64_t>(s.begin() + start, s.begin() + end)));
    return true;
  }
  if (op == "Size") {
    set_const(0, int64_tensor({}, {numel(shape(0))}));
    return true;
  }
  if (op == "ConstantOfShape") {
    std::vector<int64_t> dims = const_ints(0, "shape");
    Shape s(dims.begin(), dims.end());
    int64_t n = checked_numel(s, "the output");
    ConstTensor value = make_const(TP::FLOAT, {});
    if (const pb::TensorProto* v = cur_->attr_tensor("value")) value = decode_tensor(*v, dir_);
    if (value.size() != 1) throw Error("attribute 'value' must hold one element");
    if (fold_fits(n)) {
      ConstTensor out = make_const(value.type, s);
      for (int64_t k = 0; k < n; ++k) copy_elem(value, 0, out, k);
      set_const(0, std::move(out));
    } else {  // too big to hold here: a Constant node fills it when the plan is built
      set_rt(0, splat(value, s, "fill"));
    }
    return true;
  }

  // --- ops whose output's size is an input's value: a graph input's value given for the
  // run is as good as a constant (the graph is specialised to it) ------------------------
  auto value_of = [&](int k) -> std::optional<ConstTensor> {
    if (is_const(k)) return cst(k);
    return given_input(k);
  };
  if (op == "Range") {
    std::optional<ConstTensor> start_v = value_of(0), limit_v = value_of(1), delta_v = value_of(2);
    if (!start_v || !limit_v || !delta_v) return false;
    const ConstTensor &start = *start_v, &limit = *limit_v, &delta = *delta_v;
    if (start.size() != 1 || limit.size() != 1 || delta.size() != 1)
      throw Error("start, limit and delta must be scalars");
    if (start.type != limit.type || start.type != delta.type) throw Error("inputs differ in type");
    double d = delta.as_double(0);
    if (d == 0) throw Error("delta must not be 0");
    double count = std::ceil((limit.as_double(0) - start.as_double(0)) / d);
    if (!(count <= static_cast<double>(kFoldStructural)) ||
        !fold_fits(static_cast<int64_t>(std::max(count, 0.0))))
      return false;
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    ConstTensor out = make_const(start.type, {n});
    for (int64_t k = 0; k < n; ++k) {
      if (out.floating())
        out.f[k] = round_to(out.type, start.f[0] + static_cast<double>(k) * delta.f[0]);
      else
        out.i[k] = wrap_to(out.type, static_cast<int64_t>(static_cast<uint64_t>(start.i[0]) +
                                                          static_cast<uint64_t>(k) *
                                                              static_cast<uint64_t>(delta.i[0])));
    }
    set_const(0, std::move(out));
    return true;
  }

  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow") {
    std::optional<ConstTensor> size_v = value_of(0);
    if (!size_v) return false;
    fold_window(*size_v);
    return true;
  }

  // --- everything else: only when every input is known ------------------------------------
  if (cur_->num_inputs() == 0) return false;
  for (int k = 0; k < cur_->num_inputs(); ++k)
    if (cur_->has_input(k) && !is_const(k)) return false;

  if (op == "Identity") {
    alias(0, 0);
    return true;
  }
  // Ops whose result is as large as input 0: a big initializer (a weight cast from f16, a
  // transposed matrix) is left to a run-time node rather than copied here.
  static const std::unordered_set<std::string> same_size = {
      "Cast", "CastLike", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose"};
  if (same_size.count(op) && !fold_fits(cst(0).size())) return false;
  if (op == "Cast" || op == "CastLike") {
    int32_t to = op == "Cast" ? static_cast<int32_t>(cur_->attr_int("to")) : cst(1).type;
    if (!is_numeric_elem(to)) return false;
    const ConstTensor& in = cst(0);
    ConstTensor out = make_const(to, in.shape);
    for (int64_t k = 0; k < in.size(); ++k) cast_element(in, k, out, k);
    set_const(0, std::move(out));
    return true;
  }

  // Same data, new shape.
  auto reshaped = [&](Shape s) {
    ConstTensor out = cst(0);
    out.shape = std::move(s);
    set_const(0, std::move(out));
    return true;
  };
  if (op == "Reshape") {
    bool allowzero = cur_->opset >= 14 && cur_->attr_int("allowzero", 0) != 0;
    return reshaped(reshape_shape(shape(0), const_ints(1, "shape"), allowzero));
  }
  if (op == "Flatten") return reshaped(flatten_shape(shape(0), cur_->attr_int("axis", 1)));
  if (op == "Squeeze")
    return reshaped(squeeze_shape(shape(0), axes_arg(cur_->opset >= 13 ? 1 : -1, "axes")));
  if (op == "Unsqueeze") {
    auto axes = axes_arg(cur_->opset >= 13 ? 1 : -1, "axes");
    if (!axes) throw Error("needs axes");
    return reshaped(unsqueeze_shape(shape(0), *axes));
  }

  if (op == "Transpose") {
    const ConstTensor& in = cst(0);
    int rank = static_cast<int>(in.shape.size());
    std::vector<int64_t> perm;
    if (auto p = cur_->attr_ints("perm"))
      perm = *p;
    else
      for (int k = rank - 1; k >= 0; --k) perm.push_back(k);
    if (static_cast<int>(perm.size()) != rank) return false;  // lowering reports it
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p]) throw Error("perm is not a permutation");
      seen[p] = true;
    }
    Shape out_shape;
    for (int64_t p : perm) out_shape.push_back(in.shape[p]);
    ConstTensor out = make_const(in.type, out_shape);
    Strides in_st = strides_of(in.shape);
    for_each_position(out_shape, [&](int64_t e, const std::vector<int64_t>& pos) {
      int64_t k = 0;
      for (int d = 0; d < rank; ++d) k += pos[d] * in_st[perm[d]];
      copy_elem(in, k, out, e);
    });
    set_const(0, std::move(out));
    return true;
  }

  if (op == "Expand") {
    const ConstTensor& in = cst(0);
    std::vector<int64_t> target = const_ints(1, "shape");
    auto out_shape = broadcast_shapes(in.shape, Shape(target.begin(), target.end()));
    if (!out_shape)
      throw Error("cannot expand " + to_string(in.shape) + " to " + to_string(Shape(target)));
    if (!fold_fits(checked_numel(*out_shape, "the expanded tensor"))) return false;
    ConstTensor out = make_const(in.type, *out_shape);
    std::vector<int64_t> idx = broadcast_index(in.shape, *out_shape);
    for (int64_t e = 0; e < out.size(); ++e) copy_elem(in, idx[e], out, e);
    set_const(0, std::move(out));
    return true;
  }

  if (op == "Tile") {
    const ConstTensor& in = cst(0);
    std::vector<int64_t> reps = const_ints(1, "repeats");
    if (reps.size() != in.shape.size()) throw Error("repeats must have one entry per axis");
    Shape out_shape;
    for (size_t d = 0; d < reps.size(); ++d) {
      if (reps[d] < 0) throw Error("repeats must not be negative");
      if (in.shape[d] != 0 && reps[d] > kMaxElements / in.shape[d]) return false;
      out_shape.push_back(in.shape[d] * reps[d]);
    }
    if (!fold_fits(checked_numel(out_shape, "the tiled tensor"))) return false;
    ConstTensor out = make_const(in.type, out_shape);
    Strides in_st = strides_of(in.shape);
    for_each_position(out_shape, [&](int64_t e, const std::vector<int64_t>& pos) {
      int64_t k = 0;
      for (size_t d = 0; d < pos.size(); ++d) k += (pos[d] % in.shape[d]) * in_st[d];
      copy_elem(in, k, out, e);
    });
    set_const(0, std::move(out));
    return true;
  }

  if (op == "Concat") {
    const ConstTensor& first = cst(0);
    int rank = static_cast<int>(first.shape.size());
    int ax = norm_axis(cur_->attr_int("axis"), rank, "axis");
    Shape out_shape = first.shape;
    out_shape[ax] = 0;
    for (int k = 0; k < cur_->num_inputs(); ++k) {
      if (!cur_->has_input(k)) continue;
      const ConstTensor& t = cst(k);
      if (t.type != first.type) throw Error("inputs differ in element type");
      bool ok = t.shape.size() == first.shape.size();
      for (int d = 0; ok && d < rank; ++d) ok = d == ax || t.shape[d] == first.shape[d];
      if (!ok)
        throw Error("input shapes " + to_string(first.shape) + " and " + to_string(t.shape) +
                    " do not concatenate on axis " + std::to_string(ax));
      out_shape[ax] += t.shape[ax];
    }
    if (!fold_fits(checked_numel(out_shape, "the concatenation"))) return false;
    ConstTensor out = make_const(first.type, out_shape);
    int64_t outer = numel(Shape(out_shape.begin(), out_shape.begin() + ax));
    int64_t inner = numel(Shape(out_shape.begin() + ax + 1, out_shape.end()));
    int64_t at = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int k = 0; k < cur_->num_inputs(); ++k) {
        if (!cur_->has_input(k)) continue;
        const ConstTensor& t = cst(k);
        int64_t chunk = t.shape[ax] * inner;
        for (int64_t e = 0; e < chunk; ++e) copy_elem(t, o * chunk + e, out, at++);
      }
    set_const(0, std::move(out));
    return true;
  }

  if (op == "Gather") {
    const ConstTensor& data = cst(0);
    const ConstTensor& indices = cst(1);
    if (indices.floating()) throw Error("indices must be integers");
    int rank = static_cast<int>(data.shape.size());
    int ax = norm_axis(cur_->attr_int("axis", 0), rank, "axis");
    Shape out_shape(data.shape.begin(), data.shape.begin() + ax);
    out_shape.insert(out_shape.end(), indices.shape.begin(), indices.shape.end());
    out_shape.insert(out_shape.end(), data.shape.begin() + ax + 1, data.shape.end());
    if (!fold_fits(checked_numel(out_shape, "the gathered tensor"))) return false;
    ConstTensor out = make_const(data.type, out_shape);
    int64_t outer = numel(Shape(data.shape.begin(), data.shape.begin() + ax));
    int64_t inner = numel(Shape(data.shape.begin() + ax + 1, data.shape.end()));
    int64_t dim = data.shape[ax];
    int64_t at = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < indices.size(); ++j) {
        int64_t i = indices.i[j];
        if (i < -dim || i >= dim)
          throw Error("index " + std::to_string(i) + " is out of range for axis " +
                      std::to_string(ax) + " of size " + std::to_string(dim));
        if (i < 0) i += dim;
        for (int64_t e = 0; e < inner; ++e) copy_elem(data, (o * dim + i) * inner + e, out, at++);
      }
    set_const(0, std::move(out));
    return true;
  }

  if (op == "Slice") {
    const ConstTensor& data = cst(0);
    if (!fold_fits(data.size())) return false;
    int rank = static_cast<int>(data.shape.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (cur_->opset < 10) {
      starts = cur_->attr_ints("starts").value_or(std::vector<int64_t>{});
      ends = cur_->attr_ints("ends").value_or(std::vector<int64_t>{});
      if (auto a = cur_->attr_ints("axes")) axes = *a;
    } else {
      starts = const_ints(1, "starts");
      ends = const_ints(2, "ends");
      if (cur_->has_input(3)) axes = const_ints(3, "axes");
      if (cur_->has_input(4)) steps = const_ints(4, "steps");
    }
    if (axes.empty())
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
      throw Error("starts, ends, axes and steps differ in length");
    std::vector<int64_t> first(rank, 0), step(rank, 1);
    Shape out_shape = data.shape;
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < starts.size(); ++k) {
      int ax = norm_axis(axes[k], rank, "axis");
      if (seen[ax]) throw Error("axes repeat");
      seen[ax] = true;
      int64_t dim = data.shape[ax], st = steps[k];
      if (st == 0) throw Error("steps must not be 0");
      int64_t b = starts[k], e = ends[k];
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      int64_t count;
      if (st > 0) {
        b = std::clamp(b, int64_t(0), dim);
        e = std::clamp(e, int64_t(0), dim);
        count = e > b ? (e - b + st - 1) / st : 0;
      } else {
        b = std::clamp(b, int64_t(-1), dim - 1);
        e = std::clamp(e, int64_t(-1), dim - 1);
        count = b > e ? (b - e + (-st) - 1) / (-st) : 0;
      }
      first[ax] = b;
      step[ax] = st;
      out_shape[ax] = count;
    }
    ConstTensor out = make_const(data.type, out_shape);
    Strides in_st = strides_of(data.shape);
    for_each_position(out_shape, [&](int64_t e, const std::vector<int64_t>& pos) {
      int64_t k = 0;
      for (int d = 0; d < rank; ++d) k += (first[d] + pos[d] * step[d]) * in_st[d];
      copy_elem(data, k, out, e);
    });
    set_const(0, std::move(out));
    return true;
  }

  // --- element-wise arithmetic on small constants ------------------------------------------
  enum Kind { Arith, Compare, Logic, Select };
  struct Rule {
    Kind kind;
    int arity;  // -1: variadic
    std::function<double(double, double)> f;
    std::function<int64_t(int64_t, int64_t)> i;
  };
  int64_t fmod_attr = op == "Mod" ? cur_->attr_int("fmod", 0) : 0;
  auto wrap_add = [](int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  };
  auto wrap_sub = [](int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  };
  auto wrap_mul = [](int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  };
  auto fmax_nan = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  };
  auto fmin_nan = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  };
  static const std::unordered_set<std::string> foldable = {"Add",
                                                           "Sub",
                                                           "Mul",
                                                           "Div",
                                                           "Mod",
                                                           "Max",
                                                           "Min",
                                                           "Sum",
                                                           "Equal",
                                                           "Less",
                                                           "LessOrEqual",
                                                           "Greater",
                                                           "GreaterOrEqual",
                                                           "And",
                                                           "Or",
                                                           "Xor",
                                                           "Where",
                                                           "Neg",
                                                           "Abs",
                                                           "Not",
                                                           "Floor",
                                                           "Ceil",
                                                           "Sqrt",
                                                           "Sign"};
  if (!foldable.count(op)) return false;
  std::unordered_map<std::string, Rule> rules = {
      {"Add", {Arith, 2, [](double a, double b) { return a + b; }, wrap_add}},
      {"Sum", {Arith, -1, [](double a, double b) { return a + b; }, wrap_add}},
      {"Sub", {Arith, 2, [](double a, double b) { return a - b; }, wrap_sub}},
      {"Mul", {Arith, 2, [](double a, double b) { return a * b; }, wrap_mul}},
      {"Div", {Arith, 2, [](double a, double b) { return a / b; }, trunc_div}},
      {"Mod",
       {Arith, 2, [](double a, double b) { return std::fmod(a, b); },
        [fmod_attr](int64_t a, int64_t b) {
          int64_t r = c_mod(a, b);
          if (fmod_attr == 0 && r != 0 && ((r < 0) != (b < 0))) r += b;
          return r;
        }}},
      {"Max", {Arith, -1, fmax_nan, [](int64_t a, int64_t b) { return std::max(a, b); }}},
      {"Min", {Arith, -1, fmin_nan, [](int64_t a, int64_t b) { return std::min(a, b); }}},
      {"Equal",
       {Compare, 2, [](double a, double b) { return double(a == b); },
        [](int64_t a, int64_t b) { return int64_t(a == b); }}},
      {"Less",
       {Compare, 2, [](double a, double b) { return double(a < b); },
        [](int64_t a, int64_t b) { return int64_t(a < b); }}},
      {"LessOrEqual",
       {Compare, 2, [](double a, double b) { return double(a <= b); },
        [](int64_t a, int64_t b) { return int64_t(a <= b); }}},
      {"Greater",
       {Compare, 2, [](double a, double b) { return double(a > b); },
        [](int64_t a, int64_t b) { return int64_t(a > b); }}},
      {"GreaterOrEqual",
       {Compare, 2, [](double a, double b) { return double(a >= b); },
        [](int64_t a, int64_t b) { return int64_t(a >= b); }}},
      {"And", {Logic, 2, nullptr, [](int64_t a, int64_t b) { return int64_t(a && b); }}},
      {"Or", {Logic, 2, nullptr, [](int64_t a, int64_t b) { return int64_t(a || b); }}},
      {"Xor",
       {Logic, 2, nullptr, [](int64_t a, int64_t b) { return int64_t((a != 0) != (b != 0)); }}},
      {"Where", {Select, 3, nullptr, nullptr}},
      {"Neg",
       {Arith, 1, [](double a, double) { return -a; },
        [=](int64_t a, int64_t) { return wrap_sub(0, a); }}},
      {"Abs",
       {Arith, 1, [](double a, double) { return std::fabs(a); },
        [=](int64_t a, int64_t) { return a < 0 ? wrap_sub(0, a) : a; }}},
      {"Not", {Logic, 1, nullptr, [](int64_t a, int64_t) { return int64_t(!a); }}},
      {"Floor", {Arith, 1, [](double a, double) { return std::floor(a); }, nullptr}},
      {"Ceil", {Arith, 1, [](double a, double) { return std::ceil(a); }, nullptr}},
      {"Sqrt", {Arith, 1, [](double a, double) { return std::sqrt(a); }, nullptr}},
      {"Sign",
       {Arith, 1, [](double a, double) { return double((a > 0) - (a < 0)); },
        [](int64_t a, int64_t) { return int64_t((a > 0) - (a < 0)); }}},
  };
  const Rule& rule = rules.at(op);
  std::vector<const ConstTensor*> in;
  for (int k = 0; k < cur_->num_inputs(); ++k)
    if (cur_->has_input(k)) in.push_back(&cst(k));
  if (in.empty() || (rule.arity >= 0 && static_cast<int>(in.size()) != rule.arity)) return false;
  // The value inputs must share one type (Where: inputs 1 and 2; its input 0 is BOOL).
  size_t first_value = rule.kind == Select ? 1 : 0;
  if (rule.kind == Select && in[0]->type != TP::BOOL) return false;
  int32_t type = in[first_value]->type;
  for (size_t k = first_value; k < in.size(); ++k)
    if (in[k]->type != type) return false;
  bool floating = is_float_elem(type);
  if (rule.kind == Logic && type != TP::BOOL) return false;
  if (rule.kind == Arith && (floating ? !rule.f : !rule.i)) return false;
  if (rule.kind == Arith && type == TP::BOOL) return false;
  if (op == "Mod" && floating && fmod_attr != 1) return false;

  Shape out_shape = in[0]->shape;
  for (const ConstTensor* t : in) {
    auto b = broadcast_shapes(out_shape, t->shape);
    if (!b) return false;  // lowering reports it
    out_shape = *b;
  }
  int64_t n_out = checked_numel(out_shape, "the result");
  if (n_out > kFoldArithmetic || !fold_fits(n_out)) return false;
  std::vector<std::vector<int64_t>> idx;
  for (const ConstTensor* t : in) idx.push_back(broadcast_index(t->shape, out_shape));
  int32_t out_type = rule.kind == Compare ? TP::BOOL : type;
  ConstTensor out = make_const(out_type, out_shape);
  for (int64_t e = 0; e < out.size(); ++e) {
    if (rule.kind == Select) {
      bool c = in[0]->i[idx[0][e]] != 0;
      copy_elem(c ? *in[1] : *in[2], c ? idx[1][e] : idx[2][e], out, e);
      continue;
    }
    if (floating) {
      double acc = in[0]->f[idx[0][e]];
      if (rule.arity == 1) acc = rule.f(acc, 0);
      for (size_t k = 1; k < in.size(); ++k) {
        acc = rule.f(acc, in[k]->f[idx[k][e]]);
        if (rule.kind == Arith) acc = round_to(type, acc);
      }
      if (rule.kind == Compare)
        out.i[e] = acc != 0;
      else
        out.f[e] = round_to(type, acc);
    } else {
      int64_t acc = in[0]->i[idx[0][e]];
      if (rule.arity == 1) acc = rule.i(acc, 0);
      for (size_t k = 1; k < in.size(); ++k) {
        acc = rule.i(acc, in[k]->i[idx[k][e]]);
        if (rule.kind == Arith) acc = wrap_to(type, acc);
      }
      out.i[e] = rule.kind == Compare ? acc != 0 : wrap_to(out_type, acc);
    }
  }
  set_const(0, std::move(out));
  return true;
}

}  // namespace hf::onnx_detail
