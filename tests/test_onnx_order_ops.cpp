// ONNX CumSum, CumProd, TopK and ReverseSequence (runtime/io/onnx_lower_order.cpp): single-
// node models run unfused on the CPU and compared with plain loops written here (a running
// sum or product, a stable sort, a per-sample reversal), over odd sizes, every axis and every
// attribute, floats and integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

// Shape [P, n, Q] around the axis; strides of a row-major tensor.
struct Around {
  int64_t P = 1, n = 1, Q = 1;
};
Around around(const std::vector<int64_t>& s, int axis) {
  Around a;
  for (int k = 0; k < static_cast<int>(s.size()); ++k) {
    if (k < axis) a.P *= s[k];
    if (k == axis) a.n = s[k];
    if (k > axis) a.Q *= s[k];
  }
  return a;
}

std::vector<double> cumulative(const std::vector<double>& x, const std::vector<int64_t>& s,
                               int axis, bool exclusive, bool reverse, bool product) {
  Around a = around(s, axis);
  std::vector<double> y(x.size());
  for (int64_t p = 0; p < a.P; ++p)
    for (int64_t q = 0; q < a.Q; ++q) {
      double acc = product ? 1 : 0;
      for (int64_t step = 0; step < a.n; ++step) {
        int64_t i = reverse ? a.n - 1 - step : step;
        double xi = x[(p * a.n + i) * a.Q + q];
        if (!exclusive) acc = product ? acc * xi : acc + xi;
        y[(p * a.n + i) * a.Q + q] = acc;
        if (exclusive) acc = product ? acc * xi : acc + xi;
      }
    }
  return y;
}

Model cum_model(const char* op, int elem, const std::vector<int64_t>& s, int64_t axis,
                bool exclusive, bool reverse) {
  Model m(op == std::string("CumProd") ? 26 : 14);
  m.input("x", elem, s);
  m.init_int64s("axis", {}, {axis});
  auto& n = m.node(op, {"x", "axis"}, {"y"}, "cum");
  if (exclusive) set_i(n, "exclusive", 1);
  if (reverse) set_i(n, "reverse", 1);
  m.output("y");
  return m;
}

TEST(OnnxOrderOps, CumSumAndCumProdEveryAxisAndAttribute) {
  const std::vector<int64_t> s = {3, 5, 2};
  std::vector<double> xf, xi;
  for (int k = 0; k < 30; ++k) {
    xf.push_back(float(std::sin(0.9 * k + 0.3) * 1.4));
    xi.push_back(static_cast<double>((k * 7) % 11) - 5);
  }
  for (const char* op : {"CumSum", "CumProd"})
    for (int64_t axis : {0, 1, 2, -1, -3})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis) + " exclusive " +
                       std::to_string(exclusive) + " reverse " + std::to_string(reverse));
          const bool product = op == std::string("CumProd");
          int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
          auto want = cumulative(xf, s, a, exclusive, reverse, product);
          auto got = run(cum_model(op, TP::FLOAT, s, axis, exclusive, reverse),
                         {tensor(DType::F32, {3, 5, 2}, xf)});
          ASSERT_EQ(got[0].size(), want.size());
          for (size_t k = 0; k < want.size(); ++k)
            EXPECT_NEAR(got[0][k], want[k], 1e-5 * (1 + std::abs(want[k]))) << k;
          auto wi = cumulative(xi, s, a, exclusive, reverse, product);
          auto gi = run(cum_model(op, TP::INT32, s, axis, exclusive, reverse),
                        {tensor(DType::I32, {3, 5, 2}, xi)});
          EXPECT_EQ(gi[0], wi);  // integers exactly
        }
}

