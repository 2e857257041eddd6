#include "fusion/region_spec.h"
#include "runtime/ir/constant.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "runtime/ir/error.h"
#include "runtime/ops/half.h"

namespace hf::fusion {

namespace {

[[noreturn]] void fail(const Node& n, const std::string& msg) {
  throw Error("fused region: " + describe(n) + ": " + msg);
}

// The constant as the unfused graph stores it, so a literal gives the same bits.
double round_to(DType t, double v) {
  switch (t) {
    case DType::F32:
      return static_cast<float>(v);
    case DType::F16:
      return to_f32(to_f16(static_cast<float>(v)));
    case DType::BF16:
      return to_f32(to_bf16(static_cast<float>(v)));
    case DType::I32:
      return static_cast<int32_t>(v);
    case DType::I64:
      return static_cast<double>(static_cast<int64_t>(v));
    case DType::Bool:
      return v != 0;
    case DType::U8:
      return static_cast<uint8_t>(v);
    default:  // f64 and the wider integer types are never fused (is_core_dtype)
      break;
  }
  return v;
}

// A value read from outside the region, as the views above it have shaped it so far.
struct Read {
  ValueId base = -1;
  Shape src;              // the contiguous shape the memory is read as
  Shape cur;              // the shape after the views applied so far
  std::vector<int> axis;  // per axis of `cur`: the source axis, or -1 (broadcast)

  bool untouched() const {
    if (cur != src) return false;
    for (size_t i = 0; i < axis.size(); ++i)
      if (axis[i] != static_cast<int>(i)) return false;
    return true;
  }
  void broadcast(const Shape& to) {
    size_t off = to.size() - cur.size();
    std::vector<int> out(to.size(), -1);
    for (size_t j = off; j < to.size(); ++j) {
      int64_t c = cur[j - off];
      out[j] = (c == 1 && to[j] != 1) ? -1 : axis[j - off];
    }
    axis = std::move(out);
    cur = to;
  }
};

// What an operand of a region node is: an expression computed inside, a literal, or a read.
struct Operand {
  enum { Computed, Literal, Input } kind = Computed;
  ValueId value = -1;  // Computed: the value
  DType dtype = DType::F32;
  double literal = 0;
  Read read;
};

class Builder {
 public:
  Builder(const Graph& g, const Region& r) : g_(g), r_(r) {
    for (NodeId n : r.nodes) {
      if (n < 0 || n >= static_cast<NodeId>(g.nodes().size()) || g.node(n).dead)
        throw Error("fused region: node id " + std::to_string(n) + " is not a live node");
      in_.insert(n);
    }
    if (in_.empty()) throw Error("fused region: no nodes");
    iter_ = r.shape.empty() ? Shape{1} : r.shape;
  }

