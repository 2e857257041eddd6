// ONNX Attention (opsets 23-24) and RotaryEmbedding (opset 23),
// runtime/io/onnx_lower_attention.cpp: single-node models run on the CPU and compared with the
// spec's formulas written out here in double with plain loops (per query row: scores, mask,
// softmax, weighted values). The node tests of a current ONNX release cover the same ops through
// hotfuse-run (tests/onnx_conformance.cmake); these run without PyPI.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Deterministic values in about [-1, 1], different per seed, each exactly a float (the model
// reads the reference's own inputs).
std::vector<double> values(int64_t n, int seed) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(float(std::sin(0.7 * double(k) + 1.3 * seed) * 0.9));
  return v;
}

// Attention over 4-D (batch, heads, seq, size) row-major data. k and v already hold the whole
// key sequence (past first). bias(b, h, i, j) is the additive mask (0 or -inf or a float).
struct Ref {
  std::vector<double> y;       // (B, Hq, S, Dv)
  std::vector<double> probs;   // (B, Hq, S, T)
  std::vector<double> scores;  // (B, Hq, S, T), after softcap, before the bias
};
template <class Bias>
Ref attention(const std::vector<double>& q, const std::vector<double>& k,
              const std::vector<double>& v, int64_t B, int64_t Hq, int64_t Hk, int64_t S, int64_t T,
              int64_t D, int64_t Dv, double scale, double softcap, Bias bias) {
  Ref r;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      int64_t hk = h / (Hq / Hk);  // adjacent query heads share a KV head
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> s(T), p(T);
        bool any = false;
        for (int64_t j = 0; j < T; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q[((b * Hq + h) * S + i) * D + d] * k[((b * Hk + hk) * T + j) * D + d];
          dot *= scale;
          if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
          r.scores.push_back(dot);
          double bj = bias(b, h, i, j);
          any |= bj != -kInf;
          s[j] = dot + bj;
        }
        double mx = -kInf, sum = 0;
        for (double x : s) mx = std::max(mx, x);
        for (int64_t j = 0; j < T; ++j) sum += p[j] = std::exp(s[j] - mx);
        for (int64_t j = 0; j < T; ++j) r.probs.push_back(p[j] = any ? p[j] / sum : 0.0);
        for (int64_t e = 0; e < Dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j) acc += p[j] * v[((b * Hk + hk) * T + j) * Dv + e];
          r.y.push_back(acc);
        }
      }
    }
  return r;
}

auto no_bias = [](int64_t, int64_t, int64_t, int64_t) { return 0.0; };

// (B, S, H * Dh) <-> (B, H, S, Dh)
std::vector<double> to_heads(const std::vector<double>& x, int64_t B, int64_t S, int64_t H,
                             int64_t Dh) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < Dh; ++d)
          y[((b * H + h) * S + s) * Dh + d] = x[((b * S + s) * H + h) * Dh + d];
  return y;
}
std::vector<double> from_heads(const std::vector<double>& x, int64_t B, int64_t S, int64_t H,
                               int64_t Dh) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < Dh; ++d)
          y[((b * S + s) * H + h) * Dh + d] = x[((b * H + h) * S + s) * Dh + d];
  return y;
}

TEST(OnnxAttention, FourDCausalWithOddSizes) {
  const int64_t B = 2, H = 3, S = 3, T = 5, D = 5, Dv = 7;
  auto q = values(B * H * S * D, 1), k = values(B * H * T * D, 2), v = values(B * H * T * Dv, 3);
  Model m(23);
  m.input("Q", TP::FLOAT, {B, H, S, D});
  m.input("K", TP::FLOAT, {B, H, T, D});
  m.input("V", TP::FLOAT, {B, H, T, Dv});
  set_i(m.node("Attention", {"Q", "K", "V"}, {"Y"}), "is_causal", 1);
  m.output("Y");
  // No cache: query i sees keys 0..i (top-left).
  auto want = attention(q, k, v, B, H, H, S, T, D, Dv, 1 / std::sqrt(double(D)), 0,
                        [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i ? 0 : -kInf; });
  auto got = run(m, {tensor(DType::F32, {B, H, S, D}, q), tensor(DType::F32, {B, H, T, D}, k),
                     tensor(DType::F32, {B, H, T, Dv}, v)});
  expect_near_all(got[0], want.y);
}

