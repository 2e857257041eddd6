// ONNX Pow with an INT32/INT64 base (runtime/io/onnx_lower.cpp, int_pow): a constant
// non-negative integer exponent as square-and-multiply in the base's type (exact, wrapping
// like numpy's integer power), any other exponent (run-time, float, negative) as the power
// in double truncated to the base's type, as ONNX's reference computes it; and a float
// base with integer exponents. Expected values are computed here with plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

// numpy's integer power: repeated multiplication, wrapping modulo 2^64 (then the width).
int64_t ipow(int64_t x, int64_t e, bool i32) {
  uint64_t r = 1;
  for (int64_t k = 0; k < e; ++k) r *= static_cast<uint64_t>(x);
  return i32 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(r)))
             : static_cast<int64_t>(r);
}

TEST(OnnxIntPow, ConstantExponentsAreExactIntegerPowers) {
  const std::vector<double> x = {-3, -2, -1, 0, 1, 2, 3, 7, 11};
  for (int elem : {TP::INT32, TP::INT64})
    for (int64_t e : {0, 1, 2, 3, 5, 13, 31, 40}) {
      const bool i32 = elem == TP::INT32;
      Model m(15);
      m.input("x", elem, {9});
      m.init_int64s("e", {}, {e});
      m.node("Pow", {"x", "e"}, {"y"});
      m.output("y");
      Graph g = import(m);
      EXPECT_EQ(g.value(g.outputs()[0]).dtype, i32 ? DType::I32 : DType::I64);
      auto got = run(m, {tensor(i32 ? DType::I32 : DType::I64, {9}, x)})[0];
      for (size_t k = 0; k < x.size(); ++k)
        // run() gives doubles: the exact check past 2^53 is below.
        EXPECT_EQ(got[k], static_cast<double>(ipow(static_cast<int64_t>(x[k]), e, i32)))
            << (i32 ? "int32 " : "int64 ") << x[k] << " ^ " << e;
    }
  // An exact result past 2^53 (where a double power would round).
  Model big(15);
  big.input("x", TP::INT64, {2});
  big.init_int64s("e", {1, 1}, {3});  // a higher-rank exponent broadcasts the result
  big.node("Pow", {"x", "e"}, {"y"});
  big.output("y");
  Graph g = import(big);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{1, 2}));
  HostTensor in(DType::I64, {2});
  in.view().as<int64_t>()[0] = 2097151;  // (2^21 - 1)^3 = 2^63 - ... > 2^53
  in.view().as<int64_t>()[1] = -999999;
  Graph gi = import(big);
  cpu::CpuBackend backend;
  Executor exec(gi, backend);
  std::vector<TensorView> views = {in.view()};
  auto out = exec.run(views);
  EXPECT_EQ(out[0].template as<const int64_t>()[0], int64_t{2097151} * 2097151 * 2097151);
  EXPECT_EQ(out[0].template as<const int64_t>()[1], int64_t{-999999} * -999999 * -999999);
}

TEST(OnnxIntPow, RunTimeAndFloatExponentsTruncateTheDoublePower) {
  const std::vector<double> x = {-3, -2, 0, 1, 2, 5, 9};
  const std::vector<double> ei = {3, 2, 0, 7, 10, 4, -1};
  const std::vector<double> ef = {2, 3, 1.5, 0.5, 0.5, 2.5, 0.5};
  for (int elem : {TP::INT32, TP::INT64})
    for (int eelem : {TP::INT32, TP::INT64, TP::FLOAT, TP::DOUBLE, TP::UINT8}) {
      const bool fl = eelem == TP::FLOAT || eelem == TP::DOUBLE;
      std::vector<double> e = fl ? ef : ei;
      if (eelem == TP::UINT8) e.back() = 2;  // no negative exponent in an unsigned type
      Model m(15);
      m.input("x", elem, {7});
      m.input("e", eelem, {7});
      m.node("Pow", {"x", "e"}, {"y"});
      m.output("y");
      DType et = eelem == TP::INT32   ? DType::I32
                 : eelem == TP::INT64 ? DType::I64
                 : eelem == TP::FLOAT ? DType::F32
                 : eelem == TP::UINT8 ? DType::U8
                                      : DType::F64;
      auto got = run(
          m, {tensor(elem == TP::INT32 ? DType::I32 : DType::I64, {7}, x), tensor(et, {7}, e)})[0];
      for (size_t k = 0; k < x.size(); ++k)
        EXPECT_EQ(got[k], std::trunc(std::pow(x[k], e[k])))
            << x[k] << " ^ " << e[k] << " exponent type " << eelem;
    }
  // A float base with integer exponents stays a float power.
  Model f(15);
  f.input("x", TP::FLOAT, {4});
  f.input("e", TP::INT64, {4});
  f.node("Pow", {"x", "e"}, {"y"});
  f.output("y");
  auto got = run(
      f, {tensor(DType::F32, {4}, {1.5, -2, 3, 0.5}), tensor(DType::I64, {4}, {2, 3, 0, -2})})[0];
  EXPECT_EQ(got, (std::vector<double>{2.25, -8, 1, 4}));
  // The spec's bases are float, INT32 and INT64.
  Model u(15);
  u.input("x", TP::UINT8, {2});
  u.input("e", TP::INT64, {2});
  u.node("Pow", {"x", "e"}, {"y"});
  u.output("y");
  EXPECT_EQ(import_error(u),
            "m.onnx: node 0 (Pow): the base must be a float type, INT32 or INT64, not u8");
}

}  // namespace
}  // namespace hf
