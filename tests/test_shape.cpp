#include <gtest/gtest.h>

#include "runtime/ir/dtype.h"
#include "runtime/ir/shape.h"
#include "runtime/ir/tensor.h"
#include "runtime/ops/half.h"

namespace hf {

TEST(Shape, BroadcastFollowsNumpyRules) {
  EXPECT_EQ(broadcast_shapes({8, 1, 6, 1}, {7, 1, 5}), (Shape{8, 7, 6, 5}));
  EXPECT_EQ(broadcast_shapes({5, 4}, {1}), (Shape{5, 4}));
  EXPECT_EQ(broadcast_shapes({}, {3, 2}), (Shape{3, 2}));
  EXPECT_EQ(broadcast_shapes({15, 3, 5}, {15, 1, 5}), (Shape{15, 3, 5}));
  EXPECT_FALSE(broadcast_shapes({3}, {4}).has_value());
  EXPECT_FALSE(broadcast_shapes({2, 1}, {8, 4, 3}).has_value());
}

TEST(Shape, BroadcastStridesAreZeroOnExpandedDims) {
  EXPECT_EQ(broadcast_strides({3, 1}, {2, 3, 4}), (Strides{0, 1, 0}));
  EXPECT_EQ(broadcast_strides({4}, {2, 4}), (Strides{0, 1}));
  EXPECT_TRUE(broadcasts_to({1, 4}, {3, 4}));
  EXPECT_FALSE(broadcasts_to({2, 4}, {3, 4}));
}

TEST(Shape, ContiguousStridesAndNumel) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({2, 0, 3}), 0);
  EXPECT_EQ(to_string({2, 3}), "[2,3]");
  EXPECT_EQ(normalize_axis(-1, 3), 2);
  EXPECT_FALSE(normalize_axis(3, 3).has_value());
}

TEST(DType, NamesRoundTrip) {
  for (int i = 0; i < kDTypeCount; ++i) {
    DType t = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  EXPECT_EQ(parse_dtype("float32"), DType::F32);
  EXPECT_EQ(parse_dtype("f64"), DType::F64);
  EXPECT_EQ(parse_dtype("double"), DType::F64);
  EXPECT_EQ(parse_dtype("uint64"), DType::U64);
  EXPECT_FALSE(parse_dtype("f128").has_value());
}

TEST(Half, F16RoundTripsEveryValue) {
  for (unsigned i = 0; i < 65536; ++i) {
    float f = to_f32(f16{static_cast<u16>(i)});
    u16 back = to_f16(f).bits;
    if (f != f) EXPECT_EQ(back & 0x7c00u, 0x7c00u) << i;
    else EXPECT_EQ(back, i) << i;
  }
}

TEST(Half, F16RoundsToNearestEven) {
  for (uint64_t u = 0; u < (1ull << 32); u += 65537) {
    float f = __builtin_bit_cast(float, static_cast<uint32_t>(u));
    if (f != f) continue;
    _Float16 ref = static_cast<_Float16>(f);
    EXPECT_EQ(to_f16(f).bits, __builtin_bit_cast(u16, ref)) << f;
  }
}

TEST(Half, BF16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(to_bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_bf16(__builtin_bit_cast(float, 0x3f808000u)).bits, 0x3f80);  // tie -> even
  EXPECT_EQ(to_bf16(__builtin_bit_cast(float, 0x3f818000u)).bits, 0x3f82);  // tie -> even
  EXPECT_EQ(to_bf16(__builtin_bit_cast(float, 0x3f808001u)).bits, 0x3f81);
  float nan = __builtin_nanf("");
  EXPECT_NE(to_f32(to_bf16(nan)), to_f32(to_bf16(nan)));
  EXPECT_EQ(to_f32(to_bf16(-2.5f)), -2.5f);
}

TEST(Tensor, HostTensorIsAlignedAndBroadcastViewHasZeroStrides) {
  HostTensor t(DType::F32, {3, 1});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  TensorView v = t.view().broadcast_to({2, 3, 4});
  EXPECT_EQ(v.strides, (Strides{0, 1, 0}));
  EXPECT_TRUE(t.view().is_contiguous());
  EXPECT_FALSE(v.is_contiguous());
}

}  // namespace hf
