// The unfused CPU kernels against naive references: plain loops over multi-indices that call
// ModeFn directly, or long double math.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/error.h"
#include "runtime/ops/half.h"
#include "runtime/ops/scalar_math.h"

// ---- allocation counting (for the no-allocation-on-the-call-path test) --------------------

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocs{0};
void* counted_alloc(std::size_t n, std::size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1);
  n = n ? n : 1;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (n + align - 1) / align * align)
                : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  return counted_alloc(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
// counted_alloc's memory is malloc's: GCC, seeing these inlined where a new-expression's
// pointer is deleted, takes free() for a mismatch.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace hf::cpu {
namespace {

// ---- tensors, views, element access -------------------------------------------------------

struct Owned {
  HostTensor t;
  TensorView v;
};

int64_t off_of(const TensorView& v, const std::vector<int64_t>& idx) {
  int64_t o = 0;
  for (int d = 0; d < v.rank(); ++d) o += idx[d] * v.strides[d];
  return o;
}

template <class F>
void for_each_index(const Shape& s, F&& f) {
  if (numel(s) == 0) return;
  std::vector<int64_t> idx(s.size(), 0);
  for (;;) {
    f(idx);
    int d = static_cast<int>(s.size()) - 1;
    while (d >= 0 && ++idx[d] == s[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

// Element `o` of `v` as a double (exact for everything but i64 beyond 2^53).
double get(const TensorView& v, int64_t o) {
  const char* p = static_cast<const char*>(v.data);
  switch (v.dtype) {
    case DType::F32:
      return reinterpret_cast<const float*>(p)[o];
    case DType::F16:
      return to_f32(reinterpret_cast<const f16*>(p)[o]);
    case DType::BF16:
      return to_f32(reinterpret_cast<const bf16*>(p)[o]);
    case DType::I32:
      return reinterpret_cast<const i32*>(p)[o];
    case DType::I64:
      return static_cast<double>(reinterpret_cast<const i64*>(p)[o]);
    case DType::Bool:
      return reinterpret_cast<const bool*>(p)[o];
    case DType::U8:
      return reinterpret_cast<const u8*>(p)[o];
    default:  // the wide dtypes (test_dtypes_wide.cpp)
      return load_double(v, o);
  }
}

// Stores x (of C++ type V) into element `o` of `v`, converting like the kernels do.
template <class V>
void put(const TensorView& v, int64_t o, V x) {
  char* p = static_cast<char*>(v.data);
  switch (v.dtype) {
    case DType::F32:
      reinterpret_cast<float*>(p)[o] = static_cast<float>(x);
      break;
    case DType::F16:
      reinterpret_cast<f16*>(p)[o] = to_f16(static_cast<float>(x));
      break;
    case DType::BF16:
      reinterpret_cast<bf16*>(p)[o] = to_bf16(static_cast<float>(x));
      break;
    case DType::I32:
      reinterpret_cast<i32*>(p)[o] = static_cast<i32>(x);
      break;
    case DType::I64:
      reinterpret_cast<i64*>(p)[o] = static_cast<i64>(x);
      break;
    case DType::Bool:
      reinterpret_cast<bool*>(p)[o] = static_cast<bool>(x);
      break;
    case DType::U8:
      reinterpret_cast<u8*>(p)[o] = static_cast<u8>(x);
      break;
    default:  // the wide dtypes (test_dtypes_wide.cpp)
      store_double(v, o, static_cast<double>(x));
      break;
  }
}

// Element `o` of `v` read as the compute type T.
template <class T>
T read_as(const TensorView& v, int64_t o) {
  const char* p = static_cast<const char*>(v.data);
  if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(get(v, o));
  else
    return reinterpret_cast<const T*>(p)[o];
}

Owned contiguous(DType d, Shape s) {
  Owned o;
  o.t = HostTensor(d, std::move(s));
  o.v = o.t.view();
  return o;
}

// A view of shape s stored with all axes reversed (a full transpose).
Owned transposed(DType d, const Shape& s) {
  Shape rs(s.rbegin(), s.rend());
  Owned o = contiguous(d, rs);
  Strides st = o.v.strides;
  o.v.shape = s;
  o.v.strides = Strides(st.rbegin(), st.rend());
  return o;
}

// A view of shape s reading every other element of the last axis.
Owned strided(DType d, const Shape& s) {
  Shape bs = s;
  if (!bs.empty()) bs.back() *= 2;
  Owned o = contiguous(d, bs);
  o.v.shape = s;
  if (!s.empty()) o.v.strides.back() *= 2;
  return o;
}

// A contiguous tensor of shape b read as shape s (stride 0 on broadcast axes).
Owned broadcast(DType d, const Shape& b, const Shape& s) {
  Owned o = contiguous(d, b);
  o.v = o.t.view().broadcast_to(s);
  return o;
}

// Fills the whole storage (also what a strided view skips) with gen(i).
template <class G>
void fill(const Owned& o, G&& gen) {
  TensorView flat = contiguous_view(o.t.data(), o.t.dtype(), {o.t.numel()});
  for (int64_t i = 0; i < o.t.numel(); ++i) gen(flat, i);
}

void poison(const Owned& o) {
  std::memset(o.t.data(), 0xA5, o.t.bytes());
}

bool same_float(double a, double b, double rel, double abs_tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= abs_tol + rel * std::fabs(b);
}

// Compares got against want over got's shape; ints and bools exactly.
::testing::AssertionResult same_tensor(const TensorView& got, const TensorView& want,
                                       double rel = 0, double abs_tol = 0) {
  int64_t bad = 0;
  std::string first;
  for_each_index(got.shape, [&](const std::vector<int64_t>& idx) {
    const int64_t og = off_of(got, idx), ow = off_of(want, idx);
    bool ok;
    if (got.dtype == DType::I64) {
      ok = got.as<i64>()[og] == want.as<i64>()[ow];
    } else if (is_float(got.dtype)) {
      ok = same_float(get(got, og), get(want, ow), rel, abs_tol);
    } else {
      ok = get(got, og) == get(want, ow);
    }
    if (!ok && bad++ == 0) {
      first = "at [";
      for (size_t i = 0; i < idx.size(); ++i) first += (i ? "," : "") + std::to_string(idx[i]);
      first += "]: got " + std::to_string(get(got, og)) + ", want " + std::to_string(get(want, ow));
    }
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " mismatches, first " << first;
}

// ---- elemwise reference -----------------------------------------------------------------

template <class T>
constexpr bool takes(ModeKind k) {
  if constexpr (std::is_same_v<T, float>)
    return k != ModeKind::Int && k != ModeKind::Logic;
  else if constexpr (std::is_same_v<T, bool>)
    return k == ModeKind::Logic;
  else
    return k != ModeKind::Float && k != ModeKind::Predicate;
}

template <Mode M, int A, class T>
auto call_mode(const T* a) {
  if constexpr (A == 1)
    return ModeFn<M>::apply(a[0]);
  else if constexpr (A == 2)
    return ModeFn<M>::apply(a[0], a[1]);
  else if constexpr (A == 3)
    return ModeFn<M>::apply(a[0], a[1], a[2]);
  else
    return ModeFn<M>::apply(a[0], a[1], a[2], a[3]);
}

template <class T>
void ref_apply(Mode m, const T* a, const TensorView& out, int64_t o) {
  switch (m) {
#define X(NAME, ARITY, KIND, FLOPS)                                                              \
  case Mode::NAME:                                                                               \
    if constexpr (takes<T>(ModeKind::KIND)) return put(out, o, call_mode<Mode::NAME, ARITY>(a)); \
    break;
#include "runtime/ops/elemwise_modes.def"
#undef X
  }
  throw std::logic_error("reference: mode does not take this type");
}

template <class T>
void ref_elemwise_t(Mode m, const std::vector<TensorView>& in, const TensorView& out) {
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    T a[4] = {};
    for (size_t k = 0; k < in.size(); ++k) a[k] = read_as<T>(in[k], off_of(in[k], idx));
    ref_apply<T>(m, a, out, off_of(out, idx));
  });
}

void ref_elemwise(Mode m, const std::vector<TensorView>& in, const TensorView& out) {
  switch (compute_dtype(in[0].dtype)) {
    case DType::F32:
      return ref_elemwise_t<float>(m, in, out);
    case DType::I32:
      return ref_elemwise_t<i32>(m, in, out);
    case DType::I64:
      return ref_elemwise_t<i64>(m, in, out);
    case DType::U8:
      return ref_elemwise_t<u8>(m, in, out);
    case DType::Bool:
      return ref_elemwise_t<bool>(m, in, out);
    default:
      throw std::logic_error("bad compute dtype");
  }
}

std::vector<DType> dtypes_of(ModeKind k) {
  using enum DType;
  switch (k) {
    case ModeKind::Float:
    case ModeKind::Predicate:
      return {F32, F16, BF16};
    case ModeKind::Numeric:
    case ModeKind::Compare:
      return {F32, I32, I64, U8, F16, BF16};
    case ModeKind::Int:
      return {I32, I64, U8};
    case ModeKind::Logic:
      return {Bool, I32, I64, U8};
  }
  return {};
}

// Input values inside each mode's domain, with some edge values mixed in.
struct ValueGen {
  std::mt19937_64 rng{12345};

  std::pair<double, double> domain(Mode m, int arg) {
    switch (m) {
      case Mode::ACOS:
      case Mode::ASIN:
      case Mode::ATANH:
      case Mode::ERFINV:
        return {-0.99, 0.99};
      case Mode::ERFCINV:
        return {0.01, 1.99};
      case Mode::LOG:
      case Mode::SQRT:
        return {0.01, 10};
      case Mode::LOG1P:
        return {-0.99, 10};
      case Mode::ACOSH:
        return {1, 10};
      case Mode::TAN:
        return {-1.5, 1.5};
      case Mode::POW:
        return arg == 0 ? std::pair{0.1, 4.0} : std::pair{-3.0, 3.0};
      case Mode::ACOSH_GRAD:
        return arg == 0 ? std::pair{1.1, 5.0} : std::pair{-3.0, 3.0};
      case Mode::ATANH_GRAD:
        return arg == 0 ? std::pair{-0.9, 0.9} : std::pair{-3.0, 3.0};
      case Mode::SIGMOID_GRAD:
        return {0, 1};
      case Mode::EXP:
      case Mode::EXPM1:
      case Mode::SINH:
      case Mode::COSH:
        return {-10, 10};
      case Mode::RELU6:
      case Mode::RELU6_GRAD:
        return {-2, 8};
      default:
        return {-4, 4};
    }
  }

  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  int64_t uniform_int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(double p) { return uniform(0, 1) < p; }

  void operator()(Mode m, int arg, const TensorView& v, int64_t i) {
    const ModeKind kind = mode_info(m).kind;
    const bool divisor =
        (m == Mode::TRUE_DIV || m == Mode::FLOOR_DIV || m == Mode::MOD) && arg == 1;
    if (is_float(v.dtype)) {
      // Products that overflow are inf unfused but finite inside an FMA (the kernels may
      // contract a*b+c), so multiply-add modes get a large edge value that cannot overflow.
      const bool fma_like = m == Mode::FUSE_MUL_ADD3 || m == Mode::FUSE_MUL_ADD4;
      const float edges[] = {
          0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 1e-30f, fma_like ? 1e18f : 3e38f};
      if (chance(0.03)) return put(v, i, edges[uniform_int(0, 8)]);
      auto [lo, hi] = domain(m, arg);
      double x = uniform(lo, hi);
      if (divisor) x = (chance(0.5) ? -1 : 1) * uniform(0.25, 4);
      return put(v, i, x);
    }
    if (v.dtype == DType::Bool) return put(v, i, chance(0.5));
    const bool shift = m == Mode::SHL || m == Mode::SHR;
    if (v.dtype == DType::U8) {
      if (shift && arg == 1) return put(v, i, uniform_int(0, 10));
      if (kind == ModeKind::Numeric && !divisor && m != Mode::MUL && chance(0.5))
        return put(v, i, uniform_int(0, 20));
      return put(v, i, uniform_int(0, 255));
    }
    const int bits = v.dtype == DType::I32 ? 32 : 64;
    if (shift && arg == 1) return put(v, i, uniform_int(-2, bits + 2));
    if (divisor) return put(v, i, uniform_int(-6, 6));  // zero and -1 included
    if (chance(0.05)) {
      const int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN,
                    hi = bits == 32 ? INT32_MAX : INT64_MAX;
      const int64_t edges[] = {lo, hi, 0, -1, 1, lo + 1};
      if (v.dtype == DType::I64) {
        v.as<i64>()[i] = edges[uniform_int(0, 5)];
        return;
      }
      return put(v, i, edges[uniform_int(0, 5)]);
    }
    if (m == Mode::RMULH && chance(0.5)) {
      if (v.dtype == DType::I64) {
        v.as<i64>()[i] = static_cast<i64>(rng());
        return;
      }
      return put(v, i, static_cast<i32>(rng()));
    }
    return put(v, i, uniform_int(-1000, 1000));
  }
};

double float_tol(DType d) {
  return d == DType::BF16 ? 1e-2 : (d == DType::F16 ? 2e-3 : 2e-5);
}

// How each input of a case is laid out.
enum class Lay { Full, Bcast, Trans, Strided };
struct InSpec {
  InSpec(Lay l, Shape s = {}) : lay(l), b(std::move(s)) {}
  Lay lay;
  Shape b;  // for Bcast
};
struct Case {
  const char* name;
  Shape out;
  std::vector<InSpec> in;  // cycled over the inputs
  bool out_transposed = false;
};

std::vector<Case> layout_cases() {
  using L = Lay;
  return {
      {"contiguous", {3, 5, 67}, {{L::Full}}},
      {"broadcast",
       {4, 3, 70},
       {{L::Full}, {L::Bcast, {70}}, {L::Bcast, {}}, {L::Bcast, {4, 1, 1}}}},
      {"transposed", {12, 70}, {{L::Trans}, {L::Strided}, {L::Full}, {L::Bcast, {12, 1}}}},
      {"rank4",
       {2, 3, 4, 5},
       {{L::Bcast, {3, 1, 5}}, {L::Full}, {L::Trans}, {L::Bcast, {2, 1, 4, 1}}}},
      {"blocks", {6149}, {{L::Full}, {L::Bcast, {1}}, {L::Strided}, {L::Full}}},
      {"long_rows", {2, 5000}, {{L::Full}, {L::Bcast, {5000}}, {L::Bcast, {2, 1}}, {L::Full}}},
      {"scalar", {}, {{L::Full}}},
      {"empty", {0, 5}, {{L::Full}}},
      {"out_transposed", {12, 70}, {{L::Full}, {L::Bcast, {70}}}, true},
  };
}

Owned make_input(const InSpec& s, DType d, const Shape& out) {
  switch (s.lay) {
    case Lay::Full:
      return contiguous(d, out);
    case Lay::Bcast:
      return broadcast(d, s.b, out);
    case Lay::Trans:
      return transposed(d, out);
    case Lay::Strided:
      return strided(d, out);
  }
  return {};
}

struct ElemRun {
  std::vector<Owned> in;
  Owned got, want;
};

ElemRun run_elemwise_case(Mode m, DType d, const Case& c, ValueGen& gen, ThreadPool& pool) {
  const ModeInfo& info = mode_info(m);
  const DType od =
      (info.kind == ModeKind::Compare || info.kind == ModeKind::Predicate) ? DType::Bool : d;
  ElemRun r;
  std::vector<TensorView> views;
  for (int k = 0; k < info.arity; ++k) {
    r.in.push_back(make_input(c.in[k % c.in.size()], d, c.out));
    fill(r.in.back(), [&](const TensorView& v, int64_t i) { gen(m, k, v, i); });
    views.push_back(r.in.back().v);
  }
  r.got = c.out_transposed ? transposed(od, c.out) : contiguous(od, c.out);
  r.want = contiguous(od, c.out);
  poison(r.got);
  elemwise(m, views, r.got.v, pool);
  ref_elemwise(m, views, r.want.v);
  return r;
}

TEST(CpuElemwise, EveryModeEveryDtypeEveryLayout) {
  ThreadPool pool(2);
  ValueGen gen;
  int combos = 0;
  for (int mi = 0; mi < kModeCount; ++mi) {
    const Mode m = static_cast<Mode>(mi);
    const ModeInfo& info = mode_info(m);
    for (DType d : dtypes_of(info.kind)) {
      for (const Case& c : layout_cases()) {
        SCOPED_TRACE(std::string(info.name) + " " + std::string(dtype_name(d)) + " " + c.name);
        ElemRun r = run_elemwise_case(m, d, c, gen, pool);
        EXPECT_TRUE(same_tensor(r.got.v, r.want.v, float_tol(d), float_tol(d)));
        ++combos;
      }
    }
  }
  EXPECT_GT(combos, 86 * 9);
}

// Large enough for both threads; a 1-thread pool must give bitwise the same result.
TEST(CpuElemwise, LargeInputsUseBothThreadsAndMatchOneThread) {
  ThreadPool two(2), one(1);
  ValueGen gen;
  // Two chunks or more for every mode (the cheapest use a grain of 32768 elements).
  const Case big{"big", {(1 << 16) + 13}, {{Lay::Full}, {Lay::Bcast, {1}}}};
  const Case big_rows{"big_rows", {67, 1031}, {{Lay::Full}, {Lay::Bcast, {1031}}, {Lay::Trans}}};
  for (int mi = 0; mi < kModeCount; ++mi) {
    const Mode m = static_cast<Mode>(mi);
    const ModeInfo& info = mode_info(m);
    for (const Case* c : {&big, &big_rows}) {
      for (DType d : {dtypes_of(info.kind).front(), DType::F16}) {
        if (d == DType::F16 && !takes<float>(info.kind)) continue;
        SCOPED_TRACE(std::string(info.name) + " " + std::string(dtype_name(d)) + " " + c->name);
        ElemRun r = run_elemwise_case(m, d, *c, gen, two);
        EXPECT_TRUE(same_tensor(r.got.v, r.want.v, float_tol(d), float_tol(d)));
        Owned again = contiguous(r.got.v.dtype, c->out);
        std::vector<TensorView> views;
        for (auto& o : r.in) views.push_back(o.v);
        elemwise(m, views, again.v, one);
        EXPECT_TRUE(same_tensor(again.v, r.got.v));
      }
    }
  }
}

TEST(CpuElemwise, InPlaceOutputAliasingAnInput) {
  ThreadPool pool(2);
  Owned a = contiguous(DType::F32, {100003}), b = contiguous(DType::F32, {100003});
  Owned want = contiguous(DType::F32, {100003});
  fill(a, [](const TensorView& v, int64_t i) { put(v, i, 0.001 * i); });
  fill(b, [](const TensorView& v, int64_t i) { put(v, i, 1.0 + (i % 7)); });
  ref_elemwise(Mode::MUL, {a.v, b.v}, want.v);
  elemwise(Mode::MUL, std::vector<TensorView>{a.v, b.v}, a.v, pool);
  EXPECT_TRUE(same_tensor(a.v, want.v));
}

TEST(CpuElemwise, RejectsUnsupportedModeDtype) {
  ThreadPool pool(1);
  Owned a = contiguous(DType::F32, {4}), b = contiguous(DType::F32, {4});
  Owned bo = contiguous(DType::Bool, {4}), i = contiguous(DType::I32, {4});
  try {
    elemwise(Mode::SHL, std::vector<TensorView>{a.v, b.v}, a.v, pool);
    FAIL() << "SHL on f32 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SHL"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(elemwise(Mode::EXP, std::vector<TensorView>{i.v}, i.v, pool), std::invalid_argument);
  EXPECT_THROW(elemwise(Mode::ADD, std::vector<TensorView>{bo.v, bo.v}, bo.v, pool),
               std::invalid_argument);
  EXPECT_THROW(elemwise(Mode::LT, std::vector<TensorView>{a.v, b.v}, a.v, pool),
               std::invalid_argument);  // compare writes bool
  EXPECT_THROW(elemwise(Mode::ADD, std::vector<TensorView>{a.v}, a.v, pool), std::invalid_argument);
  EXPECT_THROW(elemwise(Mode::ADD, std::vector<TensorView>{a.v, i.v}, a.v, pool),
               std::invalid_argument);
}

// ---- pow_const ----------------------------------------------------------------------------

TEST(CpuPowConst, SpecialAndGeneralExponents) {
  ThreadPool pool(2);
  std::mt19937 rng(7);
  for (DType d : {DType::F32, DType::F16, DType::BF16}) {
    for (float e : {0.0f, 1.0f, 2.0f, 3.0f, 0.5f, -0.5f, -1.0f, -2.0f, 4.0f, 5.0f, 7.0f, 16.0f,
                    -3.0f, 17.0f, 2.5f, -1.7f, 1e-3f}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " e=" + std::to_string(e));
      const bool integral = e == std::trunc(e);
      Owned in = strided(d, {3, 1111}), got = contiguous(d, {3, 1111}),
            want = contiguous(d, {3, 1111});
      fill(in, [&](const TensorView& v, int64_t i) {
        double x = std::uniform_real_distribution<double>(0.1, 3)(rng);
        if (integral && i % 3 == 0) x = -x;
        if (i % 101 == 0) x = (i / 101) % 2 ? 0.0 : NAN;
        put(v, i, x);
      });
      poison(got);
      pow_const(in.v, e, got.v, pool);
      for_each_index(got.v.shape, [&](const std::vector<int64_t>& idx) {
        const float x = static_cast<float>(get(in.v, off_of(in.v, idx)));
        put(want.v, off_of(want.v, idx),
            static_cast<float>(std::pow(static_cast<long double>(x), e)));
      });
      EXPECT_TRUE(same_tensor(got.v, want.v, d == DType::F32 ? 4e-6 : float_tol(d), 0));
    }
  }
  Owned i = contiguous(DType::I32, {4});
  EXPECT_THROW(pow_const(i.v, 2.0f, i.v, pool), std::invalid_argument);
}

// ---- type_convert -------------------------------------------------------------------------

// The rules of kernels.h, written independently of the kernel's code.
void ref_convert(const TensorView& in, int64_t oi, const TensorView& out, int64_t oo) {
  const DType from = in.dtype, to = out.dtype;
  if (from == DType::I64 && to == DType::I64) {
    out.as<i64>()[oo] = in.as<i64>()[oi];
    return;
  }
  if (to == DType::Bool) {
    bool b = from == DType::I64 ? in.as<i64>()[oi] != 0 : get(in, oi) != 0.0;
    out.as<bool>()[oo] = b;
    return;
  }
  if (is_float(to)) {
    float f =
        from == DType::I64 ? static_cast<float>(in.as<i64>()[oi]) : static_cast<float>(get(in, oi));
    return put(out, oo, f);
  }
  // integer destination
  if (is_float(from)) {
    const long double x = get(in, oi);
    long double lo, hi;
    switch (to) {
      case DType::I32:
        lo = INT32_MIN, hi = INT32_MAX;
        break;
      case DType::I64:
        lo = static_cast<long double>(INT64_MIN), hi = static_cast<long double>(INT64_MAX);
        break;
      default:
        lo = 0, hi = 255;
        break;
    }
    long double t = std::isnan(x) ? 0 : std::trunc(x);
    if (t < lo) t = lo;
    if (t > hi) t = hi;
    if (to == DType::I64)
      out.as<i64>()[oo] = static_cast<i64>(t);
    else
      put(out, oo, static_cast<int64_t>(t));
    return;
  }
  const i64 x = from == DType::I64 ? in.as<i64>()[oi] : static_cast<i64>(get(in, oi));
  switch (to) {
    case DType::I32:
      out.as<i32>()[oo] = static_cast<i32>(static_cast<uint32_t>(x));
      break;
    case DType::I64:
      out.as<i64>()[oo] = x;
      break;
    default:
      out.as<u8>()[oo] = static_cast<u8>(x);
      break;
  }
}

TEST(CpuTypeConvert, AllPairsWithSpecialValues) {
  ThreadPool pool(2);
  const double specials[] = {NAN,     INFINITY,     -INFINITY,    0.0,           -0.0,
                             0.7,     -0.7,         1.5,          -1.5,          255.0,
                             255.9,   256.0,        -1.0,         65504.0,       65520.0,
                             70000.0, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0,
                             1e10,    -1e10,        9.3e18,       -9.3e18,       3e38,
                             1e-8,    6e-8,         1e-40,        3.0000001,     16777217.0};
  const int64_t int_specials[] = {0,
                                  1,
                                  -1,
                                  255,
                                  256,
                                  -129,
                                  65535,
                                  70000,
                                  INT32_MAX,
                                  INT32_MIN,
                                  int64_t{1} << 40,
                                  INT64_MAX,
                                  INT64_MIN,
                                  16777217,
                                  -16777217};
  std::mt19937_64 rng(3);
  const DType all[] = {DType::F32, DType::F16,  DType::BF16, DType::I32,
                       DType::I64, DType::Bool, DType::U8};
  for (DType from : all) {
    for (DType to : all) {
      for (int layout = 0; layout < 2; ++layout) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)) +
                     (layout ? " transposed" : ""));
        const Shape s{37, 41};
        Owned in = layout ? transposed(from, s) : contiguous(from, s);
        Owned got = contiguous(to, s), want = contiguous(to, s);
        fill(in, [&](const TensorView& v, int64_t i) {
          const size_t k = static_cast<size_t>(i);
          if (is_float(from)) {
            if (k < std::size(specials)) return put(v, i, specials[k]);
            return put(v, i, std::uniform_real_distribution<double>(-300, 300)(rng));
          }
          if (from == DType::Bool) return put(v, i, rng() % 2 == 1);
          const int64_t x = k < std::size(int_specials)
                                ? int_specials[k]
                                : static_cast<int64_t>(rng() % 100000) - 50000;
          if (from == DType::I64)
            v.as<i64>()[i] = x;
          else if (from == DType::I32)
            v.as<i32>()[i] = static_cast<i32>(static_cast<uint32_t>(x));
          else
            v.as<u8>()[i] = static_cast<u8>(x);
        });
        poison(got);
        type_convert(in.v, got.v, pool);
        for_each_index(s, [&](const std::vector<int64_t>& idx) {
          ref_convert(in.v, off_of(in.v, idx), want.v, off_of(want.v, idx));
        });
        EXPECT_TRUE(same_tensor(got.v, want.v));
      }
    }
  }
}

TEST(CpuTypeConvert, LargeF32ToF16RoundsToNearestEven) {
  ThreadPool pool(2);
  const int64_t n = (1 << 18) + 3;
  Owned in = contiguous(DType::F32, {n}), got = contiguous(DType::F16, {n}),
        want = contiguous(DType::F16, {n});
  fill(in, [](const TensorView& v, int64_t i) { put(v, i, (i - n / 2) * 0.37); });
  type_convert(in.v, got.v, pool);
  fill(want, [&](const TensorView& v, int64_t i) { v.as<f16>()[i] = to_f16(in.t.as<float>()[i]); });
  EXPECT_EQ(std::memcmp(got.t.data(), want.t.data(), got.t.bytes()), 0);
}

// ---- copy ---------------------------------------------------------------------------------

void ref_copy(const TensorView& in, const TensorView& out) {
  const size_t sz = dtype_size(in.dtype);
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    std::memcpy(static_cast<char*>(out.data) + off_of(out, idx) * sz,
                static_cast<const char*>(in.data) + off_of(in, idx) * sz, sz);
  });
}

