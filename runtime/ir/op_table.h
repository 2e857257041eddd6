// Per-operator rules: what an op's outputs are, what it costs, and how fusion can take it.
//
// infer_outputs is the single place that knows each op's arity, attribute, dtype and shape
// rules; Graph::add_node and verify() both call it. flops/bytes feed the profiler's
// roofline classification.
#pragma once
#include <string_view>
#include <vector>

#include "runtime/ir/graph.h"

namespace hf {

// How fusion can take an op. fusion/detect.cpp adds what depends on the node (TypeCvt
// only between float types, which Reduces).
enum class OpKind : uint8_t {
  Compute,   // one expression per element
  Reduce,    // a trailing Reduce: only a region's root
  View,      // absorbed as a strided view of an input
  Constant,  // one element: absorbed as a literal
  Opaque,    // never fused
};

// An op type's row of op_types.def (op_type_name and parse_op_type read the names).
struct OpInfo {
  std::string_view name;
  int arity;  // -1: given by the attributes
  OpKind kind;
  std::string_view why_opaque;
};
const OpInfo& op_info(OpType t);

struct ValueType {
  DType dtype;
  Shape shape;
};

// Throws hf::Error naming the node if the node is malformed for these input types.
std::vector<ValueType> infer_outputs(const Node& n, const std::vector<ValueType>& inputs);

// Floating point (or integer) operations one execution performs.
double node_flops(const Graph& g, const Node& n);
// Ideal bytes moved: each input read once at its own size, each output written once.
double node_bytes(const Graph& g, const Node& n);

// Reduce attributes resolved against an input rank: sorted unique non-negative axes.
std::vector<int> reduce_axes(const Node& n, int rank);

// Dimshuffle: the input axis feeding each output axis (-1 for an inserted axis of size 1).
std::vector<int> dimshuffle_perm(const Node& n, int in_rank);

// A Fused node's payload answers this, so the IR can check fused nodes without knowing
// the fusion engine.
struct FusedSignature : NodePayload {
  virtual std::vector<ValueType> output_types(const std::vector<ValueType>& inputs) const = 0;
  virtual double flops(const std::vector<ValueType>& inputs) const = 0;
  // The nodes of the graph it was made from that the Fused node replaced.
  virtual const std::vector<NodeId>& replaced_nodes() const = 0;
};

}  // namespace hf