// Axes longer than 64 are scanned in blocks of about sqrt(n) (with padding where n is not a
// multiple): 101 = 11 blocks of 10 (9 padded), 144 = 12 x 12, 65 = 8 blocks of 9.
TEST(OnnxOrderOps, CumSumAndCumProdLongAxesInBlocks) {
  for (int64_t n : {65, 101, 144})
    for (const char* op : {"CumSum", "CumProd"})
      for (bool exclusive : {false, true})
        for (bool reverse : {false, true}) {
          SCOPED_TRACE(std::string(op) + " n " + std::to_string(n) + " exclusive " +
                       std::to_string(exclusive) + " reverse " + std::to_string(reverse));
          const bool product = op == std::string("CumProd");
          const std::vector<int64_t> s = {2, n, 3};
          std::vector<double> xf, xi;
          for (int64_t k = 0; k < 6 * n; ++k) {
            // products stay near 1 in floats; small integers (wrapping is the same either way)
            xf.push_back(float(product ? 1 + 0.05 * std::sin(0.37 * k) : std::sin(0.37 * k)));
            xi.push_back(static_cast<double>((k * 5) % 7) - 3);
          }
          auto want = cumulative(xf, s, 1, exclusive, reverse, product);
          auto got = run(cum_model(op, TP::FLOAT, s, 1, exclusive, reverse),
                         {tensor(DType::F32, {2, n, 3}, xf)});
          ASSERT_EQ(got[0].size(), want.size());
          for (size_t k = 0; k < want.size(); ++k)
            EXPECT_NEAR(got[0][k], want[k], 1e-5 * (1 + std::abs(want[k]))) << k;
          if (product) continue;  // an int32 product of 100 factors wraps: sums only
          auto gi = run(cum_model(op, TP::INT64, s, 1, exclusive, reverse),
                        {tensor(DType::I64, {2, n, 3}, xi)});
          EXPECT_EQ(gi[0], cumulative(xi, s, 1, exclusive, reverse, false));
        }
}

TEST(OnnxOrderOps, CumSumInt64OneDimensional) {
  std::vector<double> x = {4, -9, 1000000007, 3, 0, -2, 11};
  auto got =
      run(cum_model("CumSum", TP::INT64, {7}, 0, false, false), {tensor(DType::I64, {7}, x)});
  EXPECT_EQ(got[0], cumulative(x, {7}, 0, false, false, false));
}

TEST(OnnxOrderOps, CumSumErrors) {
  {
    Model m = cum_model("CumSum", TP::FLOAT, {3, 4}, 2, false, false);
    std::string e = import_error(m);
    EXPECT_NE(e.find("'cum'"), std::string::npos) << e;
    EXPECT_NE(e.find("axis"), std::string::npos) << e;
  }
  {
    Model m(14);
    m.input("x", TP::FLOAT, {3});
    m.input("axis", TP::INT64, {});
    m.node("CumSum", {"x", "axis"}, {"y"}, "cum");
    m.output("y");
    std::string e = import_error(m);
    EXPECT_NE(e.find("must be a constant"), std::string::npos) << e;
  }
  {
    Model m = cum_model("CumSum", TP::FLOAT, {4096, 8192}, 1, false, false);
    std::string e = import_error(m);
    EXPECT_NE(e.find("more than hotfuse's lowering allows"), std::string::npos) << e;
  }
}

// A stable sort: larger first (or smaller), ties by the lower index.
void topk_ref(const std::vector<double>& x, const std::vector<int64_t>& s, int axis, int64_t k,
              bool largest, std::vector<double>& vals, std::vector<double>& idx) {
  Around a = around(s, axis);
  vals.assign(a.P * k * a.Q, 0);
  idx.assign(a.P * k * a.Q, 0);
  for (int64_t p = 0; p < a.P; ++p)
    for (int64_t q = 0; q < a.Q; ++q) {
      std::vector<int64_t> order(a.n);
      std::iota(order.begin(), order.end(), 0);
      auto at = [&](int64_t i) { return x[(p * a.n + i) * a.Q + q]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
        return largest ? at(l) > at(r) : at(l) < at(r);
      });
      for (int64_t j = 0; j < k; ++j) {
        vals[(p * k + j) * a.Q + q] = at(order[j]);
        idx[(p * k + j) * a.Q + q] = static_cast<double>(order[j]);
      }
    }
}

