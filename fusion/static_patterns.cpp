#include "fusion/static_patterns.h"

#include <algorithm>
#include <optional>
#include <set>

#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"

namespace hf::fusion {

namespace {

struct Rewrite {
  std::vector<NodeId> region;  // the root last
  Mode mode;
  std::vector<ValueId> inputs;  // the fused node's inputs, in its mode's order
};

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), outs_(g.outputs().begin(), g.outputs().end()) {}

  // The live Elemwise node of mode `m` producing `v`, if `v` has no reader but `root`.
  std::optional<NodeId> inner(ValueId v, Mode m, NodeId root) const {
    NodeId p = g_.value(v).producer;
    if (p == kNoNode || g_.node(p).dead || g_.node(p).op != OpType::Elemwise ||
        g_.node(p).mode != m || outs_.count(v))
      return std::nullopt;
    std::vector<NodeId> readers = g_.consumers(v);
    if (readers.size() != 1 || readers[0] != root) return std::nullopt;
    return p;
  }

  std::optional<Rewrite> match(NodeId root) const {
    const Node& n = g_.node(root);
    if (n.op != OpType::Elemwise) return std::nullopt;
    if (n.mode == Mode::ADD) {
      auto m0 = inner(n.inputs[0], Mode::MUL, root);
      auto m1 = inner(n.inputs[1], Mode::MUL, root);
      if (m0 && m1 && *m0 != *m1) {
        // a*b + c*d == c*d + a*b exactly, so the MULs go in id order, the order in which
        // replace_nodes lists their inputs.
        NodeId first = std::min(*m0, *m1), second = std::max(*m0, *m1);
        const Node &a = g_.node(first), &b = g_.node(second);
        if (auto r = checked({{first, second, root},
                              Mode::FUSE_MUL_ADD4,
                              {a.inputs[0], a.inputs[1], b.inputs[0], b.inputs[1]}},
                             root))
          return r;
      }
      for (int i : {0, 1}) {
        auto m = i == 0 ? m0 : m1;
        if (!m) continue;
        const Node& mul = g_.node(*m);
        if (auto r = checked(
                {{*m, root}, Mode::FUSE_MUL_ADD3, {mul.inputs[0], mul.inputs[1], n.inputs[1 - i]}},
                root))
          return r;
      }
      return std::nullopt;
    }
    std::optional<Mode> fused;
    switch (n.mode) {
      case Mode::RELU:
        fused = Mode::FUSE_ADD_RELU;
        break;
      case Mode::SIGMOID:
        fused = Mode::FUSE_ADD_SIGMOID;
        break;
      case Mode::TANH:
        fused = Mode::FUSE_ADD_TANH;
        break;
      case Mode::H_SWISH:
        fused = Mode::FUSE_ADD_H_SWISH;
        break;
      default:
        return std::nullopt;
    }
    auto add = inner(n.inputs[0], Mode::ADD, root);
    if (!add) return std::nullopt;
    const Node& a = g_.node(*add);
    return checked({{*add, root}, *fused, {a.inputs[0], a.inputs[1]}}, root);
  }

 private:
  const Graph& g_;
  std::set<ValueId> outs_;

  // The rewrite, if replace_nodes will give the fused node exactly these inputs (it lists
  // live-ins once each, in node-id order, so x*x+y cannot become FUSE_MUL_ADD3(x, x, y))
  // and the fused node computes the root's type.
  std::optional<Rewrite> checked(Rewrite r, NodeId root) const {
    std::set<NodeId> region(r.region.begin(), r.region.end());
    std::set<ValueId> produced;
    for (NodeId n : region)
      for (ValueId v : g_.node(n).outputs) produced.insert(v);
    std::vector<ValueId> live_in;
    for (NodeId n : region)
      for (ValueId v : g_.node(n).inputs)
        if (!produced.count(v) && std::find(live_in.begin(), live_in.end(), v) == live_in.end())
          live_in.push_back(v);
    if (live_in != r.inputs) return std::nullopt;
    Node probe;
    probe.name = g_.node(root).name;
    probe.op = OpType::Elemwise;
    probe.mode = r.mode;
    std::vector<ValueType> types;
    for (ValueId v : r.inputs) types.push_back({g_.value(v).dtype, g_.value(v).shape});
    const Value& out = g_.value(g_.node(root).outputs[0]);
    try {
      std::vector<ValueType> got = infer_outputs(probe, types);
      if (got[0].dtype != out.dtype || got[0].shape != out.shape) return std::nullopt;
    } catch (const Error&) {
      return std::nullopt;  // e.g. FUSE_ADD_SIGMOID over an integer ADD
    }
    return r;
  }
};

}  // namespace

int apply_static_patterns(Graph& g) {
  int rewrites = 0;
  for (NodeId root : g.topo_order()) {
    if (g.node(root).dead) continue;  // the inner node of an earlier rewrite
    std::optional<Rewrite> r = Matcher(g).match(root);
    if (!r) continue;
    Node fused;
    fused.name = g.node(root).name;
    fused.op = OpType::Elemwise;
    fused.mode = r->mode;
    g.replace_nodes(r->region, std::move(fused));
    ++rewrites;
  }
  return rewrites;
}

}  // namespace hf::fusion
