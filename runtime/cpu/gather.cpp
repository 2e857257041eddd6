// Gather: rows of `inner` contiguous elements picked by index and copied with memcpy.
#include <cstring>
#include <stdexcept>
#include <string>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/nn_kernels.h"

namespace hf::cpu {

void gather(int axis, const TensorView& data, const TensorView& indices, const TensorView& out,
            ThreadPool& pool) {
  if (!data.is_contiguous() || !indices.is_contiguous() || !out.is_contiguous())
    throw std::invalid_argument("gather: needs contiguous tensors");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= data.shape[d];
  for (int d = axis + 1; d < data.rank(); ++d) inner *= data.shape[d];
  const int64_t dim = data.shape[axis], count = indices.numel();
  const size_t row = static_cast<size_t>(inner) * dtype_size(data.dtype);
  const char* src = static_cast<const char*>(data.data);
  char* dst = static_cast<char*>(out.data);
  auto index = [&](int64_t k) -> int64_t {
    int64_t i = indices.dtype == DType::I64 ? indices.as<const int64_t>()[k]
                                            : indices.as<const int32_t>()[k];
    if (i < -dim || i >= dim)
      throw std::out_of_range("gather: index " + std::to_string(i) +
                              " is out of range for an axis of size " + std::to_string(dim));
    return i < 0 ? i + dim : i;
  };
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<size_t>(row, 1));
  pool.parallel_for(outer * count, grain, [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      int64_t o = t / count, k = t % count;
      std::memcpy(dst + t * row, src + (o * dim + index(k)) * row, row);
    }
  });
}

}  // namespace hf::cpu
