// How a Conv node's geometry maps onto cuDNN's 4-D descriptors: plain arithmetic, no cuDNN
// header, so it is tested on machines without a device. Internal to runtime/cuda/.
#pragma once
#include <string>

#include "runtime/ir/nn_geometry.h"

namespace hf::cuda {

// What the descriptors get from a geometry, computed without a device. cuDNN's legacy API
// pads symmetrically: pads (begin, end) use `pad` = begin when that gives the node's output
// size (the end padding is then never read); other pads (TensorFlow's SAME, say) copy the
// input into a zero-bordered buffer of h x w (the padded size) and convolve it unpadded.
//
// `nhwc` (the Conv's layout attribute, the rewrite of Conv chains: nhwc_layout.h): x and y
// are NHWC and cuDNN reads the weights as KRSC ([M, kh, kw, C/group], transposed on the
// device from the graph's [M, C/group, kh, kw]), the format of its tensor-core kernels.
struct CudnnConvShape {
  bool nhwc;
  int n, c, h, w;     // x as cuDNN reads it (padded when `prepad`)
  int m, cg, kh, kw;  // w: [M, C/group, kh, kw]
  int oh, ow;         // y
  int pad[2], stride[2], dilation[2], group;
  bool prepad;
  int in_h, in_w, pad_top, pad_left;  // prepad: the input's size and where it goes
};
// hf::Error naming `node` when a size does not fit cuDNN's int.
CudnnConvShape cudnn_conv_shape(const ConvGeometry& g, const std::string& node);

}  // namespace hf::cuda