  RegionKernel build() {
    RegionKernel k;
    k.nodes = r_.nodes;
    k.iteration_shape = iter_;
    k.spec.rank = static_cast<int>(iter_.size());
    k.spec.row_axis = r_.row_axis;
    if (r_.row_axis >= 0) {
      if (r_.reduce) throw Error("fused region: a row-stage region cannot end in a Reduce");
      if (r_.row_axis < 1 || r_.row_axis >= k.spec.rank)
        throw Error("fused region: row axis " + std::to_string(r_.row_axis) + " outside the rank");
      row_shape_ = iter_;
      for (size_t d = static_cast<size_t>(r_.row_axis); d < row_shape_.size(); ++d)
        row_shape_[d] = 1;
    }
    live_ins_and_outs(k);

    // Pass 1: the reads, ordered like the live-ins they come from.
    std::vector<std::pair<ValueId, InputView>> reads;
    for (NodeId id : r_.nodes) {
      if (!computes(id)) continue;
      for (ValueId v : g_.node(id).inputs) {
        Operand op = resolve(v);
        if (op.kind != Operand::Input) continue;
        std::pair<ValueId, InputView> key{op.read.base, finish(op.read)};
        if (find(reads, key) < 0) reads.push_back(key);
      }
    }
    auto rank_of = [&](ValueId v) {
      return std::find(k.live_ins.begin(), k.live_ins.end(), v) - k.live_ins.begin();
    };
    std::stable_sort(reads.begin(), reads.end(),
                     [&](auto& a, auto& b) { return rank_of(a.first) < rank_of(b.first); });
    reads_ = reads;  // the lookup keys, as resolve() computes them
    for (auto& [v, view] : reads) {
      SpecInput in;
      in.dtype = g_.value(v).dtype;
      in.scalar = numel(view.src_shape) == 1;
      if (in.scalar) std::fill(view.axis.begin(), view.axis.end(), -1);  // loaded once
      for (size_t d = 0; d < view.axis.size(); ++d)
        if (view.axis[d] < 0) in.broadcast_mask |= 1u << d;
      in.dense = !in.scalar && dense(view);
      SpecExpr e;
      e.kind = ExprKind::Input;
      e.dtype = in.dtype;
      e.input = static_cast<int>(k.spec.inputs.size());
      k.spec.inputs.push_back(in);
      k.spec.exprs.push_back(e);
      k.inputs.push_back(v);
      k.views.push_back(view);
    }

    // Pass 2: one expression per computing node, in topological order.
    for (NodeId id : r_.nodes) {
      if (!computes(id)) continue;
      const Node& n = g_.node(id);
      if (n.op == OpType::Reduce && r_.row_axis >= 0) {
        add_row_reduce(n, k);
        continue;
      }
      if (n.op == OpType::Reduce) {
        if (!r_.reduce || *r_.reduce != id) fail(n, "is not the region's declared Reduce");
        for (NodeId c : g_.consumers(n.outputs[0]))
          if (in_.count(c)) fail(n, "its result is read inside the region");
        SpecReduce red;
        red.mode = *parse_reduce_mode(n.attr_str("mode"));
        red.expr = expr_of(n.inputs[0], k);
        int rank = static_cast<int>(g_.value(n.inputs[0]).shape.size());
        if (g_.value(n.inputs[0]).shape != r_.shape)
          fail(n, "reduces a shape other than the region's");
        std::vector<int> axes = reduce_axes(n, rank);
        red.first_axis = rank - static_cast<int>(axes.size());
        bool trailing = red.first_axis > 0;
        for (size_t i = 0; i < axes.size(); ++i)
          trailing &= axes[i] == red.first_axis + static_cast<int>(i);
        if (!trailing) fail(n, "reduces axes other than the innermost ones (or all of them)");
        k.spec.reduce = red;
        continue;
      }
      const Shape& out_shape = g_.value(n.outputs[0]).shape;
      if (out_shape != r_.shape && (r_.row_axis < 0 || out_shape != row_shape_))
        fail(n, "output shape " + to_string(out_shape) + " is not the region's " +
                    to_string(r_.shape));
      SpecExpr e;
      e.dtype = g_.value(n.outputs[0]).dtype;
      for (size_t i = 0; i < n.inputs.size(); ++i) e.args[i] = expr_of(n.inputs[i], k);
      switch (n.op) {
        case OpType::Elemwise:
          e.kind = ExprKind::Elemwise;
          e.mode = n.mode;
          break;
        case OpType::PowC:
          e.kind = ExprKind::PowC;
          e.value = n.attr_float("exponent");
          break;
        case OpType::TypeCvt:
          e.kind = ExprKind::Cvt;
          break;
        default:
          fail(n, "is not fusible");
      }
      computed_[n.outputs[0]] = static_cast<int>(k.spec.exprs.size());
      k.spec.exprs.push_back(e);
    }
    if (r_.reduce && !k.spec.reduce) throw Error("fused region: its Reduce is not among its nodes");

    for (ValueId v : k.outputs) {
      SpecOutput o;
      o.dtype = g_.value(v).dtype;
      const Node& p = g_.node(g_.value(v).producer);
      if (p.op == OpType::Reduce) {
        o.expr = k.spec.reduce->expr;
        o.reduced = true;
      } else if (auto it = computed_.find(v); it != computed_.end()) {
        if (r_.row_axis >= 0 && g_.value(v).shape != r_.shape)
          fail(p, "a per-row value of a row-stage region leaves it");
        o.expr = it->second;
      } else {
        fail(p, "its output leaves the region but no kernel expression computes it");
      }
      k.spec.outputs.push_back(o);
    }
    if (k.spec.outputs.empty())
      throw Error("fused region: no value it computes is used outside it (dead code)");
    if (static_cast<int>(k.spec.inputs.size()) > kAbiMaxInputs)
      throw Error("fused region: " + std::to_string(k.spec.inputs.size()) +
                  " inputs, the limit is " + std::to_string(kAbiMaxInputs));
    if (static_cast<int>(k.spec.outputs.size()) > kAbiMaxOutputs)
      throw Error("fused region: " + std::to_string(k.spec.outputs.size()) +
                  " outputs, the limit is " + std::to_string(kAbiMaxOutputs));
    for (NodeId id : r_.nodes) k.flops += node_flops(g_, g_.node(id));
    return k;
  }

