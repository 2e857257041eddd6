// Weights held once: Constants with shared values (runtime/ir/constant.h) are shared by every
// copy of a graph, read in place by the CPU's plans, and packed once into a oneDNN layout
// for every kernel that packs them the same way (runtime/cpu/packed_weights.h).
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/packed_weights.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/constant.h"
#include "tests/support/jit_env.h"

namespace hf {
namespace {

HostTensor ramp(Shape shape) {
  HostTensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = 0.001f * static_cast<float>(i % 97);
  return t;
}

// x [4, 64] @ w [64, 48] (w shared) -> relu.
Graph linear(const HostTensor& w) {
  Graph g;
  g.name = "linear";
  ValueId x = g.add_input("x", DType::F32, {4, 64});
  ValueId wv = g.add_node(constant_node("w", w))[0];
  Node mm;
  mm.name = "mm";
  mm.op = OpType::MatMul;
  mm.inputs = {x, wv};
  ValueId y = g.add_node(mm)[0];
  g.mark_output(y);
  return g;
}

TEST(ConstantData, CopiesOfTheGraphShareTheValues) {
  HostTensor w = ramp({64, 48});
  Graph g = linear(w);
  Graph copy = g;
  const Node& a = g.node(g.value(g.find_value("w:0").value()).producer);
  const Node& b = copy.node(copy.value(copy.find_value("w:0").value()).producer);
  EXPECT_EQ(a.payload.get(), b.payload.get());
  EXPECT_EQ(constant_count(a), 64 * 48);
  EXPECT_FLOAT_EQ(constant_at(a, 100), 0.001f * 3);
  EXPECT_EQ(constant_value(g, a).data(), w.data());  // shared, not copied
}

TEST(ConstantData, TheCpuPlanReadsItInPlace) {
  HostTensor w = ramp({64, 48});
  Graph g = linear(w);
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  EXPECT_LT(exec.plan().buffer_bytes(), w.bytes());  // only the output's buffer
  // The same product with the weights as an attribute list, copied into the plan.
  Graph h = linear(w);
  Graph ref;
  ref.name = "ref";
  ValueId x = ref.add_input("x", DType::F32, {4, 64});
  Node c;
  c.name = "w";
  c.op = OpType::Constant;
  c.attrs["dtype"] = std::string("f32");
  c.attrs["shape"] = std::vector<int64_t>{64, 48};
  std::vector<double> values(w.numel());
  for (int64_t i = 0; i < w.numel(); ++i) values[i] = w.as<float>()[i];
  c.attrs["value"] = values;
  ValueId wv = ref.add_node(c)[0];
  Node mm;
  mm.name = "mm";
  mm.op = OpType::MatMul;
  mm.inputs = {x, wv};
  ref.mark_output(ref.add_node(mm)[0]);
  Executor ref_exec(ref, backend);
  EXPECT_GE(ref_exec.plan().buffer_bytes(), w.bytes());
  std::vector<HostTensor> in = random_inputs(g, 3);
  auto got = exec.run(views(in));
  auto want = ref_exec.run(views(in));
  ASSERT_EQ(got[0].numel(), want[0].numel());
  EXPECT_EQ(std::memcmp(got[0].data, want[0].data, got[0].numel() * sizeof(float)), 0);
}

TEST(PackedWeights, OnePackPerConstantAndLayoutWhileHeld) {
  auto owner = std::make_shared<int>(1);
  int packs = 0;
  auto fill = [&](float* to) {
    ++packs;
    to[0] = 42;
  };
  auto a = cpu::shared_packed_weights(owner, "layout A", 8, fill);
  auto b = cpu::shared_packed_weights(owner, "layout A", 8, fill);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(packs, 1);
  EXPECT_EQ((*a)[0], 42);
  auto c = cpu::shared_packed_weights(owner, "layout B", 8, fill);
  EXPECT_NE(c.get(), a.get());
  EXPECT_EQ(packs, 2);
  auto other = std::make_shared<int>(2);
  auto d = cpu::shared_packed_weights(other, "layout A", 8, fill);
  EXPECT_NE(d.get(), a.get());
  EXPECT_EQ(packs, 3);
  a.reset();
  b.reset();  // nobody holds it: the next one packs again
  auto e = cpu::shared_packed_weights(owner, "layout A", 8, fill);
  EXPECT_EQ(packs, 4);
}

TEST(PackedWeights, TwoPlansOfOneGraphShareTheConvWeightsAndAgree) {
  Graph g;
  g.name = "conv";
  ValueId x = g.add_input("x", DType::F32, {1, 8, 12, 12});
  ValueId w = g.add_node(constant_node("w", ramp({16, 8, 3, 3})))[0];
  Node conv;
  conv.name = "conv";
  conv.op = OpType::Conv;
  conv.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  conv.inputs = {x, w};
  g.mark_output(g.add_node(conv)[0]);
  cpu::CpuBackend backend;
  std::vector<HostTensor> in = random_inputs(g, 5);
  Executor one(g, backend), two(g, backend);
  auto a = one.run(views(in));
  std::vector<float> first(a[0].as<float>(), a[0].as<float>() + a[0].numel());
  auto b = two.run(views(in));
  EXPECT_EQ(std::memcmp(first.data(), b[0].data, first.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace hf
