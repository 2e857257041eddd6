// The code generators (fusion/codegen_cpp.h, fusion/codegen_cuda.h) against a reference
// evaluation of the spec.
//
// What this proves:
// - Every spec below, generated as C++ and compiled by the host compiler (all in ONE
//   translation unit: one compiler start-up), computes what a naive per-element walk of the
//   spec computes with ModeFn and the CPU backend's convert (f32 to 1e-5, f16 to 1e-3, bf16
//   to one ulp; integers exactly), for every Elemwise mode on every dtype its kind admits,
//   literals, scalar, broadcast and transposed inputs, f16/bf16, Cvt, pow_const's exponent
//   cases, multi-output, and trailing reduces of every mode; [begin, end) split in chunks.
// - The flat loops vectorise (GCC's -fopt-info-vec), and fused f16 chains and float row
//   sums equal the unfused CPU kernels bit for bit.
// - The same specs' CUDA sources compile with NVRTC for compute_80 and compute_90.
// - Node names cannot inject code through the origin comment; bad kernel names and bad
//   specs are rejected.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fusion/codegen_cpp.h"
#include "fusion/codegen_cuda.h"
#include "fusion/codegen_support.h"
#include "fusion/embedded_headers.h"
#include "fusion/host_compiler.h"
#include "fusion/kernel_abi.h"
#include "fusion/spec_interpreter.h"
#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/error.h"
#include "runtime/ir/tensor.h"
#include "runtime/ops/half.h"
#include "runtime/ops/scalar_math.h"

#if HF_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace hf::fusion {
namespace {

namespace fs = std::filesystem;

// ---- spec construction ----------------------------------------------------------------------

// A spec plus the run-time layout of its inputs and the data ranges to draw them from.
struct Case {
  std::string name;
  KernelSpec spec;
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;      // per input; empty unless strided
  std::vector<std::pair<double, double>> ranges;  // per input
  std::vector<bool> specials;                     // per input: sprinkle NaN, inf, -0, huge
  bool check_vectorized = false;                  // the flat loop must vectorise

  int rank() const { return static_cast<int>(shape.size()); }