 private:
  const Graph& g_;
  const Region& r_;
  std::set<NodeId> in_;
  Shape iter_;
  std::vector<std::pair<ValueId, InputView>> reads_;
  std::map<ValueId, int> computed_;  // value computed inside -> its expression
  std::map<std::pair<int, uint64_t>, int> literals_;
  Shape row_shape_;  // row-stage regions: the shape of a per-row value

  // A Reduce read inside a row-stage region: a RowReduce expression over its rows.
  void add_row_reduce(const Node& n, RegionKernel& k) {
    if (g_.value(n.inputs[0]).shape != r_.shape) fail(n, "reduces a shape other than the region's");
    if (g_.value(n.outputs[0]).shape != row_shape_)
      fail(n, "its result is not one value per row of the region (keepdims)");
    const int rank = static_cast<int>(r_.shape.size());
    std::vector<int> axes = reduce_axes(n, rank);
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes.size() != static_cast<size_t>(rank - r_.row_axis) ||
          axes[i] != r_.row_axis + static_cast<int>(i))
        fail(n, "does not reduce the region's rows");
    SpecExpr e;
    e.kind = ExprKind::RowReduce;
    e.dtype = g_.value(n.outputs[0]).dtype;
    e.reduce_mode = *parse_reduce_mode(n.attr_str("mode"));
    e.args[0] = expr_of(n.inputs[0], k);
    computed_[n.outputs[0]] = static_cast<int>(k.spec.exprs.size());
    k.spec.exprs.push_back(e);
  }

  static bool same(const InputView& a, const InputView& b) {
    return a.src_shape == b.src_shape && a.axis == b.axis;
  }
  static int find(const std::vector<std::pair<ValueId, InputView>>& reads,
                  const std::pair<ValueId, InputView>& key) {
    for (size_t i = 0; i < reads.size(); ++i)
      if (reads[i].first == key.first && same(reads[i].second, key.second))
        return static_cast<int>(i);
    return -1;
  }

  bool computes(NodeId id) const {
    OpType t = g_.node(id).op;
    return t == OpType::Elemwise || t == OpType::PowC || t == OpType::TypeCvt ||
           t == OpType::Reduce;
  }

  // Graph::replace_nodes's order: nodes by id, inputs in order; outputs by id.
  void live_ins_and_outs(RegionKernel& k) const {
    std::set<ValueId> produced;
    for (NodeId n : in_)
      for (ValueId v : g_.node(n).outputs) produced.insert(v);
    for (NodeId n : in_)
      for (ValueId v : g_.node(n).inputs)
        if (!produced.count(v) &&
            std::find(k.live_ins.begin(), k.live_ins.end(), v) == k.live_ins.end())
          k.live_ins.push_back(v);
    std::set<ValueId> graph_outs(g_.outputs().begin(), g_.outputs().end());
    for (NodeId n : in_)
      for (ValueId v : g_.node(n).outputs) {
        bool escapes = graph_outs.count(v) > 0;
        for (NodeId c : g_.consumers(v)) escapes |= !in_.count(c);
        if (escapes) k.outputs.push_back(v);
      }
    for (ValueId v : k.live_ins) k.live_in_types.push_back({g_.value(v).dtype, g_.value(v).shape});
    for (ValueId v : k.outputs) k.output_types.push_back({g_.value(v).dtype, g_.value(v).shape});
  }

  Operand resolve(ValueId v) const {
    Operand op;
    NodeId p = g_.value(v).producer;
    if (p == kNoNode || !in_.count(p)) {
      op.kind = Operand::Input;
      const Shape& s = g_.value(v).shape;
      op.read = {v, s, s, {}};
      for (size_t i = 0; i < s.size(); ++i) op.read.axis.push_back(static_cast<int>(i));
      return op;
    }
    const Node& n = g_.node(p);
    switch (n.op) {
      case OpType::Constant: {
        if (numel(g_.value(v).shape) != 1) fail(n, "only single-element constants are literals");
        op.kind = Operand::Literal;
        op.dtype = g_.value(v).dtype;
        op.literal = round_to(op.dtype, constant_at(n, 0));
        return op;
      }
      case OpType::Broadcast:
      case OpType::Reshape:
      case OpType::Dimshuffle: {
        op = resolve(n.inputs[0]);
        const Shape& out = g_.value(v).shape;
        if (op.kind == Operand::Literal) return op;
        if (op.kind == Operand::Computed) {
          if (g_.value(n.inputs[0]).shape != out ||
              (n.op == OpType::Dimshuffle && !identity_perm(n)))
            fail(n, "reorders a value computed inside the region (views apply to inputs only)");
          return op;
        }
        Read& r = op.read;
        if (n.op == OpType::Reshape) {
          if (out == r.cur) return op;  // changes nothing, also on a strided view
          if (!r.untouched())
            fail(n, "reshapes a strided view (a Reshape must read an input directly)");
          r.src = r.cur = out;
          r.axis.clear();
          for (size_t i = 0; i < out.size(); ++i) r.axis.push_back(static_cast<int>(i));
        } else if (n.op == OpType::Dimshuffle) {
          std::vector<int> perm = dimshuffle_perm(n, static_cast<int>(r.cur.size()));
          std::vector<int> axis;
          for (int q : perm) axis.push_back(q < 0 ? -1 : r.axis[q]);
          r.axis = std::move(axis);
          r.cur = out;
        } else {
          r.broadcast(out);
        }
        return op;
      }
      case OpType::Reduce:
        if (r_.row_axis < 0) fail(n, "its result is read inside the region");
        op.kind = Operand::Computed;
        op.value = v;
        return op;
      default:
        op.kind = Operand::Computed;
        op.value = v;
        return op;
    }
  }

