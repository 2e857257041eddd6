// ONNX scatter and N-dimensional gather ops, built on two op-table ops that move rows along
// axis 0: Gather (GatherND) and ScatterRows (ScatterElements, Scatter, ScatterND). The
// importer turns each ONNX index into a flat row number of the data reshaped to
// [rows, row...] with element-wise ops (so fusion can take that part); an index outside
// [-dim, dim) on any axis becomes a row outside the data, which the kernel refuses at run
// time (an hf::Error naming the node) instead of reading or writing another row.
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

Shape dims_of(const Shape& s, size_t from, size_t to) {
  return Shape(s.begin() + static_cast<std::ptrdiff_t>(from),
               s.begin() + static_cast<std::ptrdiff_t>(to));
}

}  // namespace

// The ScatterRows reduction of the current node: "none" before opset 16, then the
// attribute (add and mul from 16, max and min from 18).
std::string Importer::scatter_reduction() {
  std::string r = cur_->opset >= 16 ? cur_->attr_str("reduction", "none") : "none";
  bool ok =
      r == "none" || r == "add" || r == "mul" || (cur_->opset >= 18 && (r == "max" || r == "min"));
  if (!ok)
    throw Error("reduction '" + r + "' is not one of opset " + std::to_string(cur_->opset) +
                "'s (none, add, mul" + (cur_->opset >= 18 ? ", max, min)" : ")"));
  if (r != "none" && dtype(0) == DType::Bool) throw Error("a reduction needs numeric data");
  return r;
}

// Rows of the data viewed as [prod(ds[0 .. b+k)), ds[b+k ..]...] picked by `indices`
// ([ds[0..b)..., q..., k], the last axis an index into ds[b .. b+k)) with b batch axes:
// an INT64 tensor of the indices' shape without its last axis. Constant indices are checked
// here; a run-time index out of range gives the row -rows - 1 (refused by the kernel).
ValueId Importer::nd_rows(int k_in, const Shape& ds, int b) {
  const Shape is = shape(k_in);
  int32_t it = elem(k_in);
  if (it != pb::TensorProto::INT64 && it != pb::TensorProto::INT32)
    throw Error("indices must be INT32 or INT64, got " + elem_type_name(it));
  if (is.empty()) throw Error("indices need rank >= 1");
  const int q = static_cast<int>(is.size());
  const int64_t k = is.back();
  if (b < 0 || b >= q || b > static_cast<int>(ds.size()))
    throw Error("batch_dims " + std::to_string(b) + " does not fit indices " + to_string(is) +
                " and data " + to_string(ds));
  for (int d = 0; d < b; ++d)
    if (is[d] != ds[d])
      throw Error("indices " + to_string(is) + " and data " + to_string(ds) +
                  " differ on batch axis " + std::to_string(d));
  if (b + k > static_cast<int64_t>(ds.size()))
    throw Error("indices " + to_string(is) + " index " + std::to_string(k) +
                " axes past the batch axes of data " + to_string(ds));
  const Shape lead = dims_of(is, 0, q - 1);
  int64_t m = 1;  // rows per batch entry
  for (int64_t j = 0; j < k; ++j) m *= ds[b + j];
  int64_t rows = m;
  for (int d = 0; d < b; ++d) rows *= ds[d];
  if (is_const(k_in)) {
    std::vector<int64_t> v = cst(k_in).ints();
    for (size_t e = 0; e < v.size(); ++e) {
      int64_t dim = ds[b + static_cast<int64_t>(e) % k];
      if (v[e] < -dim || v[e] >= dim)
        throw Error("index " + std::to_string(v[e]) + " is out of range for axis " +
                    std::to_string(b + static_cast<int64_t>(e) % k) + " of size " +
                    std::to_string(dim));
    }
  }
  auto i64 = [&](double v) { return scalar(DType::I64, v); };
  ValueId flat = broadcast_to(reshape(i64(0), Shape(lead.size(), 1)), lead);
  std::optional<ValueId> any_bad;  // 1 where a component is out of range
  if (k > 0) {
    Shape ks(q, 1);
    ks[q - 1] = k;
    ConstTensor dim = make_const(pb::TensorProto::INT64, ks),
                stride = make_const(pb::TensorProto::INT64, ks);
    int64_t st = 1;
    for (int64_t j = k - 1; j >= 0; --j) {
      dim.i[j] = ds[b + j];
      stride.i[j] = st;
      st *= ds[b + j];
    }
    ValueId dims = constant(dim, "dims");
    ValueId i = cvt(rt(k_in), DType::I64);
    i = ew(Mode::ADD, {i, ew(Mode::MUL, {cvt(ew(Mode::LT, {i, i64(0)}), DType::I64), dims})});
    ValueId bad = ew(Mode::OR, {ew(Mode::LT, {i, i64(0)}), ew(Mode::LEQ, {dims, i})});
    flat = reduce(ew(Mode::MUL, {i, constant(stride, "strides")}), "SUM", {q - 1}, false);
    any_bad = reduce(cvt(bad, DType::I64), "MAX", {q - 1}, false);
  }
  // The batch entry's first row: sum over the batch axes of position * rows below it.
  int64_t below = m;
  for (int d = b - 1; d >= 0; --d) {
    if (ds[d] > 1)
      flat = ew(Mode::ADD, {flat, ew(Mode::MUL, {iota(ds[d], d, q - 1, pb::TensorProto::INT64),
                                                 i64(double(below))})});
    below *= ds[d];
  }
  // Last, so that no batch offset brings a bad row back into the data.
  if (!any_bad) return flat;
  ValueId outside = broadcast_to(reshape(i64(double(-rows - 1)), Shape(lead.size(), 1)), lead);
  return where(ew(Mode::LT, {i64(0), *any_bad}), outside, flat);
}