  int add_expr(SpecExpr e) {
    spec.exprs.push_back(e);
    return static_cast<int>(spec.exprs.size()) - 1;
  }
  int add_input(DType t, SpecInput in, std::vector<int64_t> st, std::pair<double, double> range) {
    in.dtype = t;
    spec.inputs.push_back(in);
    strides.push_back(std::move(st));
    ranges.push_back(range);
    specials.push_back(false);
    SpecExpr e;
    e.kind = ExprKind::Input;
    e.dtype = t;
    e.input = static_cast<int>(spec.inputs.size()) - 1;
    return add_expr(e);
  }
  static std::pair<double, double> default_range(DType t) {
    if (is_float(t)) return {-3, 3};
    if (t == DType::U8) return {0, 255};
    if (t == DType::Bool) return {0, 1};
    return {-100, 100};
  }
  int dense(DType t) { return dense(t, default_range(t)); }
  int dense(DType t, std::pair<double, double> r) { return add_input(t, SpecInput{}, {}, r); }
  int scalar(DType t, std::pair<double, double> r) {
    SpecInput in;
    in.scalar = true;
    in.dense = false;
    return add_input(t, in, {}, r);
  }
  // Strides in the iteration space; zero strides are the broadcast dimensions.
  int strided(DType t, std::vector<int64_t> st, std::pair<double, double> r = {-3, 3}) {
    SpecInput in;
    in.dense = false;
    for (size_t d = 0; d < st.size(); ++d)
      if (st[d] == 0) in.broadcast_mask |= 1u << d;
    if (!is_float(t) && r == std::pair<double, double>{-3, 3}) r = default_range(t);
    return add_input(t, in, std::move(st), r);
  }
  int lit(double v, DType t) {
    SpecExpr e;
    e.kind = ExprKind::Literal;
    e.dtype = t;
    e.value = v;
    return add_expr(e);
  }
  int ew(Mode m, std::vector<int> args) {
    SpecExpr e;
    e.kind = ExprKind::Elemwise;
    e.mode = m;
    for (size_t j = 0; j < args.size(); ++j) e.args[j] = args[j];
    const ModeKind k = mode_info(m).kind;
    e.dtype = k == ModeKind::Compare || k == ModeKind::Predicate
                  ? DType::Bool
                  : spec.exprs[static_cast<size_t>(args[0])].dtype;
    return add_expr(e);
  }
  int powc(int a, double exponent) {
    SpecExpr e;
    e.kind = ExprKind::PowC;
    e.dtype = spec.exprs[static_cast<size_t>(a)].dtype;
    e.args[0] = a;
    e.value = exponent;
    return add_expr(e);
  }
  int cvt(int a, DType t) {
    SpecExpr e;
    e.kind = ExprKind::Cvt;
    e.dtype = t;
    e.args[0] = a;
    return add_expr(e);
  }
  void out(int e) { out(e, spec.exprs[static_cast<size_t>(e)].dtype); }
  void out(int e, DType t) { spec.outputs.push_back(SpecOutput{e, t, false}); }
  // A reduction over the row axes [first_axis, rank) that later expressions read.
  int row_reduce(ReduceMode m, int a, int first_axis) {
    spec.row_axis = first_axis;
    SpecExpr e;
    e.kind = ExprKind::RowReduce;
    e.dtype = spec.exprs[static_cast<size_t>(a)].dtype;
    e.reduce_mode = m;
    e.args[0] = a;
    return add_expr(e);
  }
  void reduce(ReduceMode m, int e, int first_axis) {
    spec.reduce = SpecReduce{m, e, first_axis};
    spec.outputs.push_back(SpecOutput{e, spec.exprs[static_cast<size_t>(e)].dtype, true});
  }
};

Case make_case(std::string name, std::vector<int64_t> shape) {
  Case c;
  c.name = std::move(name);
  c.shape = std::move(shape);
  c.spec.rank = static_cast<int>(c.shape.size());
  return c;
}

std::vector<DType> admitted(ModeKind k) {
  switch (k) {
    case ModeKind::Float:
    case ModeKind::Predicate:
      return {DType::F32};
    case ModeKind::Numeric:
    case ModeKind::Compare:
      return {DType::F32, DType::I32, DType::I64, DType::U8};
    case ModeKind::Int:
      return {DType::I32, DType::I64, DType::U8};
    case ModeKind::Logic:
      return {DType::Bool, DType::I32, DType::I64, DType::U8};
  }
  return {};
}

// Float inputs inside each mode's domain, so that the comparisons see numbers, not NaN.
std::pair<double, double> float_domain(Mode m) {
  switch (m) {
    case Mode::ACOS:
    case Mode::ASIN:
    case Mode::ATANH:
    case Mode::ERFINV:
      return {-0.99, 0.99};
    case Mode::ACOSH:
      return {1.0, 4.0};
    case Mode::ERFCINV:
      return {0.01, 1.99};
    case Mode::LOG:
    case Mode::LOG1P:
    case Mode::SQRT:
    case Mode::POW:
      return {0.05, 3.0};
    default:
      return {-3, 3};
  }
}

// Every mode on every dtype its kind admits: kernels of up to 16 outputs, out_k = mode_k(a,
// b, c, d), grouped by dtype and input domain.
std::vector<Case> mode_cases(std::set<int>& covered) {
  std::map<std::pair<DType, std::pair<double, double>>, std::vector<Mode>> groups;
  for (int m = 0; m < kModeCount; ++m) {
    const Mode mode = static_cast<Mode>(m);
    for (DType t : admitted(mode_info(mode).kind)) {
      const bool shift = mode == Mode::SHL || mode == Mode::SHR;
      std::pair<double, double> r = float_domain(mode);
      if (!is_float(t))
        r = shift ? (t == DType::U8 ? std::pair{0.0, 12.0} : std::pair{-2.0, 40.0})
                  : Case::default_range(t);
      groups[{t, r}].push_back(mode);
    }
  }
  std::vector<Case> cases;
  for (const auto& [key, modes] : groups) {
    for (size_t first = 0; first < modes.size(); first += kAbiMaxOutputs) {
      Case c = make_case(
          "modes_" + std::string(dtype_name(key.first)) + "_" + std::to_string(cases.size()),
          {1000});
      int x[4];
      for (int& v : x) v = c.dense(key.first, key.second);
      for (size_t i = first; i < std::min(modes.size(), first + kAbiMaxOutputs); ++i) {
        const int arity = mode_info(modes[i]).arity;
        c.out(c.ew(modes[i], std::vector<int>(x, x + arity)));
        covered.insert(static_cast<int>(modes[i]));
      }
      // Float math and bool logic vectorise; integer division, i64 <-> float do not on AVX2.
      c.check_vectorized = key.first == DType::F32 || key.first == DType::Bool;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// Multi-stage row kernels (RowReduce): layernorm, softmax in f32 and f16, rows over two
// axes with a scalar input in the per-row math.
std::vector<Case> row_stage_cases() {
  constexpr DType F = DType::F32;
  std::vector<Case> cases;
  {
    Case c = make_case("rows_layernorm", {7, 1000});
    const int x = c.dense(F), w = c.strided(F, {0, 1}, {0.5, 1.5}), b = c.strided(F, {0, 1});
    const int centred = c.ew(Mode::SUB, {x, c.row_reduce(ReduceMode::MEAN, x, 1)});
    const int var = c.row_reduce(ReduceMode::MEAN, c.ew(Mode::MUL, {centred, centred}), 1);
    const int rstd = c.powc(c.ew(Mode::ADD, {var, c.lit(1e-5, F)}), -0.5);
    c.out(c.ew(Mode::ADD, {c.ew(Mode::MUL, {c.ew(Mode::MUL, {centred, rstd}), w}), b}));
    c.check_vectorized = true;
    cases.push_back(c);
  }
  for (DType t : {F, DType::F16}) {
    Case c = make_case(t == F ? "rows_softmax" : "rows_softmax_f16", {5, t == F ? 1025 : 3});
    const int x = c.dense(t);
    const int e = c.ew(Mode::EXP, {c.ew(Mode::SUB, {x, c.row_reduce(ReduceMode::MAX, x, 1)})});
    c.out(c.ew(Mode::TRUE_DIV, {e, c.row_reduce(ReduceMode::SUM, e, 1)}));
    cases.push_back(c);
  }
  {  // softmax of (x - max) * t: the final phase reads exp's terms back from the output
    Case c = make_case("rows_softmax_scaled", {4, 300});
    const int x = c.dense(F), t = c.scalar(F, {0.5, 2});
    const int m = c.row_reduce(ReduceMode::MAX, x, 1);
    const int e = c.ew(Mode::EXP, {c.ew(Mode::MUL, {c.ew(Mode::SUB, {x, m}), t})});
    c.out(c.ew(Mode::TRUE_DIV, {e, c.row_reduce(ReduceMode::SUM, e, 1)}));
    cases.push_back(c);
  }
  {  // the final phase also reads x: it computes exp again
    Case c = make_case("rows_softmax_times_x", {3, 70});
    const int x = c.dense(F);
    const int e = c.ew(Mode::EXP, {c.ew(Mode::SUB, {x, c.row_reduce(ReduceMode::MAX, x, 1)})});
    c.out(c.ew(Mode::MUL, {c.ew(Mode::TRUE_DIV, {e, c.row_reduce(ReduceMode::SUM, e, 1)}), x}));
    cases.push_back(c);
  }
  {  // a transposed input, walked through strides by the reducing phases only
    Case c = make_case("rows_softmax_transposed", {6, 33});
    const int x = c.strided(F, {1, 6});
    const int e = c.ew(Mode::EXP, {c.ew(Mode::SUB, {x, c.row_reduce(ReduceMode::MAX, x, 1)})});
    c.out(c.ew(Mode::TRUE_DIV, {e, c.row_reduce(ReduceMode::SUM, e, 1)}));
    cases.push_back(c);
  }
  {  // a per-row statistic from outside ([rows, 1]): read once per row, per-row math on it
    Case c = make_case("rows_outside_stat", {6, 50});
    const int x = c.dense(F), v = c.strided(F, {1, 0}, {0.1, 2});
    const int rstd = c.powc(c.ew(Mode::ADD, {v, c.lit(1e-5, F)}), -0.5);
    const int centred = c.ew(Mode::SUB, {x, c.row_reduce(ReduceMode::MEAN, x, 1)});
    c.out(c.ew(Mode::MUL, {centred, rstd}));
    c.out(c.ew(Mode::MUL, {x, v}));
    cases.push_back(c);
  }
  {  // rows of [3, 40]: the scaled root mean square, a per-column strided input
    Case c = make_case("rows_rank3", {2, 3, 40});
    const int x = c.dense(F), k = c.scalar(F, {0.5, 2}), t = c.strided(F, {0, 40, 1});
    const int ms = c.row_reduce(ReduceMode::SUM_SQR, x, 1);
    const int scale = c.ew(Mode::MUL, {c.powc(ms, -0.5), k});
    c.out(c.ew(Mode::MUL, {c.ew(Mode::MUL, {x, scale}), t}));
    c.out(c.ew(Mode::ADD, {x, t}), DType::F16);
    cases.push_back(c);
  }
  return cases;
}

std::vector<Case> build_cases(std::set<int>& covered) {
  std::vector<Case> cases = mode_cases(covered);
  auto add = [&](Case c) { cases.push_back(std::move(c)); };
  const DType F = DType::F32;
  {
    Case c = make_case("mul3", {4099});
    const int a = c.dense(F), b = c.dense(F), d = c.dense(F);
    c.out(c.ew(Mode::MUL, {c.ew(Mode::MUL, {a, b}), d}));
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("mul_add", {8, 513});
    const int a = c.dense(F), b = c.dense(F), d = c.dense(F);
    c.out(c.ew(Mode::ADD, {c.ew(Mode::MUL, {a, b}), d}));
    c.check_vectorized = true;
    add(c);
  }
  {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Case c = make_case("gelu_chain", {3000});
    const int x = c.dense(F);
    const int x3 = c.powc(x, 3);
    const int inner = c.ew(Mode::ADD, {x, c.ew(Mode::MUL, {x3, c.lit(0.044715, F)})});
    const int t = c.ew(Mode::TANH, {c.ew(Mode::MUL, {inner, c.lit(0.7978845608028654, F)})});
    const int h =
        c.ew(Mode::MUL, {c.ew(Mode::MUL, {x, c.lit(0.5, F)}), c.ew(Mode::ADD, {t, c.lit(1, F)})});
    c.out(h);
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("chain10", {2500});
    const int a = c.dense(F), b = c.dense(F);
    int v = c.ew(Mode::SIGMOID, {a});
    v = c.ew(Mode::MUL, {v, b});
    v = c.ew(Mode::TANH, {v});
    v = c.ew(Mode::ADD, {v, a});
    v = c.ew(Mode::EXP, {v});
    v = c.ew(Mode::SUB, {v, b});
    v = c.ew(Mode::RELU, {v});
    v = c.ew(Mode::MUL, {v, v});
    v = c.ew(Mode::SIGMOID, {v});
    v = c.ew(Mode::FUSE_MUL_ADD3, {v, a, b});
    c.out(v);
    c.check_vectorized = true;
    add(c);
  }
  {  // literals of every dtype
    Case c = make_case("literals", {777});
    const int f = c.dense(F), i = c.dense(DType::I32), l = c.dense(DType::I64),
              u = c.dense(DType::U8), b = c.dense(DType::Bool);
    c.out(c.ew(Mode::MUL, {f, c.lit(-2.5, F)}));
    c.out(c.ew(Mode::ADD, {i, c.lit(7, DType::I32)}));
    c.out(c.ew(Mode::SUB, {l, c.lit(-5e12, DType::I64)}));
    c.out(c.ew(Mode::MAX, {u, c.lit(100, DType::U8)}));
    c.out(c.ew(Mode::XOR, {b, c.lit(1, DType::Bool)}));
    c.out(c.ew(Mode::LT, {f, c.lit(0.25, F)}));
    c.out(c.ew(Mode::ADD, {f, c.lit(std::numeric_limits<double>::infinity(), F)}));
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("scalar_inputs", {3, 341});
    const int a = c.dense(F), s = c.scalar(F, {1, 2}), h = c.scalar(DType::F16, {-1, 1}),
              i = c.scalar(DType::I32, {-9, 9});
    c.out(c.ew(Mode::ADD, {c.ew(Mode::MUL, {a, s}), h}));
    c.out(c.ew(Mode::MUL, {i, c.lit(3, DType::I32)}));  // nothing per element at all
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("bcast_rank1", {1000});
    const int a = c.dense(F), b = c.strided(F, {0});
    c.out(c.ew(Mode::SUB, {a, b}));
    c.check_vectorized = true;
    add(c);
  }
  {  // x[N,C] + bias[C], * scale[N,1]
    Case c = make_case("bcast_rows_cols", {37, 129});
    const int x = c.dense(F), bias = c.strided(F, {0, 1}), scale = c.strided(F, {1, 0});
    c.out(c.ew(Mode::MUL, {c.ew(Mode::ADD, {x, bias}), scale}));
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("bcast_rank3", {5, 7, 33});
    const int x = c.dense(F), y = c.strided(F, {33, 0, 1}), z = c.strided(DType::F16, {7, 1, 0});
    c.out(c.ew(Mode::FUSE_MUL_ADD3, {x, y, z}));
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("bcast_rank4", {2, 3, 4, 5});
    const int x = c.dense(F), y = c.strided(F, {0, 5, 0, 1}), z = c.strided(F, {4, 0, 1, 0});
    const int s = c.strided(DType::I32, {0, 0, 0, 0});  // broadcast everywhere, not flagged scalar
    c.out(c.ew(Mode::MAX, {c.ew(Mode::MUL, {x, y}), z}));
    c.out(c.ew(Mode::ADD, {s, c.lit(1, DType::I32)}));
    add(c);
  }
  {  // y read transposed: element (n, c) of [N, C] at c * N + n
    Case c = make_case("transposed", {41, 67});
    const int x = c.dense(F), y = c.strided(F, {1, 41});
    c.out(c.ew(Mode::SUB, {x, y}));
    add(c);
  }
  {  // strided, innermost stride 1 at run time (a slice): the contiguous fast path
    Case c = make_case("sliced", {9, 100});
    const int x = c.dense(F), y = c.strided(F, {128, 1});
    c.out(c.ew(Mode::ADD, {x, y}));
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("f16_chain", {2049});
    const DType H = DType::F16;
    const int a = c.dense(H), b = c.dense(H), d = c.dense(H);
    const int v = c.ew(Mode::ADD, {c.ew(Mode::MUL, {a, b}), d});
    c.out(c.ew(Mode::GELU, {v}));
    c.out(v);
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("bf16_chain", {1500});
    const DType B = DType::BF16;
    const int a = c.dense(B), b = c.dense(B);
    c.out(c.ew(Mode::SIGMOID, {c.ew(Mode::SUB, {a, b})}));
    c.check_vectorized = true;
    add(c);
  }
  {  // f16 in, computed through f32 Cvt, f32 out; and back
    Case c = make_case("f16_mixed", {1111});
    const int a = c.dense(DType::F16), b = c.dense(F);
    const int s = c.ew(Mode::MUL, {c.cvt(a, F), b});
    c.out(s);
    c.out(c.cvt(s, DType::F16));
    c.out(c.cvt(c.cvt(s, DType::BF16), DType::F16));
    c.out(s, DType::BF16);  // stored as bf16 directly
    c.check_vectorized = true;
    add(c);
  }
  {  // type_convert between every family, with NaN, inf and out-of-range floats
    Case c = make_case("cvt", {1200});
    const int f = c.dense(F, {-5e9, 5e9}), g = c.dense(F, {-300, 300}),
              i = c.dense(DType::I32, {-70000, 70000});
    const int l = c.dense(DType::I64, {-5e9, 5e9}), u = c.dense(DType::U8),
              b = c.dense(DType::Bool);
    const int h = c.dense(DType::F16, {-300, 300});
    c.specials[0] = c.specials[1] = c.specials[6] = true;
    c.out(c.cvt(f, DType::I32));
    c.out(c.cvt(f, DType::I64));
    c.out(c.cvt(g, DType::U8));
    c.out(c.cvt(g, DType::Bool));
    c.out(c.cvt(i, DType::F16));
    c.out(c.cvt(i, DType::U8));
    c.out(c.cvt(l, DType::F32));
    c.out(c.cvt(l, DType::I32));
    c.out(c.cvt(u, DType::I32));
    c.out(c.cvt(u, DType::BF16));
    c.out(c.cvt(b, F));
    c.out(c.cvt(b, DType::I64));
    c.out(c.cvt(h, DType::I32));
    c.out(c.cvt(h, DType::Bool));
    c.out(c.cvt(h, DType::BF16));
    c.out(c.cvt(c.cvt(i, DType::Bool), DType::U8));
    add(c);
  }
  {
    Case c = make_case("pow_const", {1000});
    const int x = c.dense(F, {0.1, 2.0}), y = c.dense(F, {-2, 2});
    for (double e : {2.0, 3.0, -1.0, -2.0, 0.0, 0.5, -0.5, 1.0, 1.5, 16.0, 17.0, -16.0})
      c.out(c.powc(x, e));
    c.out(c.powc(y, 3));
    c.out(c.powc(y, 2.5));  // negative bases: NaN
    c.check_vectorized = true;
    add(c);
  }
  {
    Case c = make_case("pow_const_f16", {999});
    const int x = c.dense(DType::F16, {0.1, 2.0});
    c.out(c.powc(x, 2));
    c.out(c.powc(x, -0.5));
    c.out(c.powc(x, 0.7));
    c.check_vectorized = true;
    add(c);
  }
  {  // intermediate and final values out, in several dtypes
    Case c = make_case("multi_output", {3, 5, 67});
    const int a = c.dense(F), b = c.dense(F), d = c.strided(F, {0, 0, 1});
    const int s = c.ew(Mode::ADD, {a, b});
    const int m = c.ew(Mode::MUL, {s, d});
    c.out(s);
    c.out(m);
    c.out(c.ew(Mode::LT, {s, d}));
    c.out(m, DType::F16);
    c.out(c.cvt(m, DType::I32));
    c.check_vectorized = true;
    add(c);
  }
  // Reduces: [rows, len] over the last axis unless said otherwise.
  const ReduceMode kModes[] = {ReduceMode::SUM, ReduceMode::SUM_SQR, ReduceMode::PRODUCT,
                               ReduceMode::MIN, ReduceMode::MAX,     ReduceMode::MEAN};
  for (ReduceMode m : kModes) {
    const bool prod = m == ReduceMode::PRODUCT;
    Case c = make_case("reduce_" + std::string(reduce_mode_name(m)), {6, prod ? 64 : 1024});
    const int x = c.dense(F, prod ? std::pair{0.8, 1.25} : std::pair{-3.0, 3.0});
    c.reduce(m, c.ew(Mode::EXP, {c.ew(Mode::MUL, {x, c.lit(0.5, F)})}), 1);
    add(c);
  }
  for (ReduceMode m : {ReduceMode::MIN, ReduceMode::MAX}) {  // NaN in some rows, inf in others
    Case c = make_case("reduce_nan_" + std::string(reduce_mode_name(m)), {64, 8});
    const int x = c.dense(F);
    c.specials[0] = true;
    c.reduce(m, x, 1);
    add(c);
  }
  {  // longer than one leaf of the pairwise tree
    Case c = make_case("reduce_long", {3, 5000});
    const int x = c.dense(F);
    c.reduce(ReduceMode::SUM, c.ew(Mode::SIN, {x}), 1);
    c.check_vectorized = true;
    add(c);
  }
  {  // LayerNorm's first half: centred values out in full, their variance per row
    Case c = make_case("layernorm_var", {7, 1024});
    const int x = c.dense(F), mean = c.strided(F, {1, 0});
    const int centred = c.ew(Mode::SUB, {x, mean});
    c.out(centred);
    c.reduce(ReduceMode::MEAN, c.ew(Mode::MUL, {centred, centred}), 1);
    c.check_vectorized = true;
    add(c);
  }
  {  // two reduced axes, a strided input walked inside each row, a full-shape f16 output
    Case c = make_case("reduce_rank4", {2, 3, 4, 50});
    const int x = c.dense(F), g = c.strided(F, {0, 4, 1, 0}), t = c.strided(F, {600, 1, 150, 3});
    const int v = c.ew(Mode::ADD, {c.ew(Mode::MUL, {x, g}), t});
    c.out(v, DType::F16);
    c.reduce(ReduceMode::MAX, v, 2);
    add(c);
  }
  {
    Case c = make_case("reduce_i32", {9, 300});
    const int x = c.dense(DType::I32, {-1e6, 1e6});
    c.reduce(ReduceMode::SUM, c.ew(Mode::MUL, {x, x}), 1);
    add(c);
  }
  {
    Case c = make_case("reduce_i64_min", {4, 77});
    const int x = c.dense(DType::I64, {-1e12, 1e12});
    c.reduce(ReduceMode::MIN, x, 1);
    add(c);
  }
  {
    Case c = make_case("reduce_u8_sum", {5, 100});  // wraps when stored as u8
    const int x = c.dense(DType::U8);
    c.reduce(ReduceMode::SUM, x, 1);
    c.spec.outputs.push_back(SpecOutput{c.spec.reduce->expr, DType::I32, true});
    add(c);
  }
  {
    Case c = make_case("reduce_i32_mean", {6, 10});
    const int x = c.dense(DType::I32, {-1000, 1000});
    c.reduce(ReduceMode::MEAN, x, 1);
    add(c);
  }
  {
    Case c = make_case("reduce_f16_mean", {8, 300});
    const int x = c.dense(DType::F16);
    c.reduce(ReduceMode::MEAN, c.ew(Mode::ABS, {x}), 1);
    c.spec.outputs.push_back(SpecOutput{c.spec.reduce->expr, DType::F32, true});
    c.check_vectorized = true;
    add(c);
  }
  {  // all axes reduced: one row
    Case c = make_case("reduce_all", {10, 20});
    const int x = c.dense(F);
    c.reduce(ReduceMode::SUM, x, 0);
    add(c);
  }
  for (Case& c : row_stage_cases()) add(c);
  return cases;
}

const std::vector<Case>& all_cases() {
  static std::set<int> covered;
  static const std::vector<Case> cases = build_cases(covered);
  EXPECT_EQ(static_cast<int>(covered.size()), kModeCount) << "a mode is not covered";
  return cases;
}

// ---- reference evaluation ---------------------------------------------------------------------

// A computed value: F32 in f, everything else in i (bool 0/1, u8 0..255, sign-extended ints).
struct Val {
  DType t = DType::F32;
  float f = 0;
  int64_t i = 0;
};
template <class T>
T get(const Val& v) {
  if constexpr (std::is_same_v<T, float>)
    return v.f;
  else
    return static_cast<T>(v.i);
}
Val make(float x) {
  return {DType::F32, x, 0};
}
Val make(int32_t x) {
  return {DType::I32, 0, x};
}
Val make(int64_t x) {
  return {DType::I64, 0, x};
}
Val make(long long x) {
  return {DType::I64, 0, static_cast<int64_t>(x)};
}
Val make(uint8_t x) {
  return {DType::U8, 0, x};
}
Val make(bool x) {
  return {DType::Bool, 0, x};
}
// Never a compute type; visit_dtype instantiates every branch.
Val make(f16 x) {
  return make(to_f32(x));
}
Val make(bf16 x) {
  return make(to_f32(x));
}
// The wide dtypes are never fused (is_core_dtype); visit_dtype instantiates them only.
Val wide_type() {
  throw std::logic_error("reference: f64 and i8/i16/u16/u32/u64 are never fused");
}
Val make(double) {
  return wide_type();
}
Val make(signed char) {
  return wide_type();
}
Val make(short) {
  return wide_type();
}
Val make(unsigned short) {
  return wide_type();
}
Val make(unsigned int) {
  return wide_type();
}
Val make(unsigned long long) {
  return wide_type();
}

template <Mode M, class T>
Val apply_typed(const Val* a) {
  constexpr int n = mode_info(M).arity;
  if constexpr (n == 1)
    return make(ModeFn<M>::apply(get<T>(a[0])));
  else if constexpr (n == 2)
    return make(ModeFn<M>::apply(get<T>(a[0]), get<T>(a[1])));
  else if constexpr (n == 3)
    return make(ModeFn<M>::apply(get<T>(a[0]), get<T>(a[1]), get<T>(a[2])));
  else
    return make(ModeFn<M>::apply(get<T>(a[0]), get<T>(a[1]), get<T>(a[2]), get<T>(a[3])));
}
template <Mode M>
Val apply_mode(DType t, const Val* a) {
  constexpr ModeKind k = mode_info(M).kind;
  constexpr bool fl = k != ModeKind::Int && k != ModeKind::Logic;
  constexpr bool in = k != ModeKind::Float && k != ModeKind::Predicate;
  switch (t) {
    case DType::F32:
      if constexpr (fl) return apply_typed<M, float>(a);
      break;
    case DType::I32:
      if constexpr (in) return apply_typed<M, int32_t>(a);
      break;
    case DType::I64:
      if constexpr (in) return apply_typed<M, long long>(a);
      break;
    case DType::U8:
      if constexpr (in) return apply_typed<M, uint8_t>(a);
      break;
    case DType::Bool:
      if constexpr (k == ModeKind::Logic) return apply_typed<M, bool>(a);
      break;
    default:
      break;
  }
  throw std::logic_error("reference: mode on a dtype it does not take");
}
Val apply(Mode m, DType t, const Val* a) {
  switch (m) {
#define X(NAME, ARITY, KIND, FLOPS) \
  case Mode::NAME:                  \
    return apply_mode<Mode::NAME>(t, a);
#include "runtime/ops/elemwise_modes.def"
#undef X
  }
  throw std::logic_error("reference: unknown mode");
}

template <class F>
decltype(auto) visit(DType d, F&& f) {
  return cpu::visit_dtype(d, std::forward<F>(f));
}

// Computed value of dtype `from` -> computed value of dtype `to`, by the CPU backend's
// convert through to's storage type.
Val convert(const Val& v, DType from, DType to) {
  return visit(compute_dtype(from), [&](auto cf) {
    using CF = typename decltype(cf)::type;
    return visit(to, [&](auto ts) {
      using TS = typename decltype(ts)::type;
      const TS stored = cpu::convert<TS>(get<CF>(v));
      return visit(compute_dtype(to), [&](auto ct) {
        using CT = typename decltype(ct)::type;
        return make(cpu::convert<CT>(stored));
      });
    });
  });
}

Val load(const void* buf, int64_t off, DType t) {
  return visit(t, [&](auto st) {
    using S = typename decltype(st)::type;
    return visit(compute_dtype(t), [&](auto ct) {
      using CT = typename decltype(ct)::type;
      return make(cpu::convert<CT>(static_cast<const S*>(buf)[off]));
    });
  });
}
void store(void* buf, int64_t off, DType t, const Val& v, DType from) {
  visit(compute_dtype(from), [&](auto cf) {
    using CF = typename decltype(cf)::type;
    visit(t, [&](auto st) {
      using S = typename decltype(st)::type;
      static_cast<S*>(buf)[off] = cpu::convert<S>(get<CF>(v));
    });
  });
}

Val round_to(const Val& v, DType t) {
  if (t == DType::F16) return make(to_f32(to_f16(v.f)));
  if (t == DType::BF16) return make(to_f32(to_bf16(v.f)));
  return v;
}

Val literal(double value, DType t) {
  if (is_float(t)) return round_to(make(static_cast<float>(value)), t);
  if (t == DType::Bool) return make(value != 0);
  Val v = make(static_cast<int64_t>(value));
  v.t = t;
  return v;
}

// pow_const by an independent route: double pow for the exponents pow_const multiplies out.
float pow_ref(float x, double exponent) {
  const float e = static_cast<float>(exponent);
  if (e == std::trunc(e) && std::fabs(e) <= 16)
    return static_cast<float>(std::pow(static_cast<double>(x), e));
  if (e == 0.5f) return std::sqrt(x);
  if (e == -0.5f) return 1.0f / std::sqrt(x);
  return ModeFn<Mode::POW>::apply(x, e);
}

struct Buffers {
  std::vector<std::vector<unsigned char>> in, out;
};

// Every expression at flat element i (idx: its multi-index).
std::vector<Val> eval_element(const Case& c, const Buffers& b, int64_t i,
                              const std::vector<int64_t>& idx,
                              const std::vector<Val>* row_values = nullptr) {
  const KernelSpec& s = c.spec;
  std::vector<Val> v(s.exprs.size());
  for (size_t n = 0; n < s.exprs.size(); ++n) {
    const SpecExpr& e = s.exprs[n];
    auto arg = [&](int j) { return v[static_cast<size_t>(e.args[j])]; };
    switch (e.kind) {
      case ExprKind::Input: {
        const size_t k = static_cast<size_t>(e.input);
        const SpecInput& in = s.inputs[k];
        int64_t off = i;
        if (in.scalar)
          off = 0;
        else if (!in.dense) {
          off = 0;
          for (int d = 0; d < c.rank(); ++d)
            off += idx[static_cast<size_t>(d)] * c.strides[k][static_cast<size_t>(d)];
        }
        v[n] = convert(load(b.in[k].data(), off, in.dtype), in.dtype, e.dtype);
        break;
      }
      case ExprKind::Literal:
        v[n] = literal(e.value, e.dtype);
        break;
      case ExprKind::Elemwise: {
        Val a[4];
        for (int j = 0; j < mode_info(e.mode).arity; ++j) a[j] = arg(j);
        v[n] = round_to(apply(e.mode, a[0].t, a), e.dtype);
        break;
      }
      case ExprKind::PowC:
        v[n] = round_to(make(pow_ref(arg(0).f, e.value)), e.dtype);
        break;
      case ExprKind::Cvt:
        v[n] = convert(arg(0), s.exprs[static_cast<size_t>(e.args[0])].dtype, e.dtype);
        break;
      case ExprKind::RowReduce:
        if (row_values) v[n] = (*row_values)[n];
        break;
    }
  }
  return v;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> index_of(const Case& c, int64_t i) {
  std::vector<int64_t> idx(c.shape.size());
  for (int d = c.rank() - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = i % c.shape[static_cast<size_t>(d)];
    i /= c.shape[static_cast<size_t>(d)];
  }
  return idx;
}

// A row-stage spec row by row: each RowReduce in double over its argument's values along
// the row (the earlier row values known), then the outputs with every row value known.
Buffers row_stage_reference(const Case& c, const Buffers& in) {
  const KernelSpec& s = c.spec;
  Buffers r;
  r.in = in.in;
  const int64_t n = numel_of(c.shape);
  const int64_t len = numel_of(std::vector<int64_t>(c.shape.begin() + s.row_axis, c.shape.end()));
  for (const SpecOutput& o : s.outputs)
    r.out.emplace_back(static_cast<size_t>(n) * dtype_size(o.dtype));
  for (int64_t row = 0; row * len < n; ++row) {
    std::vector<Val> rv(s.exprs.size());
    for (size_t e = 0; e < s.exprs.size(); ++e) {
      const SpecExpr& x = s.exprs[e];
      if (x.kind != ExprKind::RowReduce) continue;
      const ReduceMode m = x.reduce_mode;
      double a = m == ReduceMode::PRODUCT ? 1
                 : m == ReduceMode::MIN   ? INFINITY
                 : m == ReduceMode::MAX   ? -INFINITY
                                          : 0;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t i = row * len + j;
        const double v =
            eval_element(c, in, i, index_of(c, i), &rv)[static_cast<size_t>(x.args[0])].f;
        a = m == ReduceMode::MAX       ? std::max(a, v)
            : m == ReduceMode::MIN     ? std::min(a, v)
            : m == ReduceMode::PRODUCT ? a * v
            : m == ReduceMode::SUM_SQR ? a + v * v
                                       : a + v;
      }
      if (m == ReduceMode::MEAN) a /= static_cast<double>(len);
      rv[e] = convert(make(static_cast<float>(a)), DType::F32, x.dtype);
    }
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = row * len + j;
      const std::vector<Val> v = eval_element(c, in, i, index_of(c, i), &rv);
      for (size_t o = 0; o < s.outputs.size(); ++o)
        store(r.out[o].data(), i, s.outputs[o].dtype, v[static_cast<size_t>(s.outputs[o].expr)],
              s.exprs[static_cast<size_t>(s.outputs[o].expr)].dtype);
    }
  }
  return r;
}

// Expected outputs; `tol` gets, per reduced output row, an absolute tolerance for float sums.
Buffers reference(const Case& c, const Buffers& in, std::vector<double>& row_atol) {
  const KernelSpec& s = c.spec;
  if (s.row_stages()) return row_stage_reference(c, in);
  Buffers r;
  r.in = in.in;
  const int64_t n = numel_of(c.shape);
  const int64_t len =
      s.reduce
          ? numel_of(std::vector<int64_t>(c.shape.begin() + s.reduce->first_axis, c.shape.end()))
          : 1;
  const int64_t rows = s.reduce ? n / len : 0;
  for (const SpecOutput& o : s.outputs)
    r.out.emplace_back(static_cast<size_t>(o.reduced ? rows : n) * dtype_size(o.dtype));
  std::vector<int64_t> idx(c.shape.size(), 0);
  std::vector<Val> red;  // the reduced expression, per element
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int d = c.rank() - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rest % c.shape[static_cast<size_t>(d)];
      rest /= c.shape[static_cast<size_t>(d)];
    }
    const std::vector<Val> v = eval_element(c, in, i, idx);
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      const SpecOutput& out = s.outputs[o];
      if (!out.reduced)
        store(r.out[o].data(), i, out.dtype, v[static_cast<size_t>(out.expr)],
              s.exprs[static_cast<size_t>(out.expr)].dtype);
    }
    if (s.reduce) red.push_back(v[static_cast<size_t>(s.reduce->expr)]);
  }
  if (!s.reduce) return r;
  const SpecReduce& rd = *s.reduce;
  const DType et = s.exprs[static_cast<size_t>(rd.expr)].dtype;
  row_atol.assign(static_cast<size_t>(rows), 0);
  for (int64_t row = 0; row < rows; ++row) {
    Val acc;
    if (is_float(et)) {  // in double: the kernel's float tree is checked against it
      double a = rd.mode == ReduceMode::PRODUCT ? 1
                 : rd.mode == ReduceMode::MIN   ? INFINITY
                 : rd.mode == ReduceMode::MAX   ? -INFINITY
                                                : 0;
      double abs_sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        const double x = red[static_cast<size_t>(row * len + j)].f;
        abs_sum += rd.mode == ReduceMode::SUM_SQR ? x * x : std::fabs(x);
        switch (rd.mode) {
          case ReduceMode::SUM:
          case ReduceMode::MEAN:
            a += x;
            break;
          case ReduceMode::SUM_SQR:
            a += x * x;
            break;
          case ReduceMode::PRODUCT:
            a *= x;
            break;
          case ReduceMode::MIN:
            a = std::isnan(a) || std::isnan(x) ? NAN : std::min(a, x);
            break;
          case ReduceMode::MAX:
            a = std::isnan(a) || std::isnan(x) ? NAN : std::max(a, x);
            break;
        }
      }
      if (rd.mode == ReduceMode::MEAN) {
        a /= static_cast<double>(len);
        abs_sum /= static_cast<double>(len);
      }
      row_atol[static_cast<size_t>(row)] = 2e-6 * abs_sum;
      acc = make(static_cast<float>(a));
    } else {  // wrapping i64, exact
      uint64_t a = rd.mode == ReduceMode::PRODUCT ? 1
                   : rd.mode == ReduceMode::MIN   ? 0x7fffffffffffffffull
                   : rd.mode == ReduceMode::MAX   ? 0x8000000000000000ull
                                                  : 0;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t x = red[static_cast<size_t>(row * len + j)].i;
        switch (rd.mode) {
          case ReduceMode::SUM:
          case ReduceMode::MEAN:
            a += static_cast<uint64_t>(x);
            break;
          case ReduceMode::SUM_SQR:
            a += static_cast<uint64_t>(x) * static_cast<uint64_t>(x);
            break;
          case ReduceMode::PRODUCT:
            a *= static_cast<uint64_t>(x);
            break;
          case ReduceMode::MIN:
            a = static_cast<uint64_t>(std::min(static_cast<int64_t>(a), x));
            break;
          case ReduceMode::MAX:
            a = static_cast<uint64_t>(std::max(static_cast<int64_t>(a), x));
            break;
        }
      }
      int64_t sa = static_cast<int64_t>(a);
      if (rd.mode == ReduceMode::MEAN) sa /= len;
      acc = make(sa);
    }
    const Val v = convert(acc, is_float(et) ? DType::F32 : DType::I64, et);
    for (size_t o = 0; o < s.outputs.size(); ++o)
      if (s.outputs[o].reduced) store(r.out[o].data(), row, s.outputs[o].dtype, v, et);
  }
  return r;
}

