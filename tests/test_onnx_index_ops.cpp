// ONNX ops built on an index along an axis (runtime/io/onnx_lower_index.cpp) and
// InstanceNormalization: ArgMax/ArgMin (first and last index, keepdims), Hardmax (both
// axis conventions), Trilu (upper, lower, k given at run time, batched), the NLL and
// softmax cross-entropy losses (weights, ignore_index, every reduction), each against the
// op's definition computed here in double.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

TEST(OnnxIndexOps, ArgMaxAndArgMinTakeTheFirstOrLastIndex) {
  // [2, 4] with ties: row 0 has its max at 1 and 3, its min at 0 and 2.
  const std::vector<double> x = {0, 5, 0, 5, 7, -1, 3, -2};
  HostTensor in = tensor(DType::F32, {2, 4}, x);
  struct Case {
    const char* op;
    int64_t axis, keep, last;
    std::vector<double> want;
  } cases[] = {{"ArgMax", 1, 1, 0, {1, 0}},       {"ArgMax", 1, 0, 1, {3, 0}},
               {"ArgMin", -1, 1, 0, {0, 3}},      {"ArgMin", 1, 1, 1, {2, 3}},
               {"ArgMax", 0, 1, 0, {1, 0, 1, 0}}, {"ArgMin", 0, 0, 0, {0, 1, 0, 1}}};
  for (const Case& c : cases) {
    Model m(13);
    m.input("x", TP::FLOAT, {2, 4});
    auto& n = m.node(c.op, {"x"}, {"y"});
    set_i(n, "axis", c.axis);
    set_i(n, "keepdims", c.keep);
    set_i(n, "select_last_index", c.last);
    m.output("y");
    Graph g = import(m);
    EXPECT_EQ(g.value(g.outputs()[0]).dtype, DType::I64);
    Shape want_shape = c.axis == 0 ? Shape{1, 4} : Shape{2, 1};
    if (!c.keep) want_shape = c.axis == 0 ? Shape{4} : Shape{2};
    EXPECT_EQ(g.value(g.outputs()[0]).shape, want_shape) << c.op << " axis " << c.axis;
    EXPECT_EQ(run(m, {in})[0], c.want) << c.op << " axis " << c.axis << " last " << c.last;
  }
}

TEST(OnnxIndexOps, GatherElementsPicksAlongTheAxis) {
  // data [3, 4]; indices [2, 3] along axis 1 (negative ones count from the end), their rows
  // and columns a corner of the data's.
  const std::vector<double> data = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
  const std::vector<double> idx = {3, -1, 0, 1, 2, -4};
  Model m(13);
  m.input("d", TP::FLOAT, {3, 4});
  m.input("i", TP::INT64, {2, 3});
  set_i(m.node("GatherElements", {"d", "i"}, {"y"}), "axis", 1);
  m.output("y");
  std::vector<double> want;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      int64_t k = static_cast<int64_t>(idx[r * 3 + c]);
      want.push_back(data[r * 4 + (k < 0 ? k + 4 : k)]);
    }
  EXPECT_EQ(run(m, {tensor(DType::F32, {3, 4}, data), tensor(DType::I64, {2, 3}, idx)})[0], want);
  // Along axis 0: each column picks its own row.
  Model m0(13);
  m0.input("d", TP::FLOAT, {3, 4});
  m0.init_int64s("i", {1, 4}, {2, 0, 1, 2});
  m0.node("GatherElements", {"d", "i"}, {"y"});
  m0.output("y");
  EXPECT_EQ(run(m0, {tensor(DType::F32, {3, 4}, data)})[0], (std::vector<double>{20, 1, 12, 23}));
  // A run-time index out of range is an error, never another row's element.
  EXPECT_THROW(
      run(m, {tensor(DType::F32, {3, 4}, data), tensor(DType::I64, {2, 3}, {0, 0, 4, 0, 0, 0})}),
      Error);
  Model bad(13);
  bad.input("d", TP::FLOAT, {3, 4});
  bad.init_int64s("i", {1, 1}, {3});
  bad.node("GatherElements", {"d", "i"}, {"y"});
  bad.output("y");
  EXPECT_EQ(import_error(bad),
            "m.onnx: node 0 (GatherElements): index 3 is out of range for axis 0 of size 3");
}

