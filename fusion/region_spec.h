// From a detected region to a KernelSpec: the kernel's inputs (with the view each one is
// read through), its expression DAG, its outputs, and the Fused node's payload.
//
// Spec inputs follow the order of Graph::replace_nodes's live-ins (one per distinct
// (value, view) pair, so a value read both directly and transposed is two inputs) and
// spec outputs follow its live-outs, so the Fused node that replaces the region lines up
// with the kernel without a mapping table in the common case.
//
// Views are relative to the iteration space and say nothing about sizes: a view maps each
// iteration axis to an axis of the input (or broadcasts it), and the strides come from the
// actual iteration shape at plan time. A new batch size gives the same spec (same hash, one
// compiled kernel) and new strides; a new rank or broadcast pattern gives a new spec.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "fusion/detect.h"
#include "fusion/kernel_abi.h"
#include "fusion/spec.h"
#include "runtime/ir/epilogue.h"
#include "runtime/ir/op_table.h"

namespace hf::fusion {

// How one kernel input is read. The input is contiguous memory of shape `src_shape` (the
// graph value, or the target of a Reshape applied to it); iteration axis d reads source
// axis `axis[d]`, or is broadcast (stride 0) where axis[d] is -1.
struct InputView {
  Shape src_shape;
  std::vector<int> axis;  // one per iteration axis
};

struct RegionKernel {
  KernelSpec spec;
  std::vector<ValueId> inputs;   // the graph value each spec input reads, in order
  std::vector<InputView> views;  // per spec input
  std::vector<ValueId> outputs;  // live-outs, in spec.outputs order (= replace_nodes's)
  std::vector<NodeId> nodes;     // every node replaced, absorbed Constants and views included
  // The Fused node's inputs: replace_nodes's live-ins. Equal to `inputs` unless a value is
  // read through two different views; then the runtime binds spec input i to inputs[i].
  std::vector<ValueId> live_ins;
  std::vector<ValueType> live_in_types, output_types;
  // The iteration shape in this graph, with spec.rank axes (a rank-0 region iterates [1]).
  Shape iteration_shape;
  double flops = 0;  // of the replaced nodes
  // An epilogue region (Region::heavy): no spec to compile; the Fused node carries this.
  std::shared_ptr<const HeavyEpilogue> epilogue;
};

// How a Fused node's kernel runs: its compiled code (from the KernelCache), or its spec
// interpreted (SpecInterpreter: CPU, f32), which needs no compile.
enum class KernelTier : unsigned char { Compiled, Interpreted };

// A region as a graph of its own, to run its kernel alone (the session validates a kernel
// this way, against the live-outs the unfused ops computed in an iteration): its inputs
// are the region's distinct live-ins but constants, `inputs[i]` being the value of `g` that
// graph input i stands for; constants it reads are Constant nodes in it, as in `g`, so
// the kernel built for it is the one a plan of `g` builds (packed weights, not inputs). Its
// outputs are the live-outs in RegionKernel::outputs order. Values keep
// their names. `fused`: one Fused node, the very kernel fuse_region gives the region in
// `g` (same spec, so the same compiled code); otherwise the region's own nodes.
// `input_shapes` gives some live-ins another shape (the session's checks in parts, e.g.
// a MatMul epilogue on a block of its rows); the region's values follow by shape inference,
// which throws hf::Error where they do not fit. `blocks` (a generated kernel's region,
// `fused`): its Fused node computes one block of rows per run (FusedRegion::blocks).
struct RegionGraph {
  Graph graph;
  std::vector<ValueId> inputs;
};
RegionGraph region_graph(const Graph& g, const Region& r, bool fused,
                         const std::map<ValueId, Shape>& input_shapes = {},
                         KernelTier tier = KernelTier::Compiled, int blocks = 1);

// Throws hf::Error naming the node if the region is not one detect_regions could return
// (a view of a value computed inside, a Reduce that is not last, ...). An epilogue region
// gives its HeavyEpilogue (build_epilogue) and an empty spec.
RegionKernel build_region_kernel(const Graph& g, const Region& r);
RegionKernel build_epilogue(const Graph& g, const Region& r);

// Element strides of spec input `input` for an iteration space of `iteration_shape`
// (rank = spec.rank; a rank-0 shape counts as [1]); 0 on broadcast axes and past the rank.
// Throws hf::Error if the rank differs from the spec's.
void fill_input_strides(const RegionKernel& k, size_t input, const Shape& iteration_shape,
                        i64 out_strides[kAbiMaxRank]);

// The payload of the Fused node that replaces the region: carries the kernel and answers
// the verifier (output types; flops for the profiler).
struct FusedRegion : FusedSignature {
  RegionKernel kernel;
  KernelTier tier = KernelTier::Compiled;
  // More than 1 in a session's check only (region_graph): a host kernel made from this
  // node computes one block of its rows per run, block k on its k-th run (modulo `blocks`;
  // kernel_blocks.h), and leaves the rest of its outputs as they were.
  int blocks = 1;
  std::vector<ValueType> output_types(const std::vector<ValueType>& inputs) const override;
  double flops(const std::vector<ValueType>& inputs) const override;
  const std::vector<NodeId>& replaced_nodes() const override { return kernel.nodes; }
};
std::shared_ptr<const FusedSignature> make_signature(const RegionKernel& k,
                                                     KernelTier tier = KernelTier::Compiled,
                                                     int blocks = 1);

// Replaces the region's nodes in `g` by one Fused node carrying make_signature's payload
// and named after the region's root; returns its id. Regions from one detect_regions call
// can be fused one after another in any order. `tier` and `blocks` (FusedRegion's) do not
// apply to epilogue regions.
NodeId fuse_region(Graph& g, const Region& r, KernelTier tier = KernelTier::Compiled,
                   int blocks = 1);

}  // namespace hf::fusion