// ---- data and comparison ------------------------------------------------------------------

void fill(std::vector<unsigned char>& buf, DType t, std::pair<double, double> range, bool specials,
          std::mt19937_64& rng) {
  const size_t n = buf.size() / dtype_size(t);
  std::uniform_real_distribution<double> real(range.first, range.second);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(range.first),
                                                 static_cast<int64_t>(range.second));
  const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 3e38f, -3e38f, 1e-40f};
  for (size_t i = 0; i < n; ++i) {
    Val v;
    if (is_float(t)) {
      v = make(static_cast<float>(real(rng)));
      if (specials && rng() % 16 == 0) v = make(special[rng() % 8]);
    } else {
      v = make(static_cast<int64_t>(integer(rng)));
    }
    store(buf.data(), static_cast<int64_t>(i), t, v, is_float(t) ? DType::F32 : DType::I64);
  }
}

int64_t buffer_elements(const Case& c, size_t k) {
  const SpecInput& in = c.spec.inputs[k];
  if (in.scalar) return 1;
  if (in.dense) return numel_of(c.shape);
  int64_t last = 0;
  for (int d = 0; d < c.rank(); ++d)
    last += (c.shape[static_cast<size_t>(d)] - 1) * c.strides[k][static_cast<size_t>(d)];
  return last + 1;
}

