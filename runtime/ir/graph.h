// The graph IR: SSA values and the nodes that produce them.
//
// A Value has one producer (a node, or none for graph inputs) and a fixed shape and dtype.
// Nodes are appended in any order that respects their inputs, so node ids are already a
// topological order until a rewrite replaces a set of nodes; topo_order() is the order to
// execute. Node ids stay stable across rewrites: replaced nodes are marked dead.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/ir/dtype.h"
#include "runtime/ir/shape.h"
#include "runtime/ops/mode.h"

namespace hf {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

enum class OpType : uint8_t {
#define X(NAME, ...) NAME,
#include "runtime/ir/op_types.def"
#undef X
};
std::string_view op_type_name(OpType t);
std::optional<OpType> parse_op_type(std::string_view s);

using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
using Attrs = std::map<std::string, Attr>;

// Data a rewrite attaches to a node (a fused region's kernel spec). The IR only carries it.
struct NodePayload {
  virtual ~NodePayload() = default;
};

// How a launcher fills a graph input when the user gives no data: uniform in [lo, hi),
// rounded down for integer types. Graph::add_input refuses a range whose values the input's
// type cannot hold (an i32 in [0, 1e30] was all zeros, an f32 in [-1e308, 1e308] all inf).
struct InitRange {
  double lo = -1, hi = 1;
};

struct Value {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  NodeId producer = kNoNode;  // kNoNode: a graph input
  std::optional<InitRange> init;
};

struct Node {
  std::string name;
  OpType op = OpType::Elemwise;
  Mode mode = Mode::ADD;  // Elemwise only
  Attrs attrs;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::shared_ptr<const NodePayload> payload;
  bool dead = false;  // replaced by a rewrite

  // Attribute access; throw hf::Error naming this node when missing or of the wrong type.
  int64_t attr_int(const std::string& key, std::optional<int64_t> fallback = {}) const;
  double attr_float(const std::string& key, std::optional<double> fallback = {}) const;
  const std::string& attr_str(const std::string& key) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 std::optional<std::vector<int64_t>> fallback = {}) const;
  std::vector<double> attr_floats(const std::string& key) const;
};

// "node 'mul1' (Elemwise MUL)": how every error message names a node.
std::string describe(const Node& n);

class Graph {
 public:
  // Throws hf::Error naming the value when the shape or the init range is bad.
  ValueId add_input(std::string name, DType dtype, Shape shape, std::optional<InitRange> init = {});

  // Appends a node and creates its outputs, whose shapes and dtypes come from the op table.
  // Throws hf::Error naming the node if arity, attributes, dtypes or shapes are wrong.
  // Output names default to "<node name>:<i>"; an empty node name becomes "n<id>".
  std::vector<ValueId> add_node(Node node, std::vector<std::string> output_names = {});

  void mark_output(ValueId v);

  // Replaces the live nodes in `region` by `replacement`, whose inputs become the region's
  // live-ins and whose outputs its live-outs (values used outside the region or graph
  // outputs), in a deterministic order. Throws hf::Error if the region is empty or
  // replacing it would create a cycle (a path leaving the region and re-entering it).
  NodeId replace_nodes(const std::vector<NodeId>& region, Node replacement);

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Value& value(ValueId v) const { return values_.at(v); }
  const Node& node(NodeId n) const { return nodes_.at(n); }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::optional<ValueId> find_value(const std::string& name) const;

  // Live nodes reading `v`, in id order: O(readers), not a scan of the graph (a 100k-node
  // chain was quadratic to plan and fuse).
  std::vector<NodeId> consumers(ValueId v) const;
  // Live nodes in an order where every producer precedes its consumers.
  std::vector<NodeId> topo_order() const;
  // The same order restricted to `subset` (live nodes), in O(subset): a region's nodes,
  // without sorting the whole graph once per region.
  std::vector<NodeId> topo_order(std::vector<NodeId> subset) const;
  int live_node_count() const;

  std::string name;
  // Graph inputs whose values this graph was specialised to (an ONNX model that sizes
  // something by an input's value: OnnxImportOptions::input_values). It is right only for
  // those values; the other inputs may take any value.
  std::vector<std::string> specialised_inputs;

 private:
  ValueId new_value(Value v);
  void note_reader(NodeId id, const std::vector<ValueId>& inputs);
  std::vector<Value> values_;
  std::vector<std::vector<NodeId>> readers_;  // per value: every node that read it, dead too
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, ValueId> by_name_;
};

// Re-checks a whole graph: every value defined before use, every node's arity, attributes,
// dtypes and shapes, unique value names, outputs defined, no cycles. Throws hf::Error
// naming the first node at fault.
void verify(const Graph& g);

}  // namespace hf