Owned permuted(DType d, const Shape& base, const std::vector<int>& perm) {
  Owned o = contiguous(d, base);
  Shape s;
  Strides st;
  for (int p : perm) {
    s.push_back(base[p]);
    st.push_back(o.v.strides[p]);
  }
  o.v.shape = s;
  o.v.strides = st;
  return o;
}

void check_copy(const TensorView& in, const TensorView& out, ThreadPool& pool) {
  Owned want = contiguous(out.dtype, out.shape);
  copy(in, out, pool);
  ref_copy(in, want.v);
  EXPECT_TRUE(same_tensor(out, want.v));
}

TEST(CpuCopy, PermutationsBroadcastsAndSlices) {
  ThreadPool pool(2);
  std::mt19937_64 rng(5);
  auto rnd = [&](const TensorView& v, int64_t i) { put(v, i, static_cast<int>(rng() % 1000)); };
  for (DType d : {DType::F32, DType::F16, DType::I64, DType::U8}) {
    for (const Shape& base : {Shape{5, 6, 7}, Shape{3, 40, 300}}) {
      std::vector<int> perm = {0, 1, 2};
      do {
        SCOPED_TRACE(std::string(dtype_name(d)) + " perm " + std::to_string(perm[0]) +
                     std::to_string(perm[1]) + std::to_string(perm[2]) + " of " + to_string(base));
        Owned in = permuted(d, base, perm);
        fill(in, rnd);
        Owned out = contiguous(d, in.v.shape);
        poison(out);
        check_copy(in.v, out.v, pool);
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
    SCOPED_TRACE(dtype_name(d));
    // Rank 4 transpose of the two inner axes, and the reverse.
    for (const std::vector<int>& perm : {std::vector<int>{0, 1, 3, 2}, std::vector<int>{3, 2, 1, 0},
                                         std::vector<int>{2, 0, 3, 1}}) {
      Owned in = permuted(d, {2, 3, 70, 45}, perm);
      fill(in, rnd);
      Owned out = contiguous(d, in.v.shape);
      check_copy(in.v, out.v, pool);
    }
    // NCHW images to NHWC: the 3 channels innermost in the output (the input's contiguous
    // axis walked innermost instead), odd sizes, two images.
    for (const Shape& b : {Shape{2, 3, 65, 67}, Shape{1, 3, 224, 224}, Shape{1, 5, 9, 130}}) {
      Owned in = permuted(d, b, {0, 2, 3, 1});
      fill(in, rnd);
      Owned out = contiguous(d, in.v.shape);
      poison(out);
      check_copy(in.v, out.v, pool);
    }
    // Broadcast: a row, a column, a scalar.
    for (const Shape& b : {Shape{300}, Shape{17, 1}, Shape{}}) {
      Owned in = broadcast(d, b, {17, 300});
      fill(in, rnd);
      Owned out = contiguous(d, {17, 300});
      check_copy(in.v, out.v, pool);
    }
    // Inner-contiguous rows out of a wider tensor, into a transposed output.
    Owned wide = contiguous(d, {50, 80});
    fill(wide, rnd);
    TensorView slice = wide.v;
    slice.shape = {50, 33};
    Owned out = contiguous(d, {50, 33});
    check_copy(slice, out.v, pool);
    Owned tout = transposed(d, {50, 33});
    check_copy(slice, tout.v, pool);
    // Rank 8, and a scalar.
    Owned r8 = permuted(d, {2, 1, 3, 2, 1, 2, 3, 2}, {7, 6, 5, 4, 3, 2, 1, 0});
    fill(r8, rnd);
    Owned r8o = contiguous(d, r8.v.shape);
    check_copy(r8.v, r8o.v, pool);
    Owned s = contiguous(d, {}), so = contiguous(d, {});
    fill(s, rnd);
    check_copy(s.v, so.v, pool);
  }
  // A big transpose uses both threads and the tiled path.
  Owned in = permuted(DType::F32, {1000, 1024}, {1, 0});
  fill(in, rnd);
  Owned out = contiguous(DType::F32, {1024, 1000});
  check_copy(in.v, out.v, pool);
}

// ---- reduce -------------------------------------------------------------------------------

const ReduceMode kReduceModes[] = {ReduceMode::SUM, ReduceMode::SUM_SQR, ReduceMode::PRODUCT,
                                   ReduceMode::MIN, ReduceMode::MAX,     ReduceMode::MEAN};

// Long double (floats) or wrapping i64 (integers) accumulation; also returns sum |term|
// for the tolerance.
void ref_reduce(ReduceMode mode, const TensorView& in, const std::vector<int>& axes,
                const TensorView& out, std::vector<double>* scale) {
  const bool fl = is_float(in.dtype);
  Shape os = out.shape;
  scale->assign(numel(os), 0);
  std::vector<long double> accf(numel(os));
  std::vector<uint64_t> acci(numel(os));
  std::vector<bool> nan(numel(os), false);
  for (size_t i = 0; i < accf.size(); ++i) {
    if (mode == ReduceMode::PRODUCT)
      accf[i] = 1, acci[i] = 1;
    else if (mode == ReduceMode::MIN)
      accf[i] = INFINITY, acci[i] = static_cast<uint64_t>(INT64_MAX);
    else if (mode == ReduceMode::MAX)
      accf[i] = -INFINITY, acci[i] = static_cast<uint64_t>(INT64_MIN);
    else
      accf[i] = 0, acci[i] = 0;
  }
  Strides ost = contiguous_strides(os);
  int64_t count = 1;
  for (int a : axes) count *= in.shape[a];
  for_each_index(in.shape, [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (int d = 0; d < in.rank(); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) o += idx[d] * ost[d];
    const int64_t oi = off_of(in, idx);
    if (fl) {
      long double x = get(in, oi);
      if (std::isnan(x)) nan[o] = true;
      switch (mode) {
        case ReduceMode::SUM:
        case ReduceMode::MEAN:
          accf[o] += x;
          (*scale)[o] += std::fabs((double)x);
          break;
        case ReduceMode::SUM_SQR:
          accf[o] += x * x;
          (*scale)[o] += (double)(x * x);
          break;
        case ReduceMode::PRODUCT:
          accf[o] *= x;
          break;
        case ReduceMode::MIN:
          accf[o] = std::min(accf[o], x);
          break;
        case ReduceMode::MAX:
          accf[o] = std::max(accf[o], x);
          break;
      }
    } else {
      const i64 x = in.dtype == DType::I64 ? in.as<i64>()[oi] : static_cast<i64>(get(in, oi));
      const uint64_t ux = static_cast<uint64_t>(x);
      switch (mode) {
        case ReduceMode::SUM:
        case ReduceMode::MEAN:
          acci[o] += ux;
          break;
        case ReduceMode::SUM_SQR:
          acci[o] += ux * ux;
          break;
        case ReduceMode::PRODUCT:
          acci[o] *= ux;
          break;
        case ReduceMode::MIN:
          acci[o] = static_cast<uint64_t>(std::min(static_cast<i64>(acci[o]), x));
          break;
        case ReduceMode::MAX:
          acci[o] = static_cast<uint64_t>(std::max(static_cast<i64>(acci[o]), x));
          break;
      }
    }
  });
  for (int64_t o = 0; o < numel(os); ++o) {
    if (fl) {
      long double v = accf[o];
      if (mode == ReduceMode::MEAN) v /= count, (*scale)[o] /= count;
      if (nan[o]) v = NAN;
      put(out, o, static_cast<double>(v));
    } else {
      i64 v = static_cast<i64>(acci[o]);
      if (mode == ReduceMode::MEAN) v /= count;
      if (out.dtype == DType::I64)
        out.as<i64>()[o] = v;
      else if (out.dtype == DType::I32)
        out.as<i32>()[o] = static_cast<i32>(static_cast<uint32_t>(v));
      else if (out.dtype == DType::U8)
        out.as<u8>()[o] = static_cast<u8>(v);
      else
        out.as<bool>()[o] = v != 0;
    }
  }
}

// Checks reduce over every axis subset of `in`.
void check_all_subsets(const TensorView& in, ThreadPool& pool) {
  const int r = in.rank();
  for (int mask = 0; mask < (1 << r); ++mask) {
    std::vector<int> axes;
    Shape os = in.shape;
    for (int d = 0; d < r; ++d)
      if (mask & (1 << d)) axes.push_back(d), os[d] = 1;
    for (ReduceMode mode : kReduceModes) {
      SCOPED_TRACE(std::string(reduce_mode_name(mode)) + " " + std::string(dtype_name(in.dtype)) +
                   " " + to_string(in.shape) + " mask " + std::to_string(mask));
      Owned got = contiguous(in.dtype, os), want = contiguous(in.dtype, os);
      poison(got);
      reduce(mode, in, axes, got.v, pool);
      std::vector<double> scale;
      ref_reduce(mode, in, axes, want.v, &scale);
      if (!is_float(in.dtype)) {
        EXPECT_TRUE(same_tensor(got.v, want.v));
        continue;
      }
      // Sum-like results are checked against the magnitude of their terms: the f32 error
      // is relative to that, not to a result that may cancel to ~0.
      const double rounding = in.dtype == DType::F32 ? 0 : float_tol(in.dtype);
      int64_t bad = 0;
      for (int64_t o = 0; o < numel(os); ++o) {
        const double g = get(got.v, o), w = get(want.v, o);
        const double tol =
            mode == ReduceMode::PRODUCT ? 1e-5 * std::fabs(w) + 1e-30 : 1e-5 * scale[o] + 1e-30;
        if (!same_float(g, w, rounding, tol) && bad++ == 0)
          ADD_FAILURE() << "output " << o << ": got " << g << ", want " << w;
      }
    }
  }
}

template <class G>
Owned random_tensor(DType d, const Shape& s, G&& gen) {
  Owned o = contiguous(d, s);
  fill(o, gen);
  return o;
}

TEST(CpuReduce, EveryAxisSubsetEveryModeRank3) {
  ThreadPool pool(2);
  std::mt19937_64 rng(11);
  auto fgen = [&](const TensorView& v, int64_t i) {
    // Magnitudes near 1 keep PRODUCT finite; the sign varies.
    double x = std::uniform_real_distribution<double>(0.8, 1.25)(rng) * (rng() % 3 == 0 ? -1 : 1);
    put(v, i, x);
  };
  auto igen = [&](const TensorView& v, int64_t i) { put(v, i, static_cast<int>(rng() % 41) - 20); };
  for (DType d : {DType::F32, DType::I32, DType::F16}) {
    using Gen = std::function<void(const TensorView&, int64_t)>;
    Gen gen = is_float(d) ? Gen(fgen) : Gen(igen);
    for (const Shape& s : {Shape{5, 6, 7}, Shape{3, 4, 300}, Shape{2, 300, 3}, Shape{260, 3, 5}}) {
      Owned in = random_tensor(d, s, gen);
      check_all_subsets(in.v, pool);
      Owned t = transposed(d, s);  // the same, read through reversed strides
      fill(t, gen);
      check_all_subsets(t.v, pool);
    }
  }
  // The other dtypes on one shape.
  for (DType d : {DType::I64, DType::U8, DType::Bool, DType::BF16}) {
    Owned in = contiguous(d, {4, 5, 300});
    fill(in, [&](const TensorView& v, int64_t i) {
      if (d == DType::BF16) return fgen(v, i);
      put(v, i, static_cast<int>(rng() % (d == DType::Bool ? 2 : 200)));
    });
    check_all_subsets(in.v, pool);
  }
}

TEST(CpuReduce, MinMaxPropagateNaNAndRowsOfAllShapes) {
  ThreadPool pool(2);
  std::mt19937_64 rng(13);
  for (int64_t len : {1, 2, 31, 33, 255, 256, 257, 1024, 2047, 2049, 5000, 70001}) {
    for (ReduceMode mode : kReduceModes) {
      SCOPED_TRACE(std::string(reduce_mode_name(mode)) + " len " + std::to_string(len));
      Owned in = contiguous(DType::F32, {3, len});
      fill(in, [&](const TensorView& v, int64_t i) {
        put(v, i, std::uniform_real_distribution<double>(0.9, 1.1)(rng));
      });
      if (mode == ReduceMode::MIN || mode == ReduceMode::MAX) {
        in.t.as<float>()[len + len / 2] = NAN;  // row 1 only
      }
      Owned got = contiguous(DType::F32, {3, 1}), want = contiguous(DType::F32, {3, 1});
      const std::vector<int> axes = {1};
      reduce(mode, in.v, axes, got.v, pool);
      std::vector<double> scale;
      ref_reduce(mode, in.v, axes, want.v, &scale);
      const double rel = mode == ReduceMode::PRODUCT ? 2e-6 * std::log2(len + 1.0) + 1e-6 : 1e-6;
      EXPECT_TRUE(same_tensor(got.v, want.v, rel, 0));
      if (mode == ReduceMode::MIN || mode == ReduceMode::MAX) {
        EXPECT_TRUE(std::isnan(got.t.as<float>()[1]));
        EXPECT_FALSE(std::isnan(got.t.as<float>()[0]));
      }
    }
  }
}

// Few long outputs (the tree splits across threads) and tall columns (the column tiles
// split across threads): results must not depend on the pool.
TEST(CpuReduce, ParallelSplitsAreDeterministic) {
  ThreadPool two(2), one(1);
  std::mt19937_64 rng(17);
  struct C {
    Shape s;
    std::vector<int> axes;
  };
  for (const C& c : {C{{2, 300000}, {1}}, C{{100000, 8}, {0}}, C{{4000, 300}, {0}},
                     C{{3, 200, 700}, {0, 2}}, C{{64, 4096}, {1}}}) {
    for (DType d : {DType::F32, DType::F16, DType::I32}) {
      for (ReduceMode mode : {ReduceMode::SUM, ReduceMode::MAX, ReduceMode::MEAN}) {
        SCOPED_TRACE(to_string(c.s) + " " + std::string(dtype_name(d)) + " " +
                     std::string(reduce_mode_name(mode)));
        Owned in = contiguous(d, c.s);
        fill(in, [&](const TensorView& v, int64_t i) {
          put(v, i,
              is_float(d) ? std::uniform_real_distribution<double>(-1, 1)(rng)
                          : static_cast<double>(rng() % 2001) - 1000);
        });
        Shape os = c.s;
        for (int a : c.axes) os[a] = 1;
        Owned g2 = contiguous(d, os), g1 = contiguous(d, os), want = contiguous(d, os);
        reduce(mode, in.v, c.axes, g2.v, two);
        reduce(mode, in.v, c.axes, g1.v, one);
        EXPECT_EQ(std::memcmp(g1.t.data(), g2.t.data(), g1.t.bytes()), 0);
        std::vector<double> scale;
        ref_reduce(mode, in.v, c.axes, want.v, &scale);
        for (int64_t o = 0; o < numel(os); ++o) {
          const double g = get(g2.v, o), w = get(want.v, o);
          const double tol =
              is_float(d) ? 1e-6 * scale[o] + (d == DType::F16 ? 1e-3 * std::fabs(w) : 0) : 0;
          ASSERT_LE(std::fabs(g - w), tol) << "output " << o;
        }
      }
    }
  }
}

TEST(CpuReduce, SumOf2To24FloatsIsAccurate) {
  ThreadPool pool(2);
  const int64_t n = int64_t{1} << 24;
  Owned in = contiguous(DType::F32, {n});
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  float* x = in.t.as<float>();
  long double exact = 0;
  for (int64_t i = 0; i < n; ++i) exact += (x[i] = u(rng));
  Owned got = contiguous(DType::F32, {1});
  const std::vector<int> axes = {0};
  reduce(ReduceMode::SUM, in.v, axes, got.v, pool);
  const double rel = std::fabs((got.t.as<float>()[0] - exact) / exact);
  EXPECT_LT(rel, 1e-6) << "got " << got.t.as<float>()[0] << " want " << (double)exact;
  // The rounding of the result alone is up to 6e-8; a sequential f32 sum is off by ~1e-3.
  reduce(ReduceMode::MEAN, in.v, axes, got.v, pool);
  EXPECT_LT(std::fabs(got.t.as<float>()[0] - exact / n) / (exact / n), 1e-6);
}

TEST(CpuReduce, RejectsBadArguments) {
  ThreadPool pool(1);
  Owned in = contiguous(DType::F32, {2, 3}), out = contiguous(DType::F32, {2, 1});
  EXPECT_THROW(reduce(ReduceMode::SUM, in.v, std::vector<int>{0}, out.v, pool),
               std::invalid_argument);
  EXPECT_THROW(reduce(ReduceMode::SUM, in.v, std::vector<int>{1, 1}, out.v, pool),
               std::invalid_argument);
  Owned wrong = contiguous(DType::I32, {2, 1});
  EXPECT_THROW(reduce(ReduceMode::SUM, in.v, std::vector<int>{1}, wrong.v, pool),
               std::invalid_argument);
}

// ---- matmul -------------------------------------------------------------------------------

void ref_matmul(const TensorView& a, const TensorView& b, const TensorView& out) {
  const int ra = a.rank(), rb = b.rank(), rc = out.rank();
  const int64_t k = a.shape[ra - 1];
  TensorView ab = a, bb = b;
  // Broadcast batch axes by hand: out index -> operand index with size-1 axes pinned.
  for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
    long double acc = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      int64_t oa = 0, ob = 0;
      for (int d = 0; d < ra; ++d) {
        const int od = rc - ra + d;
        int64_t i = d == ra - 1 ? kk : (ab.shape[d] == 1 ? 0 : idx[od]);
        oa += i * ab.strides[d];
      }
      for (int d = 0; d < rb; ++d) {
        const int od = rc - rb + d;
        int64_t i = d == rb - 2 ? kk : (bb.shape[d] == 1 ? 0 : idx[od]);
        ob += i * bb.strides[d];
      }
      acc += static_cast<long double>(get(a, oa)) * get(b, ob);
    }
    put(out, off_of(out, idx), static_cast<double>(acc));
  });
}