Buffers random_inputs(const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffers b;
  for (size_t k = 0; k < c.spec.inputs.size(); ++k) {
    b.in.emplace_back(static_cast<size_t>(buffer_elements(c, k)) *
                      dtype_size(c.spec.inputs[k].dtype));
    fill(b.in.back(), c.spec.inputs[k].dtype, c.ranges[k], c.specials[k], rng);
  }
  return b;
}

double element(const std::vector<unsigned char>& buf, int64_t i, DType t) {
  const Val v = load(buf.data(), i, t);
  return is_float(t) ? static_cast<double>(v.f) : static_cast<double>(v.i);
}

// Number of mismatches in output o (up to 5 reported).
int compare(const Case& c, size_t o, const std::vector<unsigned char>& want,
            const std::vector<unsigned char>& got, const std::vector<double>& row_atol) {
  const DType t = c.spec.outputs[o].dtype;
  const bool reduced = c.spec.outputs[o].reduced;
  const double rtol = t == DType::F32 ? 1e-5 : t == DType::F16 ? 1e-3 : 1.0 / 128;
  const int64_t n = static_cast<int64_t>(want.size() / dtype_size(t));
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = element(want, i, t), a = element(got, i, t);
    bool ok;
    if (!is_float(t))
      ok = e == a;
    else if (std::isnan(e) || std::isnan(a))
      ok = std::isnan(e) && std::isnan(a);
    else if (std::isinf(e) || std::isinf(a))
      ok = e == a;
    else {
      double atol = 1e-6;
      if (reduced && !row_atol.empty()) atol += row_atol[static_cast<size_t>(i)];
      ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    }
    if (!ok && ++bad <= 5)
      ADD_FAILURE() << c.name << ": output " << o << " (" << dtype_name(t) << ") element " << i
                    << ": expected " << e << ", got " << a;
  }
  return bad;
}

