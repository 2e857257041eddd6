// Opsets 1-6: each node is rewritten into the form of the same op at opset 7 before it is
// folded or lowered, where the old version's semantics have that later equivalent:
//
//   binary ops with broadcast=1 and axis   B reshaped so NumPy broadcasting aligns it at axis
//   PRelu with a [C] slope                 the slope aligned at axis 1 (per channel)
//   Cast with `to` as a type name          `to` as the type's number
//   Reshape with a `shape` attribute (<5)  a constant `shape` input
//   Concat without `axis` (<4)             axis 1, the old default
//   Split with `split` as input 1 (<2)     the `split` attribute
//   consumed_inputs (<6)                   dropped (an optimisation hint, no semantics)
//
// Tile before opset 6 (tiles and axis as inputs) has no later equivalent here and is
// refused. Everything else reads the same at opset 1-6 as at 7.
#include <unordered_set>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

void drop_attr(pb::NodeProto& n, const std::string& name) {
  auto* attrs = n.mutable_attribute();
  for (int k = attrs->size() - 1; k >= 0; --k)
    if (attrs->Get(k).name() == name) attrs->DeleteSubrange(k, 1);
}

pb::AttributeProto& set_attr(pb::NodeProto& n, const std::string& name,
                             pb::AttributeProto::AttributeType type) {
  drop_attr(n, name);
  pb::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return *a;
}

int32_t elem_type_by_name(const std::string& name) {
  for (int32_t t = 1; t <= 28; ++t)
    if (elem_type_name(t) == name) return t;
  throw Error("attribute 'to' names no element type: '" + name + "'");
}

}  // namespace

// A constant input slot for the current node, named after it.
std::string Importer::legacy_const(ConstTensor t, const std::string& what) {
  std::string name = fresh_name(cur_base_ + "/" + what);
  reserved_.insert(name);
  auto e = std::make_shared<ConstEntry>();
  e->t = std::move(t);
  slots_[name].c = e;
  return name;
}

void Importer::upgrade_legacy(pb::NodeProto& n) {
  static const std::unordered_set<std::string> broadcasting = {
      "Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Less", "Greater"};
  const std::string& op = n.op_type();
  drop_attr(n, "consumed_inputs");
  if (op == "Tile") unsupported("Tile before opset 6 (tiles and axis given as inputs)");
  // PRelu's one-dimensional slope is per channel (axis 1) before opset 7.
  bool channel_slope = op == "PRelu" && n.input_size() == 2 && shape(1).size() == 1 &&
                       shape(0).size() > 1 && shape(1)[0] != 1;
  if (channel_slope ||
      (broadcasting.count(op) && n.input_size() == 2 && cur_->attr_int("broadcast", 0) != 0)) {
    // B's shape is a contiguous run of A's, starting at `axis` (default: A's last axes).
    Shape a = shape(0), b = shape(1);
    int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
    if (rb > ra) throw Error("broadcast=1 needs B of rank <= A's");
    int axis = channel_slope            ? 1
               : cur_->has_attr("axis") ? norm_axis(cur_->attr_int("axis"), ra, "axis")
                                        : ra - rb;
    bool fits = axis + rb <= ra;
    for (int k = 0; fits && k < rb; ++k) fits = b[k] == a[axis + k] || b[k] == 1;
    if (!fits)
      throw Error("B " + to_string(b) + " does not fit A " + to_string(a) + " at axis " +
                  std::to_string(axis));
    Shape to(ra, 1);
    for (int k = 0; k < rb; ++k) to[axis + k] = b[k];
    if (to != b) {
      std::string name;
      if (is_const(1)) {
        ConstTensor c = cst(1);
        c.shape = to;
        name = legacy_const(std::move(c), "B");
      } else {
        name = fresh_name(cur_base_ + "/B");
        reserved_.insert(name);
        slots_[name].rt = reshape(rt(1), to);
      }
      n.set_input(1, name);
    }
  }
  drop_attr(n, "broadcast");
  if (broadcasting.count(op)) drop_attr(n, "axis");
  if (op == "Cast" && cur_->has_attr("to") && cur_->attr("to")->has_s()) {
    int32_t to = elem_type_by_name(cur_->attr_str("to"));
    set_attr(n, "to", pb::AttributeProto::INT).set_i(to);
  }
  if (op == "Reshape" && cur_->opset < 5 && n.input_size() < 2) {
    auto s = cur_->attr_ints("shape");
    if (!s) throw Error("needs the attribute shape");
    n.add_input(legacy_const(int64_tensor({static_cast<int64_t>(s->size())}, *s), "shape"));
    drop_attr(n, "shape");
  }
  if (op == "Concat" && cur_->opset < 4 && !cur_->has_attr("axis"))
    set_attr(n, "axis", pb::AttributeProto::INT).set_i(1);
  if (op == "Split" && cur_->opset < 2 && cur_->has_input(1)) {
    std::vector<int64_t> split = const_ints(1, "split");
    auto& a = set_attr(n, "split", pb::AttributeProto::INTS);
    for (int64_t v : split) a.add_ints(v);
    n.mutable_input()->DeleteSubrange(1, n.input_size() - 1);
  }
}

}  // namespace hf::onnx_detail
