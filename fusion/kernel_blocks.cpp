#include "fusion/kernel_blocks.h"

namespace hf::fusion {

namespace {

// The launch indices of one row: a multi-stage row kernel is launched over flat elements.
int64_t row_length(const KernelSpec& spec, const Shape& shape) {
  int first = spec.row_stages() ? spec.row_axis : spec.reduce ? spec.reduce->first_axis : -1;
  if (first < 0) return 1;
  int64_t len = 1;
  for (size_t d = static_cast<size_t>(first); d < shape.size(); ++d) len *= shape[d];
  return len;
}

}  // namespace

int64_t kernel_rows(const KernelSpec& spec, const Shape& shape) {
  const int64_t len = row_length(spec, shape);
  return len ? numel(shape) / len : 0;
}

KernelBlock kernel_block(const KernelSpec& spec, const Shape& shape, int block, int blocks) {
  KernelBlock b;
  b.rows = kernel_rows(spec, shape);
  b.first_row = b.rows * block / blocks;
  b.end_row = b.rows * (block + 1) / blocks;
  // A reduce kernel's range counts rows; the others' count elements.
  const int64_t step = spec.reduce ? 1 : row_length(spec, shape);
  b.launch_begin = b.first_row * step;
  b.launch_end = b.end_row * step;
  return b;
}

}  // namespace hf::fusion
