// A block of a heavy op's dense output, reported by the thread that has just written it, so
// an epilogue can be applied while the block is still in that core's cache.
#pragma once
#include <cstdint>
#include <functional>

#include "runtime/cpu/thread_pool.h"

namespace hf::cpu {

// rows x cols elements: row r is the flat elements [offset + r * row_stride, ... + cols).
struct OutBlock {
  int64_t offset = 0, rows = 1, cols = 0, row_stride = 0;
};

// Called once per block, on the thread that wrote it; blocks never overlap and together
// cover the output. Empty: nobody is told.
using OnBlock = std::function<void(const OutBlock&)>;

// For kernels without blocks of their own (after the whole output is written): the output's
// `numel` elements cut into blocks over the pool.
void for_each_block(int64_t numel, ThreadPool& pool, const OnBlock& on_block);

}  // namespace hf::cpu
