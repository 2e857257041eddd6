#include "runtime/ir/epilogue.h"

#include "runtime/ir/error.h"

namespace hf {

std::string HeavyEpilogue::summary() const {
  std::string s(op_type_name(heavy.op));
  for (const EpilogueStep& st : steps)
    s += "+" + std::string(st.op == OpType::PowC ? "PowC" : mode_info(st.mode).name);
  return s;
}

std::vector<ValueType> HeavyEpilogue::output_types(const std::vector<ValueType>& inputs) const {
  auto fail = [&](const std::string& msg) -> void {
    throw Error("fused " + summary() + " '" + heavy.name + "': " + msg);
  };
  std::vector<ValueType> heavy_in;
  for (int i : heavy_inputs) {
    if (i < 0 || static_cast<size_t>(i) >= inputs.size()) fail("a heavy input is missing");
    heavy_in.push_back(inputs[i]);
  }
  std::vector<ValueType> out = infer_outputs(heavy, heavy_in);
  if (out.size() != 1 || out[0].dtype != DType::F32) fail("the heavy op's output is not one f32");
  for (size_t k = 0; k < steps.size(); ++k) {
    const EpilogueStep& st = steps[k];
    const int arity = st.op == OpType::PowC ? 1 : mode_info(st.mode).arity;
    if (static_cast<int>(st.args.size()) != arity)
      fail("step " + std::to_string(k) + " takes " + std::to_string(arity) + " arguments");
    for (const EpilogueArg& a : st.args) {
      if (a.kind == EpilogueArg::Step && (a.index < 0 || static_cast<size_t>(a.index) >= k))
        fail("step " + std::to_string(k) + " reads a later step");
      if (a.kind != EpilogueArg::Input) continue;
      if (a.index < 0 || static_cast<size_t>(a.index) >= inputs.size())
        fail("step " + std::to_string(k) + " reads a missing input");
      const ValueType& t = inputs[a.index];
      auto b = broadcast_shapes(t.shape, out[0].shape);
      if (t.dtype != DType::F32 || !b || *b != out[0].shape)
        fail("input " + std::to_string(a.index) + " (" + std::string(dtype_name(t.dtype)) +
             to_string(t.shape) + ") does not broadcast to the output " + to_string(out[0].shape));
    }
  }
  if (steps.empty()) fail("no elementwise step");
  return out;
}

double HeavyEpilogue::flops(const std::vector<ValueType>&) const {
  return total_flops;
}

}  // namespace hf