TEST(CpuMatmul, BatchedBroadcastTransposedAndHalf) {
  ThreadPool pool(2);
  std::mt19937_64 rng(23);
  auto rnd = [&](const TensorView& v, int64_t i) {
    put(v, i, std::uniform_real_distribution<double>(-1, 1)(rng));
  };
  enum Kind { Plain, Trans, Strided };
  struct C {
    Shape a, b;
    Kind ka, kb;
    bool out_trans;
  };
  const std::vector<C> cases = {
      {{5, 7}, {7, 3}, Plain, Plain, false},
      {{1, 9}, {9, 1}, Plain, Plain, false},
      {{2, 3, 5, 7}, {7, 4}, Plain, Plain, false},     // shared b: one tall sgemm
      {{2, 1, 5, 7}, {3, 7, 4}, Plain, Plain, false},  // batch broadcast on both sides
      {{4, 6, 8}, {4, 8, 5}, Trans, Trans, false},     // column-major operands
      {{3, 6, 8}, {8, 5}, Strided, Strided, true},     // packed operands, strided output
      {{65, 130}, {130, 70}, Plain, Trans, false},
      {{2, 5, 0}, {0, 3}, Plain, Plain, false},  // k = 0
  };
  for (DType d : {DType::F32, DType::F16, DType::BF16}) {
    for (const C& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + to_string(c.a) + " x " + to_string(c.b));
      auto make = [&](const Shape& s, Kind k) {
        if (k == Plain) return contiguous(d, s);
        if (k == Strided) return strided(d, s);
        // Transposed storage of the last two axes.
        Shape st = s;
        std::swap(st[st.size() - 1], st[st.size() - 2]);
        Owned o = contiguous(d, st);
        o.v.shape = s;
        std::swap(o.v.strides[s.size() - 1], o.v.strides[s.size() - 2]);
        return o;
      };
      Owned a = make(c.a, c.ka), b = make(c.b, c.kb);
      fill(a, rnd);
      fill(b, rnd);
      Shape os =
          *broadcast_shapes(Shape(c.a.begin(), c.a.end() - 2), Shape(c.b.begin(), c.b.end() - 2));
      os.push_back(c.a[c.a.size() - 2]);
      os.push_back(c.b.back());
      Owned got = c.out_trans ? transposed(d, os) : contiguous(d, os), want = contiguous(d, os);
      poison(got);
      matmul(a.v, b.v, got.v, pool);
      ref_matmul(a.v, b.v, want.v);
      const double k = static_cast<double>(c.a.back());
      EXPECT_TRUE(same_tensor(got.v, want.v, float_tol(d), 1e-6 * (k + 1) + float_tol(d) * 0.1));
    }
  }
  Owned i = contiguous(DType::I32, {2, 2});
  EXPECT_THROW(matmul(i.v, i.v, i.v, pool), std::invalid_argument);
  Owned a = contiguous(DType::F32, {2, 3}), b = contiguous(DType::F32, {4, 2}),
        o = contiguous(DType::F32, {2, 2});
  EXPECT_THROW(matmul(a.v, b.v, o.v, pool), std::invalid_argument);
}

