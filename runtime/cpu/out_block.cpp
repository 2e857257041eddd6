#include "runtime/cpu/out_block.h"

namespace hf::cpu {

void for_each_block(int64_t numel, ThreadPool& pool, const OnBlock& on_block) {
  if (!on_block || numel <= 0) return;
  pool.parallel_for(numel, 16384, [&](int64_t b, int64_t e) {
    on_block(OutBlock{b, 1, e - b, 0});
  });
}

}  // namespace hf::cpu
