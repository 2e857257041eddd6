#include "runtime/ir/constant.h"

#include <type_traits>
#include <variant>

#include "runtime/ir/error.h"

namespace hf {

namespace {

const ConstantData* data_of(const Node& n) {
  return dynamic_cast<const ConstantData*>(n.payload.get());
}

// The `value` attribute: numbers, which a JSON file may have written as integers.
const Attr& value_attr(const Node& n) {
  auto it = n.attrs.find("value");
  if (it == n.attrs.end() || !(std::holds_alternative<std::vector<double>>(it->second) ||
                               std::holds_alternative<std::vector<int64_t>>(it->second)))
    throw Error(describe(n) + ": a Constant needs a 'value' (a list of numbers)");
  return it->second;
}

}  // namespace

Node constant_node(std::string name, HostTensor value) {
  Node n;
  n.name = std::move(name);
  n.op = OpType::Constant;
  n.attrs["dtype"] = std::string(dtype_name(value.dtype()));
  n.attrs["shape"] = std::vector<int64_t>(value.shape().begin(), value.shape().end());
  auto data = std::make_shared<ConstantData>();
  data->value = std::move(value);
  n.payload = std::move(data);
  return n;
}

int64_t constant_count(const Node& n) {
  if (const ConstantData* d = data_of(n)) return d->value.numel();
  return std::visit(
      [](const auto& v) -> int64_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<double>> ||
                      std::is_same_v<std::decay_t<decltype(v)>, std::vector<int64_t>>)
          return static_cast<int64_t>(v.size());
        else
          return 0;
      },
      value_attr(n));
}

double constant_at(const Node& n, int64_t i) {
  if (const ConstantData* d = data_of(n)) return load_double(d->value.view(), i);
  return std::visit(
      [i](const auto& v) -> double {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<double>> ||
                      std::is_same_v<std::decay_t<decltype(v)>, std::vector<int64_t>>)
          return static_cast<double>(v.at(static_cast<size_t>(i)));
        else
          return 0;
      },
      value_attr(n));
}

bool is_constant(const Graph& g, ValueId v) {
  const NodeId p = g.value(v).producer;
  return p != kNoNode && g.node(p).op == OpType::Constant;
}

HostTensor constant_value(const Graph& g, const Node& n) {
  const Value& out = g.value(n.outputs[0]);
  if (const ConstantData* d = data_of(n)) {
    if (d->value.dtype() != out.dtype || d->value.shape() != out.shape)
      throw Error(describe(n) + ": its data is " + std::string(dtype_name(d->value.dtype())) +
                  to_string(d->value.shape()) + ", the node says " +
                  std::string(dtype_name(out.dtype)) + to_string(out.shape));
    return d->value;
  }
  HostTensor t(out.dtype, out.shape);
  const bool splat = constant_count(n) == 1;
  for (int64_t i = 0; i < t.numel(); ++i) store_double(t.view(), i, constant_at(n, splat ? 0 : i));
  return t;
}

}  // namespace hf
