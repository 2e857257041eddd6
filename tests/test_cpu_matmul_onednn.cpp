// MatMul's oneDNN kernel (runtime/cpu/matmul_onednn.h) against a product written out here
// (accumulated in double): Linear layers whose batches fold into rows, attention's batched
// products, a shared left operand, a matrix-vector product (column blocks), odd sizes
// everywhere (the brgemm kernels' tails), at 1, 2 and 3 threads; constant weights packed once
// and kept (with padded rows where oneDNN reads them plain), run-time weights read on every
// call; and the shapes it leaves to matmul().
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/cpu/matmul_onednn.h"

namespace hf {
namespace {

using cpu::OnednnMatmul;

std::vector<float> random_floats(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// NumPy matmul of dense operands whose batch axes are equal or a single matrix (rank 2 or
// all ones), with the sum of the terms' magnitudes (the scale of the rounding error).
void reference(const Shape& as, const std::vector<float>& a, const Shape& bs,
               const std::vector<float>& b, const Shape& os, std::vector<double>& y,
               std::vector<double>& mag) {
  const int64_t m = os[os.size() - 2], n = os.back(), k = as.back();
  const int64_t batches = numel(os) / (m * n);
  const bool a_shared = numel(as) == m * k, b_shared = numel(bs) == k * n;
  y.assign(numel(os), 0.0);
  mag.assign(y.size(), 0.0);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, g = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a[(a_shared ? 0 : t * m * k) + i * k + p];
          const double w = b[(b_shared ? 0 : t * k * n) + p * n + j];
          s += x * w;
          g += std::abs(x * w);
        }
        y[t * m * n + i * n + j] = s;
        mag[t * m * n + i * n + j] = g;
      }
}

struct Case {
  const char* name;
  Shape a, b, out;
};

const Case kCases[] = {
    {"linear_folded", {2, 5, 7}, {7, 9}, {2, 5, 9}},
    {"gpt2_qkv_rows", {1, 128, 96}, {96, 230}, {1, 128, 230}},
    {"odd_rows_and_k", {37, 61}, {61, 45}, {37, 45}},
    {"gemv_column_blocks", {1, 1280}, {1280, 1000}, {1, 1000}},
    {"gemv_narrow", {1, 33}, {33, 7}, {1, 7}},
    {"attention_batched", {2, 3, 17, 8}, {2, 3, 8, 19}, {2, 3, 17, 19}},
    {"shared_left", {5, 6}, {3, 6, 7}, {3, 5, 7}},
    {"broadcast_batch_of_one", {1, 4, 9}, {4, 9, 3}, {4, 4, 3}},
    // Rows of b 4 KiB apart: where oneDNN keeps b plain, the packed copy has padded rows.
    {"rows_4k_apart", {24, 40}, {40, 1024}, {24, 1024}},
};

void expect_product(const Case& c, int threads, bool const_b) {
  SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(threads) + " threads" +
               (const_b ? ", constant b" : ""));
  cpu::ThreadPool pool(threads);
  auto mm = OnednnMatmul::create(c.a, c.b, c.out, threads, const_b);
  ASSERT_NE(mm, nullptr);
  std::vector<float> a = random_floats(numel(c.a), 1), b = random_floats(numel(c.b), 2);
  std::vector<float> y(numel(c.out), NAN);
  std::vector<double> ref, mag;
  for (int round = 0; round < 2; ++round) {
    if (round == 1 && !const_b) b = random_floats(numel(c.b), 3);  // read again, not cached
    mm->run(a.data(), b.data(), y.data(), pool);
    reference(c.a, a, c.b, b, c.out, ref, mag);
    for (size_t i = 0; i < y.size(); ++i) {
      const double tol = 1e-5 * mag[i] + 1e-6;
      ASSERT_LE(std::abs(y[i] - ref[i]), tol)
          << "element " << i << " of round " << round << ", plan: " << mm->describe();
    }
  }
}

TEST(OnednnMatmul, MatchesTheProductAtEveryThreadCount) {
  for (const Case& c : kCases)
    for (int threads : {1, 2, 3})
      for (bool const_b : {false, true}) expect_product(c, threads, const_b);
}

TEST(OnednnMatmul, PacksConstantWeightsOnceAndKeepsThem) {
  const Case c{"packed", {1, 64, 48}, {48, 40}, {1, 64, 40}};
  cpu::ThreadPool pool(2);
  auto mm = OnednnMatmul::create(c.a, c.b, c.out, 2, true);
  ASSERT_NE(mm, nullptr);
  EXPECT_NE(std::string(mm->describe()).find("packed b"), std::string::npos) << mm->describe();
  std::vector<float> a = random_floats(numel(c.a), 1), b = random_floats(numel(c.b), 2);
  std::vector<float> first(numel(c.out)), second(numel(c.out));
  mm->run(a.data(), b.data(), first.data(), pool);
  // A constant's buffer never changes (plan.cpp): the packed copy is what the kernel reads, so
  // scribbling over the plain one after the first run must not change the product.
  std::fill(b.begin(), b.end(), 0.0f);
  mm->run(a.data(), b.data(), second.data(), pool);
  EXPECT_EQ(first, second);
}

TEST(OnednnMatmul, LeavesOtherBroadcastPatternsToTheGeneralKernel) {
  // a broadcast along one batch axis and walking the other: not a pattern it plans.
  EXPECT_EQ(OnednnMatmul::create({2, 1, 3, 4}, {2, 5, 4, 6}, {2, 5, 3, 6}, 2, false), nullptr);
  EXPECT_EQ(OnednnMatmul::create({3, 4}, {5, 6}, {3, 6}, 2, false), nullptr);  // k differs
  EXPECT_EQ(OnednnMatmul::create({0, 4}, {4, 6}, {0, 6}, 2, false), nullptr);  // empty
}

}  // namespace
}  // namespace hf
