// Conv's Winograd F(4x4, 3x3) kernel (runtime/cpu/conv_winograd.h), as OnednnConv and Conv2d
// take it for the graph's NHWC chains, against a direct convolution written out here in
// double: tiles cut by the image's edge, padding on one side or none, batches (in one wave
// of input transforms or two), blocks of tiles with a shorter last one, output channels split
// unevenly over 1-3 threads; every post-op kind with full, per-channel and literal operands; the
// blocks it reports; weights packed once when constant and read on every call when not; and which
// geometries it takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu/conv_onednn.h"
#include "runtime/cpu/conv_winograd.h"
#include "runtime/cpu/nn_kernels.h"
#include "runtime/ir/error.h"
#include "runtime/ir/f32_precision.h"
#include "tests/support/scoped_env.h"

namespace hf {
namespace {

struct Case {
  const char* name;
  int64_t n, c, h, w, m, pad_begin, pad_end;
};

ConvGeometry geometry(const Case& k) {
  ConvGeometry g;
  g.n = k.n;
  g.c = k.c;
  g.m = k.m;
  g.nhwc = true;
  const int64_t in[2] = {k.h, k.w};
  for (int a = 0; a < 2; ++a) {
    g.win.k[a] = 3;
    g.win.pad_begin[a] = k.pad_begin;
    g.win.pad_end[a] = k.pad_end;
    g.win.in[a] = in[a];
    g.win.out[a] = in[a] + k.pad_begin + k.pad_end - 2;
  }
  return g;
}

std::vector<float> random_floats(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// NHWC y = conv(x, w) + bias in double, and the scale of each output's rounding error: the
// largest sum of the terms' magnitudes among the outputs of its 4x4 tile (the transforms mix
// the tile's inputs, so an output at the image's edge can carry its neighbours' error).
void direct_conv(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                 const float* bias, std::vector<double>& y, std::vector<double>& mag) {
  const Window2d& win = g.win;
  const int64_t H = win.in[0], W = win.in[1], OH = win.out[0], OW = win.out[1];
  y.assign(g.n * OH * OW * g.m, 0.0);
  mag.assign(y.size(), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t m = 0; m < g.m; ++m) {
          double s = bias ? bias[m] : 0.0, a = std::abs(s);
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              const int64_t ih = oh - win.pad_begin[0] + i, iw = ow - win.pad_begin[1] + j;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int64_t c = 0; c < g.c; ++c) {
                const double t = double(x[((n * H + ih) * W + iw) * g.c + c]) *
                                 w[((m * g.c + c) * 3 + i) * 3 + j];
                s += t;
                a += std::abs(t);
              }
            }
          const int64_t o = ((n * OH + oh) * OW + ow) * g.m + m;
          y[o] = s;
          mag[o] = a;
        }
  std::vector<double> tile(mag.size(), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t m = 0; m < g.m; ++m) {
          double& t = tile[((n * OH + oh / 4 * 4) * OW + ow / 4 * 4) * g.m + m];
          t = std::max(t, mag[((n * OH + oh) * OW + ow) * g.m + m]);
        }
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t m = 0; m < g.m; ++m)
          mag[((n * OH + oh) * OW + ow) * g.m + m] =
              tile[((n * OH + oh / 4 * 4) * OW + ow / 4 * 4) * g.m + m];
}

// The rounding bound checked: F(4x4, 3x3)'s transforms multiply the f32 error of a direct
// sum (about 1e-7 of the terms' magnitude) by their constants' growth; measured here at up
// to 2e-6 of the tile's magnitude, so the bound leaves a factor of 5.
double tolerance(double mag) {
  return 1e-5 * mag + 1e-6;
}

void expect_near(const std::vector<float>& y, const std::vector<double>& ref,
                 const std::vector<double>& mag, const std::string& what) {
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 5; ++i)
    if (!(std::abs(y[i] - ref[i]) <= tolerance(mag[i]))) {
      ADD_FAILURE() << what << ": element " << i << " expected " << ref[i] << ", got " << y[i]
                    << " (magnitude " << mag[i] << ")";
      ++bad;
    }
}

