// Epilogues: the elementwise ops that consume a heavy op's output (bias add, BatchNorm's
// scale and shift, activation, residual add, GELU, clip), fused into the heavy op's library
// call (runtime/ir/epilogue.h) instead of a kernel of their own.
//
// From each MatMul or Conv with one f32 output, in topological order, the chain grows over
// consumers of values already in it: an Elemwise (float result) or PowC node joins if its
// output has the heavy op's shape and each of its inputs is in the chain, a one-element
// Constant (a literal) or a value that cannot depend on the heavy op (a graph input, a
// Constant, or produced before it) and broadcasts to its shape. The chain kept is the
// longest prefix, in that order, out of which exactly one value escapes (read outside it or
// a graph output): its last step's. So GELU's x * 0.5 * (1 + erf(x / √2)),
// which reads x twice, is one epilogue; a value also read by another branch ends it.
#pragma once
#include <set>
#include <vector>

#include "runtime/ir/graph.h"

namespace hf::fusion {

struct EpilogueChain {
  NodeId heavy = kNoNode;
  std::vector<NodeId> steps;     // in topological order; the last one's output escapes
  std::vector<NodeId> literals;  // one-element Constants read only by the steps
};

// The most steps one epilogue takes (each costs a pass over an L1-sized chunk).
inline constexpr int kMaxEpilogueSteps = 16;

// order: the graph's topo_order(); users: per value, its live consumers.
std::vector<EpilogueChain> find_epilogues(const Graph& g, const std::vector<NodeId>& order,
                                          const std::vector<std::vector<NodeId>>& users);

// A MatMul or Conv on f32 whose output an epilogue can start from.
bool is_heavy_op(const Graph& g, NodeId n);

}  // namespace hf::fusion
