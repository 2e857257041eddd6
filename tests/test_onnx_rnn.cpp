// ONNX RNN, GRU and LSTM (runtime/io/onnx_lower_rnn.cpp): single-node models run unfused on
// the CPU and compared with the spec's equations written out here per sample and step in
// double with plain loops (sequence_lens handled per sample, as the spec describes it, not by
// the importer's masking). The node tests of ONNX cover the defaults through hotfuse-run
// (tests/onnx_conformance.cmake); these cover every attribute.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> values(int64_t n, int seed, double scale = 0.6) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k)
    v.push_back(float(std::sin(0.77 * double(k) + 1.9 * seed) * scale));
  return v;
}

void set_strings(pb::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::STRINGS);
  for (const auto& s : v) a->add_strings(s);
}
void set_floats(pb::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

double apply(const Act& a, double x) {
  const std::string& f = a.name;
  if (f == "Relu") return x > 0 ? x : 0;
  if (f == "Tanh") return std::tanh(x);
  if (f == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (f == "Affine") return a.alpha * x + a.beta;
  if (f == "LeakyRelu") return x < 0 ? a.alpha * x : x;
  if (f == "ThresholdedRelu") return x > a.alpha ? x : 0;
  if (f == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (f == "HardSigmoid") return std::min(1.0, std::max(0.0, a.alpha * x + a.beta));
  if (f == "Elu") return x < 0 ? a.alpha * (std::exp(x) - 1) : x;
  if (f == "Softsign") return x / (1 + std::abs(x));
  if (f == "Softplus") return std::log(1 + std::exp(x));
  ADD_FAILURE() << "no activation " << f;
  return 0;
}

// One recurrent layer in time-major layout. The inputs are the ONNX tensors as flat vectors.
struct Case {
  std::string op = "RNN";  // RNN GRU LSTM
  int64_t S = 3, B = 2, I = 3, H = 5;
  std::string direction = "forward";
  std::vector<Act> acts;  // empty: the defaults
  std::optional<double> clip;
  bool lbr = false, input_forget = false;
  bool bias = false, h0 = false, c0 = false, peep = false;
  std::optional<std::vector<int64_t>> lens;

  int64_t G() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  std::vector<Act> activations() const {
    std::vector<Act> d = op == "LSTM"  ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}, {"Tanh"}}
                         : op == "GRU" ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}}
                                       : std::vector<Act>{{"Tanh"}};
    std::vector<Act> a = acts.empty() ? d : acts;
    if (dirs() == 2 && a.size() == d.size()) {
      const std::vector<Act> once = a;
      a.insert(a.end(), once.begin(), once.end());
    }
    return a;
  }
  std::vector<double> x = {}, w, r, b, h_init, c_init, p;
  void fill() {
    x = values(S * B * I, 1);
    w = values(dirs() * G() * H * I, 2);
    r = values(dirs() * G() * H * H, 3);
    b = values(dirs() * 2 * G() * H, 4, 0.3);
    h_init = values(dirs() * B * H, 5);
    c_init = values(dirs() * B * H, 6);
    p = values(dirs() * 3 * H, 7);
  }
};

struct Result {
  std::vector<double> y, yh, yc;  // [S, dirs, B, H], [dirs, B, H], [dirs, B, H]
};

