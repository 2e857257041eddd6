#include "runtime/io/random_inputs.h"

#include <cmath>

#include "runtime/ir/memory_cap.h"
#include "runtime/ops/half.h"

namespace hf {

namespace {
// splitmix64: tiny, fast, and good enough for test data.
uint64_t next(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double uniform(uint64_t& s) { return static_cast<double>(next(s) >> 11) * 0x1.0p-53; }
}  // namespace

std::vector<HostTensor> random_inputs(const Graph& g, uint64_t seed) {
  std::vector<HostTensor> out;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    check_memory_cap(
        static_cast<size_t>(numel(v.shape)) * dtype_size(v.dtype),
        "graph input '" + v.name + "' " + std::string(dtype_name(v.dtype)) + to_string(v.shape));
    HostTensor t(v.dtype, v.shape);
    uint64_t s = seed * 0x100000001b3ull + i;
    InitRange r = v.init.value_or(is_float(v.dtype) ? InitRange{-1, 1} : InitRange{0, 10});
    int64_t n = t.numel();
    for (int64_t k = 0; k < n; ++k) {
      double x = r.lo + (r.hi - r.lo) * uniform(s);
      switch (v.dtype) {
        case DType::F32: t.as<float>()[k] = static_cast<float>(x); break;
        case DType::F16: t.as<f16>()[k] = to_f16(static_cast<float>(x)); break;
        case DType::BF16: t.as<bf16>()[k] = to_bf16(static_cast<float>(x)); break;
        case DType::I32: t.as<int32_t>()[k] = static_cast<int32_t>(std::floor(x)); break;
        case DType::I64: t.as<int64_t>()[k] = static_cast<int64_t>(std::floor(x)); break;
        case DType::U8: t.as<uint8_t>()[k] = static_cast<uint8_t>(std::floor(x)); break;
        case DType::Bool: t.as<uint8_t>()[k] = next(s) & 1; break;
        case DType::F64: t.as<double>()[k] = x; break;
        default: store_double(t.view(), k, std::floor(x)); break;  // the other integer types
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace hf