TEST(OnnxAttention, ThreeDGroupedQueryWithFloatMaskAndScale) {
  const int64_t B = 2, Hq = 4, Hk = 2, S = 3, T = 4, D = 3, Dv = 2;
  auto q = values(B * S * Hq * D, 4), k = values(B * T * Hk * D, 5), v = values(B * T * Hk * Dv, 6);
  auto mask = values(S * T, 7);
  Model m(23);
  m.input("Q", TP::FLOAT, {B, S, Hq * D});
  m.input("K", TP::FLOAT, {B, T, Hk * D});
  m.input("V", TP::FLOAT, {B, T, Hk * Dv});
  m.input("mask", TP::FLOAT, {S, T});
  auto& n = m.node("Attention", {"Q", "K", "V", "mask"}, {"Y"});
  set_i(n, "q_num_heads", Hq);
  set_i(n, "kv_num_heads", Hk);
  set_f(n, "scale", 0.75f);
  m.output("Y");
  auto want = attention(to_heads(q, B, S, Hq, D), to_heads(k, B, T, Hk, D),
                        to_heads(v, B, T, Hk, Dv), B, Hq, Hk, S, T, D, Dv, 0.75, 0,
                        [&](int64_t, int64_t, int64_t i, int64_t j) { return mask[i * T + j]; });
  auto got = run(m, {tensor(DType::F32, {B, S, Hq * D}, q), tensor(DType::F32, {B, T, Hk * D}, k),
                     tensor(DType::F32, {B, T, Hk * Dv}, v), tensor(DType::F32, {S, T}, mask)});
  expect_near_all(got[0], from_heads(want.y, B, S, Hq, Dv));
}

// A KV cache: past keys in front, the causal frontier shifted by the past length, a bool mask
// (per batch) shorter than the total sequence (padded as masked), the present outputs.
TEST(OnnxAttention, PastKeysCausalAndShortBoolMask) {
  const int64_t B = 2, H = 2, S = 2, L = 2, P = 3, T = P + L, D = 4;
  auto q = values(B * H * S * D, 8), k = values(B * H * L * D, 9), v = values(B * H * L * D, 10);
  auto pk = values(B * H * P * D, 11), pv = values(B * H * P * D, 12);
  // (B, 1, S, 4): the last key is padding; batch 1 also masks key 0 for query 0
  std::vector<double> mask(B * S * 4, 1.0);
  mask[1 * S * 4 + 0] = 0;
  Model m(23);
  m.input("Q", TP::FLOAT, {B, H, S, D});
  m.input("K", TP::FLOAT, {B, H, L, D});
  m.input("V", TP::FLOAT, {B, H, L, D});
  m.input("mask", TP::BOOL, {B, 1, S, 4});
  m.input("pk", TP::FLOAT, {B, H, P, D});
  m.input("pv", TP::FLOAT, {B, H, P, D});
  set_i(m.node("Attention", {"Q", "K", "V", "mask", "pk", "pv"}, {"Y", "present_k", "present_v"}),
        "is_causal", 1);
  m.output("Y");
  m.output("present_k");
  m.output("present_v");
  auto cat = [&](const std::vector<double>& past, const std::vector<double>& now) {
    std::vector<double> r;
    for (int64_t b = 0; b < B * H; ++b) {
      r.insert(r.end(), past.begin() + b * P * D, past.begin() + (b + 1) * P * D);
      r.insert(r.end(), now.begin() + b * L * D, now.begin() + (b + 1) * L * D);
    }
    return r;
  };
  auto kk = cat(pk, k), vv = cat(pv, v);
  auto want = attention(q, kk, vv, B, H, H, S, T, D, D, 0.5, 0,
                        [&](int64_t b, int64_t, int64_t i, int64_t j) {
                          bool ok = j <= i + P && j < 4 && mask[(b * S + i) * 4 + j] != 0;
                          return ok ? 0 : -kInf;
                        });
  auto got = run(m, {tensor(DType::F32, {B, H, S, D}, q), tensor(DType::F32, {B, H, L, D}, k),
                     tensor(DType::F32, {B, H, L, D}, v), tensor(DType::Bool, {B, 1, S, 4}, mask),
                     tensor(DType::F32, {B, H, P, D}, pk), tensor(DType::F32, {B, H, P, D}, pv)});
  expect_near_all(got[0], want.y);
  EXPECT_EQ(got[1], kk);
  EXPECT_EQ(got[2], vv);
}