Result reference(const Case& c) {
  const int64_t S = c.S, B = c.B, I = c.I, H = c.H, G = c.G(), D = c.dirs();
  const std::vector<Act> acts = c.activations();
  const size_t per = acts.size() / D;
  Result res;
  res.y.assign(S * D * B * H, 0);
  res.yh.assign(D * B * H, 0);
  res.yc.assign(D * B * H, 0);
  // clip bounds the gates' inputs, not the cell state h() takes (onnxruntime's reading)
  auto act = [&](int64_t d, size_t k, double v) {
    if (c.clip && !(c.op == "LSTM" && k == 2)) v = std::min(*c.clip, std::max(-*c.clip, v));
    return apply(acts[d * per + k], v);
  };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t bi = 0; bi < B; ++bi) {
      const int64_t len = c.lens ? (*c.lens)[bi] : S;
      std::vector<double> h(H, 0), cs(H, 0);
      for (int64_t j = 0; j < H; ++j) {
        if (c.h0) h[j] = c.h_init[(d * B + bi) * H + j];
        if (c.c0) cs[j] = c.c_init[(d * B + bi) * H + j];
      }
      const bool rev = c.direction == "reverse" || d == 1;
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = rev ? len - 1 - step : step;
        // xw[g][j] = x_t W_g^T + Wb_g ; hr[g][j] = h R_g^T + Rb_g
        auto wx = [&](int64_t g, int64_t j) {
          double acc = c.bias ? c.b[d * 2 * G * H + g * H + j] : 0;
          for (int64_t k = 0; k < I; ++k)
            acc += c.x[(t * B + bi) * I + k] * c.w[((d * G + g) * H + j) * I + k];
          return acc;
        };
        auto rb = [&](int64_t g, int64_t j) {
          return c.bias ? c.b[d * 2 * G * H + G * H + g * H + j] : 0.0;
        };
        auto rh = [&](int64_t g, int64_t j, const std::vector<double>& hv) {
          double acc = 0;
          for (int64_t k = 0; k < H; ++k) acc += hv[k] * c.r[((d * G + g) * H + j) * H + k];
          return acc;
        };
        std::vector<double> hn(H), cn(H);
        if (c.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) hn[j] = act(d, 0, wx(0, j) + rh(0, j, h) + rb(0, j));
        } else if (c.op == "GRU") {
          std::vector<double> z(H), rr(H), rhv(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = act(d, 0, wx(0, j) + rh(0, j, h) + rb(0, j));
            rr[j] = act(d, 0, wx(1, j) + rh(1, j, h) + rb(1, j));
            rhv[j] = rr[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre = c.lbr ? wx(2, j) + rr[j] * (rh(2, j, h) + rb(2, j))
                               : wx(2, j) + rh(2, j, rhv) + rb(2, j);
            double hh = act(d, 1, pre);
            hn[j] = (1 - z[j]) * hh + z[j] * h[j];
          }
        } else {  // gates i o f c; P = [Pi Po Pf]
          auto P = [&](int64_t k, int64_t j) { return c.peep ? c.p[d * 3 * H + k * H + j] : 0.0; };
          for (int64_t j = 0; j < H; ++j) {
            double i = act(d, 0, wx(0, j) + rh(0, j, h) + rb(0, j) + P(0, j) * cs[j]);
            double f = c.input_forget
                           ? 1 - i
                           : act(d, 0, wx(2, j) + rh(2, j, h) + rb(2, j) + P(2, j) * cs[j]);
            double g = act(d, 1, wx(3, j) + rh(3, j, h) + rb(3, j));
            cn[j] = f * cs[j] + i * g;
            double o = act(d, 0, wx(1, j) + rh(1, j, h) + rb(1, j) + P(1, j) * cn[j]);
            hn[j] = o * act(d, 2, cn[j]);
          }
        }
        h = hn;
        cs = cn;
        for (int64_t j = 0; j < H; ++j) res.y[((t * D + d) * B + bi) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        res.yh[(d * B + bi) * H + j] = h[j];
        res.yc[(d * B + bi) * H + j] = cs[j];
      }
    }
  return res;
}

// (outer, a, b, inner) -> (outer, b, a, inner): the layout-1 permutations.
std::vector<double> swap_axes(const std::vector<double>& v, int64_t outer, int64_t a, int64_t b,
                              int64_t inner) {
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j)
        for (int64_t k = 0; k < inner; ++k)
          out[((o * b + j) * a + i) * inner + k] = v[((o * a + i) * b + j) * inner + k];
  return out;
}

// Y (S, D, B, H) -> layout 1's (B, S, D, H).
std::vector<double> y_batch_major(const std::vector<double>& y, int64_t S, int64_t D, int64_t B,
                                  int64_t H) {
  std::vector<double> out(y.size());
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          out[((b * S + s) * D + d) * H + h] = y[((s * D + d) * B + b) * H + h];
  return out;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                     const std::string& what, double tol = 2e-5) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], tol * (1 + std::abs(want[k]))) << what << " element " << k;
}