// ---- outputs beyond the last-level cache (streaming stores) ------------------------------

TEST(CpuKernels, OutputsLargerThanTheCacheAreStreamedCorrectly) {
  ThreadPool pool(2);
  const int64_t n = (int64_t{1} << 23) + 3;  // 32 MiB per array: past a 32 MiB LLC
  Owned a = contiguous(DType::F32, {n + 1}), b = contiguous(DType::F32, {n + 1});
  fill(a, [](const TensorView& v, int64_t i) { put(v, i, 0.25 * (i % 1001)); });
  fill(b, [](const TensorView& v, int64_t i) { put(v, i, 1.0 + (i % 13)); });
  // Views starting one element in, so the output is not 32-byte aligned.
  TensorView av = a.v, bv = b.v;
  av.data = a.t.as<float>() + 1;
  bv.data = b.t.as<float>() + 1;
  av.shape = bv.shape = {n};
  Owned out = contiguous(DType::F32, {n + 1}), want = contiguous(DType::F32, {n});
  TensorView ov = out.v;
  ov.data = out.t.as<float>() + 1;
  ov.shape = {n};
  elemwise(Mode::ADD, std::vector<TensorView>{av, bv}, ov, pool);
  for (int64_t i = 0; i < n; ++i) want.t.as<float>()[i] = av.as<float>()[i] + bv.as<float>()[i];
  EXPECT_TRUE(same_tensor(ov, want.v));
  // In place.
  elemwise(Mode::ADD, std::vector<TensorView>{av, bv}, av, pool);
  EXPECT_TRUE(same_tensor(av, want.v));

  Owned h = contiguous(DType::F16, {n});
  type_convert(ov, h.v, pool);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad += h.t.as<f16>()[i].bits != to_f16(want.t.as<float>()[i]).bits;
  EXPECT_EQ(bad, 0);

  Owned c = contiguous(DType::F32, {n});
  copy(ov, c.v, pool);
  EXPECT_EQ(std::memcmp(c.t.data(), want.t.data(), n * sizeof(float)), 0);

  // A transpose moving 2 x 24 MiB, with partial tiles on both axes.
  Owned t = permuted(DType::F32, {3001, 2050}, {1, 0});
  fill(t, [](const TensorView& v, int64_t i) { put(v, i, static_cast<double>(i)); });
  Owned tout = contiguous(DType::F32, {2050, 3001});
  copy(t.v, tout.v, pool);
  bad = 0;
  for (int64_t i = 0; i < 2050; ++i)
    for (int64_t k = 0; k < 3001; ++k)
      bad += tout.t.as<float>()[i * 3001 + k] != t.t.as<float>()[k * 2050 + i];
  EXPECT_EQ(bad, 0);
}

