// CPU kernels of the resampling ops (docs/ops.md): Resize, GridSample and RoiAlign. Same
// contracts as kernels.h; they need contiguous inputs and outputs (what the executor's
// buffers are) and throw std::invalid_argument otherwise.
#pragma once
#include <memory>

#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/resize_geometry.h"
#include "runtime/ir/sampling_geometry.h"
#include "runtime/ir/tensor.h"

namespace hf::cpu {

// Resize: the taps of every axis made once (at plan time), then applied axis by axis.
class ResizeKernel {
 public:
  explicit ResizeKernel(const ResizeGeometry& g);
  // Any dtype in nearest mode (elements are copied); float types in linear and cubic mode.
  void run(const TensorView& x, const TensorView& out, ThreadPool& pool) const;

 private:
  ResizeGeometry g_;
  std::vector<int> axes_;  // the axes that are not left as they are
  std::vector<ResizeTaps> taps_;
};

// GridSample: y[n, c, o] = x[n, c] interpolated at grid[n, o] (float types; f64 computes
// in f64, the others in f32).
void grid_sample(const GridSampleGeometry& g, const TensorView& x, const TensorView& grid,
                 const TensorView& y, ThreadPool& pool);

// RoiAlign: each roi's bins averaged (or maxed) over sampling points bilinearly
// interpolated. A batch index outside [0, N) throws std::out_of_range naming it.
void roi_align(const RoiAlignGeometry& g, const TensorView& x, const TensorView& rois,
               const TensorView& batch_indices, const TensorView& y, ThreadPool& pool);

}  // namespace hf::cpu
