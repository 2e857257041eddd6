// Shrink, MeanVarianceNormalization, LpNormalization and SwiGLU (runtime/io/onnx_lower.cpp
// and onnx_lower_norm.cpp), each against its ONNX definition computed here in double, with
// odd sizes and every attribute.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> values(int n) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) v.push_back(((k * 37) % 23) * 0.25 - 2.5);
  return v;
}

TEST(OnnxSmallOps, ShrinkEveryAttributeAndIntegers) {
  const std::vector<double> x = {-3, -1.5, -0.5, -0.25, 0, 0.5, 0.75, 2, 7};
  for (double lambd : {0.5, 1.5})
    for (double bias : {0.0, 0.25}) {
      Model m(9);
      m.input("x", TP::FLOAT, {9});
      auto& n = m.node("Shrink", {"x"}, {"y"});
      set_f(n, "lambd", static_cast<float>(lambd));
      set_f(n, "bias", static_cast<float>(bias));
      m.output("y");
      std::vector<double> want;
      for (double v : x) want.push_back(v < -lambd ? v + bias : v > lambd ? v - bias : 0);
      EXPECT_EQ(run(m, {tensor(DType::F32, {9}, x)})[0], want) << lambd << " " << bias;
    }
  Model d(9);  // defaults: lambd 0.5, bias 0; an INT32 input
  d.input("x", TP::INT32, {5});
  auto& n = d.node("Shrink", {"x"}, {"y"});
  set_f(n, "bias", 1.5f);
  d.output("y");
  // 3 - 1.5 = 1.5 and -3 + 1.5 = -1.5 truncate to 1 and -1, as the reference's astype.
  EXPECT_EQ(run(d, {tensor(DType::I32, {5}, {-3, -1, 0, 1, 3})})[0],
            (std::vector<double>{-1, 0, 0, 0, 1}));
}

TEST(OnnxSmallOps, MeanVarianceNormalizationOverTheAxes) {
  const std::vector<int64_t> s = {2, 3, 1, 5};
  const std::vector<double> x = values(30);
  for (bool dflt : {true, false}) {
    Model m(13);
    m.input("x", TP::FLOAT, s);
    auto& n = m.node("MeanVarianceNormalization", {"x"}, {"y"});
    std::vector<int64_t> axes = {0, 2, 3};
    if (!dflt) {
      axes = {1, -1};
      set_ints(n, "axes", axes);
    }
    m.output("y");
    // Group each element by its coordinates outside the axes.
    auto key = [&](int64_t k) {
      int64_t idx[4] = {k / 15, (k / 5) % 3, 0, k % 5};
      int64_t g = 0;
      for (int d = 0; d < 4; ++d) {
        bool reduced = false;
        for (int64_t a : axes) reduced |= (a < 0 ? a + 4 : a) == d;
        if (!reduced) g = g * s[d] + idx[d];
      }
      return g;
    };
    std::vector<double> sum(30, 0), sq(30, 0), cnt(30, 0), want;
    for (int64_t k = 0; k < 30; ++k) {
      sum[key(k)] += x[k];
      sq[key(k)] += x[k] * x[k];
      cnt[key(k)] += 1;
    }
    for (int64_t k = 0; k < 30; ++k) {
      double mean = sum[key(k)] / cnt[key(k)];
      double sd = std::sqrt(sq[key(k)] / cnt[key(k)] - mean * mean);
      want.push_back((x[k] - mean) / (sd + 1e-9));
    }
    expect_near_all(run(m, {tensor(DType::F32, s, x)})[0], want, 1e-4);
  }
}

TEST(OnnxSmallOps, LpNormalizationL1AndL2) {
  const std::vector<double> x = {3, -4, 0, 1, 2, -2, 0, 0, 0, 5, 1, -1, 0.5, 7, 2};  // [3, 5]
  for (int64_t p : {1, 2})
    for (int64_t axis : {0, 1, -1}) {
      Model m(22);
      m.input("x", TP::FLOAT, {3, 5});
      auto& n = m.node("LpNormalization", {"x"}, {"y"});
      set_i(n, "p", p);
      set_i(n, "axis", axis);
      m.output("y");
      std::vector<double> want(15);
      const int a = axis < 0 ? 1 : static_cast<int>(axis);
      for (int64_t k = 0; k < 15; ++k) {
        int64_t r = k / 5, c = k % 5;
        double norm = 0;
        for (int64_t j = 0; j < (a == 0 ? 3 : 5); ++j) {
          double v = a == 0 ? x[j * 5 + c] : x[r * 5 + j];
          norm += p == 1 ? std::abs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        want[k] = norm == 0 ? 0 : x[k] / norm;
      }
      expect_near_all(run(m, {tensor(DType::F32, {3, 5}, x)})[0], want);
    }
  Model bad(22);
  bad.input("x", TP::FLOAT, {3});
  set_i(bad.node("LpNormalization", {"x"}, {"y"}), "p", 3);
  bad.output("y");
  EXPECT_EQ(import_error(bad), "m.onnx: node 0 (LpNormalization): p must be 1 or 2, got 3");
}

TEST(OnnxSmallOps, SwiGLUWithAlpha) {
  const std::vector<double> a = values(7), b = values(9);
  for (double alpha : {1.0, 1.702}) {
    Model m(28);
    m.input("a", TP::FLOAT, {7});
    m.input("b", TP::FLOAT, {7});
    auto& n = m.node("SwiGLU", {"a", "b"}, {"y"});
    if (alpha != 1.0) set_f(n, "alpha", static_cast<float>(alpha));
    m.output("y");
    std::vector<double> want;
    for (int k = 0; k < 7; ++k)
      want.push_back(a[k] / (1 + std::exp(-static_cast<float>(alpha) * a[k])) * b[k + 2]);
    std::vector<double> bb(b.begin() + 2, b.end());
    expect_near_all(run(m, {tensor(DType::F32, {7}, a), tensor(DType::F32, {7}, bb)})[0], want);
  }
}

}  // namespace
}  // namespace hf