// ---- the steady state allocates nothing ---------------------------------------------------

TEST(CpuKernels, SteadyStateCallsDoNotAllocate) {
  ThreadPool pool(2);
  const int64_t n = 1 << 18;
  Owned a = contiguous(DType::F32, {64, n / 64}), b = broadcast(DType::F32, {n / 64}, {64, n / 64});
  Owned h = contiguous(DType::F16, {64, n / 64}), ho = contiguous(DType::F16, {64, n / 64});
  Owned o = contiguous(DType::F32, {64, n / 64}), r = contiguous(DType::F32, {64, 1});
  Owned t = permuted(DType::F32, {n / 64, 64}, {1, 0});
  Owned ma = contiguous(DType::F16, {8, 64, 64}), mo = contiguous(DType::F16, {8, 64, 64});
  for (auto* x : {&a, &b, &h, &t, &ma})
    fill(*x, [](const TensorView& v, int64_t i) { put(v, i, 0.5); });
  const std::vector<TensorView> add_in = {a.v, b.v}, exp_in = {h.v};
  const std::vector<int> axes = {1};
  auto all = [&] {
    elemwise(Mode::ADD, add_in, o.v, pool);
    elemwise(Mode::EXP, exp_in, ho.v, pool);
    pow_const(h.v, 3.0f, ho.v, pool);
    type_convert(a.v, ho.v, pool);
    copy(t.v, o.v, pool);
    reduce(ReduceMode::SUM, a.v, axes, r.v, pool);
    matmul(ma.v, ma.v, mo.v, pool);
  };
  for (int i = 0; i < 3; ++i) all();  // first calls set up per-thread scratch
  // A worker that took no gathering chunk yet (chunks are claimed dynamically; a loaded
  // machine may starve it) allocates its scratch once, later: so a clean round is enough,
  // an allocation per call would show in every round.
  std::vector<int64_t> counts;
  for (int round = 0; round < 10 && (counts.empty() || counts.back() != 0); ++round) {
    g_allocs = 0;
    g_counting = true;
    all();
    g_counting = false;
    counts.push_back(g_allocs.load());
  }
  EXPECT_EQ(counts.back(), 0) << "allocations in the first round: " << counts.front();
}

