#include "runtime/ir/graph.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"

namespace hf {

std::string describe(const Node& n) {
  std::string s = "node '" + printable(n.name) + "' (" + std::string(op_type_name(n.op));
  if (n.op == OpType::Elemwise) s += std::string(" ") + mode_info(n.mode).name;
  return s + ")";
}

namespace {
template <class T>
const T* find_attr(const Node& n, const std::string& key, const char* type_name) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return nullptr;
  if (const T* v = std::get_if<T>(&it->second)) return v;
  throw Error(describe(n) + ": attribute '" + key + "' must be " + type_name);
}
[[noreturn]] void missing(const Node& n, const std::string& key) {
  throw Error(describe(n) + ": missing attribute '" + key + "'");
}
}  // namespace

int64_t Node::attr_int(const std::string& key, std::optional<int64_t> fallback) const {
  if (auto* v = find_attr<int64_t>(*this, key, "an integer")) return *v;
  if (fallback) return *fallback;
  missing(*this, key);
}

double Node::attr_float(const std::string& key, std::optional<double> fallback) const {
  auto it = attrs.find(key);
  if (it != attrs.end() && std::holds_alternative<int64_t>(it->second))
    return static_cast<double>(std::get<int64_t>(it->second));
  if (auto* v = find_attr<double>(*this, key, "a number")) return *v;
  if (fallback) return *fallback;
  missing(*this, key);
}

const std::string& Node::attr_str(const std::string& key) const {
  if (auto* v = find_attr<std::string>(*this, key, "a string")) return *v;
  missing(*this, key);
}

std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     std::optional<std::vector<int64_t>> fallback) const {
  if (auto* v = find_attr<std::vector<int64_t>>(*this, key, "a list of integers")) return *v;
  if (fallback) return *fallback;
  missing(*this, key);
}

std::vector<double> Node::attr_floats(const std::string& key) const {
  auto it = attrs.find(key);
  if (it != attrs.end() && std::holds_alternative<std::vector<int64_t>>(it->second)) {
    auto& ints = std::get<std::vector<int64_t>>(it->second);
    return std::vector<double>(ints.begin(), ints.end());
  }
  if (auto* v = find_attr<std::vector<double>>(*this, key, "a list of numbers")) return *v;
  missing(*this, key);
}

ValueId Graph::new_value(Value v) {
  if (v.name.empty()) v.name = "v" + std::to_string(values_.size());
  if (by_name_.count(v.name))
    throw Error("value name '" + printable(v.name) + "' is defined twice");
  if (v.shape.size() > kMaxRank)
    throw Error("value '" + printable(v.name) + "' has rank " + std::to_string(v.shape.size()) +
                ", more than the supported " + std::to_string(kMaxRank));
  for (int64_t d : v.shape)
    if (d < 0)
      throw Error("value '" + printable(v.name) + "' has a negative dimension " +
                  to_string(v.shape));
  // Node outputs were checked naming their node (infer_outputs); this catches inputs.
  if (!numel_within(v.shape))
    throw Error("value '" + printable(v.name) + "' " + to_string(v.shape) +
                " has more than 2^40 elements");
  ValueId id = static_cast<ValueId>(values_.size());
  by_name_[v.name] = id;
  values_.push_back(std::move(v));
  readers_.emplace_back();
  return id;
}

namespace {
// The closed interval an init range must lie in for `t`: the finite values of a float type
// (so hi - lo is finite too); for an integer type, [min, max + 1], since values are
// floor(x) with x < hi. Bool inputs are random bits; their range is unused.
std::pair<double, double> init_limits(DType t) {
  switch (t) {
    case DType::F32:
      return {-3.4028234663852886e38, 3.4028234663852886e38};
    case DType::BF16:
      return {-3.3895313892515355e38, 3.3895313892515355e38};
    case DType::F16:
      return {-65504.0, 65504.0};
    case DType::I32:
      return {-2147483648.0, 2147483648.0};
    case DType::I64:
      return {-9223372036854775808.0, 9223372036854775808.0};
    case DType::U8:
      return {0.0, 256.0};
    case DType::F64:
      return {-1.7976931348623157e308, 1.7976931348623157e308};
    case DType::I8:
      return {-128.0, 128.0};
    case DType::I16:
      return {-32768.0, 32768.0};
    case DType::U16:
      return {0.0, 65536.0};
    case DType::U32:
      return {0.0, 4294967296.0};
    case DType::U64:
      return {0.0, 18446744073709551616.0};
    case DType::Bool:
      break;
  }
  return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
}

void check_init(const std::string& name, DType t, const InitRange& r) {
  auto [min, max] = init_limits(t);
  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return std::string(buf);
  };
  if (!(r.lo < r.hi) || !(r.lo >= min) || !(r.hi <= max))
    throw Error("value '" + printable(name) + "': init [" + number(r.lo) + ", " + number(r.hi) +
                "] must be [lo, hi] with lo < hi, within [" + number(min) + ", " + number(max) +
                "] for " + std::string(dtype_name(t)));
}
}  // namespace

ValueId Graph::add_input(std::string name, DType dtype, Shape shape,
                         std::optional<InitRange> init) {
  if (init) check_init(name, dtype, *init);
  ValueId id = new_value(Value{std::move(name), dtype, std::move(shape), kNoNode, init});
  inputs_.push_back(id);
  return id;
}

