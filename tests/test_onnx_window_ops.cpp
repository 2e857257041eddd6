// ONNX ConvTranspose, LpPool, LRN and 1-D Conv / MaxPool / AveragePool
// (runtime/io/onnx_lower_window.cpp, onnx_lower_nn.cpp), each against a direct loop over
// the op's definition here, with odd sizes and every attribute; and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

// Deterministic values in [-1, 1) that are not all the same.
std::vector<double> wave(int64_t n, double phase) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(std::sin(0.7 * k + phase) * 0.9 + 0.05);
  return v;
}

std::vector<float> as_floats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

int64_t prod(const std::vector<int64_t>& s) {
  int64_t p = 1;
  for (int64_t d : s) p *= d;
  return p;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], 1e-4 * (1 + std::fabs(want[k]))) << "element " << k;
}

// --- ConvTranspose ---------------------------------------------------------------------

struct CtCase {
  std::vector<int64_t> x, w;  // [N, C, spatial...], [C, M/group, k...]
  int64_t group = 1;
  std::vector<int64_t> strides = {}, dilations = {}, pads = {}, output_padding = {},
                       output_shape = {};
  std::string auto_pad = "";
  bool bias = false;
};

// y[n, m, o] = bias[m] + Σ x[n, c, i] · w[c, m mod M/g, k] over i·s + k·d - pad_begin = o
// (c in m's group), for o in [0, out); spatial axes 1 to 3.
std::vector<double> conv_transpose_ref(const CtCase& c, const std::vector<double>& x,
                                       const std::vector<double>& w, const std::vector<double>& b,
                                       std::vector<int64_t>& out_dims) {
  const int nd = static_cast<int>(c.x.size()) - 2;
  const int64_t N = c.x[0], C = c.x[1], Mg = c.w[1], M = Mg * c.group, Cg = C / c.group;
  std::vector<int64_t> in(nd), k(nd), s(nd, 1), d(nd, 1), op(nd, 0), pb(nd, 0), out(nd);
  for (int a = 0; a < nd; ++a) {
    in[a] = c.x[2 + a];
    k[a] = c.w[2 + a];
    if (!c.strides.empty()) s[a] = c.strides[a];
    if (!c.dilations.empty()) d[a] = c.dilations[a];
    if (!c.output_padding.empty()) op[a] = c.output_padding[a];
    const int64_t natural = s[a] * (in[a] - 1) + op[a] + (k[a] - 1) * d[a] + 1;
    const bool same = c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER";
    if (same && c.pads.empty()) {
      out[a] = c.output_shape.empty() ? in[a] * s[a] : c.output_shape[a];
      const int64_t total = natural - out[a];
      const int64_t half = static_cast<int64_t>(std::floor(total / 2.0));
      pb[a] = c.auto_pad == "SAME_UPPER" ? half : total - half;
    } else {
      const bool p = !c.pads.empty() && c.auto_pad != "VALID";
      pb[a] = p ? c.pads[a] : 0;
      const int64_t pe = p ? c.pads[a + nd] : 0;
      out[a] = c.output_shape.empty() ? natural - pb[a] - pe : c.output_shape[a];
    }
  }
  // The spatial axes as three (D, H, W), the missing leading ones of size 1.
  auto as3 = [&](const std::vector<int64_t>& v, int64_t fill) {
    std::vector<int64_t> r(3 - nd, fill);
    r.insert(r.end(), v.begin(), v.end());
    return r;
  };
  const std::vector<int64_t> I = as3(in, 1), O = as3(out, 1), K = as3(k, 1), S = as3(s, 1),
                             Dl = as3(d, 1), P = as3(pb, 0);
  const int64_t IN = I[0] * I[1] * I[2], ON = O[0] * O[1] * O[2], KN = K[0] * K[1] * K[2];
  std::vector<double> y(N * M * ON, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      for (int64_t o = 0; o < ON; ++o) {
        const int64_t od[3] = {o / (O[1] * O[2]), (o / O[2]) % O[1], o % O[2]};
        double acc = b.empty() ? 0.0 : b[m];
        for (int64_t cc = 0; cc < Cg; ++cc) {
          const int64_t ci = g * Cg + cc;
          for (int64_t i = 0; i < IN; ++i)
            for (int64_t kk = 0; kk < KN; ++kk) {
              const int64_t id[3] = {i / (I[1] * I[2]), (i / I[2]) % I[1], i % I[2]};
              const int64_t kd[3] = {kk / (K[1] * K[2]), (kk / K[2]) % K[1], kk % K[2]};
              bool hit = true;
              for (int a = 0; a < 3; ++a) hit = hit && id[a] * S[a] + kd[a] * Dl[a] - P[a] == od[a];
              if (hit) acc += x[(n * C + ci) * IN + i] * w[(ci * Mg + m % Mg) * KN + kk];
            }
        }
        y[(n * M + m) * ON + o] = acc;
      }
    }
  out_dims = {N, M};
  for (int64_t o : out) out_dims.push_back(o);
  return y;
}

void check_conv_transpose(const CtCase& c, int opset) {
  const std::vector<double> x = wave(prod(c.x), 0.3), w = wave(prod(c.w), 1.1);
  const int64_t M = c.w[1] * c.group;
  const std::vector<double> b = c.bias ? wave(M, 2.0) : std::vector<double>{};
  Model m(opset);
  m.input("x", TP::FLOAT, c.x);
  m.init_floats("w", c.w, as_floats(w));
  std::vector<std::string> ins = {"x", "w"};
  if (c.bias) {
    m.init_floats("b", {M}, as_floats(b));
    ins.push_back("b");
  }
  auto& n = m.node("ConvTranspose", ins, {"y"});
  if (c.group != 1) set_i(n, "group", c.group);
  if (!c.strides.empty()) set_ints(n, "strides", c.strides);
  if (!c.dilations.empty()) set_ints(n, "dilations", c.dilations);
  if (!c.pads.empty()) set_ints(n, "pads", c.pads);
  if (!c.output_padding.empty()) set_ints(n, "output_padding", c.output_padding);
  if (!c.output_shape.empty()) set_ints(n, "output_shape", c.output_shape);
  if (!c.auto_pad.empty()) set_s(n, "auto_pad", c.auto_pad);
  m.output("y");
  std::vector<int64_t> dims;
  // Inputs rounded to f32 first, so the reference sees what the model holds.
  std::vector<double> xf, wf, bf;
  for (float v : as_floats(x)) xf.push_back(v);
  for (float v : as_floats(w)) wf.push_back(v);
  for (float v : as_floats(b)) bf.push_back(v);
  const std::vector<double> want = conv_transpose_ref(c, xf, wf, bf, dims);
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape(dims.begin(), dims.end()));
  expect_close(run(m, {tensor(DType::F32, c.x, xf)})[0], want);
}