// ---- compiling generated C++ ---------------------------------------------------------------

// The headers generated code includes, as the runtime ships them (embedded at build time).
std::vector<std::pair<std::string, std::string>> kernel_headers() {
  std::vector<std::pair<std::string, std::string>> h;
  for (const EmbeddedHeader& e : embedded_headers())
    h.emplace_back(std::string(e.path), std::string(e.contents));
  return h;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `<host compiler> -v`: names the compiler and its version.
const std::string& compiler_banner() {
  static const std::string banner = [] {
    const std::string cmd = hf::fusion::host_compiler_path() + " -v 2>&1";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[256];
      while (fgets(buf, sizeof buf, p)) out += buf;
      pclose(p);
    }
    return out;
  }();
  return banner;
}
bool compiler_is_gcc() {
  return compiler_banner().find("gcc version") != std::string::npos;
}

uint64_t fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Library {
  void* handle = nullptr;
  std::string log;
  double seconds = 0;
  bool cached = false;
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (handle) dlclose(handle);
  }
  void* symbol(const char* name) const { return handle ? dlsym(handle, name) : nullptr; }
};

// Compiles `source` into a .so the way the runtime's host compiler does, and loads it. With
// `cache`, the .so and the compiler's output are kept under the build directory, keyed by
// everything that goes into them: ctest runs each TEST in its own process, and the big unit
// would otherwise be compiled once per TEST.
void compile_cpp(const std::string& source, Library& lib, bool opt_info = false,
                 bool cache = false) {
  std::string flags;  // the runtime's own, so the unit compiles as the kernels do
  for (const std::string& f : hf::fusion::host_compile_flags())
    flags += (flags.empty() ? "" : " ") + f;
  if (opt_info) flags += " -fopt-info-vec-loop-optimized";
  const auto headers = kernel_headers();
  uint64_t key = fnv1a(source);
  key = fnv1a(flags, key);
  key = fnv1a(compiler_banner(), key);
  for (const auto& [path, text] : headers) key = fnv1a(text, fnv1a(path, key));
  char key_hex[17];
  std::snprintf(key_hex, sizeof key_hex, "%016llx", static_cast<unsigned long long>(key));
  const fs::path cached_so =
      fs::path(HF_BINARY_DIR) / "codegen_test_cache" / (std::string(key_hex) + ".so");
  const fs::path cached_log = fs::path(cached_so).replace_extension(".log");
  if (cache && fs::exists(cached_so) && fs::exists(cached_log)) {
    lib.log = read_text(cached_log);
    lib.handle = dlopen(cached_so.c_str(), RTLD_NOW | RTLD_LOCAL);
    lib.cached = lib.handle != nullptr;
    if (lib.handle) return;
  }

  char tmpl[] = "/tmp/hf_codegen_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  for (const auto& [path, text] : headers) {
    fs::create_directories((dir / "include" / path).parent_path());
    std::ofstream(dir / "include" / path) << text;
  }
  std::ofstream(dir / "unit.cpp") << source;
  const std::string cmd = hf::fusion::host_compiler_path() + " " + flags + " -I" +
                          (dir / "include").string() + " " + (dir / "unit.cpp").string() + " -o " +
                          (dir / "unit.so").string() + " > " + (dir / "log.txt").string() + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  lib.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  lib.log = read_text(dir / "log.txt");
  if (rc == 0) lib.handle = dlopen((dir / "unit.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (rc == 0 && cache) {  // copy, then rename: a concurrent reader never sees half a file
    std::error_code ec;
    fs::create_directories(cached_so.parent_path(), ec);
    const std::string tmp = "." + std::to_string(getpid()) + ".tmp";
    fs::copy_file(dir / "unit.so", cached_so.string() + tmp, fs::copy_options::overwrite_existing,
                  ec);
    fs::copy_file(dir / "log.txt", cached_log.string() + tmp, fs::copy_options::overwrite_existing,
                  ec);
    if (!ec) {
      fs::rename(cached_log.string() + tmp, cached_log, ec);
      fs::rename(cached_so.string() + tmp, cached_so, ec);
    }
  }
  if (std::getenv("HF_KEEP_CODEGEN_TEST"))
    std::printf("kept %s\n", dir.c_str());
  else
    fs::remove_all(dir);
  ASSERT_EQ(rc, 0) << "compile failed:\n" << lib.log.substr(0, 20000);
  ASSERT_NE(lib.handle, nullptr) << dlerror();
}