// Builds the model (layout 0 or 1, lens as a graph input or an initializer), runs it and
// compares Y, Y_h (and LSTM's Y_c) with the reference.
// const_weights: W, R, B and P as initializers (the importer slices and transposes them at
// import), else graph inputs (Slice and Dimshuffle nodes at run time).
void check(Case c, int opset = 22, int64_t layout = 0, bool const_lens = false,
           bool const_weights = false) {
  c.fill();
  const int64_t S = c.S, B = c.B, I = c.I, H = c.H, G = c.G(), D = c.dirs();
  Model m(opset);
  std::vector<HostTensor> in;
  std::vector<double> x = layout ? swap_axes(c.x, 1, S, B, I) : c.x;
  m.input("X", TP::FLOAT, layout ? std::vector<int64_t>{B, S, I} : std::vector<int64_t>{S, B, I});
  in.push_back(tensor(DType::F32, layout ? Shape{B, S, I} : Shape{S, B, I}, x));
  auto weight = [&](const char* name, const std::vector<int64_t>& dims,
                    const std::vector<double>& v) {
    if (const_weights) {
      m.init_floats(name, dims, std::vector<float>(v.begin(), v.end()));
      return;
    }
    m.input(name, TP::FLOAT, dims);
    in.push_back(tensor(DType::F32, Shape(dims.begin(), dims.end()), v));
  };
  weight("W", {D, G * H, I}, c.w);
  weight("R", {D, G * H, H}, c.r);
  std::vector<std::string> names = {"X", "W", "R", "", "", "", "", ""};
  if (c.bias) {
    names[3] = "B";
    weight("B", {D, 2 * G * H}, c.b);
  }
  if (c.lens) {
    names[4] = "lens";
    if (const_lens) {
      auto& t = m.init("lens");
      t.set_data_type(TP::INT32);
      t.add_dims(B);
      for (int64_t l : *c.lens) t.add_int32_data(static_cast<int32_t>(l));
    } else {
      m.input("lens", TP::INT32, {B});
      std::vector<double> l(c.lens->begin(), c.lens->end());
      in.push_back(tensor(DType::I32, {B}, l));
    }
  }
  auto state = [&](const char* name, const std::vector<double>& v, int k) {
    names[k] = name;
    Shape s = layout ? Shape{B, D, H} : Shape{D, B, H};
    m.input(name, TP::FLOAT, std::vector<int64_t>(s.begin(), s.end()));
    in.push_back(tensor(DType::F32, s, layout ? swap_axes(v, 1, D, B, H) : v));
  };
  if (c.h0) state("h0", c.h_init, 5);
  if (c.c0) state("c0", c.c_init, 6);
  if (c.peep) {
    names[7] = "P";
    weight("P", {D, 3 * H}, c.p);
  }
  while (!names.empty() && names.back().empty()) names.pop_back();
  const bool lstm = c.op == "LSTM";
  std::vector<std::string> outs = {"Y", "Y_h"};
  if (lstm) outs.push_back("Y_c");
  auto& n = m.node(c.op, names, outs);
  set_i(n, "hidden_size", H);
  if (c.direction != "forward") set_s(n, "direction", c.direction);
  if (layout) set_i(n, "layout", layout);
  if (c.clip) set_f(n, "clip", static_cast<float>(*c.clip));
  if (c.lbr) set_i(n, "linear_before_reset", 1);
  if (c.input_forget) set_i(n, "input_forget", 1);
  if (!c.acts.empty()) {
    std::vector<std::string> an;
    std::vector<float> al, be;
    for (const Act& a : c.acts) {
      an.push_back(a.name);
      if (a.name == "Affine" || a.name == "LeakyRelu" || a.name == "ThresholdedRelu" ||
          a.name == "ScaledTanh" || a.name == "HardSigmoid" || a.name == "Elu")
        al.push_back(static_cast<float>(a.alpha));
      if (a.name == "Affine" || a.name == "ScaledTanh" || a.name == "HardSigmoid")
        be.push_back(static_cast<float>(a.beta));
    }
    set_strings(n, "activations", an);
    if (!al.empty()) set_floats(n, "activation_alpha", al);
    if (!be.empty()) set_floats(n, "activation_beta", be);
  }
  for (const auto& o : outs) m.output(o);
  Result want = reference(c);
  auto got = run(m, in);
  ASSERT_EQ(got.size(), outs.size());
  expect_near_all(got[0], layout ? y_batch_major(want.y, S, D, B, H) : want.y, "Y");
  expect_near_all(got[1], layout ? swap_axes(want.yh, 1, D, B, H) : want.yh, "Y_h");
  if (lstm) expect_near_all(got[2], layout ? swap_axes(want.yc, 1, D, B, H) : want.yc, "Y_c");
}