TEST(OnnxWindowOps, ConvTransposeEveryAttribute2d) {
  std::vector<CtCase> cases;
  cases.push_back({{1, 1, 3, 3}, {1, 2, 3, 3}});
  cases.push_back({{2, 3, 5, 4}, {3, 2, 3, 2}, 1, {2, 3}, {}, {}, {}, {}, "", true});
  cases.push_back({{1, 4, 3, 5}, {4, 3, 2, 3}, 2, {3, 2}, {2, 1}, {1, 2, 0, 1}, {1, 1}});
  cases.push_back({{1, 6, 4, 3}, {6, 1, 3, 3}, 6, {2, 2}, {}, {1, 0, 2, 1}, {}, {}, "", true});
  cases.push_back({{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {1, 2, 1, 2}});
  cases.push_back({{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {}, {}, {10, 8}});
  cases.push_back({{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {}, {1, 1}});
  cases.push_back({{1, 2, 3, 4}, {2, 2, 3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER"});
  cases.push_back({{1, 2, 3, 4}, {2, 2, 3, 2}, 1, {2, 3}, {}, {}, {}, {}, "SAME_LOWER"});
  cases.push_back({{1, 2, 5, 3}, {2, 1, 2, 2}, 1, {3, 3}, {}, {}, {}, {14, 10}, "SAME_UPPER"});
  cases.push_back({{1, 2, 3, 3}, {2, 3, 2, 2}, 1, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "VALID"});
  cases.push_back({{1, 1, 3, 3}, {1, 1, 2, 2}, 1, {}, {2, 2}});
  // pads larger than the dilated kernel: the upsampled input is cropped.
  cases.push_back({{1, 2, 6, 7}, {2, 3, 2, 3}, 1, {2, 1}, {}, {3, 4, 2, 3}});
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    for (int opset : {1, 11, 22}) check_conv_transpose(cases[k], opset);
  }
}

TEST(OnnxWindowOps, ConvTranspose1d) {
  check_conv_transpose({{2, 3, 5}, {3, 2, 3}, 1, {2}, {}, {1, 0}, {1}, {}, "", true}, 17);
  check_conv_transpose({{1, 4, 7}, {4, 1, 2}, 2, {3}, {2}, {}, {}, {}, "SAME_LOWER"}, 17);
  check_conv_transpose({{1, 1, 3}, {1, 2, 3}, 1, {}, {}, {}, {}, {6}}, 17);
}

TEST(OnnxWindowOps, ConvTranspose3d) {
  check_conv_transpose({{1, 2, 2, 3, 2}, {2, 3, 2, 2, 3}}, 17);
  check_conv_transpose({{1, 4, 3, 2, 3},
                        {4, 1, 3, 2, 2},
                        2,
                        {2, 1, 3},
                        {1, 2, 1},
                        {1, 0, 1, 0, 1, 2},
                        {1, 0, 2},
                        {},
                        "",
                        true},
                       17);
  check_conv_transpose(
      {{1, 1, 2, 2, 2}, {1, 2, 2, 3, 2}, 1, {2, 2, 2}, {}, {}, {}, {}, "SAME_UPPER"}, 22);
  check_conv_transpose({{1, 1, 2, 3, 2}, {1, 1, 2, 2, 2}, 1, {2, 1, 2}, {}, {}, {}, {5, 4, 5}}, 11);
}

TEST(OnnxWindowOps, ConvTransposeErrors) {
  auto error = [](std::vector<int64_t> x, std::vector<int64_t> w,
                  std::function<void(pb::NodeProto&)> attrs) {
    Model m(17);
    m.input("x", TP::FLOAT, x);
    m.input("w", TP::FLOAT, w);
    attrs(m.node("ConvTranspose", {"x", "w"}, {"y"}, "ct"));
    m.output("y");
    return import_error(m);
  };
  auto none = [](pb::NodeProto&) {};
  EXPECT_EQ(error({1, 2, 3, 3, 3, 3}, {2, 1, 2, 2, 2, 2}, none),
            "m.onnx: node 0 'ct' (ConvTranspose): input has shape [1,2,3,3,3,3]: "
            "ConvTranspose of rank other than 3 (N, C, W), 4 (N, C, H, W) or 5 (N, C, D, H, W) "
            "is not supported");
  EXPECT_NE(error({1, 3, 3, 3}, {3, 1, 2, 2}, [](pb::NodeProto& n) { set_i(n, "group", 2); })
                .find("group 2 does not divide the 3 input channels"),
            std::string::npos);
  EXPECT_NE(error({1, 2, 3, 3}, {3, 1, 2, 2}, none).find("its first axis must be the 2 input"),
            std::string::npos);
  EXPECT_NE(error({1, 2, 3, 3}, {2, 1, 2, 2},
                  [](pb::NodeProto& n) {
                    set_ints(n, "kernel_shape", {3, 3});
                  })
                .find("kernel_shape does not match"),
            std::string::npos);
  EXPECT_NE(error({1, 2, 3, 3}, {2, 1, 2, 2}, [](pb::NodeProto& n) { set_ints(n, "strides", {2}); })
                .find("need 2 entries"),
            std::string::npos);
  EXPECT_NE(
      error({1, 2, 3, 3}, {2, 1, 2, 2}, [](pb::NodeProto& n) { set_s(n, "auto_pad", "SAME_ODD"); })
          .find("auto_pad 'SAME_ODD'"),
      std::string::npos);
  EXPECT_NE(error({1, 2, 3, 3}, {2, 1, 2, 2},
                  [](pb::NodeProto& n) {
                    set_ints(n, "pads", {3, 3, 3, 3});
                  })
                .find("output size -2 along spatial axis 0 is less than 1"),
            std::string::npos);
  EXPECT_NE(error({1, 2, 3, 3}, {2, 1, 2, 2},
                  [](pb::NodeProto& n) {
                    set_ints(n, "strides", {int64_t{1} << 62, 1});
                  })
                .find("strides entries must be >= 1 and <= 2^40"),
            std::string::npos);
}

// --- 1-D Conv and pooling --------------------------------------------------------------

TEST(OnnxWindowOps, Conv1dAndPool1d) {
  const int64_t N = 2, C = 4, W = 9, M = 6, K = 3, group = 2, s = 2, d = 2, pb = 2, pe = 1;
  const std::vector<double> x = wave(N * C * W, 0.1), w = wave(M * (C / group) * K, 0.9);
  std::vector<double> xf, wf;
  for (double v : x) xf.push_back(static_cast<float>(v));
  for (double v : w) wf.push_back(static_cast<float>(v));
  const int64_t OW = (W + pb + pe - (K - 1) * d - 1) / s + 1;
  std::vector<double> want;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o = 0; o < OW; ++o) {
        double acc = 0;
        const int64_t g = m / (M / group);
        for (int64_t c = 0; c < C / group; ++c)
          for (int64_t k = 0; k < K; ++k) {
            const int64_t i = o * s - pb + k * d;
            if (i >= 0 && i < W)
              acc += xf[(n * C + g * (C / group) + c) * W + i] * wf[(m * (C / group) + c) * K + k];
          }
        want.push_back(acc);
      }
  Model m(17);
  m.input("x", TP::FLOAT, {N, C, W});
  m.init_floats("w", {M, C / group, K}, as_floats(w));
  auto& n = m.node("Conv", {"x", "w"}, {"y"});
  set_i(n, "group", group);
  set_ints(n, "strides", {s});
  set_ints(n, "dilations", {d});
  set_ints(n, "pads", {pb, pe});
  m.output("y");
  EXPECT_EQ(import(m).value(import(m).outputs()[0]).shape, (Shape{N, M, OW}));
  expect_close(run(m, {tensor(DType::F32, {N, C, W}, xf)})[0], want);

  // MaxPool (dilated, ceil_mode) and AveragePool (count_include_pad) over W = 9.
  for (bool max : {true, false})
    for (int64_t ceil : {0, 1}) {
      SCOPED_TRACE(std::string(max ? "max" : "avg") + " ceil " + std::to_string(ceil));
      const int64_t k = 3, st = 2, dil = max ? 2 : 1, p0 = 1, p1 = 2;
      const int64_t span = (k - 1) * dil + 1, room = W + p0 + p1 - span;
      int64_t out = (ceil ? (room + st - 1) / st : room / st) + 1;
      if (ceil && (out - 1) * st >= W + p0) --out;
      std::vector<double> pw;
      for (int64_t nc = 0; nc < N * C; ++nc)
        for (int64_t o = 0; o < out; ++o) {
          double best = -INFINITY, sum = 0;
          int64_t count = 0;
          for (int64_t t = 0; t < k; ++t) {
            const int64_t i = o * st - p0 + t * dil;
            if (i < 0 || i >= W) continue;
            best = std::max(best, xf[nc * W + i]);
            sum += xf[nc * W + i];
            ++count;
          }
          // count_include_pad: the window's extent inside [-p0, W + p1).
          const int64_t lo = std::max<int64_t>(o * st - p0, -p0);
          const int64_t hi = std::min<int64_t>(o * st - p0 + span, W + p1);
          pw.push_back(max ? best : sum / static_cast<double>(hi - lo));
          (void)count;
        }
      Model p(19);
      p.input("x", TP::FLOAT, {N, C, W});
      auto& pn = p.node(max ? "MaxPool" : "AveragePool", {"x"}, {"y"});
      set_ints(pn, "kernel_shape", {k});
      set_ints(pn, "strides", {st});
      set_ints(pn, "pads", {p0, p1});
      set_i(pn, "ceil_mode", ceil);
      if (max) set_ints(pn, "dilations", {dil});
      if (!max) set_i(pn, "count_include_pad", 1);
      p.output("y");
      expect_close(run(p, {tensor(DType::F32, {N, C, W}, xf)})[0], pw);
    }
}

// --- 3-D pooling (two 2-D pools) --------------------------------------------------------

// MaxPool / AveragePool / LpPool sum over a [N·C, D, H, W] input, every window's taps
// indexed directly: the reference of the 3-D lowering, which splits the window in two.
struct Pool3d {
  std::string op;  // "MaxPool", "AveragePool", "LpPool"
  std::vector<int64_t> k, s, d, pads;
  int64_t ceil = 0, include_pad = 0, p = 2;
};

std::vector<double> pool3d_ref(const Pool3d& c, const std::vector<double>& x, int64_t nc,
                               const std::vector<int64_t>& in, std::vector<int64_t>& out) {
  out.assign(3, 0);
  std::vector<int64_t> span(3), begin(3), hi(3);
  // A dilated AveragePool with ceil_mode follows ONNX's reference: half the extra extent
  // the last window needs (rounded down) is padded before the input, moving every window,
  // and the padded input still ends pad_end after the input's end less that half.
  const bool shift = c.op == "AveragePool" && c.d != std::vector<int64_t>{1, 1, 1};
  for (int a = 0; a < 3; ++a) {
    span[a] = (c.k[a] - 1) * c.d[a] + 1;
    const int64_t room = in[a] + c.pads[a] + c.pads[a + 3] - span[a];
    out[a] = (c.ceil ? (room + c.s[a] - 1) / c.s[a] : room / c.s[a]) + 1;
    if (c.ceil && (out[a] - 1) * c.s[a] >= in[a] + c.pads[a]) --out[a];
    const int64_t extra = (out[a] - 1) * c.s[a] - room;  // past the padded input
    const int64_t half = shift && extra > 0 ? extra / 2 : 0;
    begin[a] = c.pads[a] + half;
    hi[a] = in[a] + c.pads[a + 3] - half;
  }
  std::vector<double> y;
  for (int64_t q = 0; q < nc; ++q)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          const int64_t o[3] = {o0, o1, o2};
          double best = -INFINITY, sum = 0;
          // count_include_pad: the taps inside the padded input [-pad_begin, in + pad_end).
          int64_t count = 0, extent = 1;
          for (int a = 0; a < 3; ++a) {
            int64_t taps = 0;
            for (int64_t t = 0; t < c.k[a]; ++t)
              taps += o[a] * c.s[a] - begin[a] + t * c.d[a] < hi[a];
            extent *= taps;
          }
          for (int64_t i = 0; i < c.k[0]; ++i)
            for (int64_t j = 0; j < c.k[1]; ++j)
              for (int64_t l = 0; l < c.k[2]; ++l) {
                const int64_t t[3] = {i, j, l};
                int64_t at[3];
                bool inside = true;
                for (int a = 0; a < 3; ++a) {
                  at[a] = o[a] * c.s[a] - begin[a] + t[a] * c.d[a];
                  inside = inside && at[a] >= 0 && at[a] < std::min(in[a], hi[a]);
                }
                if (!inside) continue;
                const double v = x[((q * in[0] + at[0]) * in[1] + at[1]) * in[2] + at[2]];
                best = std::max(best, v);
                sum += c.op == "LpPool" ? std::pow(std::fabs(v), c.p) : v;
                ++count;
              }
          y.push_back(c.op == "MaxPool"  ? best
                      : c.op == "LpPool" ? std::pow(sum, 1.0 / c.p)
                      : c.include_pad    ? sum / extent
                                         : sum / count);
        }
  return y;
}

TEST(OnnxWindowOps, Pool3dAsTwo2dPools) {
  const std::vector<int64_t> in = {5, 6, 7};
  const int64_t N = 2, C = 3;
  std::vector<double> x;
  for (double v : wave(N * C * in[0] * in[1] * in[2], 0.5)) x.push_back(static_cast<float>(v));
  const Pool3d cases[] = {
      {"MaxPool", {2, 3, 2}, {1, 2, 2}, {2, 1, 2}, {1, 0, 1, 0, 2, 0}, 0},
      {"MaxPool", {3, 2, 3}, {2, 2, 3}, {1, 1, 1}, {1, 1, 0, 1, 0, 2}, 1},
      {"AveragePool", {2, 3, 3}, {2, 1, 2}, {1, 1, 1}, {0, 1, 1, 1, 2, 0}, 0, 0},
      {"AveragePool", {3, 2, 2}, {2, 3, 2}, {1, 1, 1}, {1, 0, 1, 2, 1, 1}, 1, 1},
      {"AveragePool", {2, 2, 3}, {3, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 1, 0},
      {"AveragePool", {2, 3, 2}, {1, 2, 2}, {2, 1, 3}, {1, 0, 1, 1, 2, 0}, 0, 0},
      {"AveragePool", {3, 2, 2}, {2, 1, 3}, {2, 2, 1}, {0, 1, 2, 1, 0, 1}, 0, 1},
      {"AveragePool", {2, 2, 3}, {3, 2, 2}, {2, 1, 2}, {1, 0, 1, 0, 1, 0}, 1, 0},
      {"AveragePool", {2, 3, 2}, {2, 3, 2}, {3, 2, 2}, {0, 1, 0, 1, 2, 0}, 1, 1},
      {"LpPool", {2, 3, 2}, {2, 1, 3}, {2, 1, 1}, {1, 0, 2, 0, 1, 1}, 0, 0, 3},
      {"LpPool", {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 0, 0, 2}};
  for (const Pool3d& c : cases) {
    SCOPED_TRACE(c.op + " ceil " + std::to_string(c.ceil) + " pad " +
                 std::to_string(c.include_pad));
    std::vector<int64_t> out;
    const std::vector<double> want = pool3d_ref(c, x, N * C, in, out);
    Model m(19);
    m.input("x", TP::FLOAT, {N, C, in[0], in[1], in[2]});
    auto& n = m.node(c.op, {"x"}, {"y"});
    set_ints(n, "kernel_shape", c.k);
    set_ints(n, "strides", c.s);
    set_ints(n, "pads", c.pads);
    if (c.op != "AveragePool" || c.d != std::vector<int64_t>{1, 1, 1})
      set_ints(n, "dilations", c.d);
    if (c.op != "LpPool") set_i(n, "ceil_mode", c.ceil);
    if (c.op == "AveragePool") set_i(n, "count_include_pad", c.include_pad);
    if (c.op == "LpPool") set_i(n, "p", c.p);
    m.output("y");
    Graph g = import(m);
    EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{N, C, out[0], out[1], out[2]}));
    expect_close(run(m, {tensor(DType::F32, {N, C, in[0], in[1], in[2]}, x)})[0], want);
  }
  // A dilated 2-D AveragePool (the same lowering), and dilations before opset 19.
  {
    Pool3d c{"AveragePool", {1, 3, 2}, {1, 2, 1}, {1, 2, 3}, {0, 2, 1, 0, 1, 2}, 0, 0};
    std::vector<int64_t> out;
    const std::vector<double> want = pool3d_ref(c, x, N * C * in[0], {1, in[1], in[2]}, out);
    Model m(19);
    m.input("x", TP::FLOAT, {N, C * in[0], in[1], in[2]});
    auto& n = m.node("AveragePool", {"x"}, {"y"});
    set_ints(n, "kernel_shape", {3, 2});
    set_ints(n, "strides", {2, 1});
    set_ints(n, "dilations", {2, 3});
    set_ints(n, "pads", {2, 1, 1, 2});
    m.output("y");
    expect_close(run(m, {tensor(DType::F32, {N, C * in[0], in[1], in[2]}, x)})[0], want);
    Model old(17);  // dilations came to AveragePool in opset 19
    old.input("x", TP::FLOAT, {1, 1, 4, 4});
    auto& o = old.node("AveragePool", {"x"}, {"y"});
    set_ints(o, "kernel_shape", {2, 2});
    set_ints(o, "dilations", {2, 2});
    old.output("y");
    EXPECT_EQ(import_error(old),
              "m.onnx: node 0 (AveragePool): unsupported attribute: dilations (an AveragePool "
              "attribute from opset 19)");
  }
  // 4-D convolution stays refused.
  Model conv(17);
  conv.input("x", TP::FLOAT, {1, 1, 3, 3, 3, 3});
  conv.input("w", TP::FLOAT, {1, 1, 2, 2, 2, 2});
  conv.node("Conv", {"x", "w"}, {"y"});
  conv.output("y");
  EXPECT_EQ(import_error(conv),
            "m.onnx: node 0 (Conv): input has shape [1,1,3,3,3,3]: convolution of rank other "
            "than 3 (N, C, W), 4 (N, C, H, W) or 5 (N, C, D, H, W) is not supported");
}

// --- MaxPool's Indices ------------------------------------------------------------------

TEST(OnnxWindowOps, MaxPoolIndicesBothStorageOrders) {
  const int64_t N = 2, C = 3, H = 5, W = 7;
  // Values from a small set, so that windows hold ties: the first in scan order wins.
  std::vector<double> x;
  for (int64_t k = 0; k < N * C * H * W; ++k) x.push_back(static_cast<double>((k * 7) % 5));
  struct Case {
    std::vector<int64_t> k, s, d, pads;
    int64_t ceil, order;
  } cases[] = {{{2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 0, 0},
               {{3, 2}, {2, 3}, {1, 2}, {1, 0, 2, 1}, 0, 1},
               {{2, 3}, {2, 2}, {2, 1}, {1, 1, 0, 1}, 1, 0},
               {{3, 3}, {3, 2}, {1, 1}, {2, 1, 1, 2}, 1, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE("order " + std::to_string(c.order) + " ceil " + std::to_string(c.ceil));
    int64_t out[2];
    const int64_t in[2] = {H, W};
    for (int a = 0; a < 2; ++a) {
      const int64_t span = (c.k[a] - 1) * c.d[a] + 1,
                    room = in[a] + c.pads[a] + c.pads[a + 2] - span;
      out[a] = (c.ceil ? (room + c.s[a] - 1) / c.s[a] : room / c.s[a]) + 1;
      if (c.ceil && (out[a] - 1) * c.s[a] >= in[a] + c.pads[a]) --out[a];
    }
    std::vector<double> want_y, want_i;
    for (int64_t q = 0; q < N * C; ++q)
      for (int64_t oh = 0; oh < out[0]; ++oh)
        for (int64_t ow = 0; ow < out[1]; ++ow) {
          double best = -INFINITY;
          int64_t bh = -1, bw = -1;
          for (int64_t i = 0; i < c.k[0]; ++i)
            for (int64_t j = 0; j < c.k[1]; ++j) {
              const int64_t h = oh * c.s[0] - c.pads[0] + i * c.d[0];
              const int64_t w = ow * c.s[1] - c.pads[1] + j * c.d[1];
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              if (x[(q * H + h) * W + w] > best) {
                best = x[(q * H + h) * W + w];
                bh = h;
                bw = w;
              }
            }
          want_y.push_back(best);
          want_i.push_back(static_cast<double>(q * H * W + (c.order ? bh + bw * H : bh * W + bw)));
        }
    Model m(12);
    m.input("x", TP::FLOAT, {N, C, H, W});
    auto& n = m.node("MaxPool", {"x"}, {"y", "i"});
    set_ints(n, "kernel_shape", c.k);
    set_ints(n, "strides", c.s);
    set_ints(n, "dilations", c.d);
    set_ints(n, "pads", c.pads);
    set_i(n, "ceil_mode", c.ceil);
    set_i(n, "storage_order", c.order);
    m.output("y");
    m.output("i");
    Graph g = import(m);
    EXPECT_EQ(g.value(g.outputs()[1]).dtype, DType::I64);
    auto r = run(m, {tensor(DType::F32, {N, C, H, W}, x)});
    EXPECT_EQ(r[0], want_y);
    EXPECT_EQ(r[1], want_i);
  }
  // 1-D: the index over [N, C, W].
  Model m(12);
  m.input("x", TP::FLOAT, {1, 2, 5});
  auto& n = m.node("MaxPool", {"x"}, {"y", "i"});
  set_ints(n, "kernel_shape", {2});
  set_ints(n, "strides", {2});
  m.output("y");
  m.output("i");
  auto r = run(m, {tensor(DType::F32, {1, 2, 5}, {1, 3, 2, 2, 0, 5, 4, 4, 9, 9})});
  EXPECT_EQ(r[0], (std::vector<double>{3, 2, 5, 9}));
  EXPECT_EQ(r[1], (std::vector<double>{1, 2, 5, 8}));
}

// --- 3-D Conv --------------------------------------------------------------------------

struct Conv3dCase {
  std::vector<int64_t> x, w;  // [N, C, D, H, W], [M, C/group, KD, KH, KW]
  int64_t group = 1;
  std::vector<int64_t> strides{1, 1, 1}, dilations{1, 1, 1}, pads{0, 0, 0, 0, 0, 0};
  bool bias = true;
};

// y[n, m, o...] = bias[m] + Σ x[n, c, o·s - pb + k·d] · w[m, c - group base, k] over the
// window inside the input, c in m's group.
std::vector<double> conv3d_ref(const Conv3dCase& c, const std::vector<double>& x,
                               const std::vector<double>& w, const std::vector<double>& b,
                               std::vector<int64_t>& out) {
  const int64_t N = c.x[0], C = c.x[1], M = c.w[0], Cg = C / c.group, Mg = M / c.group;
  out = {N, M};
  for (int a = 0; a < 3; ++a)
    out.push_back((c.x[2 + a] + c.pads[a] + c.pads[a + 3] - (c.w[2 + a] - 1) * c.dilations[a] - 1) /
                      c.strides[a] +
                  1);
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t od = 0; od < out[2]; ++od)
        for (int64_t oh = 0; oh < out[3]; ++oh)
          for (int64_t ow = 0; ow < out[4]; ++ow) {
            double acc = c.bias ? b[m] : 0;
            for (int64_t cg = 0; cg < Cg; ++cg)
              for (int64_t kd = 0; kd < c.w[2]; ++kd)
                for (int64_t kh = 0; kh < c.w[3]; ++kh)
                  for (int64_t kw = 0; kw < c.w[4]; ++kw) {
                    const int64_t id = od * c.strides[0] - c.pads[0] + kd * c.dilations[0];
                    const int64_t ih = oh * c.strides[1] - c.pads[1] + kh * c.dilations[1];
                    const int64_t iw = ow * c.strides[2] - c.pads[2] + kw * c.dilations[2];
                    if (id < 0 || id >= c.x[2] || ih < 0 || ih >= c.x[3] || iw < 0 || iw >= c.x[4])
                      continue;
                    const int64_t ci = (m / Mg) * Cg + cg;
                    acc += x[(((n * C + ci) * c.x[2] + id) * c.x[3] + ih) * c.x[4] + iw] *
                           w[(((m * Cg + cg) * c.w[2] + kd) * c.w[3] + kh) * c.w[4] + kw];
                  }
            y.push_back(acc);
          }
  return y;
}

TEST(OnnxWindowOps, Conv3dAsOne2dConvPerDepthTap) {
  const Conv3dCase cases[] = {
      {{1, 2, 4, 5, 6}, {3, 2, 2, 3, 3}},
      {{2, 4, 7, 5, 5}, {6, 2, 3, 2, 3}, 2, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 2, 1, 0}},
      {{1, 3, 5, 4, 3}, {2, 3, 3, 1, 2}, 1, {3, 2, 1}, {2, 1, 1}, {2, 1, 0, 0, 0, 1}, false},
      {{1, 1, 1, 3, 3}, {1, 1, 1, 3, 3}},  // depth 1: one tap
  };
  for (const Conv3dCase& c : cases) {
    SCOPED_TRACE("x " + to_string(Shape(c.x)) + " w " + to_string(Shape(c.w)));
    std::vector<double> x = wave(prod(c.x), 0.2), w = wave(prod(c.w), 1.3), b = wave(c.w[0], 2.1);
    for (auto* v : {&x, &w, &b})
      for (double& e : *v) e = static_cast<float>(e);
    std::vector<int64_t> out;
    std::vector<double> want = conv3d_ref(c, x, w, b, out);
    Model m(11);
    m.input("x", TP::FLOAT, c.x);
    m.init_floats("w", c.w, as_floats(w));
    std::vector<std::string> ins{"x", "w"};
    if (c.bias) {
      m.init_floats("b", {c.w[0]}, as_floats(b));
      ins.push_back("b");
    }
    auto& n = m.node("Conv", ins, {"y"});
    set_i(n, "group", c.group);
    set_ints(n, "strides", c.strides);
    set_ints(n, "dilations", c.dilations);
    set_ints(n, "pads", c.pads);
    m.output("y");
    Graph g = import(m);
    EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape(out));
    expect_close(run(m, {tensor(DType::F32, c.x, x)})[0], want);
  }
  // auto_pad SAME_UPPER over depth too: the output keeps the input's size at stride 1.
  Model m(11);
  m.input("x", TP::FLOAT, {1, 1, 4, 4, 4});
  m.init_floats("w", {1, 1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  auto& n = m.node("Conv", {"x", "w"}, {"y"});
  set_s(n, "auto_pad", "SAME_UPPER");
  m.output("y");
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape({1, 1, 4, 4, 4}));
  // All ones: each output counts the window's taps inside the input (the extra depth pad
  // goes at the end with SAME_UPPER).
  std::vector<double> y =
      run(m, {tensor(DType::F32, {1, 1, 4, 4, 4}, std::vector<double>(64, 1))})[0];
  EXPECT_EQ(y[0], 2 * 2 * 2);   // d 0..1, h 0..1, w 0..1
  EXPECT_EQ(y[63], 1 * 2 * 2);  // d 3 only, h 2..3, w 2..3
  EXPECT_EQ(y[(1 * 4 + 1) * 4 + 1], 2 * 3 * 3);
}

// --- MaxUnpool ------------------------------------------------------------------------

// y = zeros(unpooled), y.flat[i[k]] = x[k]; then zeros appended at the end of each spatial
// axis up to `output_shape` (ONNX's reference: the indices count over the unpooled shape).
std::vector<double> max_unpool_ref(const std::vector<double>& x, const std::vector<int64_t>& idx,
                                   const std::vector<int64_t>& unpooled,
                                   const std::vector<int64_t>& out) {
  std::vector<double> flat(prod(unpooled), 0.0);
  for (size_t k = 0; k < x.size(); ++k) flat[idx[k]] = x[k];
  std::vector<double> y(prod(out), 0.0);
  const size_t r = out.size();
  for (int64_t f = 0; f < prod(unpooled); ++f) {
    int64_t rest = f, at = 0, scale = 1;
    for (size_t d = r; d-- > 0;) {
      at += (rest % unpooled[d]) * scale;
      rest /= unpooled[d];
      scale *= out[d];
    }
    y[at] = flat[f];
  }
  return y;
}

TEST(OnnxWindowOps, MaxUnpoolScattersIntoTheUnpooledShapeAndPadsToOutputShape) {
  struct Case {
    std::vector<int64_t> x, k, s, pads, output_shape;
  } cases[] = {
      {{1, 1, 2, 2}, {2, 2}, {2, 2}, {}, {}},
      {{2, 3, 3, 2}, {3, 2}, {2, 3}, {1, 0, 0, 1}, {}},
      {{1, 2, 2, 3}, {2, 2}, {2, 2}, {}, {1, 2, 5, 7}},
      {{1, 2, 3}, {3}, {2}, {1, 1}, {1, 2, 6}},         // 1-D
      {{1, 1, 2, 2, 3}, {2, 2, 2}, {2, 1, 2}, {}, {}},  // 3-D
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("x " + to_string(Shape(c.x)));
    const size_t nd = c.x.size() - 2;
    std::vector<int64_t> unpooled{c.x[0], c.x[1]};
    for (size_t d = 0; d < nd; ++d) {
      const int64_t pb = c.pads.empty() ? 0 : c.pads[d], pe = c.pads.empty() ? 0 : c.pads[nd + d];
      unpooled.push_back((c.x[2 + d] - 1) * c.s[d] - pb - pe + c.k[d]);
    }
    const std::vector<int64_t> out = c.output_shape.empty() ? unpooled : c.output_shape;
    // Distinct positions spread over the whole unpooled tensor, not in order.
    const int64_t n = prod(c.x), total = prod(unpooled);
    std::vector<int64_t> idx;
    for (int64_t k = 0; k < n; ++k) idx.push_back((k * 7 + 3) % total);
    std::vector<double> x = wave(n, 0.3), idx_d(idx.begin(), idx.end());
    for (double& v : x) v = static_cast<float>(v);  // as the model holds them
    ASSERT_LE(n, total);
    Model m(c.output_shape.empty() ? 11 : 22);
    m.input("x", TP::FLOAT, c.x);
    m.input("i", TP::INT64, c.x);
    std::vector<std::string> ins{"x", "i"};
    if (!c.output_shape.empty()) {
      m.init_int64s("shape", {static_cast<int64_t>(out.size())}, out);
      ins.push_back("shape");
    }
    auto& node = m.node("MaxUnpool", ins, {"y"});
    set_ints(node, "kernel_shape", c.k);
    set_ints(node, "strides", c.s);
    if (!c.pads.empty()) set_ints(node, "pads", c.pads);
    m.output("y");
    Graph g = import(m);
    EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape(out));
    auto r = run(m, {tensor(DType::F32, c.x, x), tensor(DType::I64, c.x, idx_d)});
    EXPECT_EQ(r[0], max_unpool_ref(x, idx, unpooled, out));
  }
}

TEST(OnnxWindowOps, MaxUnpoolInvertsMaxPoolsIndices) {
  const int64_t N = 2, C = 2, H = 6, W = 5;
  std::vector<double> x = wave(N * C * H * W, 1.1);
  for (double& v : x) v = static_cast<float>(v);
  Model m(12);
  m.input("x", TP::FLOAT, {N, C, H, W});
  auto& pool = m.node("MaxPool", {"x"}, {"p", "i"});
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {2, 2});
  set_ints(pool, "pads", {0, 0, 0, 1});
  auto& unpool = m.node("MaxUnpool", {"p", "i"}, {"y"});
  set_ints(unpool, "kernel_shape", {2, 2});
  set_ints(unpool, "strides", {2, 2});
  set_ints(unpool, "pads", {0, 0, 0, 1});
  m.output("y");
  std::vector<double> y = run(m, {tensor(DType::F32, {N, C, H, W}, x)})[0];
  ASSERT_EQ(y.size(), x.size());
  // Each 2x2 window (the last column alone, with the pad) keeps its maximum, the rest is 0.
  for (int64_t q = 0; q < N * C; ++q)
    for (int64_t h0 = 0; h0 < H; h0 += 2)
      for (int64_t w0 = 0; w0 < W; w0 += 2) {
        double best = -INFINITY;
        for (int64_t h = h0; h < h0 + 2; ++h)
          for (int64_t w = w0; w < std::min(W, w0 + 2); ++w)
            best = std::max(best, x[(q * H + h) * W + w]);
        for (int64_t h = h0; h < h0 + 2; ++h)
          for (int64_t w = w0; w < std::min(W, w0 + 2); ++w) {
            const int64_t at = (q * H + h) * W + w;
            EXPECT_EQ(y[at], x[at] == best ? best : 0.0) << "element " << at;
          }
      }
}

TEST(OnnxWindowOps, MaxUnpoolErrors) {
  auto error = [](std::vector<int64_t> xs, std::vector<int64_t> is, std::vector<int64_t> k,
                  std::vector<int64_t> shape) {
    Model m(11);
    m.input("x", TP::FLOAT, xs);
    m.input("i", TP::INT64, is);
    std::vector<std::string> ins{"x", "i"};
    if (!shape.empty()) {
      m.init_int64s("shape", {static_cast<int64_t>(shape.size())}, shape);
      ins.push_back("shape");
    }
    auto& n = m.node("MaxUnpool", ins, {"y"}, "up");
    if (!k.empty()) set_ints(n, "kernel_shape", k);
    m.output("y");
    return import_error(m);
  };
  EXPECT_EQ(error({1, 1, 2, 2}, {1, 1, 2, 2}, {}, {}),
            "m.onnx: node 0 'up' (MaxUnpool): missing attribute 'kernel_shape'");
  EXPECT_EQ(error({1, 1, 2, 2}, {1, 1, 2, 3}, {2, 2}, {}),
            "m.onnx: node 0 'up' (MaxUnpool): I has shape [1,1,2,3], X [1,1,2,2]: they must be "
            "the same");
  EXPECT_EQ(error({1, 1, 2, 2}, {1, 1, 2, 2}, {2}, {}),
            "m.onnx: node 0 'up' (MaxUnpool): attribute 'kernel_shape' has 1 values, expected 2");
  EXPECT_EQ(error({1, 1, 2, 2}, {1, 1, 2, 2}, {2, 2}, {1, 1, 2, 2}),
            "m.onnx: node 0 'up' (MaxUnpool): output_shape [1,1,2,2] is smaller than the "
            "unpooled [1,1,3,3]");
  EXPECT_EQ(error({1, 2}, {1, 2}, {2}, {}),
            "m.onnx: node 0 'up' (MaxUnpool): X has shape [1,2]: needs rank >= 3 (N, C, "
            "spatial...)");
  // An index outside the unpooled tensor: a run-time error, nothing written.
  Model m(11);
  m.input("x", TP::FLOAT, {1, 1, 1, 1});
  m.input("i", TP::INT64, {1, 1, 1, 1});
  set_ints(m.node("MaxUnpool", {"x", "i"}, {"y"}), "kernel_shape", {2, 2});
  m.output("y");
  EXPECT_THROW(
      run(m, {tensor(DType::F32, {1, 1, 1, 1}, {5}), tensor(DType::I64, {1, 1, 1, 1}, {4})}),
      std::exception);
  EXPECT_EQ(
      run(m, {tensor(DType::F32, {1, 1, 1, 1}, {5}), tensor(DType::I64, {1, 1, 1, 1}, {3})})[0],
      (std::vector<double>{0, 0, 0, 5}));
}

// --- LpPool and LRN --------------------------------------------------------------------

TEST(OnnxWindowOps, LpPoolEveryAttribute) {
  const int64_t N = 1, C = 3, H = 5, W = 6;
  std::vector<double> x;
  for (double v : wave(N * C * H * W, 0.4)) x.push_back(static_cast<float>(v));
  struct Case {
    int64_t p;
    std::vector<int64_t> k, s, d, pads;
    std::string auto_pad;
    int opset;
  } cases[] = {{2, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, "", 11},
               {1, {3, 2}, {2, 1}, {1, 1}, {1, 0, 1, 1}, "", 11},
               {3, {2, 3}, {1, 2}, {2, 1}, {0, 1, 0, 0}, "", 18},
               {2, {3, 3}, {2, 2}, {1, 1}, {}, "SAME_UPPER", 18},
               {2, {2, 2}, {1, 1}, {1, 1}, {}, "SAME_LOWER", 2}};
  for (const Case& c : cases) {
    SCOPED_TRACE("p " + std::to_string(c.p) + " " + c.auto_pad);
    std::vector<int64_t> pads = c.pads;
    if (!c.auto_pad.empty()) {
      pads.assign(4, 0);
      for (int a = 0; a < 2; ++a) {
        const int64_t in = a ? W : H, out = (in + c.s[a] - 1) / c.s[a];
        const int64_t total =
            std::max<int64_t>(0, (out - 1) * c.s[a] + (c.k[a] - 1) * c.d[a] + 1 - in);
        pads[a] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        pads[a + 2] = total - pads[a];
      }
    }
    const int64_t OH = (H + pads[0] + pads[2] - (c.k[0] - 1) * c.d[0] - 1) / c.s[0] + 1;
    const int64_t OW = (W + pads[1] + pads[3] - (c.k[1] - 1) * c.d[1] - 1) / c.s[1] + 1;
    std::vector<double> want;
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t i = 0; i < c.k[0]; ++i)
            for (int64_t j = 0; j < c.k[1]; ++j) {
              const int64_t h = oh * c.s[0] - pads[0] + i * c.d[0];
              const int64_t w = ow * c.s[1] - pads[1] + j * c.d[1];
              if (h >= 0 && h < H && w >= 0 && w < W)
                acc += std::pow(std::fabs(x[(nc * H + h) * W + w]), c.p);
            }
          want.push_back(std::pow(acc, 1.0 / c.p));
        }
    Model m(c.opset);
    m.input("x", TP::FLOAT, {N, C, H, W});
    auto& n = m.node("LpPool", {"x"}, {"y"});
    if (c.opset < 2)
      set_f(n, "p", static_cast<float>(c.p));
    else
      set_i(n, "p", c.p);
    set_ints(n, "kernel_shape", c.k);
    set_ints(n, "strides", c.s);
    if (c.opset >= 18) set_ints(n, "dilations", c.d);
    if (c.auto_pad.empty())
      set_ints(n, "pads", c.pads);
    else
      set_s(n, "auto_pad", c.auto_pad);
    m.output("y");
    expect_close(run(m, {tensor(DType::F32, {N, C, H, W}, x)})[0], want);
  }
  Model ceil(18);
  ceil.input("x", TP::FLOAT, {1, 1, 4, 4});
  auto& n = ceil.node("LpPool", {"x"}, {"y"});
  set_ints(n, "kernel_shape", {2, 2});
  set_i(n, "ceil_mode", 1);
  ceil.output("y");
  EXPECT_EQ(import_error(ceil), "m.onnx: node 0 (LpPool): unsupported attribute: ceil_mode=1");
}

