// The wide dtypes: f64 and the integer types i8, i16, u16, u32 and u64 (runtime/ir/dtype.h).
// Cast between every pair, elementwise modes and reductions in the unfused CPU kernels, ONNX
// models of those types, TensorProto typed fields, and fusion's refusal. Every expected value
// comes from a reference written here: exact integer arithmetic in __int128 and the C
// library's double functions, independent of the kernels' templates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "fusion/detect.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/tensor_file.h"
#include "runtime/ops/half.h"
#include "runtime/ops/reduce_mode.h"
#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using i128 = __int128;

// a * b modulo 2^128, in unsigned arithmetic: the signed product of two u64 values overflows
// __int128 (undefined; UBSan stops there). The types tested are at most 64 bits wide, so
// wrap() of this is the exact wrapped product.
i128 mul_wrap(i128 a, i128 b) {
  using u128 = unsigned __int128;
  return static_cast<i128>(static_cast<u128>(a) * static_cast<u128>(b));
}
using namespace test::onnx;

constexpr DType kWideInts[] = {DType::I8, DType::I16, DType::U16, DType::U32, DType::U64};
constexpr DType kAll[] = {DType::F32,  DType::F16, DType::BF16, DType::I32, DType::I64,
                          DType::Bool, DType::U8,  DType::F64,  DType::I8,  DType::I16,
                          DType::U16,  DType::U32, DType::U64};