TEST(OnnxRnn, RnnForwardDefaults) {
  Case c;
  check(c);
}

TEST(OnnxRnn, RnnBiasInitialStateReverse) {
  Case c;
  c.bias = c.h0 = true;
  c.direction = "reverse";
  check(c, 7);
}

TEST(OnnxRnn, RnnBidirectionalTwoActivationsAndClip) {
  Case c;
  c.S = 4, c.B = 3, c.I = 2, c.H = 3;
  c.direction = "bidirectional";
  c.acts = {{"Relu"}, {"Sigmoid"}};
  c.clip = 0.4;
  c.bias = c.h0 = true;
  check(c);
}

TEST(OnnxRnn, EveryActivationWithAlphaAndBeta) {
  const std::vector<Act> acts = {{"Relu"},
                                 {"Tanh"},
                                 {"Sigmoid"},
                                 {"Affine", 0.7, -0.2},
                                 {"LeakyRelu", 0.3},
                                 {"ThresholdedRelu", 0.1},
                                 {"ScaledTanh", 1.5, 0.8},
                                 {"HardSigmoid", 0.3, 0.45},
                                 {"Elu", 0.9},
                                 {"Softsign"},
                                 {"Softplus"}};
  for (const Act& a : acts) {
    SCOPED_TRACE(a.name);
    Case c;
    c.bias = c.h0 = true;
    c.acts = {a};
    check(c);
  }
}

TEST(OnnxRnn, GruBothResetOrders) {
  for (bool lbr : {false, true}) {
    SCOPED_TRACE(lbr);
    Case c;
    c.op = "GRU";
    c.lbr = lbr;
    c.bias = c.h0 = true;
    check(c);
    c.bias = false;  // linear_before_reset without B
    check(c);
  }
}

TEST(OnnxRnn, GruBidirectionalActivationsClipLayout1) {
  Case c;
  c.op = "GRU";
  c.S = 5, c.B = 1, c.I = 4, c.H = 3;
  c.direction = "bidirectional";
  c.acts = {{"HardSigmoid", 0.25, 0.5}, {"Softsign"}, {"Sigmoid"}, {"ScaledTanh", 0.9, 1.1}};
  c.clip = 0.8;
  c.bias = c.h0 = true;
  check(c, 14, 1);
}

TEST(OnnxRnn, LstmPeepholesInitialStateBias) {
  Case c;
  c.op = "LSTM";
  c.S = 3, c.B = 3, c.I = 2, c.H = 4;
  c.bias = c.h0 = c.c0 = c.peep = true;
  check(c);
  c.direction = "reverse";
  check(c, 7);
}

TEST(OnnxRnn, LstmInputForgetClipActivations) {
  Case c;
  c.op = "LSTM";
  c.input_forget = true;
  c.clip = 0.5;
  c.acts = {{"Sigmoid"}, {"Relu"}, {"Elu", 0.5}};
  c.bias = c.peep = true;
  check(c);
}

TEST(OnnxRnn, LstmBidirectionalLayout1) {
  Case c;
  c.op = "LSTM";
  c.S = 2, c.B = 3, c.I = 5, c.H = 3;
  c.direction = "bidirectional";
  c.bias = c.h0 = c.c0 = c.peep = true;
  check(c, 14, 1);
}

TEST(OnnxRnn, SequenceLensAtRunTimeMaskEachSample) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    Case c;
    c.op = op;
    c.S = 4, c.B = 3;
    c.direction = "bidirectional";
    c.bias = c.h0 = true;
    c.lens = std::vector<int64_t>{4, 1, 2};
    check(c);
    check(c, 14, 1);
    check(c, 22, 0, true);  // the same lengths as a constant
  }
}

