#include "runtime/ir/constant.h"

namespace hf {

HostTensor constant_value(const Graph& g, const Node& n) {
  const Value& out = g.value(n.outputs[0]);
  HostTensor t(out.dtype, out.shape);
  const std::vector<double> values = n.attr_floats("value");
  for (int64_t i = 0; i < t.numel(); ++i)
    store_double(t.view(), i, values.size() == 1 ? values[0] : values[i]);
  return t;
}

}  // namespace hf