// Runs kernel `fn` for case c on `in`, [0, n) split in three uneven chunks.
// Runs the kernel over its range in three calls, or, with `step`, in calls of `step` units.
// `stream`: flat kernels write their outputs with streaming stores (KernelArgs::stream_out).
// `fn`: a compiled kernel's entry, or anything called like one (the SpecInterpreter).
template <class Fn>
Buffers run_kernel(const Case& c, Fn fn, const Buffers& in, int64_t step = 0, bool stream = false) {
  const KernelSpec& s = c.spec;
  const int64_t n = numel_of(c.shape);
  const int64_t len =
      s.reduce
          ? numel_of(std::vector<int64_t>(c.shape.begin() + s.reduce->first_axis, c.shape.end()))
          : 1;
  Buffers out;
  out.in = in.in;
  auto args = std::make_unique<KernelArgs>();
  std::memset(args.get(), 0, sizeof(KernelArgs));
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    args->in[k] = out.in[k].data();
    for (int d = 0; d < c.rank(); ++d)
      args->in_strides[k][d] = c.strides[k].empty() ? 0 : c.strides[k][static_cast<size_t>(d)];
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    // Canary-filled, so an element never written shows up.
    out.out.emplace_back(
        static_cast<size_t>(s.outputs[o].reduced ? n / len : n) * dtype_size(s.outputs[o].dtype),
        0xa5);
    args->out[o] = out.out.back().data();
  }
  for (int d = 0; d < c.rank(); ++d) args->shape[d] = c.shape[static_cast<size_t>(d)];
  args->numel = n;
  args->row_len = len;
  args->rows = n / len;
  args->stream_out = stream;
  const int64_t total = s.reduce ? args->rows : n;
  if (step > 0) {
    for (int64_t b = 0; b < total; b += step) fn(args.get(), b, std::min(total, b + step));
    return out;
  }
  const int64_t cuts[] = {0, total / 3, std::min(total, total / 3 + total / 2 + 1), total};
  for (int p = 0; p < 3; ++p) fn(args.get(), cuts[p], cuts[p + 1]);
  return out;
}

// ---- the shared compiled unit --------------------------------------------------------------

struct Unit {
  Library lib;
  std::string source;
  bool gcc_info = false;
};

Unit& unit() {
  static Unit* u = [] {
    auto* u = new Unit;
    std::vector<UnitKernel> kernels;
    for (const Case& c : all_cases())
      kernels.push_back(UnitKernel{c.spec, c.name, "test case " + c.name});
    u->source = generate_cpp_unit(kernels);
    u->gcc_info = compiler_is_gcc();
    compile_cpp(u->source, u->lib, u->gcc_info, /*cache=*/true);
    const size_t lines = static_cast<size_t>(std::count(u->source.begin(), u->source.end(), '\n'));
    if (u->lib.cached)
      std::printf("%zu kernels (%zu lines): compiled .so from the test cache\n", kernels.size(),
                  lines);
    else
      std::printf("compiled %zu kernels (%zu lines) in %.1f s\n", kernels.size(), lines,
                  u->lib.seconds);
    return u;
  }();
  return *u;
}

TEST(CodegenCpp, KernelsMatchReference) {
  Unit& u = unit();
  ASSERT_NE(u.lib.handle, nullptr);
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    auto fn = reinterpret_cast<HostKernelFn>(u.lib.symbol(c.name.c_str()));
    ASSERT_NE(fn, nullptr) << c.name << " missing from the .so";
    const Buffers in = random_inputs(c, fnv1a(c.name));
    std::vector<double> row_atol;
    const Buffers want = reference(c, in, row_atol);
    const Buffers got = run_kernel(c, fn, in);
    for (size_t o = 0; o < c.spec.outputs.size(); ++o)
      EXPECT_EQ(compare(c, o, want.out[o], got.out[o], row_atol), 0) << "output " << o;
  }
}

// Row-stage case `base` (rank 2) at rows of each length in `lens` and batches of 1, 2 and
// 9, run by `fn` (run_kernel's uneven cuts of the flat range also split rows) against the
// reference.
template <class Fn>
void expect_every_row_length(const Case& base, Fn fn, std::initializer_list<int64_t> lens) {
  for (int64_t len : lens)
    for (int64_t batch : {1, 2, 9}) {
      Case c = base;
      c.shape = {batch, len};
      SCOPED_TRACE(c.name + " [" + std::to_string(batch) + "," + std::to_string(len) + "]");
      const Buffers in = random_inputs(c, static_cast<uint64_t>(len * 31 + batch));
      std::vector<double> row_atol;
      const Buffers want = reference(c, in, row_atol);
      const Buffers got = run_kernel(c, fn, in);
      for (size_t o = 0; o < c.spec.outputs.size(); ++o)
        EXPECT_EQ(compare(c, o, want.out[o], got.out[o], row_atol), 0) << "output " << o;
    }
}

// One compiled row-stage kernel serves every batch size and row length (sizes are run-time
// arguments), rows of 1, 3, 1000 and 1025 elements included; run_kernel's uneven cuts of
// the flat range also split rows, which the kernel must do once each.
TEST(CodegenCpp, RowStageKernelsServeEveryRowLengthAndBatch) {
  Unit& u = unit();
  ASSERT_NE(u.lib.handle, nullptr);
  for (const Case& base : row_stage_cases()) {
    if (base.rank() != 2) continue;
    auto fn = reinterpret_cast<HostKernelFn>(u.lib.symbol(base.name.c_str()));
    ASSERT_NE(fn, nullptr) << base.name;
    expect_every_row_length(base, fn, {1, 3, 1000, 1025});
  }
}

// Calls f(case, its compiled function) for every flat case (no reduce, no row stages);
// returns how many.
template <class F>
int for_each_flat_kernel(F&& f) {
  Unit& u = unit();
  EXPECT_NE(u.lib.handle, nullptr);
  if (!u.lib.handle) return 0;
  int checked = 0;
  for (const Case& c : all_cases()) {
    if (c.spec.reduce || c.spec.row_stages()) continue;
    SCOPED_TRACE(c.name);
    auto fn = reinterpret_cast<HostKernelFn>(u.lib.symbol(c.name.c_str()));
    EXPECT_NE(fn, nullptr);
    if (!fn) continue;
    f(c, fn);
    ++checked;
  }
  return checked;
}

// Outputs far larger than the cache go out through streaming stores (fusion/host_stream.h):
// the same bytes as ordinary stores, at every alignment the uneven cuts give, tails included.
TEST(CodegenCpp, StreamedOutputsEqualStoredOnes) {
  const int checked = for_each_flat_kernel([](const Case& c, HostKernelFn fn) {
    const Buffers in = random_inputs(c, 11);
    const Buffers stored = run_kernel(c, fn, in), streamed = run_kernel(c, fn, in, 0, true);
    for (size_t o = 0; o < c.spec.outputs.size(); ++o)
      EXPECT_TRUE(stored.out[o] == streamed.out[o]) << "output " << o;
  });
  EXPECT_GT(checked, 10);
}

// The thread pool cuts a kernel's range anywhere, so an element the vector loop computes in one
// run is computed by the scalar remainder in another: the two must round alike, bit for bit
// (kernels are compiled with -ffp-contract=off and ?: selects; docs/math.md). One call per
// element runs every element through the scalar code.
TEST(CodegenCpp, ResultsDoNotDependOnWhereTheRangeIsCut) {
  const int checked = for_each_flat_kernel([](const Case& c, HostKernelFn fn) {
    const Buffers in = random_inputs(c, 7);
    const Buffers whole = run_kernel(c, fn, in), single = run_kernel(c, fn, in, 1);
    for (size_t o = 0; o < c.spec.outputs.size(); ++o) {
      const size_t width = dtype_size(c.spec.outputs[o].dtype);
      size_t differ = 0, first = 0;
      for (size_t k = whole.out[o].size(); k-- > 0;)
        if (whole.out[o][k] != single.out[o][k]) ++differ, first = k / width;
      EXPECT_EQ(differ, 0u) << "output " << o << " differs from element " << first;
    }
  });
  EXPECT_GT(checked, 30);
}

// GCC reports the seg loop of every flat kernel marked check_vectorized as vectorised, and
// something in the body of each seg_acc (a reduce accumulated in registers).
TEST(CodegenCpp, FlatLoopsVectorise) {
  Unit& u = unit();
  if (!u.gcc_info) GTEST_SKIP() << "the host compiler is not GCC";
  std::set<int> vectorised;
  const std::regex re(R"(unit\.cpp:(\d+):\d+: optimized: loop vectorized)");
  for (std::sregex_iterator it(u.lib.log.begin(), u.lib.log.end(), re), end; it != end; ++it)
    vectorised.insert(std::stoi((*it)[1]));
  std::set<int> any_vectorised = vectorised;  // loops or straight-line (SLP) code
  const std::regex any(R"(unit\.cpp:(\d+):\d+: optimized: (loop|basic block part) vectorized)");
  for (std::sregex_iterator it(u.lib.log.begin(), u.lib.log.end(), any), end; it != end; ++it)
    any_vectorised.insert(std::stoi((*it)[1]));
  std::vector<std::string> lines;
  std::istringstream src(u.source);
  for (std::string l; std::getline(src, l);) lines.push_back(l);
  int checked = 0;
  for (const Case& c : all_cases()) {
    if (!c.check_vectorized) continue;
    // The loop is the line after `static HF_VECTOR_LOOP void seg(` in the kernel's namespace;
    // a row-stage kernel's last one, the pass that writes the outputs (its first phases may
    // only copy an input, which GCC turns into memcpy).
    // A reducing pass that accumulates in registers has seg_acc instead of seg: something
    // in its body (the lane loop, fully unrolled, GCC may report as straight-line code).
    int loop = -1;
    std::vector<std::pair<int, int>> acc_bodies;  // 1-based first and last line
    bool inside = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] == "namespace hf_generated::" + c.name + " {") inside = true;
      if (inside && lines[i].rfind("extern \"C\"", 0) == 0) break;
      if (!inside) continue;
      if (lines[i].rfind("static HF_VECTOR_LOOP void seg(", 0) == 0 &&
          (loop < 0 || c.spec.row_stages()))
        loop = static_cast<int>(i) + 2;  // 1-based line of the for loop
      if (lines[i].rfind("static inline ", 0) != 0 ||
          lines[i].find(" seg_acc(") == std::string::npos)
        continue;
      // A term that is just an input read (no ::hf:: operation in eval): GCC vectorises the
      // plain sum but reports it nowhere in unit.cpp.
      bool computes = false;
      for (size_t e = i; e > 0 && lines[e].rfind("static HF_HD void eval(", 0) != 0; --e)
        computes = computes || lines[e - 1].find("::hf::ModeFn") != std::string::npos ||
                   lines[e - 1].find("::hf::fusion::gen::") != std::string::npos;
      if (computes)
        for (size_t e = i; e < lines.size(); ++e)
          if (lines[e] == "}") {
            acc_bodies.emplace_back(static_cast<int>(i) + 1, static_cast<int>(e) + 1);
            break;
          }
    }
    for (const auto& [first, last] : acc_bodies) {
      const auto hit = any_vectorised.lower_bound(first);
      EXPECT_TRUE(hit != any_vectorised.end() && *hit <= last)
          << c.name << ": nothing in seg_acc at unit.cpp:" << first << "-" << last
          << " was vectorised";
    }
    ASSERT_TRUE(loop > 0 || !acc_bodies.empty()) << c.name;
    if (loop > 0) {
      EXPECT_TRUE(vectorised.count(loop))
          << c.name << ": the loop at unit.cpp:" << loop << " was not vectorised";
    }
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

