#include "runtime/ir/constant.h"

#include "runtime/ops/half.h"

namespace hf {

HostTensor constant_value(const Graph& g, const Node& n) {
  const Value& out = g.value(n.outputs[0]);
  HostTensor t(out.dtype, out.shape);
  const std::vector<double> values = n.attr_floats("value");
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = values.size() == 1 ? values[0] : values[i];
    switch (t.dtype()) {
      case DType::F32:
        t.as<float>()[i] = static_cast<float>(v);
        break;
      case DType::F16:
        t.as<f16>()[i] = to_f16(static_cast<float>(v));
        break;
      case DType::BF16:
        t.as<bf16>()[i] = to_bf16(static_cast<float>(v));
        break;
      case DType::I32:
        t.as<int32_t>()[i] = static_cast<int32_t>(v);
        break;
      case DType::I64:
        t.as<int64_t>()[i] = static_cast<int64_t>(v);
        break;
      case DType::Bool:
        t.as<uint8_t>()[i] = v != 0;
        break;
      case DType::U8:
        t.as<uint8_t>()[i] = static_cast<uint8_t>(v);
        break;
    }
  }
  return t;
}

}  // namespace hf
