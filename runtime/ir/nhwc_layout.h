// The backends' layout rewrite: chains of convolutions run in NHWC from the first Conv to
// the last, with one transpose at each end, instead of a reorder in and out of every Conv
// (oneDNN's direct and depthwise kernels and cuDNN's tensor-core kernels want NHWC; ONNX
// models are NCHW). A backend applies it through SessionTarget::lower.
//
// A chain is a connected set of f32 4-D Convs and the Elemwise ops between them that read at
// least one of the chain's values, every input being of the op's output shape or a single
// element (Relu, Clip, the residual Add), and the MaxPool / AveragePool ops and the Reduces
// over H and W keeping them (a global average) that read one; it is rewritten when it holds at
// least two Convs (one Conv alone gains nothing over its own reorders). Its Convs and pools
// get the attribute layout "NHWC" (its Reduces the axes 1, 2);
// values entering it pass a Dimshuffle "<value>/to_nhwc", values leaving it (to other ops or as
// graph outputs) a Dimshuffle "<value>/to_nchw" whose output keeps the value's name, so every NCHW
// value and every graph input and output is named as before. Node names are kept.
#pragma once
#include <memory>

#include "runtime/ir/graph.h"

namespace hf {

// `g` with its Conv chains in NHWC; null when it has none.
std::unique_ptr<Graph> nhwc_conv_chains(const Graph& g);

}  // namespace hf