// ---- thread pool --------------------------------------------------------------------------

TEST(CpuThreadPool, ParallelForCoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 7, 100, 1000, 12345, 1 << 20}) {
      for (int64_t grain : {0, 1, 2, 7, 64, 1000, 1 << 20}) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<int64_t> small_chunks{0};
        pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
          ASSERT_LE(0, b);
          ASSERT_LT(b, e);
          ASSERT_LE(e, n);
          if (e - b < grain && e != n) small_chunks++;
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        int64_t wrong = 0;
        for (auto& h : hits) wrong += h.load() != 1;
        EXPECT_EQ(wrong, 0) << "threads " << threads << " n " << n << " grain " << grain;
        EXPECT_EQ(small_chunks.load(), 0);
      }
    }
  }
}

TEST(CpuThreadPool, ExceptionsPropagateAndThePoolKeepsWorking) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 200; ++rep) {
    EXPECT_THROW(pool.parallel_for(1000, 10,
                                   [&](int64_t b, int64_t) {
                                     if (b >= 500) throw std::runtime_error("boom");
                                   }),
                 std::runtime_error);
    std::atomic<int64_t> sum{0};
    pool.parallel_for(1000, 10, [&](int64_t b, int64_t e) { sum += e - b; });
    EXPECT_EQ(sum.load(), 1000);
  }
}