TEST(OnnxRnn, ConstantWeightsSlicedAndTransposedAtImport) {
  for (const char* op : {"RNN", "GRU", "LSTM"})
    for (bool lbr : {false, true}) {
      if (lbr && op != std::string("GRU")) continue;
      SCOPED_TRACE(std::string(op) + (lbr ? " linear_before_reset" : ""));
      Case c;
      c.op = op;
      c.S = 3, c.B = 2, c.I = 5, c.H = 3;
      c.lbr = lbr;
      c.direction = "bidirectional";
      c.bias = c.h0 = c.c0 = true;
      c.peep = c.op == "LSTM";
      check(c, 22, 0, false, true);
      check(c, 14, 1, false, true);
    }
}

TEST(OnnxRnn, ConstantFullSequenceLensNeedNoMask) {
  Case c;
  c.op = "GRU";
  c.lens = std::vector<int64_t>{3, 3};
  c.direction = "reverse";
  check(c, 22, 0, true);
}

// --- errors: one line naming the node and what is wrong -----------------------------------

Model rnn_model(const std::string& op, int64_t G, std::vector<int64_t> wdims) {
  Model m(22);
  m.input("X", TP::FLOAT, {2, 1, 3});
  m.input("W", TP::FLOAT, wdims);
  m.input("R", TP::FLOAT, {1, G * 4, 4});
  m.node(op, {"X", "W", "R"}, {"Y"}, "rec");
  m.output("Y");
  return m;
}

TEST(OnnxRnn, BadAttributesAndShapesAreErrors) {
  auto err = [](Model m) { return import_error(m); };
  {
    Model m = rnn_model("LSTM", 4, {1, 16, 3});
    set_s(*m.g->mutable_node(0), "direction", "sideways");
    EXPECT_NE(err(m).find("direction must be forward, reverse or bidirectional"), std::string::npos)
        << err(m);
    EXPECT_NE(err(m).find("rec"), std::string::npos) << err(m);
  }
  {
    Model m = rnn_model("GRU", 3, {1, 12, 3});
    set_strings(*m.g->mutable_node(0), "activations", {"Sigmoid", "Cube"});
    EXPECT_NE(err(m).find("activation 'cube' is not one of"), std::string::npos) << err(m);
  }
  {
    Model m = rnn_model("GRU", 3, {1, 12, 3});
    set_strings(*m.g->mutable_node(0), "activations", {"Sigmoid"});
    EXPECT_NE(err(m).find("activations has 1 entries, expected 2"), std::string::npos) << err(m);
  }
  {
    Model m = rnn_model("RNN", 1, {1, 4, 2});
    EXPECT_NE(err(m).find("W has shape [1,4,2], expected [1,4,3]"), std::string::npos) << err(m);
  }
  {
    Model m = rnn_model("RNN", 1, {1, 4, 3});
    set_i(*m.g->mutable_node(0), "hidden_size", 5);
    EXPECT_NE(err(m).find("hidden_size 5 does not match R"), std::string::npos) << err(m);
  }
  {
    Model m = rnn_model("RNN", 1, {1, 4, 3});
    set_i(*m.g->mutable_node(0), "layout", 2);
    EXPECT_NE(err(m).find("layout must be 0 or 1"), std::string::npos) << err(m);
  }
  {
    Model m = rnn_model("RNN", 1, {1, 4, 3});
    set_f(*m.g->mutable_node(0), "clip", -1.0f);
    EXPECT_NE(err(m).find("clip must be positive"), std::string::npos) << err(m);
  }
  {
    Model m(22);
    m.input("X", TP::FLOAT, {2, 1, 3});
    m.input("W", TP::FLOAT, {1, 4, 3});
    m.input("R", TP::FLOAT, {1, 4, 4});
    auto& t = m.init("lens");
    t.set_data_type(TP::INT32);
    t.add_dims(1);
    t.add_int32_data(3);
    m.node("RNN", {"X", "W", "R", "", "lens"}, {"Y"}, "rec");
    m.output("Y");
    EXPECT_NE(err(m).find("sequence_lens holds 3, outside [0, 2]"), std::string::npos) << err(m);
  }
}

}  // namespace
}  // namespace hf