const Case kCases[] = {
    // name, n, c, h, w, m, pad_begin, pad_end
    {"edge_tiles", 1, 16, 14, 14, 32, 1, 1},
    {"batch2_odd_image", 2, 8, 17, 13, 16, 1, 1},
    {"no_padding", 1, 24, 18, 18, 8, 0, 0},
    {"output_channel_slices", 1, 16, 16, 16, 64, 1, 1},
    {"tile_blocks_with_a_short_last_one", 1, 8, 40, 40, 8, 1, 1},
    {"padding_on_one_side_more", 1, 8, 15, 15, 16, 1, 2},
    {"batch2_in_two_waves", 2, 64, 64, 64, 8, 1, 1},  // input transforms over 4 MB each
    {"one_row_of_tiles", 1, 8, 1, 64, 16, 1, 1},      // every tile reads padding above and below
};

TEST(ConvWinograd, MatchesTheDirectConvolution) {
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    for (const Case& k : kCases) {
      const std::string what = std::string(k.name) + " at " + std::to_string(threads) + " threads";
      const ConvGeometry g = geometry(k);
      ASSERT_TRUE(cpu::WinogradConv::suits(g)) << what;
      std::vector<float> x = random_floats(k.n * k.h * k.w * k.c, 1);
      std::vector<float> w = random_floats(k.m * k.c * 9, 2), b = random_floats(k.m, 3);
      const int64_t OH = g.win.out[0], OW = g.win.out[1];
      for (bool const_weights : {false, true}) {
        auto conv = cpu::OnednnConv::create(g, threads, const_weights);
        ASSERT_NE(conv, nullptr) << what;
        EXPECT_EQ(std::string(conv->describe()).rfind("winograd", 0), 0u)
            << what << " took " << conv->describe();
        std::vector<double> ref, mag;
        for (int iter = 0; iter < 2; ++iter) {  // the second run reuses every buffer
          const bool bias = iter == 0;
          std::vector<float> y(k.n * OH * OW * k.m, NAN);
          conv->run(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), pool);
          direct_conv(g, x, w, bias ? b.data() : nullptr, ref, mag);
          expect_near(
              y, ref, mag,
              what + (const_weights ? ", constant weights" : "") + (bias ? ", bias" : ", no bias"));
        }
      }
    }
  }
}

TEST(ConvWinograd, RunTimeWeightsAreReadOnEveryCallConstantOnesOnce) {
  cpu::ThreadPool pool(2);
  const Case k = {"w", 1, 8, 16, 16, 16, 1, 1};
  const ConvGeometry g = geometry(k);
  std::vector<float> x = random_floats(k.h * k.w * k.c, 1), w = random_floats(k.m * k.c * 9, 2);
  std::vector<float> y(k.h * k.w * k.m);
  std::vector<double> ref, mag;
  auto runtime = cpu::OnednnConv::create(g, 2, /*const_weights=*/false);
  auto constant = cpu::OnednnConv::create(g, 2, /*const_weights=*/true);
  runtime->run(x.data(), w.data(), nullptr, y.data(), pool);
  constant->run(x.data(), w.data(), nullptr, y.data(), pool);
  const std::vector<float> first = w;
  const std::vector<float> second = random_floats(w.size(), 4);
  std::copy(second.begin(), second.end(), w.begin());  // same buffer, new values
  runtime->run(x.data(), w.data(), nullptr, y.data(), pool);
  direct_conv(g, x, w, nullptr, ref, mag);
  expect_near(y, ref, mag, "run-time weights, changed");
  constant->run(x.data(), w.data(), nullptr, y.data(), pool);
  direct_conv(g, x, first, nullptr, ref, mag);  // packed once: the first values
  expect_near(y, ref, mag, "constant weights, packed on the first call");
}