// Every key masked for a query: its output row and probabilities are zeros, not NaN.
TEST(OnnxAttention, FullyMaskedRowIsZero) {
  const int64_t S = 2, T = 3, D = 2;
  auto q = values(S * D, 13), k = values(T * D, 14), v = values(T * D, 15);
  std::vector<double> mask = {0, 0, 0, 1, 0, 1};
  Model m(23);
  m.input("Q", TP::FLOAT, {1, 1, S, D});
  m.input("K", TP::FLOAT, {1, 1, T, D});
  m.input("V", TP::FLOAT, {1, 1, T, D});
  m.input("mask", TP::BOOL, {S, T});
  set_i(m.node("Attention", {"Q", "K", "V", "mask"}, {"Y", "", "", "p"}), "qk_matmul_output_mode",
        3);
  m.output("Y");
  m.output("p");
  auto want = attention(
      q, k, v, 1, 1, 1, S, T, D, D, 1 / std::sqrt(2.0), 0,
      [&](int64_t, int64_t, int64_t i, int64_t j) { return mask[i * T + j] != 0 ? 0 : -kInf; });
  auto got = run(m, {tensor(DType::F32, {1, 1, S, D}, q), tensor(DType::F32, {1, 1, T, D}, k),
                     tensor(DType::F32, {1, 1, T, D}, v), tensor(DType::Bool, {S, T}, mask)});
  expect_near_all(got[0], want.y);
  expect_near_all(got[1], want.probs);
  EXPECT_EQ(got[0][0], 0.0);
  EXPECT_EQ(got[0][1], 0.0);
}

// softcap before the mask; qk_matmul_output modes 1 (softcapped scores) and 2 (plus the mask).
TEST(OnnxAttention, SoftcapAndQkOutputModes) {
  const int64_t H = 2, S = 3, T = 3, D = 4;
  auto q = values(H * S * D, 16), k = values(H * T * D, 17), v = values(H * T * D, 18);
  for (auto& x : q) x *= 4;  // scores well past the cap
  auto mask = values(S * T, 19);
  for (int mode : {1, 2}) {
    SCOPED_TRACE(mode);
    Model m(23);
    m.input("Q", TP::FLOAT, {1, H, S, D});
    m.input("K", TP::FLOAT, {1, H, T, D});
    m.input("V", TP::FLOAT, {1, H, T, D});
    m.input("mask", TP::FLOAT, {S, T});
    auto& n = m.node("Attention", {"Q", "K", "V", "mask"}, {"Y", "", "", "qk"});
    set_f(n, "softcap", 1.5f);
    set_i(n, "qk_matmul_output_mode", mode);
    m.output("Y");
    m.output("qk");
    auto bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return mask[i * T + j]; };
    auto want = attention(q, k, v, 1, H, H, S, T, D, D, 0.5, 1.5, bias);
    auto got = run(m, {tensor(DType::F32, {1, H, S, D}, q), tensor(DType::F32, {1, H, T, D}, k),
                       tensor(DType::F32, {1, H, T, D}, v), tensor(DType::F32, {S, T}, mask)});
    expect_near_all(got[0], want.y);
    std::vector<double> qk = want.scores;
    if (mode == 2)
      for (size_t e = 0; e < qk.size(); ++e) qk[e] += mask[e % (S * T)];
    expect_near_all(got[1], qk);
  }
}