std::vector<ValueId> Graph::add_node(Node node, std::vector<std::string> output_names) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  if (node.name.empty()) node.name = "n" + std::to_string(id);
  std::vector<ValueType> in_types;
  for (ValueId v : node.inputs) {
    if (v < 0 || v >= static_cast<ValueId>(values_.size()))
      throw Error(describe(node) + ": input refers to an undefined value");
    in_types.push_back({values_[v].dtype, values_[v].shape});
  }
  std::vector<ValueType> out_types = infer_outputs(node, in_types);
  if (!output_names.empty() && output_names.size() != out_types.size())
    throw Error(describe(node) + ": has " + std::to_string(out_types.size()) + " outputs, but " +
                std::to_string(output_names.size()) + " names were given");
  node.outputs.clear();
  for (size_t i = 0; i < out_types.size(); ++i) {
    std::string vname =
        output_names.empty() ? node.name + ":" + std::to_string(i) : std::move(output_names[i]);
    node.outputs.push_back(new_value(Value{vname, out_types[i].dtype, out_types[i].shape, id, {}}));
  }
  note_reader(id, node.inputs);
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

void Graph::mark_output(ValueId v) {
  if (v < 0 || v >= static_cast<ValueId>(values_.size()))
    throw Error("graph output refers to an undefined value");
  outputs_.push_back(v);
}

std::optional<ValueId> Graph::find_value(const std::string& n) const {
  auto it = by_name_.find(n);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void Graph::note_reader(NodeId id, const std::vector<ValueId>& inputs) {
  for (ValueId v : inputs)
    if (readers_[v].empty() || readers_[v].back() != id) readers_[v].push_back(id);
}

std::vector<NodeId> Graph::consumers(ValueId v) const {
  std::vector<NodeId> out;
  for (NodeId n : readers_.at(v))
    if (!nodes_[n].dead) out.push_back(n);
  return out;
}

int Graph::live_node_count() const {
  return static_cast<int>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.dead; }));
}

std::vector<NodeId> Graph::topo_order() const {
  std::vector<NodeId> live;
  live.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!nodes_[i].dead) live.push_back(static_cast<NodeId>(i));
  return topo_order(std::move(live));
}

std::vector<NodeId> Graph::topo_order(std::vector<NodeId> subset) const {
  // Kahn's algorithm, taking the lowest ready id first so the order is deterministic and
  // equals insertion order for graphs that were never rewritten. Edges leaving the subset
  // are ignored; nodes are numbered by their rank in the sorted subset.
  std::vector<NodeId> ids = std::move(subset);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto rank = [&](NodeId n) -> int {
    auto it = std::lower_bound(ids.begin(), ids.end(), n);
    return it != ids.end() && *it == n ? static_cast<int>(it - ids.begin()) : -1;
  };
  std::vector<int> pending(ids.size(), 0);
  std::vector<std::vector<int>> users(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const Node& n = node(ids[i]);
    if (n.dead)
      throw Error("topo_order: node id " + std::to_string(ids[i]) + " is not a live node");
    for (ValueId v : n.inputs) {
      NodeId p = values_[v].producer;
      int r = p == kNoNode ? -1 : rank(p);
      if (r < 0) continue;
      ++pending[i];
      users[r].push_back(static_cast<int>(i));
    }
  }
  std::set<int> ready;
  for (size_t i = 0; i < ids.size(); ++i)
    if (pending[i] == 0) ready.insert(static_cast<int>(i));
  std::vector<NodeId> order;
  order.reserve(ids.size());
  while (!ready.empty()) {
    int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(ids[i]);
    for (int u : users[i])
      if (--pending[u] == 0) ready.insert(u);
  }
  if (order.size() != ids.size()) throw Error("graph '" + printable(name) + "' has a cycle");
  return order;
}

NodeId Graph::replace_nodes(const std::vector<NodeId>& region, Node replacement) {
  std::set<NodeId> in_region;
  for (NodeId n : region) {
    if (n < 0 || n >= static_cast<NodeId>(nodes_.size()) || nodes_[n].dead)
      throw Error("replace_nodes: node id " + std::to_string(n) + " is not a live node");
    in_region.insert(n);
  }
  if (in_region.empty()) throw Error("replace_nodes: empty region");

  // Live-ins in first-use order; live-outs are region outputs read outside or graph outputs.
  std::vector<ValueId> live_in, live_out;
  std::set<ValueId> produced;
  for (NodeId n : in_region)
    for (ValueId v : nodes_[n].outputs) produced.insert(v);
  for (NodeId n : in_region)
    for (ValueId v : nodes_[n].inputs)
      if (!produced.count(v) && std::find(live_in.begin(), live_in.end(), v) == live_in.end())
        live_in.push_back(v);
  std::set<ValueId> graph_outs(outputs_.begin(), outputs_.end());
  for (NodeId n : in_region)
    for (ValueId v : nodes_[n].outputs) {
      bool escapes = graph_outs.count(v) > 0;
      for (NodeId c : consumers(v)) escapes |= !in_region.count(c);
      if (escapes) live_out.push_back(v);
    }

  // A cycle appears iff some node outside the region is reachable from the region and
  // also reaches into it. Walk forward from the region's outside consumers.
  std::vector<NodeId> stack;
  std::set<NodeId> seen;
  for (ValueId v : live_out)
    for (NodeId c : consumers(v))
      if (!in_region.count(c)) stack.push_back(c);
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    for (ValueId v : nodes_[n].outputs)
      for (NodeId c : consumers(v)) {
        if (in_region.count(c))
          throw Error("replace_nodes: fusing these nodes would create a cycle through " +
                      describe(nodes_[n]));
        stack.push_back(c);
      }
  }

  NodeId id = static_cast<NodeId>(nodes_.size());
  if (replacement.name.empty()) replacement.name = "n" + std::to_string(id);
  replacement.inputs = live_in;
  replacement.outputs = live_out;
  for (NodeId n : in_region) nodes_[n].dead = true;
  for (ValueId v : live_out) values_[v].producer = id;
  note_reader(id, replacement.inputs);
  nodes_.push_back(std::move(replacement));
  return id;
}

}  // namespace hf