TEST(OnnxIndexOps, HardmaxMarksTheFirstMaximum) {
  // [2, 2, 3]: opset 13 over the last axis; opset 11 over the axes from 1 (the 2-D coercion).
  const std::vector<double> x = {1, 3, 3, 0, 2, 1, 4, 4, 0, 9, -1, 2};
  HostTensor in = tensor(DType::F32, {2, 2, 3}, x);
  Model m13(13);
  m13.input("x", TP::FLOAT, {2, 2, 3});
  m13.node("Hardmax", {"x"}, {"y"});
  m13.output("y");
  EXPECT_EQ(run(m13, {in})[0], (std::vector<double>{0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0}));
  Model m11(11);
  m11.input("x", TP::FLOAT, {2, 2, 3});
  m11.node("Hardmax", {"x"}, {"y"});
  m11.output("y");
  EXPECT_EQ(run(m11, {in})[0], (std::vector<double>{0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
}

TEST(OnnxIndexOps, TriluKeepsATriangleOfEveryMatrix) {
  const int B = 2, N = 3, M = 4;
  std::vector<double> x;
  for (int k = 0; k < B * N * M; ++k) x.push_back(k + 1);
  HostTensor in = tensor(DType::F32, {B, N, M}, x);
  for (int upper : {0, 1})
    for (int64_t k : {-1, 0, 2}) {
      Model m(14);
      m.input("x", TP::FLOAT, {B, N, M});
      m.input("k", TP::INT64, {});
      set_i(m.node("Trilu", {"x", "k"}, {"y"}), "upper", upper);
      m.output("y");
      std::vector<double> want;
      for (int b = 0; b < B; ++b)
        for (int i = 0; i < N; ++i)
          for (int j = 0; j < M; ++j) {
            bool keep = upper ? j - i >= k : j - i <= k;
            want.push_back(keep ? x[(b * N + i) * M + j] : 0);
          }
      EXPECT_EQ(run(m, {in, tensor(DType::I64, {}, {double(k)})})[0], want)
          << "upper " << upper << " k " << k;
    }
}

// Scores [N=3, C=4, D=2], targets [3, 2] (one ignored), weights [4].
struct LossCase {
  std::vector<double> scores = {0.5, -1, 2,    0.25, -0.5, 1,    1.5, -2, 0.75, 0,    -1.25, 2.5,
                                1,   1,  -0.5, 0.5,  2,    -1.5, 0,   1,  -1,   0.25, 3,     -0.75};
  std::vector<double> targets = {0, 3, 2, 1, 3, 0};
  std::vector<double> weights = {0.5, 1, 2, 1.5};
  static constexpr int64_t ignore = 1;
  double at(const std::vector<double>& s, int n, int c, int d) const {
    return s[(n * 4 + c) * 2 + d];
  }
};

// The definition: loss[n, d] = -s[n, t, d] * w[t] (0 where t == ignore); mean divides by the
// sum of the weights used.
std::vector<double> expected_nll(const LossCase& lc, const std::vector<double>& s,
                                 const std::string& reduction, bool weighted, bool ignore) {
  std::vector<double> loss;
  double sum = 0, wsum = 0;
  for (int n = 0; n < 3; ++n)
    for (int d = 0; d < 2; ++d) {
      int t = static_cast<int>(lc.targets[n * 2 + d]);
      double w = (weighted ? lc.weights[t] : 1) * (ignore && t == lc.ignore ? 0 : 1);
      double l = -lc.at(s, n, t, d) * w;
      loss.push_back(l);
      sum += l;
      wsum += w;
    }
  if (reduction == "none") return loss;
  return {reduction == "sum" ? sum : sum / wsum};
}

TEST(OnnxIndexOps, NegativeLogLikelihoodLossPicksTheTargetClass) {
  LossCase lc;
  for (const char* reduction : {"none", "sum", "mean"})
    for (bool weighted : {false, true})
      for (bool ignore : {false, true}) {
        SCOPED_TRACE(std::string(reduction) + (weighted ? " weighted" : "") +
                     (ignore ? " ignore_index" : ""));
        Model m(13);
        m.input("s", TP::FLOAT, {3, 4, 2});
        m.input("t", TP::INT64, {3, 2});
        std::vector<std::string> ins = {"s", "t"};
        if (weighted) {
          m.init_floats("w", {4}, {0.5f, 1, 2, 1.5f});
          ins.push_back("w");
        }
        auto& n = m.node("NegativeLogLikelihoodLoss", ins, {"loss"});
        set_s(n, "reduction", reduction);
        if (ignore) set_i(n, "ignore_index", lc.ignore);
        m.output("loss");
        expect_near_all(run(m, {tensor(DType::F32, {3, 4, 2}, lc.scores),
                                tensor(DType::I64, {3, 2}, lc.targets)})[0],
                        expected_nll(lc, lc.scores, reduction, weighted, ignore));
      }
}

TEST(OnnxIndexOps, SoftmaxCrossEntropyIsTheLossOfTheLogSoftmax) {
  LossCase lc;
  std::vector<double> log_prob(lc.scores.size());
  for (int n = 0; n < 3; ++n)
    for (int d = 0; d < 2; ++d) {
      double z = 0;
      for (int c = 0; c < 4; ++c) z += std::exp(lc.at(lc.scores, n, c, d));
      for (int c = 0; c < 4; ++c)
        log_prob[(n * 4 + c) * 2 + d] = lc.at(lc.scores, n, c, d) - std::log(z);
    }
  Model m(13);
  m.input("s", TP::FLOAT, {3, 4, 2});
  m.input("t", TP::INT64, {3, 2});
  m.init_floats("w", {4}, {0.5f, 1, 2, 1.5f});
  auto& n = m.node("SoftmaxCrossEntropyLoss", {"s", "t", "w"}, {"loss", "log_prob"});
  set_i(n, "ignore_index", lc.ignore);
  m.output("loss");
  m.output("log_prob");
  auto got =
      run(m, {tensor(DType::F32, {3, 4, 2}, lc.scores), tensor(DType::I64, {3, 2}, lc.targets)});
  expect_near_all(got[0], expected_nll(lc, log_prob, "mean", true, true));
  expect_near_all(got[1], log_prob);
}

TEST(OnnxIndexOps, InstanceNormalizationPerSampleAndChannel) {
  const std::vector<double> x = {1, 2, 4, 8, -1, 0, 3, 3, 2, 5, -2, 1};  // [2, 2, 3]
  const double scale[] = {0.5, 2}, bias[] = {1, -1};
  Model m(6);  // opset 6: the version every later one kept
  m.input("x", TP::FLOAT, {2, 2, 3});
  m.init_floats("scale", {2}, {0.5f, 2});
  m.init_floats("B", {2}, {1, -1});
  set_f(m.node("InstanceNormalization", {"x", "scale", "B"}, {"y"}), "epsilon", 1e-2f);
  m.output("y");
  std::vector<double> want;
  for (int row = 0; row < 4; ++row) {
    double mean = (x[row * 3] + x[row * 3 + 1] + x[row * 3 + 2]) / 3, var = 0;
    for (int k = 0; k < 3; ++k) var += (x[row * 3 + k] - mean) * (x[row * 3 + k] - mean) / 3;
    for (int k = 0; k < 3; ++k)
      want.push_back((x[row * 3 + k] - mean) / std::sqrt(var + double(1e-2f)) * scale[row % 2] +
                     bias[row % 2]);
  }
  expect_near_all(run(m, {tensor(DType::F32, {2, 2, 3}, x)})[0], want);
}

}  // namespace
}  // namespace hf