// opset 24's nonpad_kv_seqlen: keys past each sample's count are padding, and the causal
// frontier is bottom-right aligned to that count.
TEST(OnnxAttention, NonpadKvSeqlenOfOpset24) {
  const int64_t B = 2, H = 1, S = 2, T = 5, D = 3;
  auto q = values(B * H * S * D, 20), k = values(B * H * T * D, 21), v = values(B * H * T * D, 22);
  const std::vector<int64_t> lens = {3, 5};
  Model m(24);
  m.input("Q", TP::FLOAT, {B, H, S, D});
  m.input("K", TP::FLOAT, {B, H, T, D});
  m.input("V", TP::FLOAT, {B, H, T, D});
  m.input("lens", TP::INT64, {B});
  set_i(m.node("Attention", {"Q", "K", "V", "", "", "", "lens"}, {"Y"}), "is_causal", 1);
  m.output("Y");
  auto want = attention(q, k, v, B, H, H, S, T, D, D, 1 / std::sqrt(3.0), 0,
                        [&](int64_t b, int64_t, int64_t i, int64_t j) {
                          return j < lens[b] && j <= i + lens[b] - S ? 0 : -kInf;
                        });
  auto got = run(m, {tensor(DType::F32, {B, H, S, D}, q), tensor(DType::F32, {B, H, T, D}, k),
                     tensor(DType::F32, {B, H, T, D}, v), tensor(DType::I64, {B}, {3, 5})});
  expect_near_all(got[0], want.y);
}

TEST(OnnxAttention, RefusesWhatItCannotAnswer) {
  auto model = [](const std::vector<std::string>& ins, int64_t hq, int mode, float softcap) {
    Model m(23);
    m.input("Q", TP::FLOAT, {1, hq, 2, 4});
    m.input("K", TP::FLOAT, {1, 2, 2, 4});
    m.input("V", TP::FLOAT, {1, 2, 2, 4});
    m.input("pk", TP::FLOAT, {1, 2, 1, 4});
    auto& n = m.node("Attention", ins, {"Y", "", "", "qk"});
    set_i(n, "qk_matmul_output_mode", mode);
    if (softcap > 0) set_f(n, "softcap", softcap);
    m.output("Y");
    m.output("qk");
    return m;
  };
  EXPECT_EQ(import_error(model({"Q", "K", "V"}, 3, 0, 0)),
            "m.onnx: node 0 (Attention): the 3 query heads are not a multiple of the 2 key/value "
            "heads");
  EXPECT_EQ(import_error(model({"Q", "K", "V", "", "pk"}, 2, 0, 0)),
            "m.onnx: node 0 (Attention): past_key and past_value must be given together");
  EXPECT_EQ(import_error(model({"Q", "K", "V"}, 2, 0, 2)),
            "m.onnx: node 0 (Attention): unsupported op (qk_matmul_output_mode 0 with softcap: "
            "the spec gives the QK product, the reference the softcapped one)");
  EXPECT_EQ(import_error(model({"Q", "K", "V"}, 2, 4, 0)),
            "m.onnx: node 0 (Attention): qk_matmul_output_mode must be 0-3, not 4");
}