// GCC's unroll-and-jam would interleave two steps of a reduction's lane loop: a row kernel
// twice the code to compile, and no faster (slower on short rows). The kernel flags turn it
// off (docs/math.md "Kernel flags"); this fails if a flag change lets it back in.
TEST(CodegenCpp, ReductionLoopsAreNotUnrolledAndJammed) {
  Unit& u = unit();
  if (!u.gcc_info) GTEST_SKIP() << "the host compiler is not GCC";
  ASSERT_NE(u.lib.log.find("optimized: loop vectorized"), std::string::npos)
      << "no optimisation report to read";
  EXPECT_EQ(u.lib.log.find("unroll and jam"), std::string::npos) << u.lib.log.substr(0, 4000);
}

// Fused f16 chains and float row reductions equal the unfused CPU kernels bit for bit.
TEST(CodegenCpp, FusedEqualsUnfusedBitForBit) {
  Unit& u = unit();
  cpu::ThreadPool pool(1);
  auto find = [](const char* name) -> const Case& {
    for (const Case& c : all_cases())
      if (c.name == name) return c;
    throw std::logic_error(name);
  };
  {  // gelu((a * b) + c) and (a * b) + c in f16
    const Case& c = find("f16_chain");
    const Buffers in = random_inputs(c, 7);
    const Buffers got =
        run_kernel(c, reinterpret_cast<HostKernelFn>(u.lib.symbol("f16_chain")), in);
    const Shape shape = c.shape;
    auto view = [&](const std::vector<unsigned char>& b) {
      return contiguous_view(const_cast<unsigned char*>(b.data()), DType::F16, shape);
    };
    std::vector<unsigned char> t1(in.in[0].size()), t2(in.in[0].size()), t3(in.in[0].size());
    const TensorView ab[] = {view(in.in[0]), view(in.in[1])};
    cpu::elemwise(Mode::MUL, ab, view(t1), pool);
    const TensorView tc[] = {view(t1), view(in.in[2])};
    cpu::elemwise(Mode::ADD, tc, view(t2), pool);
    const TensorView g[] = {view(t2)};
    cpu::elemwise(Mode::GELU, g, view(t3), pool);
    EXPECT_EQ(std::memcmp(t3.data(), got.out[0].data(), t3.size()), 0) << "gelu output differs";
    EXPECT_EQ(std::memcmp(t2.data(), got.out[1].data(), t2.size()), 0) << "a*b+c output differs";
  }
  {  // sum(sin(x)) over rows of 5000: the unfused reduce's pairwise tree, reproduced
    const Case& c = find("reduce_long");
    const Buffers in = random_inputs(c, 11);
    const Buffers got =
        run_kernel(c, reinterpret_cast<HostKernelFn>(u.lib.symbol("reduce_long")), in);
    std::vector<unsigned char> s(in.in[0].size()), r(got.out[0].size());
    const TensorView x[] = {
        contiguous_view(const_cast<unsigned char*>(in.in[0].data()), DType::F32, c.shape)};
    cpu::elemwise(Mode::SIN, x, contiguous_view(s.data(), DType::F32, c.shape), pool);
    const int axes[] = {1};
    cpu::reduce(ReduceMode::SUM, contiguous_view(s.data(), DType::F32, c.shape), axes,
                contiguous_view(r.data(), DType::F32, {c.shape[0], 1}), pool);
    const float* want = reinterpret_cast<const float*>(r.data());
    const float* have = reinterpret_cast<const float*>(got.out[0].data());
    for (int64_t i = 0; i < c.shape[0]; ++i) EXPECT_EQ(want[i], have[i]) << "row " << i;
  }
}

// A softmax's final phase reads the exp terms its sum pass stored in the output (one exp
// per element, as the unfused ops), also where the input is walked through strides, unless
// it needs an input besides them (codegen_cpp.cpp, keep_last_term_in_output).
// KernelsMatchReference and RowStageKernelsServeEveryRowLengthAndBatch run them all.
TEST(CodegenCpp, SoftmaxComputesExpOncePerElement) {
  auto count = [](const std::string& src, const std::string& what) {
    size_t n = 0;
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++n;
    return n;
  };
  for (const Case& c : row_stage_cases()) {
    if (c.name.rfind("rows_softmax", 0) != 0 || c.name == "rows_softmax_f16") continue;
    SCOPED_TRACE(c.name);
    const std::string src = generate_cpp(c.spec, "hf_" + c.name, "");
    const bool reads_back = c.name != "rows_softmax_times_x";
    EXPECT_EQ(count(src, "Mode::EXP>"), reads_back ? 1u : 2u) << src;
    EXPECT_EQ(count(src, "eval(out0[j]"), reads_back ? 1u : 0u) << src;
  }
}

// ---- the interpreter ---------------------------------------------------------------------

// The interpreter runs every f32 case, against the same reference and tolerances as the
// compiled kernels, over the same uneven cuts of the range, and element by element.
TEST(SpecInterpreter, MatchesReferenceOnEveryF32Case) {
  int ran = 0, refused = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    std::string why;
    if (!interpretable(c.spec, &why)) {
      EXPECT_THROW(SpecInterpreter{c.spec}, hf::Error);
      EXPECT_FALSE(why.empty());
      ++refused;
      continue;
    }
    const SpecInterpreter interp(c.spec);
    auto fn = [&](const KernelArgs* a, i64 b, i64 e) { interp.run(*a, b, e); };
    const Buffers in = random_inputs(c, fnv1a(c.name));
    std::vector<double> row_atol;
    const Buffers want = reference(c, in, row_atol);
    for (int64_t step : {0, 1}) {
      const Buffers got = run_kernel(c, fn, in, step);
      for (size_t o = 0; o < c.spec.outputs.size(); ++o)
        EXPECT_EQ(compare(c, o, want.out[o], got.out[o], row_atol), 0)
            << "output " << o << ", step " << step;
    }
    ++ran;
  }
  EXPECT_GE(ran, 30);
  EXPECT_GE(refused, 20);  // f16, bf16, integer and bool cases are compiled
}

// Row-stage specs at every row length and batch, rows cut anywhere by the range.
TEST(SpecInterpreter, RowStagesServeEveryRowLengthAndBatch) {
  int ran = 0;
  for (const Case& base : row_stage_cases()) {
    if (base.rank() != 2 || !interpretable(base.spec)) continue;
    const SpecInterpreter interp(base.spec);
    auto fn = [&](const KernelArgs* a, i64 b, i64 e) { interp.run(*a, b, e); };
    expect_every_row_length(base, fn, {1, 3, 1000, 1025, 5000});  // 5000: rows of 3 leaves
    ++ran;
  }
  EXPECT_GE(ran, 4);
}

// codegen_support.h's vectorisable f16 conversions are half.h's, value for value.
TEST(CodegenSupport, HalfConversionsMatchHalfH) {
  for (u32 b = 0; b < 65536; ++b) {
    const f16 h{static_cast<u16>(b)};
    ASSERT_EQ(f32_bits(gen::widen(h)), f32_bits(to_f32(h))) << std::hex << b;
  }
  // Every 2^32 / 2^22 th pattern, offset so that all exponents and both signs are hit, and
  // the rounding boundaries around each f16 value near the normal/subnormal limit.
  for (uint64_t b = 0; b < (1ull << 32); b += 1021) {
    const float f = f32_from_bits(static_cast<u32>(b));
    ASSERT_EQ(gen::narrow_f16(f).bits, to_f16(f).bits) << std::hex << b;
  }
  for (u32 h = 0; h < 0x7c00; h += 7)
    for (int d = -2; d <= 2; ++d) {
      const float f =
          f32_from_bits(f32_bits(to_f32(f16{static_cast<u16>(h)})) + static_cast<u32>(d) + 0x1000u);
      ASSERT_EQ(gen::narrow_f16(f).bits, to_f16(f).bits) << std::hex << f32_bits(f);
    }
}

// ---- origin comments and kernel names --------------------------------------------------------

KernelSpec tiny_spec() {
  Case c = make_case("tiny", {16});
  c.out(c.ew(Mode::ADD, {c.dense(DType::F32), c.dense(DType::F32)}));
  return c.spec;
}

const std::string kEvilOrigin =
    "node 7 \"add\" */ int evil() { return 1; } /*\n"
    "int evil2() { return 2; } // \\\n"
    "int evil3() { return 3; }\r\n"
    "\x01\x1b[31m caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 \xff \x7f ?\?/";

