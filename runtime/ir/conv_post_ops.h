// The elementwise steps a Conv kernel applies to its output while it is in registers, and
// which epilogues (runtime/ir/epilogue.h) they compute exactly, so that the steps cost no
// pass over the output at all: oneDNN's post-ops and the Winograd kernel's output transform
// on the CPU (runtime/cpu/conv_onednn.h, conv_winograd.h), cuDNN's fused convolution on
// CUDA (runtime/cuda/conv_fusion.h).
//
// A chain where each step reads the previous result once (the first the convolution's) and
// is RELU, CLIP between two literals, or ADD/MUL/SUB/MAX/MIN of it and a literal (ADD, MUL,
// SUB only) or an input of the output's shape or with one value per output channel (SUB
// only as `result - operand`). Anything else the CPU runs through its EpilogueProgram.
#pragma once
#include <optional>
#include <vector>

#include "runtime/ir/epilogue.h"
#include "runtime/ir/shape.h"

namespace hf {

// Applied in order to the convolution's output (bias included). A binary step computes
// `out op operand` and reads a literal, or an operand of the output's own shape and layout,
// or one value per output channel.
struct ConvPostOp {
  enum Kind : unsigned char { Relu, Clip, Add, Mul, Sub, Max, Min };
  Kind kind = Relu;
  float lo = 0, hi = 0;      // Clip
  int operand = -1;          // Add..Min: which of run()'s operands; -1: `literal`
  float literal = 0;         // Add, Mul, Sub only
  bool per_channel = false;  // the operand holds one value per output channel
};

struct ConvEpilogue {
  std::vector<ConvPostOp> post;
  std::vector<int> operands;  // the Fused node's input behind each ConvPostOp::operand
};

// Whether the first step adds an operand of the output's shape that no other step reads (a
// residual): a kernel may add it by accumulating into the output, which may then be the
// operand's own buffer (Backend::writes_over).
bool leads_with_residual(const std::vector<ConvPostOp>& post);

// inputs: the Fused node's input shapes; out: the convolution's output shape, channels on
// axis 1 (NCHW) or, for a Conv of the graph's own NHWC chains, on the last axis.
std::optional<ConvEpilogue> conv_epilogue(const HeavyEpilogue& e, const std::vector<Shape>& inputs,
                                          const Shape& out, bool nhwc);

}  // namespace hf