// The post-ops in double on the direct convolution's output.
double apply(const std::vector<ConvPostOp>& post, double v,
             const std::vector<std::vector<float>>& operands, int64_t flat, int64_t m) {
  using P = ConvPostOp;
  for (const P& p : post) {
    if (p.kind == P::Relu) {
      v = v <= 0 ? 0 : v;
      continue;
    }
    if (p.kind == P::Clip) {
      v = std::min<double>(std::max<double>(v, p.lo), p.hi);
      continue;
    }
    const double b = p.operand < 0 ? p.literal : operands[p.operand][p.per_channel ? m : flat];
    v = p.kind == P::Add   ? v + b
        : p.kind == P::Mul ? v * b
        : p.kind == P::Sub ? v - b
        : p.kind == P::Max ? std::max(v, b)
                           : std::min(v, b);
  }
  return v;
}

TEST(ConvWinograd, PostOpsInTheOutputTransform) {
  using P = ConvPostOp;
  P add_full{P::Add, 0, 0, 0}, relu{P::Relu}, mul_channel{P::Mul, 0, 0, 1, 0, true};
  P clip{P::Clip, -0.5f, 0.75f}, sub_literal{P::Sub, 0, 0, -1, 0.25f};
  P max_full{P::Max, 0, 0, 0}, min_channel{P::Min, 0, 0, 1, 0, true};
  P add_literal{P::Add, 0, 0, -1, -0.125f}, mul_literal{P::Mul, 0, 0, -1, 3.0f};
  const std::vector<std::vector<P>> chains = {
      {add_full, relu},  // ResNet's residual block
      {mul_channel, clip, sub_literal},
      {max_full, min_channel, add_literal, mul_literal},
  };
  for (int threads : {1, 3}) {
    cpu::ThreadPool pool(threads);
    for (const Case& k : {kCases[1], kCases[3], kCases[4]}) {
      const ConvGeometry g = geometry(k);
      const int64_t OH = g.win.out[0], OW = g.win.out[1], out = k.n * OH * OW * k.m;
      std::vector<float> x = random_floats(k.n * k.h * k.w * k.c, 1);
      std::vector<float> w = random_floats(k.m * k.c * 9, 2), b = random_floats(k.m, 3);
      const std::vector<std::vector<float>> operands = {random_floats(out, 5),
                                                        random_floats(k.m, 6)};
      const std::vector<const float*> data = {operands[0].data(), operands[1].data()};
      std::vector<double> ref, mag;
      direct_conv(g, x, w, b.data(), ref, mag);
      for (size_t c = 0; c < chains.size(); ++c) {
        const std::string what = std::string(k.name) + ", chain " + std::to_string(c) + " at " +
                                 std::to_string(threads) + " threads";
        auto conv = cpu::OnednnConv::create(g, threads, true, chains[c]);
        ASSERT_NE(conv, nullptr) << what;
        EXPECT_EQ(std::string(conv->describe()).rfind("winograd", 0), 0u) << what;
        std::vector<float> y(out, NAN);
        conv->run(x.data(), w.data(), b.data(), y.data(), pool, data);
        std::vector<double> want(out);
        for (int64_t i = 0; i < out; ++i) want[i] = apply(chains[c], ref[i], operands, i, i % k.m);
        // Every step is 1-Lipschitz or scales by at most 3: the convolution's bound, 3x.
        std::vector<double> mag3(mag);
        for (double& v : mag3) v *= 3;
        expect_near(y, want, mag3, what);
      }
    }
  }
}

TEST(ConvWinograd, ReportsEveryOutputOnceAfterWritingIt) {
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    for (const Case& k : {kCases[1], kCases[3], kCases[4]}) {
      const std::string what = std::string(k.name) + " at " + std::to_string(threads) + " threads";
      const ConvGeometry g = geometry(k);
      const int64_t OH = g.win.out[0], OW = g.win.out[1], out = k.n * OH * OW * k.m;
      std::vector<float> x = random_floats(k.n * k.h * k.w * k.c, 1);
      std::vector<float> w = random_floats(k.m * k.c * 9, 2);
      std::vector<float> y(out, NAN);
      std::vector<int> seen(out, 0);
      std::mutex mutex;
      int unwritten = 0;
      cpu::Conv2d conv(g, pool, DType::F32, true);
      ASSERT_EQ(std::string(conv.describe()).rfind("winograd", 0), 0u) << what;
      conv.run(contiguous_view(x.data(), DType::F32, {k.n, k.h, k.w, k.c}),
               contiguous_view(w.data(), DType::F32, {k.m, k.c, 3, 3}), nullptr,
               contiguous_view(y.data(), DType::F32, {k.n, OH, OW, k.m}),
               [&](const cpu::OutBlock& blk) {
                 std::lock_guard<std::mutex> lock(mutex);
                 for (int64_t r = 0; r < blk.rows; ++r)
                   for (int64_t c = 0; c < blk.cols; ++c) {
                     const int64_t i = blk.offset + r * blk.row_stride + c;
                     ASSERT_TRUE(i >= 0 && i < out) << what;
                     ++seen[i];
                     if (std::isnan(y[i])) ++unwritten;
                   }
               });
      EXPECT_EQ(unwritten, 0) << what;
      for (int64_t i = 0; i < out; ++i) ASSERT_EQ(seen[i], 1) << what << ": element " << i;
    }
  }
}