// Every line mentioning evil is inside a // comment, and no comment can be left early.
void expect_harmless(const std::string& src) {
  std::istringstream in(src);
  int origin_lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("evil") != std::string::npos) {
      EXPECT_EQ(line.rfind("// origin: ", 0), 0u) << "escaped the comment: " << line;
      ++origin_lines;
    }
    if (line.rfind("// origin: ", 0) == 0) {
      EXPECT_EQ(line.find("*/"), std::string::npos) << line;
      EXPECT_EQ(line.find("/*"), std::string::npos) << line;
      EXPECT_NE(line.back(), '\\') << line;
      for (unsigned char ch : line)
        EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << "byte " << int(ch) << " in " << line;
    }
  }
  EXPECT_EQ(origin_lines, 1);
}

TEST(CodegenOrigin, InjectionIsHarmless) {
  const std::string src = generate_cpp(tiny_spec(), "hf_inject", kEvilOrigin);
  expect_harmless(src);
  EXPECT_EQ(src.rfind("// hotfuse fused kernel hf_inject (C++), spec " + tiny_spec().hash_hex() +
                          "\n// origin: node 7 \"add\" * / int evil()",
                      0),
            0u)
      << src.substr(0, 300);
  expect_harmless(generate_cuda(tiny_spec(), "hf_inject", kEvilOrigin));
  Library lib;
  compile_cpp(src, lib);
  ASSERT_NE(lib.handle, nullptr);
  EXPECT_NE(lib.symbol("hf_inject"), nullptr);
  for (const char* s : {"evil", "evil2", "evil3", "_Z4evilv", "_Z5evil2v", "_Z5evil3v"})
    EXPECT_EQ(lib.symbol(s), nullptr) << s;
  // The comment is bounded.
  const std::string longer = generate_cpp(tiny_spec(), "hf_long", std::string(100000, 'x'));
  EXPECT_LT(longer.find('\n', longer.find("// origin: ")) - longer.find("// origin: "), 500u);
}

TEST(CodegenNames, InvalidKernelNamesAreRejected) {
  const KernelSpec s = tiny_spec();
  for (const char* bad :
       {"", "1abc", "a-b", "a b", "x;int y", "int", "class", "main", "hf", "hf_generated", "__x",
        "_Upper", "_", "HF_HD", "caf\xc3\xa9", "a\nb", "threadIdx"}) {
    EXPECT_THROW(generate_cpp(s, bad, ""), std::invalid_argument) << bad;
    EXPECT_THROW(generate_cuda(s, bad, ""), std::invalid_argument) << bad;
  }
  EXPECT_THROW(generate_cpp(s, std::string(201, 'a'), ""), std::invalid_argument);
  for (const char* good : {"k", "hf_0123456789abcdef", "_lower", "Kernel_2"}) {
    EXPECT_NO_THROW(generate_cpp(s, good, "")) << good;
    EXPECT_NO_THROW(generate_cuda(s, good, "")) << good;
  }
  EXPECT_THROW(
      generate_cpp_unit(std::vector<std::pair<KernelSpec, std::string>>{{s, "k"}, {s, "k"}}),
      std::invalid_argument);
}

TEST(CodegenSpecs, InvalidSpecsAreRejected) {
  auto rejects = [](const KernelSpec& s, const char* what) {
    EXPECT_THROW(generate_cpp(s, "k", ""), std::invalid_argument) << what;
    EXPECT_THROW(generate_cuda(s, "k", ""), std::invalid_argument) << what;
  };
  {
    KernelSpec s = tiny_spec();
    s.outputs.clear();
    rejects(s, "no outputs");
  }
  {
    KernelSpec s = tiny_spec();
    s.exprs[2].args[1] = 2;  // refers to itself
    rejects(s, "forward reference");
  }
  {
    KernelSpec s = tiny_spec();
    s.exprs[2].mode = Mode::SHL;  // Int mode on f32
    rejects(s, "mode on a dtype it does not take");
  }
  {
    KernelSpec s = tiny_spec();
    s.exprs[1].dtype = DType::I32;
    s.inputs[1].dtype = DType::I32;
    rejects(s, "mixed argument types");
  }
  {
    KernelSpec s = tiny_spec();
    s.exprs[0].input = 5;
    rejects(s, "missing input");
  }
  {
    KernelSpec s = tiny_spec();
    s.rank = 9;
    rejects(s, "rank above the ABI's");
  }
  {
    KernelSpec s = tiny_spec();
    s.outputs[0].reduced = true;
    rejects(s, "reduced output without a reduce");
  }
  {
    KernelSpec s = tiny_spec();
    s.reduce = SpecReduce{ReduceMode::SUM, 2, 1};  // axis 1 of a rank-1 space
    rejects(s, "reduce axis out of range");
  }
}

TEST(CodegenCuda, ParamLayout) {
  Case c = make_case("layout", {4, 8});
  const int x = c.dense(DType::F16), g = c.strided(DType::F32, {0, 1}),
            s = c.scalar(DType::I32, {0, 1});
  c.out(c.ew(Mode::MUL, {c.cvt(x, DType::F32), g}));
  c.reduce(ReduceMode::SUM, c.ew(Mode::MUL, {c.cvt(x, DType::F32), g}), 1);
  (void)s;
  const CudaParamLayout l = cuda_param_layout(c.spec);
  std::vector<std::string> names;
  for (const CudaParam& f : l.fields)
    names.push_back(f.name + "@" + std::to_string(f.offset) + ":" + std::to_string(f.size));
  EXPECT_EQ(names, (std::vector<std::string>{"in0@0:8", "in1@8:8", "in2@16:8", "out0@24:8",
                                             "out1@32:8", "shape@40:16", "in1_strides@56:16",
                                             "numel@72:8", "rows@80:8", "row_len@88:8"}));
  EXPECT_EQ(l.size, 96u);
  KernelArgs args{};
  args.in[1] = reinterpret_cast<void*>(0x1234);
  args.shape[1] = 8;
  args.in_strides[1][1] = 1;
  args.row_len = 8;
  const std::vector<unsigned char> buf = pack_cuda_params(c.spec, args);
  ASSERT_EQ(buf.size(), 96u);
  auto at = [&](size_t off) {
    long long v;
    std::memcpy(&v, buf.data() + off, 8);
    return v;
  };
  EXPECT_EQ(at(8), 0x1234);
  EXPECT_EQ(at(48), 8);
  EXPECT_EQ(at(64), 1);
  EXPECT_EQ(at(88), 8);
  // The generated struct declares the same fields in the same order.
  const std::string src = generate_cuda(c.spec, "layout", "");
  size_t pos = src.find("struct Params {");
  ASSERT_NE(pos, std::string::npos);
  for (const CudaParam& f : l.fields) {
    const size_t next = src.find(" " + f.name, pos);
    ASSERT_NE(next, std::string::npos) << f.name;
    EXPECT_NE(src.find("// offset " + std::to_string(f.offset), next), std::string::npos) << f.name;
    pos = next;
  }
}

// ---- NVRTC --------------------------------------------------------------------------------

#if HF_HAVE_NVRTC
struct NvrtcResult {
  nvrtcResult create = NVRTC_SUCCESS, compile = NVRTC_SUCCESS;
  std::string log, ptx;
};

NvrtcResult nvrtc_compile(const std::string& source, const std::string& arch) {
  const auto headers = kernel_headers();
  std::vector<const char*> bodies, names;
  for (const auto& [path, text] : headers) {
    names.push_back(path.c_str());
    bodies.push_back(text.c_str());
  }
  NvrtcResult r;
  nvrtcProgram prog;
  r.create = nvrtcCreateProgram(&prog, source.c_str(), "fused.cu", static_cast<int>(bodies.size()),
                                bodies.data(), names.data());
  if (r.create != NVRTC_SUCCESS) return r;
  const std::string arch_opt = "--gpu-architecture=" + arch;
  // -default-device: NVRTC 13 rejects host functions in JIT mode, and runtime/ops/mode.h
  // declares mode_info() without HF_HD. The generated code annotates all it defines.
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-default-device"};
  r.compile = nvrtcCompileProgram(prog, 3, opts);
  size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
    r.log.resize(n);
    nvrtcGetProgramLog(prog, r.log.data());
    r.log.resize(n - 1);
  }
  if (r.compile == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS) {
    r.ptx.resize(n);
    nvrtcGetPTX(prog, r.ptx.data());
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

class CodegenNvrtc : public ::testing::TestWithParam<const char*> {};

TEST_P(CodegenNvrtc, AllSpecsCompile) {
  std::string program;
  std::vector<std::string> kernels;
  for (const Case& c : all_cases()) {
    program += generate_cuda(c.spec, c.name, "test case " + c.name) + "\n";
    kernels.push_back(c.name);
  }
  program += generate_cuda(tiny_spec(), "hf_inject", kEvilOrigin);
  kernels.push_back("hf_inject");
  if (std::getenv("HF_KEEP_CODEGEN_TEST")) {
    const std::string path = std::string("/tmp/hf_codegen_test_") + GetParam() + ".cu";
    std::ofstream(path) << program;
    std::printf("kept %s\n", path.c_str());
  }
  const auto t0 = std::chrono::steady_clock::now();
  const NvrtcResult r = nvrtc_compile(program, GetParam());
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.create, NVRTC_SUCCESS) << nvrtcGetErrorString(r.create);
  ASSERT_EQ(r.compile, NVRTC_SUCCESS) << nvrtcGetErrorString(r.compile) << "\n"
                                      << r.log.substr(0, 20000);
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log.substr(0, 20000);
  for (const std::string& k : kernels)
    EXPECT_NE(r.ptx.find(".entry " + k + "("), std::string::npos) << k;
  EXPECT_EQ(r.ptx.find("evil"), std::string::npos);
  std::printf("%s: %zu kernels, %zu bytes of PTX, %.1f s\n", GetParam(), kernels.size(),
              r.ptx.size(), sec);
}

INSTANTIATE_TEST_SUITE_P(Archs, CodegenNvrtc, ::testing::Values("compute_80", "compute_90"));
#else
TEST(CodegenNvrtc, Skipped) {
  GTEST_SKIP() << "built without the CUDA toolkit (no NVRTC)";
}
#endif

}  // namespace
}  // namespace hf::fusion