// out[b..., q...] = data[b..., indices[b..., q..., :], ...]: one Gather of rows.
void Importer::lower_gather_nd() {
  ValueId data = rt(0);
  const Shape ds = shape_of(data), is = shape(1);
  const int b = cur_->opset >= 12 ? static_cast<int>(cur_->attr_int("batch_dims", 0)) : 0;
  ValueId rows = nd_rows(1, ds, b);
  const int64_t k = is.back();
  Shape flat_ds = dims_of(ds, b + k, ds.size());
  int64_t n = 1;
  for (int64_t d = 0; d < b + k; ++d) n *= ds[d];
  flat_ds.insert(flat_ds.begin(), n);
  Node g;
  g.op = OpType::Gather;
  g.attrs["axis"] = int64_t(0);
  g.inputs = {reshape(data, flat_ds), rows};
  set_rt(0, emit(std::move(g), "gather_nd"));
}

// Scatter rows of the data viewed as [rows, row...]: data reshaped, the updates as
// [indices..., row...], the result back in the data's shape.
ValueId Importer::scatter_rows(ValueId data, ValueId rows, ValueId updates, int64_t lead_axes,
                               const std::string& reduction) {
  const Shape ds = shape_of(data);
  Shape flat_ds = dims_of(ds, lead_axes, ds.size());
  int64_t n = 1;
  for (int64_t d = 0; d < lead_axes; ++d) n *= ds[d];
  flat_ds.insert(flat_ds.begin(), n);
  Shape want = shape_of(rows);
  want.insert(want.end(), flat_ds.begin() + 1, flat_ds.end());
  if (dtype_of(updates) != dtype_of(data)) throw Error("updates and data differ in type");
  Node s;
  s.op = OpType::ScatterRows;
  s.attrs["reduction"] = reduction;
  s.inputs = {reshape(data, flat_ds), rows, reshape(updates, want)};
  return reshape(emit(std::move(s), "scatter"), ds);
}

// data[indices[q..., :], ...] = updates[q..., ...] (combined with `reduction`).
void Importer::lower_scatter_nd() {
  const std::string r = scatter_reduction();
  ValueId data = rt(0);
  const Shape ds = shape_of(data), is = shape(1), us = shape(2);
  Shape want = dims_of(is, 0, is.empty() ? 0 : is.size() - 1);
  if (!is.empty() && is.back() <= static_cast<int64_t>(ds.size()))
    want.insert(want.end(), ds.begin() + is.back(), ds.end());
  ValueId rows = nd_rows(1, ds, 0);
  if (us != want)
    throw Error("updates have shape " + to_string(us) + ", expected " + to_string(want));
  set_rt(0, scatter_rows(data, rows, rt(2), is.back(), r));
}

