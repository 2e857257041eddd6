// Conv's CPU kernel through oneDNN (runtime/cpu/conv_onednn.h) against a direct convolution
// written out here (the ONNX definition as loops, accumulated in double): the geometries of
// ResNet and MobileNet and the corners of the slicing over the pool (bands of rows with
// padding at either end, channel blocks, odd channel counts, batches), at 1, 2 and 3
// threads; that each case really took oneDNN and not the im2col fallback; and that constant
// weights are reordered once while run-time weights are read on every call.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu/conv_onednn.h"
#include "runtime/cpu/nn_kernels.h"
#include "runtime/ops/half.h"

namespace hf {
namespace {

struct Case {
  const char* name;
  int64_t n, c, h, w, m, kh, kw, stride, pad, dilation, group;
  bool bias;
};

ConvGeometry geometry(const Case& k) {
  ConvGeometry g;
  g.n = k.n;
  g.c = k.c;
  g.m = k.m;
  g.group = k.group;
  const int64_t in[2] = {k.h, k.w}, kern[2] = {k.kh, k.kw};
  for (int a = 0; a < 2; ++a) {
    g.win.k[a] = kern[a];
    g.win.stride[a] = k.stride;
    g.win.dilation[a] = k.dilation;
    g.win.pad_begin[a] = g.win.pad_end[a] = k.pad;
    g.win.in[a] = in[a];
    g.win.out[a] = (in[a] + 2 * k.pad - k.dilation * (kern[a] - 1) - 1) / k.stride + 1;
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

// y[n][m][oh][ow] = bias[m] + sum over c in m's group, i, j of x[..] * w[m][c][i][j], and the
// sum of the terms' magnitudes (the scale of the rounding error) in `mag`.
void direct_conv(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                 const float* bias, std::vector<double>& y, std::vector<double>& mag) {
  const Window2d& win = g.win;
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int64_t H = win.in[0], W = win.in[1], OH = win.out[0], OW = win.out[1];
  y.assign(g.n * g.m * OH * OW, 0.0);
  mag.assign(y.size(), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = bias ? bias[m] : 0.0, a = std::abs(s);
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < win.k[0]; ++i)
              for (int64_t j = 0; j < win.k[1]; ++j) {
                const int64_t ih = oh * win.stride[0] - win.pad_begin[0] + i * win.dilation[0];
                const int64_t iw = ow * win.stride[1] - win.pad_begin[1] + j * win.dilation[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const int64_t ic = (m / mg) * cg + c;
                const double t = double(x[((n * g.c + ic) * H + ih) * W + iw]) *
                                 w[((m * cg + c) * win.k[0] + i) * win.k[1] + j];
                s += t;
                a += std::abs(t);
              }
          const int64_t o = ((n * g.m + m) * OH + oh) * OW + ow;
          y[o] = s;
          mag[o] = a;
        }
}

// Runs `conv` and checks every output against the direct convolution.
void expect_matches_direct(cpu::Conv2d& conv, const ConvGeometry& g, const std::vector<float>& x,
                           const std::vector<float>& w, const std::vector<float>* b,
                           const std::string& what) {
  const int64_t OH = g.win.out[0], OW = g.win.out[1];
  std::vector<float> y(g.n * g.m * OH * OW, NAN);
  TensorView xv = contiguous_view(const_cast<float*>(x.data()), DType::F32,
                                  {g.n, g.c, g.win.in[0], g.win.in[1]});
  TensorView wv = contiguous_view(const_cast<float*>(w.data()), DType::F32,
                                  {g.m, g.c / g.group, g.win.k[0], g.win.k[1]});
  TensorView bv = b ? contiguous_view(const_cast<float*>(b->data()), DType::F32, {g.m}) : xv;
  TensorView yv = contiguous_view(y.data(), DType::F32, {g.n, g.m, OH, OW});
  conv.run(xv, wv, b ? &bv : nullptr, yv);
  std::vector<double> ref, mag;
  direct_conv(g, x, w, b ? b->data() : nullptr, ref, mag);
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 5; ++i) {
    // f32 products summed in some order: an error of a few ulps of the terms' magnitude.
    const double tol = 1e-5 * mag[i] + 1e-6;
    if (!(std::abs(y[i] - ref[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " expected " << ref[i] << ", got " << y[i];
      ++bad;
    }
  }
}

const Case kCases[] = {
    // name, n, c, h, w, m, kh, kw, stride, pad, dilation, group, bias
    {"3x3_pad1", 1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, true},
    {"3x3_pad1_stride2", 1, 32, 15, 15, 48, 3, 3, 2, 1, 1, 1, true},
    {"1x1", 1, 24, 10, 10, 40, 1, 1, 1, 0, 1, 1, true},
    {"1x1_stride2", 1, 24, 11, 11, 40, 1, 1, 2, 0, 1, 1, false},
    {"1x1_pad1", 1, 8, 6, 6, 12, 1, 1, 1, 1, 1, 1, true},
    {"stem_7x7_stride2", 1, 3, 32, 32, 64, 7, 7, 2, 3, 1, 1, false},
    {"depthwise_3x3", 1, 32, 12, 12, 32, 3, 3, 1, 1, 1, 32, true},
    {"depthwise_3x3_stride2", 1, 24, 13, 13, 24, 3, 3, 2, 1, 1, 24, false},
    {"depthwise_multiplier2", 1, 8, 9, 9, 16, 3, 3, 1, 1, 1, 8, true},
    {"grouped_4", 1, 16, 9, 9, 24, 3, 3, 1, 1, 1, 4, true},
    {"grouped_1x1", 1, 12, 7, 7, 18, 1, 1, 1, 0, 1, 3, true},
    {"dilation2", 1, 8, 16, 16, 8, 3, 3, 1, 2, 2, 1, true},
    {"no_bias", 1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, false},
    {"batch3", 3, 16, 10, 10, 24, 3, 3, 1, 1, 1, 1, true},
    {"batch2_1x1", 2, 20, 6, 6, 36, 1, 1, 1, 0, 1, 1, true},
    {"batch2_depthwise", 2, 16, 8, 8, 16, 3, 3, 2, 1, 1, 16, true},
    {"odd_channels", 1, 7, 9, 11, 13, 3, 3, 1, 1, 1, 1, true},
    {"odd_channels_1x1", 1, 5, 7, 7, 3, 1, 1, 1, 0, 1, 1, true},
    {"odd_depthwise", 1, 19, 7, 5, 19, 3, 3, 1, 1, 1, 19, true},
    {"5x5_pad2_stride2_odd", 1, 17, 13, 9, 33, 5, 5, 2, 2, 1, 1, true},
    {"rectangular_kernel", 1, 6, 10, 12, 10, 1, 3, 1, 0, 1, 1, true},
    {"no_padding_3x3", 1, 8, 7, 7, 8, 3, 3, 1, 0, 1, 1, true},
    {"more_threads_than_rows", 1, 8, 2, 2, 8, 3, 3, 1, 1, 1, 1, true},
    // Bands that take the input row their stride skips (even heights, no padding).
    {"3x3_stride2_skips_last_row", 1, 16, 12, 12, 16, 3, 3, 2, 0, 1, 1, true},
    {"grouped_1x1_stride2_even", 1, 16, 12, 10, 24, 1, 1, 2, 0, 1, 2, true},
    // Weights outweigh activations: from two threads on, slices of output channel blocks in
    // nChw16c on AVX-512, else nChw8c (80 channels: 5 or 10 blocks, an uneven split),
    // batches, a stride, fewer input blocks than slices (16 channels).
    {"blocked_small_image", 1, 32, 5, 6, 80, 3, 3, 1, 1, 1, 1, true},
    {"blocked_batch2_stride2", 2, 48, 7, 7, 80, 3, 3, 2, 1, 1, 1, false},
    {"blocked_one_input_block", 1, 16, 3, 3, 64, 3, 3, 1, 1, 1, 1, true},
};

TEST(ConvOnednn, MatchesTheDirectConvolution) {
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    for (const Case& k : kCases) {
      const std::string what = std::string(k.name) + " at " + std::to_string(threads) + " threads";
      const ConvGeometry g = geometry(k);
      std::vector<float> x = random_floats(k.n * k.c * k.h * k.w, 1);
      std::vector<float> w = random_floats(k.m * (k.c / k.group) * k.kh * k.kw, 2);
      std::vector<float> b = random_floats(k.m, 3);
      for (bool const_weights : {false, true}) {
        cpu::Conv2d conv(g, pool, DType::F32, const_weights);
        // Every case is one oneDNN can run: the test is about that path, not the fallback.
        EXPECT_EQ(std::string(conv.describe()).find("im2col"), std::string::npos)
            << what << " took " << conv.describe();
        if (std::string(k.name).rfind("blocked", 0) == 0) {
          EXPECT_EQ(std::string(conv.describe()).rfind(cpu::blocked_layout(), 0) == 0, threads > 1)
              << what << " took " << conv.describe();
        }
        for (int iter = 0; iter < 2; ++iter)  // the second run reuses every buffer
          expect_matches_direct(
              conv, g, x, w, k.bias ? &b : nullptr,
              what + (const_weights ? ", constant weights" : "") + ", run " + std::to_string(iter));
      }
    }
  }
}

// Where the weights outweigh the activations, two threads split output channels in the
// blocked layout, except on AVX-512 where the NHWC bands (oneDNN's brgconv) would hold 64
// output pixels or more each: measured in the graph, bands of 14x14 outputs ran faster and
// bands of 7x7 slower (bench/RESULTS.md). (MatchesTheDirectConvolution checks both plans'
// results.)
TEST(ConvOnednn, SmallImagesTakeChannelSlicesUnlessBandsAreWideEnoughForBrgconv) {
  cpu::ThreadPool pool(2);
  const bool avx512 = std::string(cpu::blocked_layout()) == "nChw16c";
  for (const Case& k :
       {Case{"1x1_256_to_1024_14x14", 1, 256, 14, 14, 1024, 1, 1, 1, 0, 1, 1, true},
        Case{"3x3_stride2_128_to_256_28x28", 1, 128, 28, 28, 256, 3, 3, 2, 1, 1, 1, true},
        Case{"1x1_512_to_2048_7x7", 1, 512, 7, 7, 2048, 1, 1, 1, 0, 1, 1, true}}) {
    ConvGeometry g = geometry(k);
    g.nhwc = true;
    const bool bands_of_64 = g.win.out[0] * g.win.out[1] / 2 >= 64;
    cpu::Conv2d conv(g, pool, DType::F32, /*const_weights=*/true);
    const std::string plan = conv.describe();
    EXPECT_EQ(plan.rfind(cpu::blocked_layout(), 0) == 0, !(avx512 && bands_of_64))
        << k.name << " took " << plan;
  }
}

// A residual block's last Conv (1x1, NHWC, a small image with many channels) with its ADD of
// the block's input and RELU as post-ops: the same oneDNN kernel as the Conv alone (where a
// binary post-op would cost it that kernel, the add runs as a sum), and bitwise the results
// of the Conv followed by the add and the relu, at each plan the pool's size picks (bands of
// rows at one thread, channel blocks from two).
TEST(ConvOnednn, AResidualAddKeepsTheConvsKernelAndItsResults) {
  for (const Case& k :
       {Case{"512_to_2048_7x7", 1, 512, 7, 7, 2048, 1, 1, 1, 0, 1, 1, true},
        Case{"64_to_256_14x14", 1, 64, 14, 14, 256, 1, 1, 1, 0, 1, 1, true},
        Case{"1024_to_2048_stride2", 1, 1024, 14, 14, 2048, 1, 1, 2, 0, 1, 1, false}})
    for (int threads : {1, 2}) {
      const std::string what = std::string(k.name) + " at " + std::to_string(threads) + " threads";
      cpu::ThreadPool pool(threads);
      ConvGeometry g = geometry(k);
      g.nhwc = true;
      const int64_t out = g.n * g.m * g.win.out[0] * g.win.out[1];
      std::vector<float> x = random_floats(k.n * k.c * k.h * k.w, 1);
      std::vector<float> w = random_floats(k.m * k.c, 2), b = random_floats(k.m, 3);
      std::vector<float> residual = random_floats(out, 4);
      auto plain = cpu::OnednnConv::create(g, threads, true);
      auto fused = cpu::OnednnConv::create(
          g, threads, true, {{.kind = ConvPostOp::Add, .operand = 0}, {.kind = ConvPostOp::Relu}});
      ASSERT_TRUE(plain && fused) << what;
      EXPECT_STREQ(fused->describe(), plain->describe()) << what;
      std::vector<float> want(out), got(out, NAN);
      plain->run(x.data(), w.data(), k.bias ? b.data() : nullptr, want.data(), pool);
      for (int64_t i = 0; i < out; ++i) want[i] = std::max(want[i] + residual[i], 0.0f);
      const float* operands[] = {residual.data()};
      for (int iter = 0; iter < 2; ++iter) {
        fused->run(x.data(), w.data(), k.bias ? b.data() : nullptr, got.data(), pool, operands);
        for (int64_t i = 0; i < out; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
              << what << ", run " << iter << ", element " << i << ": " << got[i] << " against "
              << want[i];
      }
    }
}

TEST(ConvOnednn, RunTimeWeightsAreReadOnEveryCall) {
  cpu::ThreadPool pool(2);
  const Case k = {"3x3", 1, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, true};
  const ConvGeometry g = geometry(k);
  std::vector<float> x = random_floats(k.n * k.c * k.h * k.w, 1), b = random_floats(k.m, 3);
  std::vector<float> w = random_floats(k.m * k.c * k.kh * k.kw, 2);
  cpu::Conv2d conv(g, pool, DType::F32, /*const_weights=*/false);
  expect_matches_direct(conv, g, x, w, &b, "first weights");
  w = random_floats(w.size(), 4);  // same size: typically the same address
  expect_matches_direct(conv, g, x, w, &b, "new weights, same buffer");
}

TEST(ConvOnednn, ConstantWeightsAtANewAddressAreReorderedAgain) {
  cpu::ThreadPool pool(2);
  const Case k = {"3x3", 1, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, false};
  const ConvGeometry g = geometry(k);
  std::vector<float> x = random_floats(k.n * k.c * k.h * k.w, 1);
  std::vector<float> w1 = random_floats(k.m * k.c * k.kh * k.kw, 2);
  std::vector<float> w2 = random_floats(w1.size(), 5);
  cpu::Conv2d conv(g, pool, DType::F32, /*const_weights=*/true);
  expect_matches_direct(conv, g, x, w1, nullptr, "weights 1");
  expect_matches_direct(conv, g, x, w2, nullptr, "weights 2");
}

TEST(ConvOnednn, HalfPrecisionGoesThroughF32) {
  cpu::ThreadPool pool(2);
  const Case k = {"3x3", 1, 8, 6, 6, 8, 3, 3, 1, 1, 1, 1, true};
  const ConvGeometry g = geometry(k);
  std::vector<float> x = random_floats(k.n * k.c * k.h * k.w, 1);
  std::vector<float> w = random_floats(k.m * k.c * k.kh * k.kw, 2), b = random_floats(k.m, 3);
  // Values that bf16 holds exactly: the only error left is the f32 sum's and the output's.
  auto round_bf16 = [](std::vector<float>& v) {
    for (float& f : v) f = std::round(f * 64) / 64;
  };
  round_bf16(x), round_bf16(w), round_bf16(b);
  std::vector<bf16> xh(x.size()), wh(w.size()), bh(b.size());
  for (size_t i = 0; i < x.size(); ++i) xh[i] = to_bf16(x[i]);
  for (size_t i = 0; i < w.size(); ++i) wh[i] = to_bf16(w[i]);
  for (size_t i = 0; i < b.size(); ++i) bh[i] = to_bf16(b[i]);
  std::vector<bf16> yh(k.m * k.h * k.w);
  cpu::Conv2d conv(g, pool, DType::BF16, /*const_weights=*/true);
  const TensorView bv = contiguous_view(bh.data(), DType::BF16, {k.m});
  conv.run(contiguous_view(xh.data(), DType::BF16, {1, k.c, k.h, k.w}),
           contiguous_view(wh.data(), DType::BF16, {k.m, k.c, k.kh, k.kw}), &bv,
           contiguous_view(yh.data(), DType::BF16, {1, k.m, k.h, k.w}));
  std::vector<double> ref, mag;
  direct_conv(g, x, w, b.data(), ref, mag);
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_NEAR(to_f32(yh[i]), ref[i], 1e-2 * std::max(1.0, std::abs(ref[i]))) << i;
}

}  // namespace
}  // namespace hf
