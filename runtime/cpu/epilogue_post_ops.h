// Which epilogues (runtime/ir/epilogue.h) a convolution's oneDNN post-ops compute exactly, so
// the elementwise steps happen in registers and cost no pass over the output at all.
//
// A chain where each step reads the previous result once (the first the convolution's) and
// is RELU, CLIP between two literals, or ADD/MUL/SUB/MAX/MIN of it and a literal (ADD, MUL,
// SUB only) or an input of the output's shape or with one value per output channel (SUB
// only as `result - operand`). Anything else runs through EpilogueProgram.
#pragma once
#include <optional>
#include <vector>

#include "runtime/cpu/conv_onednn.h"
#include "runtime/ir/epilogue.h"

namespace hf::cpu {

struct ConvEpilogue {
  std::vector<ConvPostOp> post;
  std::vector<int> operands;  // the Fused node's input behind each ConvPostOp::operand
};

// inputs: the Fused node's input shapes; out: the convolution's output shape, channels on
// axis 1 (NCHW) or, for a Conv of the graph's own NHWC chains, on the last axis.
std::optional<ConvEpilogue> conv_epilogue(const HeavyEpilogue& e, const std::vector<Shape>& inputs,
                                          const Shape& out, bool nhwc);

}  // namespace hf::cpu