  bool identity_perm(const Node& n) const {
    std::vector<int> perm =
        dimshuffle_perm(n, static_cast<int>(g_.value(n.inputs[0]).shape.size()));
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int>(i)) return false;
    return true;
  }

  InputView finish(Read r) const {
    if (r.cur.size() > iter_.size() || !broadcasts_to(r.cur, iter_))
      throw Error("fused region: value '" + g_.value(r.base).name + "' read as " +
                  to_string(r.cur) + " does not broadcast to the iteration shape " +
                  to_string(iter_));
    r.broadcast(iter_);
    return {r.src, r.axis};
  }

  // Flat index i of the iteration space reads element i: no axis is broadcast and the source
  // axes come in order. A broadcast axis of size 1 would read densely too, but then the
  // kernel would depend on the size: at batch 1, bias [64] over x [1,64] is the same dense
  // read as x, at batch 4 it is not, and a new batch size must compile nothing.
  bool dense(const InputView& v) const {
    int last = -1;
    std::vector<bool> mapped(v.src_shape.size(), false);
    for (size_t d = 0; d < v.axis.size(); ++d) {
      if (v.axis[d] < 0) return false;
      if (v.axis[d] <= last) return false;
      last = v.axis[d];
      mapped[last] = true;
    }
    for (size_t a = 0; a < mapped.size(); ++a)
      if (!mapped[a] && v.src_shape[a] != 1) return false;
    return true;
  }

  int expr_of(ValueId v, RegionKernel& k) {
    Operand op = resolve(v);
    switch (op.kind) {
      case Operand::Computed: {
        auto it = computed_.find(op.value);
        if (it == computed_.end())
          throw Error("fused region: value '" + g_.value(v).name +
                      "' is read before it is computed");
        return it->second;
      }
      case Operand::Literal: {
        uint64_t bits;
        std::memcpy(&bits, &op.literal, sizeof bits);
        auto [it, fresh] = literals_.insert({{static_cast<int>(op.dtype), bits}, 0});
        if (fresh) {
          SpecExpr e;
          e.kind = ExprKind::Literal;
          e.dtype = op.dtype;
          e.value = op.literal;
          it->second = static_cast<int>(k.spec.exprs.size());
          k.spec.exprs.push_back(e);
        }
        return it->second;
      }
      case Operand::Input: {
        int i = find(reads_, {op.read.base, finish(op.read)});
        if (i < 0) throw Error("fused region: internal error: an input was not collected");
        return i;  // input expressions come first, one per input
      }
    }
    return -1;
  }
};

}  // namespace

RegionKernel build_region_kernel(const Graph& g, const Region& r) {
  if (r.heavy) return build_epilogue(g, r);
  return Builder(g, r).build();
}

void fill_input_strides(const RegionKernel& k, size_t input, const Shape& iteration_shape,
                        i64 out_strides[kAbiMaxRank]) {
  Shape it = iteration_shape.empty() ? Shape{1} : iteration_shape;
  if (static_cast<int>(it.size()) != k.spec.rank)
    throw Error("fused kernel " + k.spec.hash_hex() + ": iteration shape " + to_string(it) +
                " has rank " + std::to_string(it.size()) + ", the kernel was built for rank " +
                std::to_string(k.spec.rank));
  const InputView& v = k.views.at(input);
  Shape src = v.src_shape;
  for (size_t d = 0; d < v.axis.size(); ++d)
    if (v.axis[d] >= 0) src[v.axis[d]] = it[d];
  Strides st = contiguous_strides(src);
  for (int d = 0; d < kAbiMaxRank; ++d)
    out_strides[d] = d < static_cast<int>(v.axis.size()) && v.axis[d] >= 0 ? st[v.axis[d]] : 0;
}

