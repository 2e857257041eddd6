// ONNX ops lowered to hotfuse graph nodes (docs/onnx.md lists each op and what it becomes).
//
// Elemwise broadcasts NumPy-style, which is ONNX's multidirectional broadcasting, so binary
// ops map one to one. Compound ops are decomposed into the op table's nodes; constants that
// a run-time op reads are materialised as Constant nodes.
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "runtime/io/onnx_internal.h"
#include "runtime/ir/constant.h"

namespace hf::onnx_detail {

// --- the current node's inputs and outputs ------------------------------------------------

const Importer::Slot& Importer::slot(const std::string& name) const {
  return slots_.at(name);
}

namespace {
void need_input(const OnnxNode* n, int k) {
  if (!n->has_input(k)) throw Error("input " + std::to_string(k) + " is missing");
}
}  // namespace

bool Importer::is_const(int k) const {
  need_input(cur_, k);
  return slot(cur_->input(k)).c != nullptr;
}

const ConstTensor& Importer::cst(int k) const {
  need_input(cur_, k);
  const Slot& s = slot(cur_->input(k));
  if (!s.c)
    throw Error("input " + std::to_string(k) + " ('" + cur_->input(k) + "') must be a constant");
  return values(*s.c);
}

ValueId Importer::rt(int k) {
  need_input(cur_, k);
  Slot& s = slots_.at(cur_->input(k));
  if (s.rt) return *s.rt;
  return materialize(*s.c, cur_->input(k));
}

int32_t Importer::elem(int k) const {
  need_input(cur_, k);
  const Slot& s = slot(cur_->input(k));
  return s.rt ? to_elem_type(dtype_of(*s.rt)) : s.c->t.type;
}

DType Importer::dtype(int k) const {
  int32_t e = elem(k);
  auto d = to_dtype(e);
  if (!d)
    throw Error("input '" + cur_->input(k) + "' is " + elem_type_name(e) +
                ", which hotfuse does not compute with (" + kOnnxComputedTypes +
                "): not supported");
  return *d;
}

Shape Importer::shape(int k) const {
  need_input(cur_, k);
  const Slot& s = slot(cur_->input(k));
  return s.rt ? shape_of(*s.rt) : s.c->t.shape;
}

void Importer::set_rt(int k, ValueId v) {
  if (!cur_->wants_output(k)) return;
  const std::string& name = cur_->p->output(k);
  slots_[name] = Slot{v, nullptr};
  bound_.push_back(name);
}

void Importer::set_const(int k, ConstTensor t) {
  if (!cur_->wants_output(k)) return;
  if (cur_->op() != "Constant") folded_ += t.size();  // a Constant's data is in the file
  const std::string& name = cur_->p->output(k);
  auto c = std::make_shared<ConstEntry>();
  c->t = std::move(t);
  slots_[name] = Slot{std::nullopt, std::move(c)};
  bound_.push_back(name);
}

void Importer::alias(int k, int in) {
  need_input(cur_, in);
  if (!cur_->wants_output(k)) return;
  Slot s = slots_.at(cur_->input(in));
  const std::string& name = cur_->p->output(k);
  slots_[name] = s;
  bound_.push_back(name);
}

namespace {

// At most one element, or all of the same bits: such a constant becomes an attribute.
bool is_splat(const HostTensor& h) {
  const size_t e = dtype_size(h.dtype());
  const char* p = static_cast<const char*>(h.data());
  if (h.numel() <= 1) return true;
  for (int64_t k = 1; k < h.numel(); ++k)
    if (std::memcmp(p + k * e, p, e) != 0) return false;
  return true;
}

}  // namespace

ValueId Importer::materialize(ConstEntry& c, const std::string& name) {
  if (c.materialized) return *c.materialized;
  // Values dropped after reading (ConstEntry) are decoded for this and let go again.
  ConstTensor decoded;
  const ConstTensor* tp = &c.t;
  if (c.proto && c.t.f.empty() && c.t.i.empty()) {
    if (std::optional<HostTensor> h = raw_host_tensor(*c.proto, dir_); h && !is_splat(*h)) {
      ValueId v = g_.add_node(constant_node(name, std::move(*h)), {fresh_name(name + "/const")})[0];
      c.materialized = v;
      return v;
    }
    decoded = decode_tensor(*c.proto, dir_);
    tp = &decoded;
  }
  const ConstTensor& t = *tp;
  auto dt = to_dtype(t.type);
  if (!dt)
    throw Error("constant '" + name + "' is " + elem_type_name(t.type) +
                ", which hotfuse does not compute with (" + kOnnxComputedTypes +
                "): not supported");
  int64_t count = t.size();
  bool splat = count > 1;
  for (int64_t k = 1; splat && k < count; ++k)
    splat = t.floating() ? std::memcmp(&t.f[k], &t.f[0], sizeof(double)) == 0 : t.i[k] == t.i[0];
  Node n;
  if (splat || count <= 1) {  // one value: an attribute
    n.name = name;
    n.op = OpType::Constant;
    if (!t.floating() && count > 0 && std::fabs(t.as_double(0)) > 9007199254740992.0)  // 2^53
      throw Error("constant '" + name + "' holds " + std::to_string(t.i[0]) +
                  ", too large to store exactly in a Constant node");
    n.attrs["dtype"] = std::string(dtype_name(*dt));
    n.attrs["shape"] = std::vector<int64_t>(t.shape.begin(), t.shape.end());
    n.attrs["value"] = std::vector<double>{count > 0 ? t.as_double(0) : 0.0};
  } else {  // weights: held once, in their own type (constant.h)
    HostTensor data(*dt, Shape(t.shape.begin(), t.shape.end()));
    for (int64_t k = 0; k < count; ++k) {
      if (*dt == DType::I64 || *dt == DType::U64)  // exact: doubles hold 53 bits
        data.as<int64_t>()[k] = t.i[k];
      else
        store_double(data.view(), k, t.as_double(k));
    }
    n = constant_node(name, std::move(data));
  }
  ValueId v = g_.add_node(std::move(n), {fresh_name(name + "/const")})[0];
  c.materialized = v;
  return v;
}

// --- emitting nodes -------------------------------------------------------------------------

ValueId Importer::emit(Node n, const std::string& tag) {
  n.name = tag.empty() ? cur_base_ : cur_base_ + "/" + tag;
  std::string value = fresh_name(n.name);
  return g_.add_node(std::move(n), {value})[0];
}

ValueId Importer::ew(Mode m, std::vector<ValueId> in, const std::string& tag) {
  Node n;
  n.op = OpType::Elemwise;
  n.mode = m;
  n.inputs = std::move(in);
  return emit(std::move(n), tag.empty() ? mode_info(m).name : tag);
}

ValueId Importer::op1(OpType t, Attrs attrs, ValueId in, const std::string& tag) {
  Node n;
  n.op = t;
  n.attrs = std::move(attrs);
  n.inputs = {in};
  return emit(std::move(n), tag.empty() ? std::string(op_type_name(t)) : tag);
}

ValueId Importer::scalar(DType t, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  auto key = std::make_pair(static_cast<int>(t), bits);
  if (auto it = scalars_.find(key); it != scalars_.end()) return it->second;
  Node n;
  n.op = OpType::Constant;
  n.attrs["dtype"] = std::string(dtype_name(t));
  n.attrs["shape"] = std::vector<int64_t>{};
  n.attrs["value"] = std::vector<double>{v};
  ValueId id = emit(std::move(n), "const");
  scalars_[key] = id;
  return id;
}

ValueId Importer::constant(const ConstTensor& t, const std::string& tag) {
  ConstEntry e;
  e.t = t;
  return materialize(e, cur_base_ + "/" + tag);
}

ValueId Importer::splat(const ConstTensor& value, const Shape& shape, const std::string& tag) {
  ConstTensor one = value;
  one.shape = {};
  if (one.floating())
    one.f.resize(1);
  else
    one.i.resize(1);
  ValueId v = constant(one, tag);  // checks the type and the value
  Node n = g_.node(g_.value(v).producer);
  n.attrs["shape"] = std::vector<int64_t>(shape.begin(), shape.end());
  return emit(std::move(n), tag);
}

ValueId Importer::reshape(ValueId v, const Shape& s) {
  if (shape_of(v) == s) return v;
  return op1(OpType::Reshape, {{"shape", std::vector<int64_t>(s.begin(), s.end())}}, v);
}

ValueId Importer::cvt(ValueId v, DType t) {
  if (dtype_of(v) == t) return v;
  return op1(OpType::TypeCvt, {{"dtype", std::string(dtype_name(t))}}, v);
}

ValueId Importer::reduce(ValueId v, const char* mode, const std::vector<int64_t>& axes,
                         bool keepdims) {
  return op1(OpType::Reduce,
             {{"mode", std::string(mode)}, {"axes", axes}, {"keepdims", int64_t(keepdims)}}, v,
             std::string("reduce_") + mode);
}

// where(c, a, b) from the op table's conditional moves: (0 < c ? a : 0) + (c <= 0 ? b : 0),
// with c converted to 0/1 in the value type. Exact for every value except that a zero
// result is +0 (x + 0 loses the sign of -0). bool values go through u8.
ValueId Importer::where(ValueId cond, ValueId a, ValueId b) {
  DType t = dtype_of(a);
  if (dtype_of(b) != t)
    throw Error("the two value inputs differ in type (" + std::string(dtype_name(t)) + " and " +
                std::string(dtype_name(dtype_of(b))) + ")");
  if (dtype_of(cond) != DType::Bool) throw Error("the condition must be BOOL");
  if (t == DType::Bool) return cvt(where(cond, cvt(a, DType::U8), cvt(b, DType::U8)), DType::Bool);
  ValueId c = cvt(cond, t);
  ValueId zero = scalar(t, 0);
  ValueId pick_a = ew(Mode::COND_LT_MOV, {zero, c, a});
  ValueId pick_b = ew(Mode::COND_LEQ_MOV, {c, zero, b});
  return ew(Mode::ADD, {pick_a, pick_b}, "where");
}

void Importer::unsupported(const std::string& why) {
  throw Error(why.empty() ? "unsupported op" : "unsupported op (" + why + ")");
}

ConstTensor Importer::known(int k, const char* what) {
  need_input(cur_, k);
  if (is_const(k)) return cst(k);
  if (auto given = given_input(k)) return *given;
  need_constant({k},
                std::string(what) + " (input " + std::to_string(k) + " '" + cur_->input(k) +
                    "') must be a constant or computable at import time, or its value given with "
                    "the input data (--inputs, --check): a value known only at run time is not "
                    "supported (hotfuse plans static shapes)");
}

std::vector<int64_t> Importer::const_ints(int k, const char* what) {
  ConstTensor c = known(k, what);
  if (c.floating()) throw Error(std::string(what) + " must be integers");
  return c.ints();
}

// Axes given as an input (from_input: newer opsets) or as the attribute `attr_name`.
std::optional<std::vector<int64_t>> Importer::axes_arg(int input, const char* attr_name) {
  if (input >= 0) {
    if (!cur_->has_input(input)) return std::nullopt;
    return const_ints(input, "axes");
  }
  return cur_->attr_ints(attr_name);
}

// --- element-wise ---------------------------------------------------------------------------

void Importer::lower_unary(Mode m) {
  set_rt(0, ew(m, {rt(0)}));
}

void Importer::lower_binary(Mode m, bool swap) {
  ValueId a = rt(0), b = rt(1);
  set_rt(0, swap ? ew(m, {b, a}) : ew(m, {a, b}));
}

void Importer::lower_variadic(Mode m) {
  if (!cur_->has_input(0)) throw Error("needs at least one input");
  ValueId acc = rt(0);
  for (int k = 1; k < cur_->num_inputs(); ++k) acc = ew(m, {acc, rt(k)});
  set_rt(0, acc);
}

void Importer::lower_div() {
  ValueId a = rt(0), b = rt(1);
  DType t = dtype_of(a);
  if (is_float(t) || dtype_of(b) != t) return set_rt(0, ew(Mode::TRUE_DIV, {a, b}));
  if (is_unsigned(t) || t == DType::Bool) return set_rt(0, ew(Mode::FLOOR_DIV, {a, b}));
  // ONNX integer division truncates toward zero; FLOOR_DIV rounds toward -inf. a - a % b
  // (C's %, the sign of a) is an exact multiple of b, where both agree.
  ValueId r = ew(Mode::MOD, {a, b});
  set_rt(0, ew(Mode::FLOOR_DIV, {ew(Mode::SUB, {a, r}), b}));
}

void Importer::lower_mod() {
  ValueId a = rt(0), b = rt(1);
  DType t = dtype_of(a);
  int64_t fmod = cur_->attr_int("fmod", 0);
  // Float inputs take fmod=0 (a floored modulo) from opset 28 on.
  if (is_float(t) && fmod != 1 && cur_->opset < 28)
    throw Error("fmod must be 1 for float inputs before opset 28");
  ValueId r = ew(Mode::MOD, {a, b});
  if (fmod == 1 || is_unsigned(t) || dtype_of(b) != t) return set_rt(0, r);
  // Python's modulo has the sign of the divisor: add b where r and b have opposite signs.
  ValueId opposite =
      ew(Mode::LT, {ew(Mode::MUL, {ew(Mode::SIGN, {r}), ew(Mode::SIGN, {b})}), scalar(t, 0)});
  if (is_float(t))  // a select, not r + 0 * b: b may be infinite
    return set_rt(0, where(opposite, ew(Mode::ADD, {r, b}), r));
  set_rt(0, ew(Mode::ADD, {r, ew(Mode::MUL, {cvt(opposite, t), b})}));
}

// Opset 20: approximate="none" is the erf form (the GELU mode), "tanh" the tanh form
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void Importer::lower_gelu() {
  ValueId x = rt(0);
  DType t = dtype_of(x);
  if (!is_float(t)) throw Error("needs a float input");
  std::string approx = cur_->attr_str("approximate", "none");
  if (approx == "none") return set_rt(0, ew(Mode::GELU, {x}));
  if (approx != "tanh") throw Error("approximate must be 'none' or 'tanh', not '" + approx + "'");
  auto s = [&](double v) { return scalar(t, v); };
  ValueId inner =
      ew(Mode::FUSE_MUL_ADD3, {ew(Mode::MUL, {ew(Mode::SQUARE, {x}), x}), s(0.044715), x});
  ValueId th = ew(Mode::TANH, {ew(Mode::MUL, {inner, s(std::sqrt(2.0 / M_PI))})});
  set_rt(0, ew(Mode::MUL, {ew(Mode::MUL, {x, s(0.5)}), ew(Mode::ADD, {th, s(1)})}));
}

// An INT32/INT64 base: numpy's integer power (ONNX's reference) for a constant exponent that
// is a non-negative integer, as square-and-multiply in the base's type (exact, wrapping as
// numpy does); otherwise the power in f64 truncated to the base's type, as the reference's
// float power then astype does (exact while |result| < 2^53).
ValueId Importer::int_pow(ValueId x) {
  DType t = dtype_of(x);
  if (t != DType::I32 && t != DType::I64)
    throw Error("the base must be a float type, INT32 or INT64, not " + std::string(dtype_name(t)));
  auto out = broadcast_shapes(shape(0), shape(1));
  if (!out) throw Error("input shapes do not broadcast");
  if (is_const(1) && cst(1).size() == 1) {
    double e = cst(1).as_double(0);
    if (e >= 0 && e == std::floor(e) && e < 9.2e18) {
      auto n = static_cast<uint64_t>(e);
      std::optional<ValueId> acc;
      ValueId p = x;
      for (; n; n >>= 1) {
        if (n & 1) acc = acc ? ew(Mode::MUL, {*acc, p}) : p;
        if (n > 1) p = ew(Mode::MUL, {p, p});
      }
      // x^0 = 1, 0^0 included.
      ValueId y = acc ? *acc : ew(Mode::ADD, {ew(Mode::MUL, {x, scalar(t, 0)}), scalar(t, 1)});
      Shape ys(out->size() - shape_of(y).size(), 1);  // an exponent of higher rank
      ys.insert(ys.end(), shape_of(y).begin(), shape_of(y).end());
      return broadcast_to(reshape(y, ys), *out);
    }
  }
  ValueId y = ew(Mode::POW, {cvt(x, DType::F64), cvt(rt(1), DType::F64)});
  return cvt(y, t);
}

void Importer::lower_pow() {
  ValueId x = rt(0);
  DType t = dtype_of(x);
  if (!is_float(t)) return set_rt(0, int_pow(x));
  // PowC computes in f32 (pow_const.h): f64 takes the POW mode, computed in f64.
  if (t != DType::F64 && is_const(1) && cst(1).size() == 1 && std::isfinite(cst(1).as_double(0))) {
    auto out = broadcast_shapes(shape(0), shape(1));
    if (!out) throw Error("input shapes do not broadcast");
    ValueId y = op1(OpType::PowC, {{"exponent", cst(1).as_double(0)}}, x);
    return set_rt(0, reshape(y, *out));
  }
  ValueId e = is_const(1) ? constant(
                                [&] {
                                  ConstTensor c = make_const(to_elem_type(t), cst(1).shape);
                                  for (int64_t k = 0; k < c.size(); ++k)
                                    cast_element(cst(1), k, c, k);
                                  return c;
                                }(),
                                "exponent")
                          : cvt(rt(1), t);
  set_rt(0, ew(Mode::POW, {x, e}));
}

// ONNX rounds half to even; ROUND rounds half away from zero. At exact ties (x - floor(x) =
// 0.5, exact in every float format) the even neighbour is 2 * ROUND(x / 2).
ValueId Importer::round_even(ValueId x) {
  DType t = dtype_of(x);
  if (!is_float(t)) throw Error("needs a float input");
  ValueId half = scalar(t, 0.5);
  ValueId r = ew(Mode::ROUND, {x});
  ValueId tie = ew(Mode::EQ, {ew(Mode::SUB, {x, ew(Mode::FLOOR, {x})}), half});
  ValueId even = ew(Mode::MUL, {ew(Mode::ROUND, {ew(Mode::MUL, {x, half})}), scalar(t, 2)});
  return where(tie, even, r);
}

void Importer::lower_round() {
  set_rt(0, round_even(rt(0)));
}

void Importer::lower_clip() {
  ValueId x = rt(0);
  DType t = dtype_of(x);
  std::optional<ValueId> lo, hi;
  auto bound = [&](int k) {
    if (!is_const(k)) return cvt(rt(k), t);
    ConstTensor c = make_const(to_elem_type(t), cst(k).shape);
    for (int64_t e = 0; e < c.size(); ++e) cast_element(cst(k), e, c, e);
    return constant(c, k == 1 ? "min" : "max");
  };
  if (cur_->opset < 11) {
    if (cur_->has_attr("min")) lo = scalar(t, cur_->attr_float("min"));
    if (cur_->has_attr("max")) hi = scalar(t, cur_->attr_float("max"));
  } else {
    if (cur_->has_input(1)) lo = bound(1);
    if (cur_->has_input(2)) hi = bound(2);
  }
  if (lo && hi) return set_rt(0, ew(Mode::CLIP, {x, *lo, *hi}));
  if (lo) return set_rt(0, ew(Mode::MAX, {x, *lo}));
  if (hi) return set_rt(0, ew(Mode::MIN, {x, *hi}));
  alias(0, 0);
}

void Importer::lower_cast(int32_t to) {
  ValueId x = rt(0);
  auto t = to_dtype(to);
  if (!t)
    throw Error("casting to " + elem_type_name(to) + " is not supported (hotfuse computes in " +
                kOnnxComputedTypes + ")");
  set_rt(0, cvt(x, *t));
}

void Importer::lower_dropout() {
  // Training mode drops at random, unless the ratio is 0.
  if (cur_->opset >= 12 && cur_->has_input(2)) {
    const ConstTensor training = known(2, "training_mode");
    if (training.size() != 1) throw Error("training_mode must have one element");
    if (training.as_double(0) != 0 && (!cur_->has_input(1) || known(1, "ratio").as_double(0) != 0))
      unsupported("training_mode=1 with a ratio above 0: random dropout");
  }
  alias(0, 0);
  if (cur_->wants_output(1)) {  // the mask: everything kept
    ConstTensor one = make_const(cur_->opset >= 10 ? pb::TensorProto::BOOL : elem(0), {});
    if (one.floating())
      one.f[0] = 1;
    else
      one.i[0] = 1;
    set_rt(1, splat(one, shape(0), "mask"));
  }
}

// --- reductions and normalisations ----------------------------------------------------------

void Importer::lower_reduce(const char* mode) {
  ValueId x = rt(0);
  const std::string& op = cur_->op();
  // The axes moved from an attribute to an input: ReduceSum's at opset 13, the others' at 18.
  bool from_input = cur_->opset >= (op == "ReduceSum" ? 13 : 18);
  if (from_input && cur_->has_attr("axes"))
    throw Error("attribute 'axes' is an input from opset " +
                std::to_string(op == "ReduceSum" ? 13 : 18) + " on");
  std::optional<std::vector<int64_t>> axes = axes_arg(from_input ? 1 : -1, "axes");
  bool keep = cur_->attr_int("keepdims", 1) != 0;
  if ((!axes || axes->empty()) && from_input && cur_->attr_int("noop_with_empty_axes", 0) != 0)
    return alias(0, 0);
  std::vector<int64_t> ax = axes ? *axes : std::vector<int64_t>{};
  std::string m = mode;
  if (m == "MAX" || m == "MIN" || m == "LOGSUMEXP") {
    // Over an empty set (opset 18) these give their identity: -inf / +inf, or the type's
    // lowest / highest value (BOOL: false / true).
    const Shape& xs = shape_of(x);
    int rank = static_cast<int>(xs.size());
    std::vector<bool> reduced(rank, ax.empty());
    for (int64_t a : ax) reduced[norm_axis(a, rank, "axes entry")] = true;
    Shape out;
    bool empty = false;
    for (int d = 0; d < rank; ++d) {
      empty |= reduced[d] && xs[d] == 0;
      if (!reduced[d] || keep) out.push_back(reduced[d] ? 1 : xs[d]);
    }
    if (empty) {
      ConstTensor id = make_const(elem(0), {});
      double inf = std::numeric_limits<double>::infinity();
      bool high = m == "MIN";
      if (id.floating()) {
        id.f = {high ? inf : -inf};
      } else {
        // The type's largest (MIN) or smallest (MAX) value (UINT64's largest is all ones).
        using TP = pb::TensorProto;
        int64_t hi = INT64_MAX, lo = INT64_MIN;
        switch (id.type) {
          case TP::BOOL:
            hi = 1, lo = 0;
            break;
          case TP::INT8:
            hi = INT8_MAX, lo = INT8_MIN;
            break;
          case TP::UINT8:
            hi = UINT8_MAX, lo = 0;
            break;
          case TP::INT16:
            hi = INT16_MAX, lo = INT16_MIN;
            break;
          case TP::UINT16:
            hi = UINT16_MAX, lo = 0;
            break;
          case TP::INT32:
            hi = INT32_MAX, lo = INT32_MIN;
            break;
          case TP::UINT32:
            hi = UINT32_MAX, lo = 0;
            break;
          case TP::UINT64:
            hi = -1, lo = 0;
            break;
        }
        id.i = {high ? hi : lo};
      }
      return set_rt(0, splat(id, out, "empty_" + m));
    }
  }
  if (dtype_of(x) == DType::Bool) {  // opset 20: ReduceMax is "any", ReduceMin "all"
    if (m != "MAX" && m != "MIN") throw Error("cannot reduce BOOL with " + op);
    return set_rt(0, cvt(reduce(cvt(x, DType::U8), mode, ax, keep), DType::Bool));
  }
  if (m == "L1") return set_rt(0, reduce(ew(Mode::ABS, {x}), "SUM", ax, keep));
  if (m == "L2") return set_rt(0, ew(Mode::SQRT, {reduce(x, "SUM_SQR", ax, keep)}));
  if (m == "LOGSUM") return set_rt(0, ew(Mode::LOG, {reduce(x, "SUM", ax, keep)}));
  if (m == "LOGSUMEXP") {  // max-shifted, so large inputs do not overflow
    ValueId mx = reduce(x, "MAX", ax, true);
    ValueId s = reduce(ew(Mode::EXP, {ew(Mode::SUB, {x, mx})}), "SUM", ax, keep);
    return set_rt(0, ew(Mode::ADD, {ew(Mode::LOG, {s}), reshape(mx, shape_of(s))}));
  }
  set_rt(0, reduce(x, mode, ax, keep));
}

void Importer::lower_softmax(bool log) {
  ValueId x = rt(0);
  int rank = static_cast<int>(shape_of(x).size());
  // Before opset 13 the input is coerced to 2-D at `axis` (default 1): the softmax runs over
  // all axes from `axis` on. From 13 it runs over the one axis (default -1).
  int ax = norm_axis(cur_->attr_int("axis", cur_->opset < 13 ? 1 : -1), rank, "axis");
  std::vector<int64_t> axes;
  if (cur_->opset < 13)
    for (int a = ax; a < rank; ++a) axes.push_back(a);
  else
    axes.push_back(ax);
  set_rt(0, softmax(x, axes, log));
}

// The max-shifted row ops (so large inputs do not overflow): e = exp(x - max), e / sum(e), or
// (x - max) - log(sum(e)) for the log form.
ValueId Importer::softmax(ValueId x, const std::vector<int64_t>& axes, bool log) {
  ValueId mx = reduce(x, "MAX", axes, true);
  ValueId d = ew(Mode::SUB, {x, mx});
  ValueId e = ew(Mode::EXP, {d});
  ValueId s = reduce(e, "SUM", axes, true);
  return log ? ew(Mode::SUB, {d, ew(Mode::LOG, {s})}) : ew(Mode::TRUE_DIV, {e, s});
}

// --- matrix products ------------------------------------------------------------------------

void Importer::lower_matmul() {
  set_rt(0, matmul(rt(0), rt(1)));
}

ValueId Importer::matmul(ValueId a, ValueId b) {
  Shape as = shape_of(a), bs = shape_of(b);
  if (as.empty() || bs.empty()) throw Error("needs inputs of rank >= 1");
  // NumPy's 1-D rules: a vector on the left is a row [1, k], on the right a column [k, 1];
  // the added axis is removed from the result.
  if (as.size() == 1) a = reshape(a, {1, as[0]});
  if (bs.size() == 1) b = reshape(b, {bs[0], 1});
  Node n;
  n.op = OpType::MatMul;
  n.inputs = {a, b};
  ValueId y = emit(std::move(n), "matmul");
  Shape ys = shape_of(y);
  if (bs.size() == 1) ys.pop_back();
  if (as.size() == 1) ys.erase(ys.end() - (bs.size() == 1 ? 1 : 2));
  return reshape(y, ys);
}

// A constant matrix, transposed here (a Linear layer's weight, Gemm transB=1), so the
// iteration does not transpose it again every time.
namespace {
ConstTensor transposed(const ConstTensor& m) {
  ConstTensor t = make_const(m.type, {m.shape[1], m.shape[0]});
  for (int64_t r = 0; r < m.shape[0]; ++r)
    for (int64_t c = 0; c < m.shape[1]; ++c) {
      if (m.floating())
        t.f[c * m.shape[0] + r] = m.f[r * m.shape[1] + c];
      else
        t.i[c * m.shape[0] + r] = m.i[r * m.shape[1] + c];
    }
  return t;
}
}  // namespace

void Importer::lower_gemm() {
  bool fold_b = cur_->attr_int("transB", 0) && is_const(1) && cst(1).shape.size() == 2;
  ValueId a = rt(0), b = fold_b ? constant(transposed(cst(1)), "transB") : rt(1);
  if (shape_of(a).size() != 2 || shape_of(b).size() != 2) throw Error("A and B must be matrices");
  DType t = dtype_of(a);
  Attrs swap{{"perm", std::vector<int64_t>{1, 0}}};
  if (cur_->attr_int("transA", 0)) a = op1(OpType::Dimshuffle, swap, a, "transA");
  if (cur_->attr_int("transB", 0) && !fold_b) b = op1(OpType::Dimshuffle, swap, b, "transB");
  Node n;
  n.op = OpType::MatMul;
  n.inputs = {a, b};
  ValueId y = emit(std::move(n), "matmul");
  Shape ys = shape_of(y);
  double alpha = cur_->attr_float("alpha", 1.0), beta = cur_->attr_float("beta", 1.0);
  if (alpha != 1.0) y = ew(Mode::MUL, {y, scalar(t, alpha)}, "alpha");
  if (cur_->has_input(2) && beta != 0.0) {
    ValueId c = cvt(rt(2), t);
    if (beta != 1.0) c = ew(Mode::MUL, {c, scalar(t, beta)}, "beta");
    y = ew(Mode::ADD, {y, c}, "bias");
    if (shape_of(y) != ys)
      throw Error("C " + to_string(shape_of(c)) + " does not broadcast to " + to_string(ys));
  }
  set_rt(0, y);
}

// --- dispatch -------------------------------------------------------------------------------

void Importer::lower() {
  static const std::unordered_map<std::string, Mode> unary = {
      {"Sqrt", Mode::SQRT},   {"Exp", Mode::EXP},           {"Log", Mode::LOG},
      {"Tanh", Mode::TANH},   {"Sigmoid", Mode::SIGMOID},   {"Relu", Mode::RELU},
      {"Erf", Mode::ERF},     {"Abs", Mode::ABS},           {"Neg", Mode::NEGATE},
      {"Floor", Mode::FLOOR}, {"Ceil", Mode::CEIL},         {"Sin", Mode::SIN},
      {"Cos", Mode::COS},     {"Tan", Mode::TAN},           {"Asin", Mode::ASIN},
      {"Acos", Mode::ACOS},   {"Sinh", Mode::SINH},         {"Cosh", Mode::COSH},
      {"Asinh", Mode::ASINH}, {"Acosh", Mode::ACOSH},       {"Atanh", Mode::ATANH},
      {"Sign", Mode::SIGN},   {"Softplus", Mode::SOFTPLUS}, {"HardSwish", Mode::H_SWISH},
      {"Not", Mode::NOT},     {"IsNaN", Mode::ISNAN},
  };
  static const std::unordered_map<std::string, std::pair<Mode, bool>> binary = {
      {"Add", {Mode::ADD, false}},      {"Sub", {Mode::SUB, false}},
      {"Mul", {Mode::MUL, false}},      {"And", {Mode::AND, false}},
      {"Or", {Mode::OR, false}},        {"Xor", {Mode::XOR, false}},
      {"Less", {Mode::LT, false}},      {"LessOrEqual", {Mode::LEQ, false}},
      {"Greater", {Mode::LT, true}},    {"GreaterOrEqual", {Mode::LEQ, true}},
      {"PRelu", {Mode::PRELU, false}},  {"BitwiseAnd", {Mode::AND, false}},
      {"BitwiseOr", {Mode::OR, false}}, {"BitwiseXor", {Mode::XOR, false}},
  };
  static const std::unordered_map<std::string, const char*> reductions = {
      {"ReduceSum", "SUM"},       {"ReduceMean", "MEAN"},
      {"ReduceMax", "MAX"},       {"ReduceMin", "MIN"},
      {"ReduceProd", "PRODUCT"},  {"ReduceSumSquare", "SUM_SQR"},
      {"ReduceL1", "L1"},         {"ReduceL2", "L2"},
      {"ReduceLogSum", "LOGSUM"}, {"ReduceLogSumExp", "LOGSUMEXP"},
  };
  const std::string& op = cur_->op();
  if (auto it = unary.find(op); it != unary.end()) return lower_unary(it->second);
  if (auto it = binary.find(op); it != binary.end())
    return lower_binary(it->second.first, it->second.second);
  if (auto it = reductions.find(op); it != reductions.end()) return lower_reduce(it->second);

  auto s = [&](double v) { return scalar(dtype(0), v); };
  if (op == "Div") return lower_div();
  if (op == "Mod") return lower_mod();
  if (op == "Pow") return lower_pow();
  if (op == "Round") return lower_round();
  if (op == "Max") return lower_variadic(Mode::MAX);
  if (op == "Min") return lower_variadic(Mode::MIN);
  if (op == "Sum") return lower_variadic(Mode::ADD);
  if (op == "Mean") {
    ValueId sum = rt(0);
    for (int k = 1; k < cur_->num_inputs(); ++k) sum = ew(Mode::ADD, {sum, rt(k)});
    return set_rt(0, ew(Mode::TRUE_DIV, {sum, s(cur_->num_inputs())}, "mean"));
  }
  if (op == "Equal") {
    ValueId a = rt(0), b = rt(1);
    if (dtype_of(a) == DType::Bool) return set_rt(0, ew(Mode::NOT, {ew(Mode::XOR, {a, b})}));
    return set_rt(0, ew(Mode::EQ, {a, b}));
  }
  if (op == "Where") return set_rt(0, where(rt(0), rt(1), rt(2)));
  if (op == "Gelu") return lower_gelu();
  if (op == "Mish") {  // x tanh(softplus(x))
    ValueId x = rt(0);
    return set_rt(0, ew(Mode::MUL, {x, ew(Mode::TANH, {ew(Mode::SOFTPLUS, {x})})}));
  }
  if (op == "Swish") {  // x sigmoid(alpha x)
    ValueId x = rt(0);
    double alpha = cur_->attr_float("alpha", 1.0);
    if (alpha == 1.0) return set_rt(0, ew(Mode::SILU, {x}));
    return set_rt(0, ew(Mode::MUL, {x, ew(Mode::SIGMOID, {ew(Mode::MUL, {x, s(alpha)})})}));
  }
  if (op == "BitwiseNot") {  // x ^ all ones
    DType t = dtype(0);
    if (is_float(t) || t == DType::Bool) throw Error("needs an integer input");
    if (!is_core_dtype(t)) return set_rt(0, ew(Mode::NOT, {rt(0)}));  // ~x; no all-ones literal
    return set_rt(0, ew(Mode::XOR, {rt(0), scalar(t, t == DType::U8 ? 255 : -1)}));
  }
  if (op == "Atan") return set_rt(0, ew(Mode::ATAN2, {rt(0), s(1)}));
  if (op == "Reciprocal") return set_rt(0, ew(Mode::TRUE_DIV, {s(1), rt(0)}));
  if (op == "LeakyRelu")
    return set_rt(0, ew(Mode::PRELU, {rt(0), s(cur_->attr_float("alpha", 0.01))}));
  if (op == "Elu" || op == "Selu" || op == "Celu") {
    // x > 0 ? x : alpha (e^x - 1), as RELU(x) + alpha * EXPM1(MIN(x, 0)) (Celu: e^(x/alpha)).
    bool selu = op == "Selu";
    double alpha = cur_->attr_float("alpha", selu ? 1.67326319217681884765625 : 1.0);
    ValueId x = rt(0);
    ValueId neg = ew(Mode::MIN, {x, s(0)});
    if (op == "Celu") neg = ew(Mode::TRUE_DIV, {neg, s(alpha)});
    ValueId y = ew(Mode::FUSE_MUL_ADD3, {ew(Mode::EXPM1, {neg}), s(alpha), ew(Mode::RELU, {x})});
    if (selu) y = ew(Mode::MUL, {y, s(cur_->attr_float("gamma", 1.05070102214813232421875))});
    return set_rt(0, y);
  }
  if (op == "ThresholdedRelu") {  // x > alpha ? x : 0
    ValueId x = rt(0);
    return set_rt(0,
                  ew(Mode::SWITCH_GT0, {ew(Mode::SUB, {x, s(cur_->attr_float("alpha", 1.0))}), x}));
  }
  if (op == "HardSigmoid") {  // max(0, min(1, alpha x + beta))
    ValueId x = rt(0);
    ValueId lin = ew(Mode::FUSE_MUL_ADD3,
                     {x, s(cur_->attr_float("alpha", 0.2)), s(cur_->attr_float("beta", 0.5))});
    return set_rt(0, ew(Mode::CLIP, {lin, s(0), s(1)}));
  }
  if (op == "Softsign") {
    ValueId x = rt(0);
    return set_rt(0, ew(Mode::TRUE_DIV, {x, ew(Mode::ADD, {ew(Mode::ABS, {x}), s(1)})}));
  }
  if (op == "IsInf") {
    ValueId x = rt(0);
    bool neg = cur_->attr_int("detect_negative", 1) != 0;
    bool pos = cur_->attr_int("detect_positive", 1) != 0;
    ValueId inf = ew(Mode::ISINF, {x});
    if (neg && pos) return set_rt(0, inf);
    if (pos) return set_rt(0, ew(Mode::AND, {inf, ew(Mode::LT, {s(0), x})}));
    if (neg) return set_rt(0, ew(Mode::AND, {inf, ew(Mode::LT, {x, s(0)})}));
    return set_rt(0, ew(Mode::LT, {x, x}));  // false everywhere, NaN included
  }
  if (op == "BitShift") {
    std::string dir = cur_->attr_str("direction");
    if (dir != "LEFT" && dir != "RIGHT") throw Error("direction must be LEFT or RIGHT");
    return lower_binary(dir == "LEFT" ? Mode::SHL : Mode::SHR);
  }
  if (op == "Clip") return lower_clip();
  if (op == "Cast") return lower_cast(static_cast<int32_t>(cur_->attr_int("to")));
  if (op == "CastLike") return lower_cast(elem(1));
  if (op == "Identity") return alias(0, 0);
  if (op == "Dropout") return lower_dropout();
  if (op == "Softmax") return lower_softmax(false);
  if (op == "LogSoftmax") return lower_softmax(true);
  if (op == "LayerNormalization") return lower_layernorm();
  if (op == "BatchNormalization") return lower_batchnorm();
  if (op == "GroupNormalization") return lower_groupnorm();
  if (op == "InstanceNormalization") return lower_instancenorm();
  if (op == "ArgMax" || op == "ArgMin") return lower_argmax(op == "ArgMax");
  if (op == "Hardmax") return lower_hardmax();
  if (op == "GatherElements") return lower_gather_elements();
  if (op == "GatherND") return lower_gather_nd();
  if (op == "QuantizeLinear") return lower_quantize();
  if (op == "DequantizeLinear") return lower_dequantize();
  if (op == "DynamicQuantizeLinear") return lower_dynamic_quantize();
  if (op == "MatMulInteger" || op == "QLinearMatMul")
    return lower_int_matmul(op == "QLinearMatMul");
  if (op == "ConvInteger" || op == "QLinearConv") return lower_int_conv(op == "QLinearConv");
  if (op == "ScatterND") return lower_scatter_nd();
  if (op == "TensorScatter") return lower_tensor_scatter();
  if (op == "ScatterElements" || op == "Scatter") return lower_scatter_elements();
  if (op == "Trilu") return lower_trilu();
  if (op == "Pad") return lower_pad();
  if (op == "DepthToSpace" || op == "SpaceToDepth") return lower_depth_space(op == "DepthToSpace");
  if (op == "Tile") return lower_tile();
  if (op == "Resize" || op == "Upsample") return lower_resize();
  if (op == "GridSample") return lower_grid_sample();
  if (op == "RoiAlign") return lower_roi_align();
  if (op == "AffineGrid") return lower_affine_grid();
  if (op == "CenterCropPad") return lower_center_crop_pad();
  if (op == "OneHot") return lower_onehot();
  if (op == "EyeLike") return lower_eyelike();
  if (op == "NegativeLogLikelihoodLoss") return lower_nll();
  if (op == "SoftmaxCrossEntropyLoss") return lower_softmax_cross_entropy();
  if (op == "RMSNormalization") return lower_rmsnorm();
  if (op == "Det") {
    if (!is_float(dtype(0))) throw Error("needs a float input");
    return set_rt(0, op1(OpType::Det, {}, rt(0), "det"));
  }
  if (op == "BitCast") {  // opset 26: the same bytes as another type of the same size
    int32_t to = static_cast<int32_t>(cur_->attr_int("to"));
    std::optional<DType> t = to_dtype(to);
    if (!t) unsupported("BitCast to " + elem_type_name(to));
    DType from = dtype(0);
    if (dtype_size(*t) != dtype_size(from))
      throw Error("cannot reinterpret " + elem_type_name(elem(0)) + " as " + elem_type_name(to) +
                  ": the element sizes differ");
    if (*t == DType::Bool && from != DType::Bool)
      unsupported("BitCast to BOOL (a byte other than 0 or 1 is no bool)");
    if (*t == from) return alias(0, 0);
    return set_rt(0, op1(OpType::BitCast, {{"dtype", std::string(dtype_name(*t))}}, rt(0)));
  }
  if (op == "MeanVarianceNormalization") return lower_mvn();
  if (op == "LpNormalization") return lower_lp_normalization();
  if (op == "Shrink") {  // x < -lambd ? x + bias : x > lambd ? x - bias : 0
    ValueId x = rt(0);
    DType t = dtype(0);
    if (t == DType::Bool) throw Error("needs a numeric input");
    // Integer inputs: computed in f64 and truncated back, as the reference's astype.
    ValueId xf = is_float(t) ? x : cvt(x, DType::F64);
    DType c = dtype_of(xf);
    double lambd = cur_->attr_float("lambd", 0.5), bias = cur_->attr_float("bias", 0.0);
    const Shape xs = shape_of(xf);  // a copy: adding nodes moves the graph's values
    ValueId zero = broadcast_to(reshape(scalar(c, 0), Shape(xs.size(), 1)), xs);
    ValueId hi =
        where(ew(Mode::LT, {scalar(c, lambd), xf}), ew(Mode::SUB, {xf, scalar(c, bias)}), zero);
    ValueId y =
        where(ew(Mode::LT, {xf, scalar(c, -lambd)}), ew(Mode::ADD, {xf, scalar(c, bias)}), hi);
    return set_rt(0, cvt(y, t));
  }
  if (op == "SwiGLU") {  // a sigmoid(alpha a) b, a and b of one shape (opset 28)
    ValueId a = rt(0), b = rt(1);
    if (!is_float(dtype_of(a))) throw Error("needs float inputs");
    if (shape_of(a) != shape_of(b) || dtype_of(a) != dtype_of(b))
      throw Error("A and B must have the same shape and type (no broadcasting)");
    double alpha = cur_->attr_float("alpha", 1.0);
    ValueId sw = alpha == 1.0
                     ? ew(Mode::SILU, {a})
                     : ew(Mode::MUL, {a, ew(Mode::SIGMOID, {ew(Mode::MUL, {a, s(alpha)})})});
    return set_rt(0, ew(Mode::MUL, {sw, b}));
  }
  if (op == "Attention") return lower_attention();
  if (op == "RotaryEmbedding") return lower_rotary_embedding();
  if (op == "RNN" || op == "GRU" || op == "LSTM") return lower_rnn();
  if (op == "CumSum" || op == "CumProd") return lower_cumulative(op == "CumProd");
  if (op == "TopK") return lower_topk();
  if (op == "ReverseSequence") return lower_reverse_sequence();
  if (op == "Einsum") return lower_einsum();
  if (op == "MatMul") return lower_matmul();
  if (op == "Gemm") return lower_gemm();

  // Layout ops on run-time values (on constants they were folded).
  if (op == "Transpose") {
    int rank = static_cast<int>(shape(0).size());
    std::vector<int64_t> perm;
    if (auto p = cur_->attr_ints("perm"))
      perm = *p;
    else
      for (int k = rank - 1; k >= 0; --k) perm.push_back(k);
    if (static_cast<int>(perm.size()) != rank)
      throw Error("perm has " + std::to_string(perm.size()) + " entries for rank " +
                  std::to_string(rank));
    for (int64_t& p : perm) p = norm_axis(p, rank, "perm entry");
    bool identity = true;
    for (int k = 0; k < rank; ++k) identity &= perm[k] == k;
    if (identity) return alias(0, 0);
    return set_rt(0, op1(OpType::Dimshuffle, {{"perm", perm}}, rt(0)));
  }
  if (op == "Reshape") {
    bool allowzero = cur_->opset >= 14 && cur_->attr_int("allowzero", 0) != 0;
    return set_rt(0, reshape(rt(0), reshape_shape(shape(0), const_ints(1, "shape"), allowzero)));
  }
  if (op == "Flatten")
    return set_rt(0, reshape(rt(0), flatten_shape(shape(0), cur_->attr_int("axis", 1))));
  if (op == "Squeeze") {
    auto axes = axes_arg(cur_->opset >= 13 ? 1 : -1, "axes");
    return set_rt(0, reshape(rt(0), squeeze_shape(shape(0), axes)));
  }
  if (op == "Unsqueeze") {
    auto axes = axes_arg(cur_->opset >= 13 ? 1 : -1, "axes");
    if (!axes) throw Error("needs axes");
    return set_rt(0, reshape(rt(0), unsqueeze_shape(shape(0), *axes)));
  }
  if (op == "Expand") {
    std::vector<int64_t> target = const_ints(1, "shape");
    auto out = broadcast_shapes(shape(0), Shape(target.begin(), target.end()));
    if (!out)
      throw Error("cannot expand " + to_string(shape(0)) + " to " + to_string(Shape(target)));
    checked_numel(*out, "the expanded tensor");
    if (*out == shape(0)) return alias(0, 0);
    return set_rt(0, broadcast_to(rt(0), *out));
  }
  if (lower_nn()) return;  // onnx_lower_nn.cpp
  static const std::unordered_set<std::string> fold_only = {"Range", "HannWindow", "HammingWindow",
                                                            "BlackmanWindow"};
  if (fold_only.count(op)) {
    std::vector<int> all(cur_->num_inputs());
    std::iota(all.begin(), all.end(), 0);
    need_constant(all, "unsupported op (on run-time data; " + op +
                           " is only folded, when its inputs are constants or their values are "
                           "given with the input data (--inputs, --check))");
  }
  unsupported();
}

}  // namespace hf::onnx_detail