TEST(ConvWinograd, TakesOnlyTheGeometriesItWinsOn) {
  const ConvGeometry base = geometry({"base", 1, 64, 56, 56, 64, 1, 1});
  EXPECT_TRUE(cpu::WinogradConv::suits(base));
  auto with = [&](auto change) {
    ConvGeometry g = base;
    change(g);
    return cpu::WinogradConv::suits(g);
  };
  EXPECT_FALSE(with([](ConvGeometry& g) { g.nhwc = false; }));  // NCHW: oneDNN's plans
  EXPECT_FALSE(with([](ConvGeometry& g) {
    g.win.stride[0] = g.win.stride[1] = 2;
    g.win.out[0] = g.win.out[1] = 28;
  }));
  EXPECT_FALSE(with([](ConvGeometry& g) { g.win.dilation[0] = 2; }));
  EXPECT_FALSE(with([](ConvGeometry& g) { g.group = 2; }));
  EXPECT_FALSE(with([](ConvGeometry& g) { g.c = 60; }));
  EXPECT_FALSE(with([](ConvGeometry& g) { g.m = 12; }));
  EXPECT_FALSE(with([](ConvGeometry& g) {
    g.win.k[0] = g.win.k[1] = 5;
    g.win.pad_begin[0] = g.win.pad_begin[1] = g.win.pad_end[0] = g.win.pad_end[1] = 2;
  }));
  // ResNet's last stage, 7x7: 4 tiles, too few to pay for reading 4x the weights.
  EXPECT_FALSE(with([](ConvGeometry& g) {
    g.c = g.m = 512;
    g.win.in[0] = g.win.in[1] = g.win.out[0] = g.win.out[1] = 7;
  }));
  EXPECT_TRUE(with([](ConvGeometry& g) {  // 16 tiles
    g.c = g.m = 256;
    g.win.in[0] = g.win.in[1] = g.win.out[0] = g.win.out[1] = 14;
  }));
}

TEST(ConvWinograd, HighestF32PrecisionMeansTheDirectPlansAndABadValueIsNamed) {
  const ConvGeometry g = geometry(kCases[0]);
  for (const char* high : {static_cast<const char*>(nullptr), "high"}) {
    ScopedEnv env("HOTFUSE_F32_PRECISION", high);
    EXPECT_EQ(f32_precision(), F32Precision::High);
    EXPECT_EQ(std::string(cpu::OnednnConv::create(g, 2, true)->describe()).rfind("winograd", 0),
              0u);
  }
  {
    ScopedEnv highest("HOTFUSE_F32_PRECISION", "highest");
    EXPECT_EQ(f32_precision(), F32Precision::Highest);
    const std::string direct = cpu::OnednnConv::create(g, 2, true)->describe();
    EXPECT_EQ(direct.find("winograd"), std::string::npos) << direct;
    EXPECT_EQ(cpu::WinogradConv::create(g, 2, true), nullptr);
  }
  ScopedEnv bad("HOTFUSE_F32_PRECISION", "medium");
  try {
    f32_precision();
    ADD_FAILURE() << "HOTFUSE_F32_PRECISION=medium accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "HOTFUSE_F32_PRECISION='medium': expected high or highest");
  }
}

}  // namespace
}  // namespace hf
