// The elementwise steps a Conv kernel applies to its output while it is in registers: the
// steps of an epilogue that oneDNN's post-ops express exactly (cpu_backend.cpp maps them),
// run by oneDNN (conv_onednn.h) or by the Winograd kernel's output transform
// (conv_winograd.h) with the graph's own scalar semantics.
#pragma once

namespace hf::cpu {

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

}  // namespace hf::cpu