TEST(OnnxWindowOps, LrnEverySize) {
  const int64_t N = 2, C = 5, H = 3, W = 2;
  std::vector<double> x;
  for (double v : wave(N * C * H * W, 0.2)) x.push_back(static_cast<float>(v) * 3);
  for (int64_t size : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const double alpha = 0.3, beta = 0.6, bias = 1.5;
    std::vector<double> want;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t hw = 0; hw < H * W; ++hw) {
          double sq = 0;
          for (int64_t i = std::max<int64_t>(0, c - (size - 1) / 2);
               i <= std::min<int64_t>(C - 1, c + size / 2); ++i)
            sq += std::pow(x[(n * C + i) * H * W + hw], 2);
          want.push_back(x[(n * C + c) * H * W + hw] / std::pow(bias + alpha / size * sq, beta));
        }
    Model m(13);
    m.input("x", TP::FLOAT, {N, C, H, W});
    auto& nd = m.node("LRN", {"x"}, {"y"});
    set_i(nd, "size", size);
    set_f(nd, "alpha", static_cast<float>(alpha));
    set_f(nd, "beta", static_cast<float>(beta));
    set_f(nd, "bias", static_cast<float>(bias));
    m.output("y");
    // alpha, beta and bias pass through f32 attributes.
    std::vector<double> got = run(m, {tensor(DType::F32, {N, C, H, W}, x)})[0];
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-5) << k;
  }
  Model bad(13);
  bad.input("x", TP::FLOAT, {1, 2, 2, 2});
  set_i(bad.node("LRN", {"x"}, {"y"}), "size", 0);
  bad.output("y");
  EXPECT_EQ(import_error(bad), "m.onnx: node 0 (LRN): size must be >= 1 and <= 2^40");
}

}  // namespace
}  // namespace hf