std::vector<ValueType> FusedRegion::output_types(const std::vector<ValueType>& inputs) const {
  const auto& want = kernel.live_in_types;
  if (inputs.size() != want.size())
    throw Error("fused kernel " + kernel.spec.hash_hex() + " takes " + std::to_string(want.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < want.size(); ++i)
    if (inputs[i].dtype != want[i].dtype || inputs[i].shape != want[i].shape)
      throw Error("fused kernel " + kernel.spec.hash_hex() + ": input " + std::to_string(i) +
                  " is " + std::string(dtype_name(inputs[i].dtype)) + to_string(inputs[i].shape) +
                  ", it was built for " + std::string(dtype_name(want[i].dtype)) +
                  to_string(want[i].shape));
  return kernel.output_types;
}

double FusedRegion::flops(const std::vector<ValueType>&) const {
  return kernel.flops;
}

std::shared_ptr<const FusedSignature> make_signature(const RegionKernel& k, KernelTier tier,
                                                     int blocks) {
  auto sig = std::make_shared<FusedRegion>();
  sig->kernel = k;
  sig->tier = tier;
  sig->blocks = blocks;
  return sig;
}

RegionGraph region_graph(const Graph& g, const Region& r, bool fused,
                         const std::map<ValueId, Shape>& input_shapes, KernelTier tier,
                         int blocks) {
  const RegionKernel k = build_region_kernel(g, r);
  RegionGraph out;
  out.graph.name = g.name + ": region";
  std::map<ValueId, ValueId> to_sub;
  std::map<NodeId, NodeId> node_to_sub;
  for (ValueId v : k.live_ins) {
    if (to_sub.count(v)) continue;
    const Value& val = g.value(v);
    if (is_constant(g, v)) {  // weights stay constants: the kernels that run are the plan's
      Node c = g.node(val.producer);
      to_sub[v] = out.graph.add_node(c, {val.name}).at(0);
      continue;
    }
    auto shape = input_shapes.find(v);
    to_sub[v] = out.graph.add_input(val.name, val.dtype,
                                    shape != input_shapes.end() ? shape->second : val.shape);
    out.inputs.push_back(v);
  }
  for (NodeId id : g.topo_order(k.nodes)) {
    Node n = g.node(id);
    std::vector<std::string> names;
    for (ValueId& v : n.inputs) {
      auto it = to_sub.find(v);
      if (it == to_sub.end())
        throw Error("region graph: " + describe(n) + " reads a value from outside the region");
      v = it->second;
    }
    for (ValueId v : n.outputs) names.push_back(g.value(v).name);
    node_to_sub[id] = static_cast<NodeId>(out.graph.nodes().size());
    const std::vector<ValueId> made = out.graph.add_node(n, names);
    for (size_t i = 0; i < made.size(); ++i) to_sub[g.node(id).outputs[i]] = made[i];
  }
  for (ValueId v : k.outputs) out.graph.mark_output(to_sub.at(v));
  if (fused) {
    // The region's nodes in their order in `r` (which decides the kernel's live-in order).
    Region mapped = r;
    for (NodeId& n : mapped.nodes) n = node_to_sub.at(n);
    if (r.reduce) mapped.reduce = node_to_sub.at(*r.reduce);
    if (r.heavy) mapped.heavy = node_to_sub.at(*r.heavy);
    fuse_region(out.graph, mapped, tier, blocks);
  }
  return out;
}

NodeId fuse_region(Graph& g, const Region& r, KernelTier tier, int blocks) {
  RegionKernel k = build_region_kernel(g, r);
  Node n;
  NodeId root = r.reduce ? *r.reduce : r.nodes.back();
  n.name = "fused_" + g.node(root).name;
  n.op = OpType::Fused;
  if (k.epilogue) {
    n.name = "fused_" + g.node(*r.heavy).name;
    n.payload = k.epilogue;
  } else {
    n.payload = make_signature(k, tier, blocks);
  }
  NodeId id = g.replace_nodes(k.nodes, std::move(n));
  if (g.node(id).inputs != k.live_ins || g.node(id).outputs != k.outputs)
    throw Error(
        "fused region: internal error: the kernel's live-ins or live-outs differ from "
        "the graph's");
  return id;
}

}  // namespace hf::fusion
