// Constant nodes: where their values live, and constant folding (the plan evaluates every
// Constant node here, once, and uploads it through Backend::upload, so no backend needs a
// kernel for constants).
#pragma once
#include <memory>

#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

// The values of a Constant held once, in its own dtype, and shared by every copy of the
// graph (the session plans several): the payload of an imported initializer (weights). Small
// constants (JSON graphs, scalars, splats) keep their `value` attribute of doubles instead,
// which would be twice an f32 tensor's size in every copy.
struct ConstantData : NodePayload {
  HostTensor value;
};

// A Constant node holding `value` (its dtype and shape become the node's attributes).
Node constant_node(std::string name, HostTensor value);

// Values a Constant stores: 1 (a splat) or one per element. Throws hf::Error naming the
// node when it has neither a `value` attribute nor ConstantData.
int64_t constant_count(const Node& n);
// Stored value i (i < constant_count).
double constant_at(const Node& n, int64_t i);

// Whether `v` is a Constant node's output: written once, when a plan is built, and never
// again (plan.cpp), so kernels may keep a reordered copy of it.
bool is_constant(const Graph& g, ValueId v);

// The node's output (dtype and shape), from its ConstantData (shared, not copied) or its
// `value` attribute (one value: a splat).
HostTensor constant_value(const Graph& g, const Node& n);

}  // namespace hf