TEST(CpuThreadPool, NestedCallsRunSeriallyOnTheCallingThread) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.parallel_for(64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const auto me = std::this_thread::get_id();
      pool.parallel_for(100, 1, [&](int64_t ib, int64_t ie) {
        EXPECT_EQ(std::this_thread::get_id(), me);
        total += ie - ib;
      });
      ThreadPool::global().parallel_for(10, 1, [&](int64_t ib, int64_t ie) { total += ie - ib; });
    }
  });
  EXPECT_EQ(total.load(), 64 * 110);
  // Kernels called from inside a parallel_for body run serially, one per chunk.
  Owned a = contiguous(DType::F32, {100000});
  Owned o[2] = {contiguous(DType::F32, {100000}), contiguous(DType::F32, {100000})};
  fill(a, [](const TensorView& v, int64_t i) { put(v, i, 1.0); });
  pool.parallel_for(2, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      elemwise(Mode::ADD, std::vector<TensorView>{a.v, a.v}, o[i].v, pool);
  });
  EXPECT_EQ(o[0].t.as<float>()[99999], 2.0f);
  EXPECT_EQ(o[1].t.as<float>()[0], 2.0f);
}

TEST(CpuThreadPool, ConcurrentCallersDoNotDeadlock) {
  ThreadPool pool(2);
  auto hammer = [&] {
    for (int rep = 0; rep < 2000; ++rep) {
      std::atomic<int64_t> sum{0};
      pool.parallel_for(4096, 16, [&](int64_t b, int64_t e) { sum += e - b; });
      ASSERT_EQ(sum.load(), 4096);
    }
  };
  std::thread t1(hammer), t2(hammer);
  hammer();
  t1.join();
  t2.join();
}