// out = data with out[.., indices[p], ..] (at `axis`, the other coordinates p's) set to
// updates[p]: the flat position of every update, one ScatterRows of single elements.
// Scatter (opsets 9-10) is the same op.
void Importer::lower_scatter_elements() {
  const std::string r = scatter_reduction();
  ValueId data = rt(0);
  if (shape(2) != shape(1))
    throw Error("updates have shape " + to_string(shape(2)) + ", the indices " +
                to_string(shape(1)));
  const int rank = static_cast<int>(shape_of(data).size());
  ValueId flat = element_positions(shape_of(data));
  set_rt(0, scatter_rows(data, flat, rt(2), rank, r));
}

// TensorScatter (opset 24, a KV cache update): update[p..., j, ...] written to
// past_cache[p..., write_indices[p0] + j, ...] along `axis` (default -2), the position taken
// modulo the axis in mode "circular"; in "linear" mode a position past the axis is refused
// at run time like any index out of range. One ScatterRows of the rows after the axis.
void Importer::lower_tensor_scatter() {
  ValueId cache = rt(0);
  const Shape ds = shape_of(cache), us = shape(1);
  const int rank = static_cast<int>(ds.size());
  if (static_cast<int>(us.size()) != rank)
    throw Error("update has rank " + std::to_string(us.size()) + ", the cache " +
                std::to_string(rank));
  if (rank < 2) throw Error("needs a cache of rank >= 2 (batch, ..., sequence, ...)");
  const int axis = norm_axis(cur_->attr_int("axis", -2), rank, "axis");
  if (axis == 0) throw Error("axis must not be the batch axis 0");
  for (int d = 0; d < rank; ++d)
    if (d == axis ? us[d] > ds[d] : us[d] != ds[d])
      throw Error("update " + to_string(us) + " does not fit the cache " + to_string(ds));
  const std::string mode = cur_->attr_str("mode", "linear");
  if (mode != "linear" && mode != "circular")
    throw Error("mode must be 'linear' or 'circular', not '" + mode + "'");
  auto i64 = [&](double v) { return scalar(DType::I64, v); };
  const Shape lead(us.begin(), us.begin() + axis + 1);  // the update's rows
  const int lr = axis + 1;
  ValueId pos = iota(us[axis], axis, lr, pb::TensorProto::INT64);
  if (cur_->has_input(2)) {
    if (shape(2) != Shape{ds[0]}) throw Error("write_indices must have shape [batch]");
    Shape ws(lr, 1);
    ws[0] = ds[0];
    pos = ew(Mode::ADD, {pos, reshape(cvt(rt(2), DType::I64), ws)});
  }
  const int64_t len = ds[axis];
  if (mode == "circular") {  // a non-negative remainder whatever the sign of the position
    pos = ew(Mode::MOD, {ew(Mode::ADD, {ew(Mode::MOD, {pos, i64(len)}), i64(len)}), i64(len)});
  }
  int64_t rows = 1;
  for (int d = 0; d <= axis; ++d) rows *= ds[d];
  ValueId ok = ew(Mode::AND, {ew(Mode::LEQ, {i64(0), pos}), ew(Mode::LT, {pos, i64(len)})});
  ValueId flat = pos;
  int64_t stride = len;
  for (int d = axis - 1; d >= 0; --d) {
    if (us[d] > 1)
      flat = ew(
          Mode::ADD,
          {flat, ew(Mode::MUL, {iota(us[d], d, lr, pb::TensorProto::INT64), i64(double(stride))})});
    stride *= ds[d];
  }
  flat = broadcast_to(flat, lead);
  ValueId outside = broadcast_to(reshape(i64(double(-rows - 1)), Shape(lr, 1)), lead);
  flat = where(broadcast_to(ok, lead), flat, outside);
  set_rt(0, scatter_rows(cache, flat, rt(1), lr, "none"));
}

}  // namespace hf::onnx_detail
