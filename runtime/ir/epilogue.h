// A heavy op (MatMul, Conv) with the elementwise ops that consume its output fused in: the
// payload of a Fused node that a backend runs as one library call whose output blocks get
// the elementwise steps applied while they are still in cache (the CPU's epilogue_program).
//
// The steps are a small expression DAG over the heavy op's output, in order; each reads the
// heavy output, an earlier step, one of the Fused node's inputs (broadcast to the output's
// shape: a bias, a residual, a mask) or a literal. The last step's value is the node's one
// output. Every step keeps the unfused op's element type (f32) and shape, so fused and
// unfused results are the same operations on the same values.
#pragma once
#include <string>
#include <vector>

#include "runtime/ir/op_table.h"

namespace hf {

struct EpilogueArg {
  enum Kind : unsigned char { Heavy, Step, Input, Literal };
  Kind kind = Heavy;
  int index = 0;      // Step: an earlier step; Input: the Fused node's input
  float literal = 0;  // Literal
};

struct EpilogueStep {
  OpType op = OpType::Elemwise;  // Elemwise, or PowC
  Mode mode = Mode::ADD;         // Elemwise
  float exponent = 1;            // PowC
  std::vector<EpilogueArg> args;
  std::string name;  // the node it replaces
};

struct HeavyEpilogue : FusedSignature {
  Node heavy;                     // op, name and attributes; inputs/outputs unused
  std::vector<int> heavy_inputs;  // the Fused node's input feeding each heavy op input
  std::vector<EpilogueStep> steps;
  std::vector<NodeId> nodes;  // every node replaced, heavy op and literals included
  double total_flops = 0;     // of the replaced nodes (build_epilogue counts them)

  // The heavy op's output type; throws hf::Error when an input or a step does not fit.
  std::vector<ValueType> output_types(const std::vector<ValueType>& inputs) const override;
  double flops(const std::vector<ValueType>& inputs) const override;
  const std::vector<NodeId>& replaced_nodes() const override { return nodes; }
  // "MatMul+ADD+ERF": what the report and the dumps call it.
  std::string summary() const;
};

}  // namespace hf