// RoPE written out: out[.., r] for r < rd/2 pairs x1 = x[r] (or x[2r]) with x2 = x[r + rd/2]
// (or x[2r + 1]).
std::vector<double> rope(const std::vector<double>& x, int64_t B, int64_t H, int64_t S, int64_t D,
                         int64_t rd, bool interleaved, const std::vector<double>& cos,
                         const std::vector<double>& sin, const std::vector<int64_t>& pos,
                         bool bshd) {
  std::vector<double> y = x;
  int64_t half = rd / 2;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s) {
        int64_t base = bshd ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
        int64_t row = pos.empty() ? b * S + s : pos[b * S + s];
        for (int64_t r = 0; r < half; ++r) {
          int64_t i1 = interleaved ? 2 * r : r, i2 = interleaved ? 2 * r + 1 : r + half;
          double c = cos[row * half + r], sn = sin[row * half + r];
          double x1 = x[base + i1], x2 = x[base + i2];
          y[base + i1] = c * x1 - sn * x2;
          y[base + i2] = sn * x1 + c * x2;
        }
      }
  return y;
}

TEST(OnnxRotaryEmbedding, FourDWithPositionIds) {
  const int64_t B = 2, H = 3, S = 3, D = 6, P = 7;
  auto x = values(B * H * S * D, 23), cos = values(P * 3, 24), sin = values(P * 3, 25);
  const std::vector<int64_t> pos = {0, 4, 6, 2, 2, 5};
  for (int interleaved : {0, 1}) {
    SCOPED_TRACE(interleaved);
    Model m(23);
    m.input("x", TP::FLOAT, {B, H, S, D});
    m.input("cos", TP::FLOAT, {P, 3});
    m.input("sin", TP::FLOAT, {P, 3});
    m.input("pos", TP::INT64, {B, S});
    set_i(m.node("RotaryEmbedding", {"x", "cos", "sin", "pos"}, {"y"}), "interleaved", interleaved);
    m.output("y");
    auto got =
        run(m, {tensor(DType::F32, {B, H, S, D}, x), tensor(DType::F32, {P, 3}, cos),
                tensor(DType::F32, {P, 3}, sin), tensor(DType::I64, {B, S}, {0, 4, 6, 2, 2, 5})});
    expect_near_all(got[0], rope(x, B, H, S, D, D, interleaved, cos, sin, pos, false));
  }
}

// 3-D input with num_heads, a partial rotation (the rest passes through), caches per token.
TEST(OnnxRotaryEmbedding, ThreeDPartialWithoutPositionIds) {
  const int64_t B = 2, H = 2, S = 3, D = 8, rd = 4;
  auto x = values(B * S * H * D, 26), cos = values(B * S * 2, 27), sin = values(B * S * 2, 28);
  for (int interleaved : {0, 1}) {
    SCOPED_TRACE(interleaved);
    Model m(23);
    m.input("x", TP::FLOAT, {B, S, H * D});
    m.input("cos", TP::FLOAT, {B, S, 2});
    m.input("sin", TP::FLOAT, {B, S, 2});
    auto& n = m.node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"});
    set_i(n, "num_heads", H);
    set_i(n, "rotary_embedding_dim", rd);
    set_i(n, "interleaved", interleaved);
    m.output("y");
    auto got = run(m, {tensor(DType::F32, {B, S, H * D}, x), tensor(DType::F32, {B, S, 2}, cos),
                       tensor(DType::F32, {B, S, 2}, sin)});
    expect_near_all(got[0], rope(x, B, H, S, D, rd, interleaved, cos, sin, {}, true));
  }
  Model bad(23);
  bad.input("x", TP::FLOAT, {B, S, H * D});
  bad.input("cos", TP::FLOAT, {B, S, 3});
  bad.input("sin", TP::FLOAT, {B, S, 3});
  set_i(bad.node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"}), "num_heads", H);
  bad.output("y");
  EXPECT_EQ(import_error(bad),
            "m.onnx: node 0 (RotaryEmbedding): cos_cache gives [2,3,3] per token, expected "
            "[2,3,4] (rotary_embedding_dim / 2 = 4)");
}

}  // namespace
}  // namespace hf