TEST(CpuThreadPool, SizeFromEnvironment) {
  ::setenv("HOTFUSE_NUM_THREADS", "3", 1);
  {
    ThreadPool p;
    EXPECT_EQ(p.size(), 3);
  }
  // Anything but a thread count is an error naming the variable, not silently "all
  // hardware threads" (issue 23).
  for (const char* bad : {"junk", "-1", "0", "", "3x", "1025", "99999999999999999999"}) {
    ::setenv("HOTFUSE_NUM_THREADS", bad, 1);
    try {
      ThreadPool p;
      ADD_FAILURE() << "HOTFUSE_NUM_THREADS=" << bad << " gave " << p.size() << " threads";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("HOTFUSE_NUM_THREADS=" + std::string(bad) + ":"),
                std::string::npos)
          << e.what();
    }
  }
  ::unsetenv("HOTFUSE_NUM_THREADS");
  {
    ThreadPool p;
    EXPECT_EQ(p.size(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  ThreadPool explicit_size(4);
  EXPECT_EQ(explicit_size.size(), 4);
}

TEST(CpuThreadPool, IdleWorkersWakeUpAfterBlocking) {
  ThreadPool pool(2);
  int woke = 0;
  // Each round lets the worker block (past its spin window), then offers 16 chunks of
  // 1 ms; on a loaded machine the worker may miss a round, not all of them.
  for (int rep = 0; rep < 20 && woke < 3; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::atomic<int> workers_seen{0};
    const auto caller = std::this_thread::get_id();
    pool.parallel_for(64, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != caller) workers_seen = 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    woke += workers_seen.load();
  }
  EXPECT_EQ(woke, 3);
}

}  // namespace
}  // namespace hf::cpu
