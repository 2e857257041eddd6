// A generated kernel's iteration space in equal blocks of rows, so that a kernel can be run
// (and its results read) a block at a time: the session checks a kernel that takes longer
// than an iteration's share of background work one block per share.
//
// A row is what one index of the kernel's launch range covers whole (kernel_abi.h): an
// element of a flat kernel, a reduced row of a trailing reduce, a row of a multi-stage row
// kernel. Block k of n is rows [k * rows / n, (k + 1) * rows / n). Every output of a kernel
// is laid out with the rows outermost (full-shape outputs in the iteration order, a
// reduce's result one element per row), so a block's part of an output of m elements is the
// contiguous run [first_row * m / rows, end_row * m / rows).
#pragma once
#include <cstdint>

#include "fusion/spec.h"
#include "runtime/ir/tensor.h"

namespace hf::fusion {

struct KernelBlock {
  int64_t rows = 0;                          // of the whole iteration space
  int64_t first_row = 0, end_row = 0;        // this block's
  int64_t launch_begin = 0, launch_end = 0;  // its part of the kernel's launch range
  // The block's elements of an output of `numel` elements: [first, first + count).
  int64_t first(int64_t numel) const { return rows ? first_row * (numel / rows) : 0; }
  int64_t count(int64_t numel) const { return rows ? (end_row - first_row) * (numel / rows) : 0; }
};

// The rows of `spec`'s iteration space of `shape` (spec.rank axes).
int64_t kernel_rows(const KernelSpec& spec, const Shape& shape);

// Block `block` of `blocks` (1 <= blocks <= kernel_rows; 0 <= block < blocks).
KernelBlock kernel_block(const KernelSpec& spec, const Shape& shape, int block, int blocks);

}  // namespace hf::fusion