int bits_of(DType t) {
  return static_cast<int>(dtype_size(t)) * 8;
}
bool is_signed_int(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
i128 int_min(DType t) {
  return is_signed_int(t) ? -(i128(1) << (bits_of(t) - 1)) : 0;
}
i128 int_max(DType t) {
  return is_signed_int(t) ? (i128(1) << (bits_of(t) - 1)) - 1 : (i128(1) << bits_of(t)) - 1;
}

// An integer reduced modulo 2^bits into the type's range.
i128 wrap(DType t, i128 v) {
  const i128 m = i128(1) << bits_of(t);
  v %= m;
  if (v < 0) v += m;
  if (is_signed_int(t) && v > int_max(t)) v -= m;
  return v;
}

// Element k of an integer or bool tensor, exactly.
i128 get_int(const TensorView& v, int64_t k) {
  const char* p = static_cast<const char*>(v.data) + k * dtype_size(v.dtype);
  uint64_t u = 0;
  std::memcpy(&u, p, dtype_size(v.dtype));  // little-endian
  if (v.dtype == DType::Bool) return u != 0;
  const int b = bits_of(v.dtype);
  if (is_signed_int(v.dtype) && b < 64 && (u >> (b - 1)) & 1) return i128(u) - (i128(1) << b);
  if (is_signed_int(v.dtype) && b == 64) return static_cast<int64_t>(u);
  return u;
}
void put_int(const TensorView& v, int64_t k, i128 x) {
  const uint64_t u = static_cast<uint64_t>(wrap(DType::U64, x));
  std::memcpy(static_cast<char*>(v.data) + k * dtype_size(v.dtype), &u, dtype_size(v.dtype));
}

// A source value: exact integer or a double (floats).
struct Val {
  bool is_int;
  i128 i;
  double f;
};

Val get(const TensorView& v, int64_t k) {
  if (is_float(v.dtype)) return {false, 0, load_double(v, k)};
  return {true, get_int(v, k), 0};
}

// ONNX Cast: float -> int truncates toward zero (out of range: hotfuse saturates, NaN -> 0),
// int -> int wraps, x -> bool is x != 0, bool -> x is 0/1, to a float type rounds to nearest.
// Written as the element of a tensor of type `to`, read back exactly.
void reference_cast(const Val& x, const TensorView& out, int64_t k) {
  const DType to = out.dtype;
  if (to == DType::Bool) {
    put_int(out, k, x.is_int ? x.i != 0 : x.f != 0);
  } else if (is_float(to)) {
    // i128 -> long double is exact below 2^64 (64-bit mantissa); then one rounding to the
    // target, except f16/bf16, which go through f32 by definition.
    const long double l = x.is_int ? static_cast<long double>(x.i) : x.f;
    if (to == DType::F64)
      out.as<double>()[k] = static_cast<double>(l);
    else if (to == DType::F32)
      out.as<float>()[k] = static_cast<float>(l);
    else
      store_double(out, k, static_cast<float>(l));
  } else if (x.is_int) {
    put_int(out, k, wrap(to, x.i));
  } else if (std::isnan(x.f)) {
    put_int(out, k, 0);
  } else {
    const long double t = std::trunc(static_cast<long double>(x.f));
    put_int(out, k,
            t <= static_cast<long double>(int_min(to))   ? int_min(to)
            : t >= static_cast<long double>(int_max(to)) ? int_max(to)
                                                         : static_cast<i128>(t));
  }
}

// Values that exercise type `t`: its extremes, around zero, and for floats fractions,
// values beyond f32's precision and range, NaN and infinities.
HostTensor samples(DType t) {
  std::vector<double> fl = {0.0,         -0.0,   1.5,      -1.5,     2.75,    -2.75,
                            127.9,       -128.9, 255.5,    256.0,    40000.7, -40000.7,
                            1e9 + 0.3,   5e18,   -5e18,    1e300,    -1e300,  1e-300,
                            1.0 + 1e-12, NAN,    INFINITY, -INFINITY};
  if (t == DType::Bool) fl = {0, 1, 1, 0};
  if (!is_float(t) && t != DType::Bool) {
    HostTensor h(t, {12});
    const i128 lo = int_min(t), hi = int_max(t);
    const i128 v[] = {0, 1, -1, 2, lo, lo + 1, hi, hi - 1, 100, -100, hi / 3, lo / 3};
    for (int k = 0; k < 12; ++k) put_int(h.view(), k, wrap(t, v[k]));
    return h;
  }
  HostTensor h(t, {static_cast<int64_t>(fl.size())});
  for (size_t k = 0; k < fl.size(); ++k) store_double(h.view(), static_cast<int64_t>(k), fl[k]);
  return h;
}

bool same_element(const TensorView& a, const TensorView& b, int64_t k) {
  if (is_float(a.dtype)) {
    const double x = load_double(a, k), y = load_double(b, k);
    return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
  }
  return get_int(a, k) == get_int(b, k);
}

TEST(DTypeWide, SizesNamesAndKinds) {
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_EQ(dtype_size(DType::I8), 1u);
  EXPECT_EQ(dtype_size(DType::I16), 2u);
  EXPECT_EQ(dtype_size(DType::U16), 2u);
  EXPECT_EQ(dtype_size(DType::U32), 4u);
  EXPECT_EQ(dtype_size(DType::U64), 8u);
  for (DType t : kAll) EXPECT_EQ(parse_dtype(dtype_name(t)), t) << dtype_name(t);
  EXPECT_EQ(parse_dtype("float64"), DType::F64);
  EXPECT_EQ(parse_dtype("int8"), DType::I8);
  EXPECT_EQ(parse_dtype("uint32"), DType::U32);
  // f64 computes in itself, never in f32.
  EXPECT_EQ(compute_dtype(DType::F64), DType::F64);
  EXPECT_TRUE(is_float(DType::F64));
  for (DType t : kWideInts) {
    EXPECT_TRUE(is_int(t));
    EXPECT_EQ(compute_dtype(t), t);
    EXPECT_FALSE(is_core_dtype(t));
  }
  EXPECT_FALSE(is_core_dtype(DType::F64));
}

TEST(DTypeWide, CastBetweenEveryPairMatchesTheReference) {
  cpu::ThreadPool pool(2);
  int pairs = 0;
  for (DType from : kAll) {
    HostTensor in = samples(from);
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
      HostTensor got(to, in.shape()), want(to, in.shape());
      cpu::type_convert(in.view(), got.view(), pool);
      for (int64_t k = 0; k < in.numel(); ++k) {
        reference_cast(get(in.view(), k), want.view(), k);
        EXPECT_TRUE(same_element(got.view(), want.view(), k))
            << "element " << k << ": " << load_double(in.view(), k) << " gave "
            << load_double(got.view(), k) << ", expected " << load_double(want.view(), k);
      }
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 13 * 13);
}

TEST(DTypeWide, CastKeepsWhatF32WouldLose) {
  cpu::ThreadPool pool(1);
  HostTensor u(DType::U64, {1}), d(DType::F64, {1});
  u.as<uint64_t>()[0] = (uint64_t{1} << 63) + 1;  // not exact in f64 either: rounds to 2^63
  cpu::type_convert(u.view(), d.view(), pool);
  EXPECT_EQ(d.as<double>()[0], 9223372036854775808.0);
  HostTensor i(DType::I64, {1});
  i.as<int64_t>()[0] = (int64_t{1} << 40) + 1;  // exact in f64, not in f32
  cpu::type_convert(i.view(), d.view(), pool);
  EXPECT_EQ(d.as<double>()[0], 1099511627777.0);
  HostTensor back(DType::I64, {1});
  cpu::type_convert(d.view(), back.view(), pool);
  EXPECT_EQ(back.as<int64_t>()[0], (int64_t{1} << 40) + 1);
}

// ---- elementwise ----------------------------------------------------------------------------

struct Binary {
  Mode mode;
  i128 (*f)(i128, i128);
};

TEST(DTypeWide, IntegerModesWrapAroundLikeTheReference) {
  cpu::ThreadPool pool(2);
  const Binary ops[] = {
      {Mode::ADD, [](i128 a, i128 b) { return a + b; }},
      {Mode::SUB, [](i128 a, i128 b) { return a - b; }},
      {Mode::MUL, [](i128 a, i128 b) { return mul_wrap(a, b); }},
      {Mode::MAX, [](i128 a, i128 b) { return a > b ? a : b; }},
      {Mode::MIN, [](i128 a, i128 b) { return a < b ? a : b; }},
      {Mode::AND, [](i128 a, i128 b) { return a & b; }},
      {Mode::XOR, [](i128 a, i128 b) { return a ^ b; }},
  };
  for (DType t : kWideInts) {
    HostTensor a = samples(t);
    HostTensor b(t, a.shape());
    for (int64_t k = 0; k < b.numel(); ++k) put_int(b.view(), k, get_int(a.view(), (k + 5) % 12));
    for (const Binary& op : ops) {
      SCOPED_TRACE(std::string(mode_info(op.mode).name) + " " + std::string(dtype_name(t)));
      HostTensor out(t, a.shape());
      cpu::elemwise(op.mode, std::vector<TensorView>{a.view(), b.view()}, out.view(), pool);
      for (int64_t k = 0; k < a.numel(); ++k)
        EXPECT_TRUE(get_int(out.view(), k) ==
                    wrap(t, op.f(get_int(a.view(), k), get_int(b.view(), k))))
            << "element " << k;
    }
    HostTensor neg(t, a.shape()), lt(DType::Bool, a.shape());
    cpu::elemwise(Mode::NEGATE, std::vector<TensorView>{a.view()}, neg.view(), pool);
    cpu::elemwise(Mode::LT, std::vector<TensorView>{a.view(), b.view()}, lt.view(), pool);
    for (int64_t k = 0; k < a.numel(); ++k) {
      EXPECT_TRUE(get_int(neg.view(), k) == wrap(t, -get_int(a.view(), k)));
      EXPECT_EQ(lt.as<uint8_t>()[k], get_int(a.view(), k) < get_int(b.view(), k));
    }
  }
}

TEST(DTypeWide, F64ModesComputeInF64) {
  cpu::ThreadPool pool(1);
  const std::vector<double> xs = {0.1, 0.5, 1.0 + 1e-12, 2.5, 10.0, 123.456};
  HostTensor x(DType::F64, {6});
  for (int k = 0; k < 6; ++k) x.as<double>()[k] = xs[k];
  struct Unary {
    Mode mode;
    double (*f)(double);
  };
  const Unary ops[] = {{Mode::EXP, [](double v) { return std::exp(v); }},
                       {Mode::LOG, [](double v) { return std::log(v); }},
                       {Mode::SQRT, [](double v) { return std::sqrt(v); }},
                       {Mode::TANH, [](double v) { return std::tanh(v); }},
                       {Mode::SIGMOID, [](double v) { return 1 / (1 + std::exp(-v)); }},
                       {Mode::SIN, [](double v) { return std::sin(v); }}};
  for (const Unary& op : ops) {
    HostTensor y(DType::F64, {6});
    cpu::elemwise(op.mode, std::vector<TensorView>{x.view()}, y.view(), pool);
    for (int k = 0; k < 6; ++k)  // f32 math would be off by ~1e-7 relative
      EXPECT_NEAR(y.as<double>()[k], op.f(xs[k]), 1e-14 * std::fabs(op.f(xs[k])))
          << mode_info(op.mode).name << " of " << xs[k];
  }
  HostTensor y(DType::F64, {6});
  cpu::elemwise(Mode::TRUE_DIV, std::vector<TensorView>{x.view(), x.view()}, y.view(), pool);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(y.as<double>()[k], 1.0);
  HostTensor one(DType::F64, {6});
  for (int k = 0; k < 6; ++k) one.as<double>()[k] = 1.0;
  cpu::elemwise(Mode::SUB, std::vector<TensorView>{x.view(), one.view()}, y.view(), pool);
  EXPECT_EQ(y.as<double>()[2], xs[2] - 1.0);  // about 1e-12: 0 in f32
  EXPECT_GT(y.as<double>()[2], 0.0);
}

TEST(DTypeWide, ModesWithoutAWideKernelAreRefusedByName) {
  cpu::ThreadPool pool(1);
  HostTensor a(DType::I16, {2}), f(DType::F64, {2});
  try {
    cpu::elemwise(Mode::RMULH, std::vector<TensorView>{a.view(), a.view()}, a.view(), pool);
    FAIL() << "RMULH on i16 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("RMULH does not support dtype i16"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cpu::elemwise(Mode::ERFINV, std::vector<TensorView>{f.view()}, f.view(), pool),
               std::invalid_argument);
}

// ---- reductions -----------------------------------------------------------------------------

TEST(DTypeWide, ReductionsMatchTheReference) {
  cpu::ThreadPool pool(2);
  const int axes[] = {1};
  for (DType t : kWideInts) {
    SCOPED_TRACE(dtype_name(t));
    HostTensor in(t, {3, 40});
    for (int64_t k = 0; k < in.numel(); ++k)
      put_int(in.view(), k, wrap(t, int_max(t) - 3 * k * k + (k % 7 == 0 ? int_min(t) : 0)));
    for (ReduceMode m : {ReduceMode::SUM, ReduceMode::MAX, ReduceMode::MIN, ReduceMode::PRODUCT}) {
      HostTensor out(t, {3, 1});
      cpu::reduce(m, in.view(), axes, out.view(), pool);
      for (int r = 0; r < 3; ++r) {
        i128 acc = m == ReduceMode::PRODUCT ? 1
                   : m == ReduceMode::SUM   ? 0
                                            : get_int(in.view(), r * 40);
        for (int c = 0; c < 40; ++c) {
          const i128 v = get_int(in.view(), r * 40 + c);
          if (m == ReduceMode::SUM) acc = wrap(t, acc + v);
          if (m == ReduceMode::PRODUCT) acc = wrap(t, wrap(DType::U64, mul_wrap(acc, v)));
          if (m == ReduceMode::MAX) acc = v > acc ? v : acc;
          if (m == ReduceMode::MIN) acc = v < acc ? v : acc;
        }
        EXPECT_TRUE(get_int(out.view(), r) == acc)
            << "mode " << static_cast<int>(m) << " row " << r;
      }
    }
  }
  // f64: a sum that f32 accumulation cannot hold.
  HostTensor d(DType::F64, {1, 1000}), s(DType::F64, {1, 1});
  double want = 0;
  for (int k = 0; k < 1000; ++k) want += d.as<double>()[k] = 1.0 + 1e-12 * k;
  cpu::reduce(ReduceMode::SUM, d.view(), axes, s.view(), pool);
  EXPECT_NEAR(s.as<double>()[0], want, 1e-9);
  cpu::reduce(ReduceMode::MEAN, d.view(), axes, s.view(), pool);
  EXPECT_NEAR(s.as<double>()[0], want / 1000, 1e-13);
}

// ---- ONNX ----------------------------------------------------------------------------------

TEST(DTypeWide, OnnxModelsOfTheWideTypesRun) {
  // Cast DOUBLE -> INT16 -> UINT32 at run time (a graph input, so nothing folds).
  Model m;
  m.input("x", TP::DOUBLE, {4});
  set_i(m.node("Cast", {"x"}, {"a"}), "to", TP::INT16);
  set_i(m.node("Cast", {"a"}, {"b"}), "to", TP::UINT32);
  m.node("Add", {"b", "b"}, {"c"});
  m.output("c");
  HostTensor x = tensor(DType::F64, {4}, {-1.9, 2.9, 40000.5, 7.0});
  // -1.9 -> -1 -> 2^32 - 1, doubled wraps to 2^32 - 2; 40000.5 -> i16 saturates at 32767.
  EXPECT_EQ(run(m, {x})[0], (std::vector<double>{4294967294.0, 4.0, 65534.0, 14.0}));

  // Integer Div truncates toward zero, Mod takes the divisor's sign (fmod = 0).
  for (int elem : {int(TP::INT8), int(TP::INT16)}) {
    Model d;
    d.input("a", elem, {4});
    d.input("b", elem, {4});
    d.node("Div", {"a", "b"}, {"q"});
    d.node("Mod", {"a", "b"}, {"r"});
    d.output("q");
    d.output("r");
    const DType t = elem == TP::INT8 ? DType::I8 : DType::I16;
    auto out = run(d, {tensor(t, {4}, {7, -7, 7, -7}), tensor(t, {4}, {2, 2, -2, -2})});
    EXPECT_EQ(out[0], (std::vector<double>{3, -3, -3, 3}));
    EXPECT_EQ(out[1], (std::vector<double>{1, 1, -1, -1}));
  }
  Model u;
  u.input("a", TP::UINT64, {2});
  u.input("b", TP::UINT64, {2});
  u.node("Div", {"a", "b"}, {"q"});
  u.output("q");
  HostTensor a(DType::U64, {2}), b(DType::U64, {2});
  a.as<uint64_t>()[0] = ~uint64_t{0};
  a.as<uint64_t>()[1] = 10;
  b.as<uint64_t>()[0] = 2;
  b.as<uint64_t>()[1] = 3;
  EXPECT_EQ(run(u, {a, b})[0], (std::vector<double>{9223372036854775807.0, 3.0}));

  // f64 math keeps f64 precision through the importer (Pow with a constant exponent too).
  Model p;
  p.input("x", TP::DOUBLE, {2});
  auto& e = p.init("e");  // a scalar DOUBLE initializer
  e.set_data_type(TP::DOUBLE);
  e.add_double_data(2.0);
  p.node("Pow", {"x", "e"}, {"y"});
  p.node("Exp", {"y"}, {"z"});
  p.output("z");
  auto z = run(p, {tensor(DType::F64, {2}, {1.0 + 1e-9, 2.0})})[0];
  EXPECT_NEAR(z[0], std::exp((1.0 + 1e-9) * (1.0 + 1e-9)), 1e-15 * std::exp(1.0));
  EXPECT_NEAR(z[1], std::exp(4.0), 1e-14 * std::exp(4.0));

  // MatMul has no f64 kernel: refused by name, not computed in f32.
  Model mm;
  mm.input("a", TP::DOUBLE, {2, 2});
  mm.input("b", TP::DOUBLE, {2, 2});
  mm.node("MatMul", {"a", "b"}, {"y"});
  mm.output("y");
  EXPECT_NE(import_error(mm).find("f64 is not supported"), std::string::npos) << import_error(mm);
}

TEST(DTypeWide, OnnxLayerNormalizationInF64) {
  // stash_type 0: computed in the input's type, f64 here (1 / sqrt, not the f32 PowC).
  Model m(17);
  m.input("x", TP::DOUBLE, {1, 4});
  auto& sc = m.init("scale");
  sc.set_data_type(TP::DOUBLE);
  sc.add_dims(4);
  for (double v : {1.0, 2.0, 0.5, -1.0}) sc.add_double_data(v);
  auto& n = m.node("LayerNormalization", {"x", "scale"}, {"y"});
  set_i(n, "stash_type", 0);
  m.output("y");
  const std::vector<double> x = {1.0, 1.0 + 1e-9, 1.0 + 2e-9, 1.0 + 4e-9};
  double mean = 0, var = 0;
  for (double v : x) mean += v / 4;
  for (double v : x) var += (v - mean) * (v - mean) / 4;
  const double scale[] = {1.0, 2.0, 0.5, -1.0};
  std::vector<double> got = run(m, {tensor(DType::F64, {1, 4}, x)})[0];
  ASSERT_EQ(got.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    const double want = (x[k] - mean) / std::sqrt(var + 1e-5) * scale[k];
    // |want| is about 3e-7; f32 would round every x to 1 and give 0. The ulp of 1.0 in
    // x - mean, over sqrt(var + eps) ~ 3e-3, bounds the f64 difference to ~1e-13.
    EXPECT_NEAR(got[k], want, 1e-11) << k;
    EXPECT_GT(std::fabs(got[k]), 1e-8) << k;
  }
}

TEST(DTypeWide, TensorProtoTypedFieldsDecode) {
  auto read = [](const TP& p) { return parse_tensor_file(p.SerializeAsString(), "t.pb"); };
  TP d;
  d.set_data_type(TP::DOUBLE);
  d.add_dims(2);
  d.add_double_data(0.1);
  d.add_double_data(-1e300);
  NamedTensor nd = read(d);
  ASSERT_EQ(nd.tensor.dtype(), DType::F64);
  EXPECT_EQ(nd.tensor.as<double>()[0], 0.1);
  EXPECT_EQ(nd.tensor.as<double>()[1], -1e300);
  struct Small {
    int elem;
    DType t;
    std::vector<int32_t> in;
    std::vector<double> want;
  };
  for (const Small& s : {Small{TP::INT8, DType::I8, {-128, 127, 5}, {-128, 127, 5}},
                         Small{TP::INT16, DType::I16, {-32768, 32767, -2}, {-32768, 32767, -2}},
                         Small{TP::UINT16, DType::U16, {65535, 0, 7}, {65535, 0, 7}}}) {
    TP p;
    p.set_data_type(s.elem);
    p.add_dims(3);
    for (int32_t v : s.in) p.add_int32_data(v);
    NamedTensor n = read(p);
    ASSERT_EQ(n.tensor.dtype(), s.t);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(load_double(n.tensor.view(), k), s.want[k]);
  }
  TP u;
  u.set_data_type(TP::UINT64);
  u.add_dims(2);
  u.add_uint64_data(~uint64_t{0});
  u.add_uint64_data(3);
  NamedTensor nu = read(u);
  ASSERT_EQ(nu.tensor.dtype(), DType::U64);
  EXPECT_EQ(nu.tensor.as<uint64_t>()[0], ~uint64_t{0});
  EXPECT_EQ(nu.tensor.as<uint64_t>()[1], 3u);
  TP u32;
  u32.set_data_type(TP::UINT32);
  u32.add_dims(1);
  u32.add_uint64_data(4294967295u);
  EXPECT_EQ(read(u32).tensor.as<uint32_t>()[0], 4294967295u);
  // And back: every wide type round-trips through raw_data byte for byte.
  for (DType t : {DType::F64, DType::I8, DType::I16, DType::U16, DType::U32, DType::U64}) {
    HostTensor h = samples(t);
    NamedTensor back = parse_tensor_file(encode_tensor_file(h.view(), "x"), "mem");
    ASSERT_EQ(back.tensor.dtype(), t);
    EXPECT_EQ(std::memcmp(back.tensor.data(), h.data(), h.bytes()), 0) << dtype_name(t);
  }
}

// ---- fusion ----------------------------------------------------------------------------------

TEST(DTypeWide, FusionLeavesWideTypesUnfusedWithTheReason) {
  for (const char* t : {"f64", "i16", "u64"}) {
    const std::string mode = std::string(t) == "f64" ? "EXP" : "NEGATE";
    Graph g = parse_graph_json(std::string(R"({"inputs": [{"name": "x", "dtype": ")") + t +
                                   R"(", "shape": [64]}], "nodes": [
          {"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["x", "x"]},
          {"name": "b", "op": "Elemwise", "mode": ")" +
                                   mode + R"(", "inputs": ["a:0"]},
          {"name": "c", "op": "Elemwise", "mode": "MUL", "inputs": ["b:0", "x"]}],
          "outputs": ["c:0"]})",
                               "g.json");
    fusion::Detection d = fusion::detect_regions(g);
    EXPECT_TRUE(d.regions.empty()) << t;
    ASSERT_FALSE(d.decisions.empty());
    for (const fusion::Decision& dec : d.decisions) {
      EXPECT_FALSE(dec.fused);
      EXPECT_NE(dec.reason.find(std::string(t) + " is not fused"), std::string::npos) << dec.reason;
    }
  }
}

}  // namespace
}  // namespace hf
