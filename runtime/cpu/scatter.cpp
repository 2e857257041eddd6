// ScatterRows: a copy of data with rows picked by index overwritten or combined with
// updates. Rows are visited in index order (a later duplicate index wins or combines after
// the earlier one, as ONNX's reference does), so threads split the columns, never the rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/nn_kernels.h"

namespace hf::cpu {

namespace {

// a op b in the compute type C (f32 for the half types); integer add and mul wrap.
template <class C>
C combine(ScatterReduction r, C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    switch (r) {
      case ScatterReduction::Add:
        return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
      case ScatterReduction::Mul:
        return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
      case ScatterReduction::Max:
        return std::max(a, b);
      case ScatterReduction::Min:
        return std::min(a, b);
      case ScatterReduction::None:
        break;
    }
  } else {
    switch (r) {
      case ScatterReduction::Add:
        return a + b;
      case ScatterReduction::Mul:
        return a * b;
      case ScatterReduction::Max:  // NaN propagates, as numpy.maximum
        return a != a || b != b ? a + b : std::max(a, b);
      case ScatterReduction::Min:
        return a != a || b != b ? a + b : std::min(a, b);
      case ScatterReduction::None:
        break;
    }
  }
  return b;
}

template <class T>
void combine_rows(ScatterReduction r, const std::vector<int64_t>& rows, const T* upd, T* out,
                  int64_t inner, int64_t c0, int64_t c1) {
  for (size_t k = 0; k < rows.size(); ++k) {
    T* o = out + rows[k] * inner;
    const T* u = upd + static_cast<int64_t>(k) * inner;
    for (int64_t c = c0; c < c1; ++c) {
      if constexpr (std::is_same_v<T, bool>) {
        o[c] = u[c];  // op_table refuses reductions of bool
      } else if constexpr (kIsHalf<T>) {
        o[c] = convert<T>(combine<float>(r, to_float(o[c]), to_float(u[c])));
      } else {
        o[c] = combine<T>(r, o[c], u[c]);
      }
    }
  }
}

}  // namespace

std::optional<ScatterReduction> parse_scatter_reduction(const std::string& s) {
  if (s == "none") return ScatterReduction::None;
  if (s == "add") return ScatterReduction::Add;
  if (s == "mul") return ScatterReduction::Mul;
  if (s == "max") return ScatterReduction::Max;
  if (s == "min") return ScatterReduction::Min;
  return std::nullopt;
}

void scatter_rows(ScatterReduction r, const TensorView& data, const TensorView& indices,
                  const TensorView& updates, const TensorView& out, ThreadPool& pool) {
  if (!data.is_contiguous() || !indices.is_contiguous() || !updates.is_contiguous() ||
      !out.is_contiguous())
    throw std::invalid_argument("scatter: needs contiguous tensors");
  const int64_t dim = data.shape[0], count = indices.numel();
  const int64_t inner = dim == 0 ? 0 : data.numel() / dim;
  // Every index is checked before anything is written: a bad one fails the run whole.
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = indices.dtype == DType::I64 ? indices.as<const int64_t>()[k]
                                            : indices.as<const int32_t>()[k];
    if (i < -dim || i >= dim)
      throw std::out_of_range("scatter: index " + std::to_string(i) +
                              " is out of range for an axis of size " + std::to_string(dim));
    rows[k] = i < 0 ? i + dim : i;
  }
  const size_t bytes = static_cast<size_t>(data.numel()) * dtype_size(data.dtype);
  if (out.data != data.data && bytes) std::memcpy(out.data, data.data, bytes);
  if (count == 0 || inner == 0) return;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(count, 1));
  visit_dtype(data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* upd = updates.as<const T>();
    T* o = out.as<T>();
    if (r == ScatterReduction::None) {
      const size_t row = static_cast<size_t>(inner) * sizeof(T);
      for (int64_t k = 0; k < count; ++k) std::memcpy(o + rows[k] * inner, upd + k * inner, row);
      return;
    }
    pool.parallel_for(inner, grain, [&](int64_t c0, int64_t c1) {
      combine_rows<T>(r, rows, upd, o, inner, c0, c1);
    });
  });
}

}  // namespace hf::cpu
