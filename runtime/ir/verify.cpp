#include <set>

#include "runtime/ir/error.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/op_table.h"

namespace hf {

void verify(const Graph& g) {
  std::set<std::string> names;
  for (const Value& v : g.values())
    if (!names.insert(v.name).second)
      throw Error("value name '" + printable(v.name) + "' is defined twice");
  std::vector<NodeId> order = g.topo_order();  // throws on a cycle
  std::vector<bool> defined(g.values().size(), false);
  for (ValueId v : g.inputs()) defined[v] = true;
  for (NodeId id : order) {
    const Node& n = g.node(id);
    std::vector<ValueType> in;
    for (ValueId v : n.inputs) {
      if (v < 0 || v >= static_cast<ValueId>(g.values().size()) || !defined[v])
        throw Error(describe(n) + ": reads a value that is not defined before it");
      in.push_back({g.value(v).dtype, g.value(v).shape});
    }
    std::vector<ValueType> out = infer_outputs(n, in);
    if (out.size() != n.outputs.size())
      throw Error(describe(n) + ": has " + std::to_string(n.outputs.size()) +
                  " outputs, its op defines " + std::to_string(out.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      const Value& v = g.value(n.outputs[i]);
      if (v.dtype != out[i].dtype || v.shape != out[i].shape)
        throw Error(describe(n) + ": output '" + printable(v.name) + "' is " +
                    std::string(dtype_name(v.dtype)) + to_string(v.shape) + ", its op gives " +
                    std::string(dtype_name(out[i].dtype)) + to_string(out[i].shape));
      if (v.producer != id)
        throw Error(describe(n) + ": output '" + printable(v.name) + "' names another producer");
      defined[n.outputs[i]] = true;
    }
  }
  if (g.outputs().empty()) throw Error("graph '" + printable(g.name) + "' has no outputs");
  for (ValueId v : g.outputs())
    if (!defined[v])
      throw Error("graph output '" + printable(g.value(v).name) + "' is never computed");
}

}  // namespace hf
