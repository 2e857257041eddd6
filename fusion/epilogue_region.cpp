// build_epilogue (region_spec.h): an epilogue region as the HeavyEpilogue its Fused node
// carries, with the live-ins in Graph::replace_nodes's order.
#include <algorithm>
#include <set>

#include "fusion/region_spec.h"
#include "runtime/ir/constant.h"
#include "runtime/ir/error.h"

namespace hf::fusion {

RegionKernel build_epilogue(const Graph& g, const Region& r) {
  if (!r.heavy) throw Error("build_epilogue: not an epilogue region");
  const NodeId h = *r.heavy;
  RegionKernel k;
  k.nodes = r.nodes;
  k.iteration_shape = r.shape;
  const std::set<NodeId> in_region(r.nodes.begin(), r.nodes.end());
  std::set<ValueId> produced;
  for (NodeId n : in_region)
    for (ValueId v : g.node(n).outputs) produced.insert(v);
  for (NodeId n : in_region)  // replace_nodes's order: node ids ascending, first use
    for (ValueId v : g.node(n).inputs)
      if (!produced.count(v) &&
          std::find(k.live_ins.begin(), k.live_ins.end(), v) == k.live_ins.end())
        k.live_ins.push_back(v);
  auto live_in = [&](ValueId v) {
    return static_cast<int>(std::find(k.live_ins.begin(), k.live_ins.end(), v) -
                            k.live_ins.begin());
  };

  auto e = std::make_shared<HeavyEpilogue>();
  e->heavy = g.node(h);
  e->heavy.inputs.clear();
  e->heavy.outputs.clear();
  e->heavy.payload.reset();
  for (ValueId v : g.node(h).inputs) e->heavy_inputs.push_back(live_in(v));
  e->nodes = r.nodes;
  std::vector<ValueId> step_out;
  const ValueId heavy_out = g.node(h).outputs[0];
  for (NodeId id : r.nodes) {
    const Node& n = g.node(id);
    if (id == h || n.op == OpType::Constant) continue;
    if (n.op != OpType::Elemwise && n.op != OpType::PowC)
      throw Error("build_epilogue: " + describe(n) + " is not an elementwise step");
    EpilogueStep st;
    st.op = n.op;
    st.mode = n.mode;
    st.name = n.name;
    if (n.op == OpType::PowC) st.exponent = static_cast<float>(n.attr_float("exponent"));
    for (ValueId v : n.inputs) {
      EpilogueArg a;
      const NodeId p = g.value(v).producer;
      auto s = std::find(step_out.begin(), step_out.end(), v);
      if (v == heavy_out) {
        a.kind = EpilogueArg::Heavy;
      } else if (s != step_out.end()) {
        a.kind = EpilogueArg::Step;
        a.index = static_cast<int>(s - step_out.begin());
      } else if (p != kNoNode && g.node(p).op == OpType::Constant && numel(g.value(v).shape) == 1) {
        a.kind = EpilogueArg::Literal;
        a.literal = static_cast<float>(constant_at(g.node(p), 0));
      } else {
        a.kind = EpilogueArg::Input;
        a.index = live_in(v);
        if (a.index >= static_cast<int>(k.live_ins.size()))
          throw Error("build_epilogue: " + describe(n) + " reads a value of the region");
      }
      st.args.push_back(a);
    }
    e->steps.push_back(std::move(st));
    step_out.push_back(n.outputs[0]);
  }
  if (step_out.empty()) throw Error("build_epilogue: no elementwise step");
  k.outputs = {step_out.back()};
  for (ValueId v : k.live_ins) k.live_in_types.push_back({g.value(v).dtype, g.value(v).shape});
  k.output_types = e->output_types(k.live_in_types);
  for (NodeId id : r.nodes) e->total_flops += node_flops(g, g.node(id));
  k.flops = e->total_flops;
  k.epilogue = std::move(e);
  return k;
}

}  // namespace hf::fusion