TEST(OnnxOrderOps, TopKEveryOpsetAxisAndDirectionWithTies) {
  const std::vector<int64_t> s = {3, 7, 2};
  std::vector<double> x;
  for (int k = 0; k < 42; ++k) x.push_back(static_cast<double>((k * 5) % 9) * 0.5 - 1);  // ties
  for (int opset : {1, 10, 11})
    for (int64_t axis : {0, 1, 2, -1})
      for (bool largest : {true, false}) {
        if (opset < 11 && !largest) continue;
        int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
        for (int64_t k : {int64_t(1), s[a] - 1, s[a]}) {
          SCOPED_TRACE("opset " + std::to_string(opset) + " axis " + std::to_string(axis) + " k " +
                       std::to_string(k) + " largest " + std::to_string(largest));
          Model m(opset);
          m.input("x", TP::FLOAT, s);
          std::vector<std::string> ins = {"x"};
          if (opset >= 10) {
            m.init_int64s("k", {1}, {k});
            ins.push_back("k");
          }
          auto& n = m.node("TopK", ins, {"v", "i"});
          if (opset < 10) set_i(n, "k", k);
          if (axis != -1) set_i(n, "axis", axis);
          if (opset >= 11 && !largest) set_i(n, "largest", 0);
          m.output("v");
          m.output("i");
          std::vector<double> wv, wi;
          topk_ref(x, s, a, k, largest, wv, wi);
          auto got = run(m, {tensor(DType::F32, {3, 7, 2}, x)});
          EXPECT_EQ(got[0], wv);
          EXPECT_EQ(got[1], wi);
        }
      }
}

TEST(OnnxOrderOps, TopKIntegersAndErrors) {
  std::vector<double> x = {5, 1, 9, 9, 2, 0, 7, 3, 3, 8, 1};
  Model m(11);
  m.input("x", TP::INT64, {11});
  m.init_int64s("k", {1}, {4});
  set_i(m.node("TopK", {"x", "k"}, {"v", "i"}), "largest", 0);
  m.output("v");
  m.output("i");
  auto got = run(m, {tensor(DType::I64, {11}, x)});
  EXPECT_EQ(got[0], (std::vector<double>{0, 1, 1, 2}));
  EXPECT_EQ(got[1], (std::vector<double>{5, 1, 10, 4}));

  Model bad(11);
  bad.input("x", TP::FLOAT, {4});
  bad.init_int64s("k", {1}, {5});
  bad.node("TopK", {"x", "k"}, {"v", "i"}, "top");
  bad.output("v");
  std::string e = import_error(bad);
  EXPECT_NE(e.find("'top'"), std::string::npos) << e;
  EXPECT_NE(e.find("K = 5 is outside [0, 4]"), std::string::npos) << e;
}

TEST(OnnxOrderOps, ReverseSequenceBothAxisOrders) {
  const int64_t T = 4, B = 3, C = 2;
  std::vector<double> lens = {4, 1, 3};
  for (int64_t time_axis : {0, 1}) {
    SCOPED_TRACE(time_axis);
    std::vector<int64_t> s =
        time_axis == 0 ? std::vector<int64_t>{T, B, C} : std::vector<int64_t>{B, T, C};
    std::vector<double> x(T * B * C);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<double>(k) * 1.5 - 3;
    auto at = [&](int64_t t, int64_t b, int64_t c) {
      return time_axis == 0 ? (t * B + b) * C + c : (b * T + t) * C + c;
    };
    std::vector<double> want(x.size());
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) {
          int64_t l = static_cast<int64_t>(lens[b]);
          want[at(t, b, c)] = x[at(t < l ? l - 1 - t : t, b, c)];
        }
    for (bool const_lens : {false, true}) {
      Model m(10);
      m.input("x", TP::FLOAT, s);
      std::vector<HostTensor> in = {tensor(DType::F32, Shape(s.begin(), s.end()), x)};
      if (const_lens) {
        m.init_int64s("lens", {B}, {4, 1, 3});
      } else {
        m.input("lens", TP::INT64, {B});
        in.push_back(tensor(DType::I64, {B}, lens));
      }
      auto& n = m.node("ReverseSequence", {"x", "lens"}, {"y"});
      set_i(n, "time_axis", time_axis);
      set_i(n, "batch_axis", 1 - time_axis);
      m.output("y");
      EXPECT_EQ(run(m, in)[0], want);
    }
  }
}

TEST(OnnxOrderOps, ReverseSequenceErrors) {
  Model m(10);
  m.input("x", TP::FLOAT, {4, 2});
  m.init_int64s("lens", {2}, {5, 1});
  m.node("ReverseSequence", {"x", "lens"}, {"y"}, "rev");
  m.output("y");
  std::string e = import_error(m);
  EXPECT_NE(e.find("'rev'"), std::string::npos) << e;
  EXPECT_NE(e.find("sequence_lens holds 5, outside [0, 4]"), std::string::npos) << e;
}

}  // namespace
}  // namespace hf
