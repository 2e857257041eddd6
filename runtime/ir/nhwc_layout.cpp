#include "runtime/ir/nhwc_layout.h"

#include <numeric>
#include <string>
#include <vector>

#include "runtime/ir/op_table.h"

namespace hf {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

// A Reduce over exactly the spatial axes of a 4-D value, keeping them (a global pool).
bool spatial_reduce(const Graph& g, const Node& n) {
  if (n.op != OpType::Reduce || g.value(n.inputs[0]).shape.size() != 4) return false;
  return reduce_axes(n, 4) == std::vector<int>{2, 3} && n.attr_int("keepdims", 1) != 0;
}

// Which live nodes run in NHWC: every Conv, pooling and Elemwise the rules of the header
// admit, then only the chains with at least two Convs.
std::vector<bool> chain_members(const Graph& g, const std::vector<NodeId>& order) {
  std::vector<bool> in(g.nodes().size(), false);
  UnionFind chains(g.nodes().size());
  auto in_chain = [&](ValueId v) {
    const NodeId p = g.value(v).producer;
    return p != kNoNode && in[p];
  };
  for (NodeId id : order) {
    const Node& n = g.node(id);
    const Value& out = g.value(n.outputs[0]);
    if (n.op == OpType::Conv) {
      if (n.attrs.count("layout")) return std::vector<bool>(g.nodes().size(), false);
      in[id] = out.dtype == DType::F32 && out.shape.size() == 4;
      if (in[id] && in_chain(n.inputs[0])) chains.join(id, g.value(n.inputs[0]).producer);
    } else if (n.op == OpType::MaxPool || n.op == OpType::AveragePool || spatial_reduce(g, n)) {
      // Pooling inside a chain (ResNet's stem MaxPool, a global average at the end) keeps
      // it in NHWC instead of a transpose out and back in.
      if (n.attrs.count("layout")) return std::vector<bool>(g.nodes().size(), false);
      in[id] = out.dtype == DType::F32 && in_chain(n.inputs[0]);
      if (in[id]) chains.join(id, g.value(n.inputs[0]).producer);
    } else if (n.op == OpType::Elemwise && out.shape.size() == 4) {
      bool ok = true, any = false;
      for (ValueId v : n.inputs) {
        const Value& x = g.value(v);
        if (x.shape == out.shape)
          any = any || in_chain(v);
        else if (numel(x.shape) != 1)
          ok = false;
      }
      in[id] = ok && any;
      if (in[id])
        for (ValueId v : n.inputs)
          if (in_chain(v)) chains.join(id, g.value(v).producer);
    }
  }
  std::vector<int> convs(g.nodes().size(), 0);
  for (NodeId id : order)
    if (in[id] && g.node(id).op == OpType::Conv) ++convs[chains.find(id)];
  for (NodeId id : order)
    if (in[id] && convs[chains.find(id)] < 2) in[id] = false;
  return in;
}

class Rewriter {
 public:
  explicit Rewriter(const Graph& g)
      : g_(g), nchw_(g.values().size(), -1), nhwc_(g.values().size(), -1) {
    out_.name = g.name;
  }

  Graph run(const std::vector<NodeId>& order, const std::vector<bool>& member) {
    for (ValueId v : g_.inputs()) {
      const Value& x = g_.value(v);
      nchw_[v] = out_.add_input(x.name, x.dtype, x.shape, x.init);
    }
    for (NodeId id : order) {
      const Node& n = g_.node(id);
      Node copy = n;
      copy.outputs.clear();
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const Shape& shape = g_.value(n.inputs[i]).shape;
        const bool nhwc_input =
            member[id] &&
            (n.op == OpType::Elemwise ? shape == g_.value(n.outputs[0]).shape : i == 0);
        copy.inputs[i] = nhwc_input ? nhwc(n.inputs[i]) : nchw(n.inputs[i]);
      }
      std::vector<std::string> names;
      for (ValueId v : n.outputs)
        names.push_back(member[id] ? unique(g_.value(v).name + "/nhwc") : g_.value(v).name);
      if (member[id] && n.op == OpType::Reduce)
        copy.attrs["axes"] = std::vector<int64_t>{1, 2};
      else if (member[id] && n.op != OpType::Elemwise)
        copy.attrs["layout"] = std::string("NHWC");
      std::vector<ValueId> made = out_.add_node(std::move(copy), std::move(names));
      for (size_t i = 0; i < made.size(); ++i) (member[id] ? nhwc_ : nchw_)[n.outputs[i]] = made[i];
    }
    for (ValueId v : g_.outputs()) out_.mark_output(nchw(v));
    return std::move(out_);
  }

 private:
  // A name no value of either graph has.
  std::string unique(std::string name) const {
    while (g_.find_value(name) || out_.find_value(name)) name += "'";
    return name;
  }

  ValueId transpose(ValueId from, std::vector<int64_t> perm, const std::string& node_name,
                    std::string value_name) {
    Node t;
    t.name = unique(node_name);
    t.op = OpType::Dimshuffle;
    t.attrs["perm"] = std::move(perm);
    t.inputs = {from};
    return out_.add_node(std::move(t), {std::move(value_name)})[0];
  }

  // The new graph's NCHW value for v: its copy, or the transpose back of its NHWC value.
  ValueId nchw(ValueId v) {
    if (nchw_[v] < 0) {
      const std::string& name = g_.value(v).name;
      nchw_[v] = transpose(nhwc_[v], {0, 3, 1, 2}, name + "/to_nchw", name);
    }
    return nchw_[v];
  }

  ValueId nhwc(ValueId v) {
    if (nhwc_[v] < 0) {
      const std::string& name = g_.value(v).name;
      nhwc_[v] = transpose(nchw(v), {0, 2, 3, 1}, name + "/to_nhwc", unique(name + "/nhwc"));
    }
    return nhwc_[v];
  }

  const Graph& g_;
  Graph out_;
  std::vector<ValueId> nchw_, nhwc_;  // per value of g_: its value in out_, or -1
};

}  // namespace

std::unique_ptr<Graph> nhwc_conv_chains(const Graph& g) {
  const std::vector<NodeId> order = g.topo_order();
  const std::vector<bool> member = chain_members(g, order);
  bool any = false;
  for (NodeId id : order) any = any || member[id];
  if (!any) return nullptr;
  return std::make_unique<Graph>(Rewriter(g).run(order, member));
}

}  // namespace hf
