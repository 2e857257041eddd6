// The per-element code both generators print (codegen_common.h): eval, row values, and the
// literals, conversions and pow_const formulas they are built from.
#include <cmath>
#include <cstdio>

#include "fusion/codegen_common.h"
#include "fusion/row_stages.h"
#include "runtime/ops/half.h"
#include "runtime/ops/pow_const.h"

namespace hf::fusion::codegen {
namespace {

// A float constant that reads back bit for bit: 9 significant digits identify a float.
std::string float_literal(float f) {
  if (f != f) return "::hf::f32_from_bits(0x7fc00000u)";
  if (std::isinf(f))
    return f > 0 ? "::hf::f32_from_bits(0x7f800000u)" : "::hf::f32_from_bits(0xff800000u)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

// A literal's value in its dtype, as a constant of its compute type. f16/bf16 literals are
// rounded to their storage type here, at generation time; integers truncate and saturate.
std::string literal(double v, DType t) {
  switch (t) {
    case DType::F32:
      return float_literal(static_cast<float>(v));
    case DType::F16:
      return float_literal(to_f32(to_f16(static_cast<float>(v))));
    case DType::BF16:
      return float_literal(to_f32(to_bf16(static_cast<float>(v))));
    case DType::Bool:
      return v != 0 ? "true" : "false";  // NaN != 0: true, as type_convert
    default:
      break;
  }
  const double c = v != v ? 0.0 : std::trunc(v);
  if (t == DType::U8) return num(static_cast<long long>(std::fmin(std::fmax(c, 0.0), 255.0)));
  if (t == DType::I32) {
    const long long n =
        static_cast<long long>(std::fmin(std::fmax(c, -2147483648.0), 2147483647.0));
    return n == -2147483648ll ? "(-2147483647 - 1)" : num(n);
  }
  if (c >= 9223372036854775808.0) return "9223372036854775807LL";
  if (c <= -9223372036854775808.0) return "(-9223372036854775807LL - 1)";
  return num(static_cast<long long>(c)) + "LL";
}

// The formula of powc (runtime/ops/pow_const.h) for the exponent's case, decided here since
// the exponent is known.
std::string pow_const(const std::string& x, double exponent) {
  const float e = static_cast<float>(exponent);
  if (e == 1.0f) return x;
  const PowCase c = pow_case(e);
  if (c == PowCase::Int) {
    const int n = static_cast<int>(e);
    if (n >= 0) return "::hf::fusion::gen::powi<" + num(n) + ">(" + x + ")";
    return "1.0f / ::hf::fusion::gen::powi<" + num(-n) + ">(" + x + ")";
  }
  if (c == PowCase::Sqrt) return "::hf::ModeFn<::hf::Mode::SQRT>::apply(" + x + ")";
  if (c == PowCase::RSqrt) return "1.0f / ::hf::ModeFn<::hf::Mode::SQRT>::apply(" + x + ")";
  return "::hf::ModeFn<::hf::Mode::POW>::apply(" + x + ", " + float_literal(e) + ")";
}

bool is_half(DType t) {
  return t == DType::F16 || t == DType::BF16;
}

// ModeFn<mode>::apply(e<arg>...) of an Elemwise expression.
std::string mode_call(const SpecExpr& e) {
  const ModeInfo& m = mode_info(e.mode);
  std::vector<std::string> args;
  for (int j = 0; j < m.arity; ++j) args.push_back("e" + num(e.args[j]));
  return std::string("::hf::ModeFn<::hf::Mode::") + m.name + ">::apply(" + join(args) + ")";
}

// The f32 result of an f16/bf16 expression before it is rounded to its storage type, or ""
// when the expression does not round (inputs, literals, same-type conversions).
std::string unrounded_value(const KernelSpec& s, int i) {
  const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
  if (!is_half(e.dtype)) return "";
  auto arg = [&](int j) { return "e" + num(e.args[j]); };
  switch (e.kind) {
    case ExprKind::Elemwise:
      return mode_call(e);
    case ExprKind::PowC:
      return pow_const(arg(0), e.value);
    case ExprKind::Cvt: {
      const DType from = s.exprs[static_cast<size_t>(e.args[0])].dtype;
      if (from == e.dtype) return "";
      return is_float(from) ? arg(0) : "(float)(" + arg(0) + ")";
    }
    default:
      return "";
  }
}

// Whether expression j is an f32 product whose one use can take it into an fma.
bool contractible_product(const KernelSpec& s, int j) {
  const SpecExpr& m = s.exprs[static_cast<size_t>(j)];
  if (m.kind != ExprKind::Elemwise || m.mode != Mode::MUL || m.dtype != DType::F32) return false;
  int uses = 0;
  for (const SpecExpr& e : s.exprs)
    for (int a : e.args) uses += a == j;
  for (const SpecOutput& o : s.outputs) uses += o.expr == j;
  if (s.reduce && s.reduce->expr == j) ++uses;
  return uses == 1;
}

// f32 a*b + c and a*b - c as one fma (vm::fmadd), where a*b has no other use. Kernels are
// compiled with -ffp-contract=off (docs/math.md), so the compiler fuses nothing itself and
// every copy of a loop (vector body, scalar remainder) rounds alike; this is the contraction
// it would have done. Not in row-stage kernels, whose per-row values live in other scopes.
std::string contracted(const KernelSpec& s, const SpecExpr& e) {
  if (e.kind != ExprKind::Elemwise || e.dtype != DType::F32 || s.row_stages()) return "";
  if (e.mode != Mode::ADD && e.mode != Mode::SUB) return "";
  auto product = [&](int j) {
    const SpecExpr& m = s.exprs[static_cast<size_t>(e.args[j])];
    return std::pair{"e" + num(m.args[0]), "e" + num(m.args[1])};
  };
  const std::string x = "e" + num(e.args[0]), y = "e" + num(e.args[1]);
  auto fma = [](const std::string& a, const std::string& b, const std::string& c) {
    return "::hf::vm::fmadd(" + a + ", " + b + ", " + c + ")";
  };
  if (contractible_product(s, e.args[0])) {
    auto [a, b] = product(0);
    return fma(a, b, e.mode == Mode::ADD ? y : "-" + y);
  }
  if (contractible_product(s, e.args[1])) {
    auto [a, b] = product(1);
    return e.mode == Mode::ADD ? fma(a, b, x) : fma("-" + a, b, x);
  }
  return "";
}

std::string expr_value(const KernelSpec& s, int i) {
  const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
  auto arg = [&](int j) { return "e" + num(e.args[j]); };
  auto arg_dtype = [&](int j) { return s.exprs[static_cast<size_t>(e.args[j])].dtype; };
  if (std::string fused = contracted(s, e); !fused.empty()) return fused;
  switch (e.kind) {
    case ExprKind::Input: {
      const DType in = s.inputs[static_cast<size_t>(e.input)].dtype;
      const std::string x = "x" + num(e.input);
      std::string v = x;
      if (is_half(in)) v = "::hf::fusion::gen::widen(" + x + ")";
      if (in == DType::Bool) v = "(" + x + " != 0)";
      return convert_value(v, in, e.dtype);
    }
    case ExprKind::Literal:
      return literal(e.value, e.dtype);
    case ExprKind::Elemwise:
      return mode_call(e);
    case ExprKind::PowC:
      return pow_const(arg(0), e.value);
    case ExprKind::Cvt:
      return convert_value(arg(0), arg_dtype(0), e.dtype);
    case ExprKind::RowReduce:
      break;  // computed by the row loop (print_row_kernel), never per element
  }
  fail("expression " + num(i) + " has an unknown kind");
}

}  // namespace

const char* storage_type(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F16:
      return "::hf::f16";
    case DType::BF16:
      return "::hf::bf16";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long long";
    case DType::Bool:
      return "unsigned char";  // see storage_type()'s comment
    case DType::U8:
      return "unsigned char";
    default:  // f64 and i8/i16/u16/u32/u64 are never fused (is_core_dtype)
      break;
  }
  fail("bad dtype");
}

const char* compute_type(DType t) {
  return t == DType::Bool ? "bool" : storage_type(compute_dtype(t));
}

std::string convert_value(const std::string& v, DType from, DType to) {
  if (from == to) return v;
  const bool from_float = is_float(from);
  const std::string as_float = from_float ? v : "(float)(" + v + ")";
  switch (to) {
    case DType::Bool:
      return "(" + v + (from_float ? " != 0.0f)" : " != 0)");
    case DType::F32:
      return as_float;
    case DType::F16:
      return "::hf::fusion::gen::round_f16(" + as_float + ")";
    case DType::BF16:
      return "::hf::fusion::gen::round_bf16(" + as_float + ")";
    case DType::I32:
      return from_float ? "::hf::fusion::gen::sat_i32(" + v + ")" : "(int)(" + v + ")";
    case DType::I64:
      return from_float ? "::hf::fusion::gen::sat_i64(" + v + ")" : "(long long)(" + v + ")";
    case DType::U8:
      return from_float ? "::hf::fusion::gen::sat_u8(" + v + ")" : "(unsigned char)(" + v + ")";
    default:  // never fused (is_core_dtype)
      break;
  }
  fail("bad dtype");
}

std::string store_value(const std::string& v, DType from, DType to) {
  const std::string as_float = is_float(from) ? v : "(float)(" + v + ")";
  if (to == DType::F16) return "::hf::fusion::gen::narrow_f16(" + as_float + ")";
  if (to == DType::BF16) return "::hf::fusion::gen::narrow_bf16(" + as_float + ")";
  if (to == DType::Bool) return "(unsigned char)" + convert_value(v, from, to);
  return convert_value(v, from, to);
}

void print_eval(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  std::vector<std::string> params;
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (info.input[k] != InputUse::Unused)
      params.push_back(std::string("const ") + storage_type(s.inputs[k].dtype) + " x" +
                       num(static_cast<long long>(k)));
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (!s.outputs[o].reduced)
      params.push_back(std::string(storage_type(s.outputs[o].dtype)) + "& y" +
                       num(static_cast<long long>(o)));
  if (s.reduce) params.push_back(std::string(compute_type(info.acc)) + "& r");
  p.line("// One element: inputs and outputs in their storage types.");
  auto f = p.block("static HF_HD void eval(", join(params), ")");
  // f16/bf16 expressions are rounded to their storage type (h<i>) and widened back (e<i>), as
  // the unfused kernel that computed them would have stored and its consumers loaded them.
  // An output of the same type stores the rounded value directly.
  const size_t n = s.exprs.size();
  std::vector<std::string> stored(n);
  for (size_t i = 0; i < n; ++i) {
    const SpecExpr& e = s.exprs[i];
    if (!unrounded_value(s, static_cast<int>(i)).empty())
      stored[i] = "h" + num(static_cast<long long>(i));
    else if (e.kind == ExprKind::Input && is_half(e.dtype) &&
             s.inputs[static_cast<size_t>(e.input)].dtype == e.dtype)
      stored[i] = "x" + num(e.input);
    else if (e.kind == ExprKind::Cvt && s.exprs[static_cast<size_t>(e.args[0])].dtype == e.dtype)
      stored[i] = stored[static_cast<size_t>(e.args[0])];
  }
  // Which e<i> something reads (the rest would be unused variables).
  std::vector<bool> read(n, false);
  for (size_t i = 0; i < n; ++i) {
    const SpecExpr& e = s.exprs[i];
    if (!info.live[i]) continue;
    const int arity = expr_arity(e);
    for (int j = 0; j < arity; ++j) read[static_cast<size_t>(e.args[j])] = true;
  }
  if (s.reduce) read[static_cast<size_t>(s.reduce->expr)] = true;
  for (const SpecOutput& out : s.outputs) {
    const size_t e = static_cast<size_t>(out.expr);
    if (!out.reduced && (stored[e].empty() || out.dtype != s.exprs[e].dtype)) read[e] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!info.live[i]) continue;
    const SpecExpr& e = s.exprs[i];
    const std::string raw = unrounded_value(s, static_cast<int>(i));
    if (!raw.empty()) {
      p.line("const ", storage_type(e.dtype), " ", stored[i], " = ::hf::fusion::gen::narrow_",
             e.dtype == DType::F16 ? "f16(" : "bf16(", raw, ");");
      if (read[i]) p.line("const float e", i, " = ::hf::fusion::gen::widen(", stored[i], ");");
    } else if (read[i]) {
      p.line("const ", compute_type(e.dtype), " e", i, " = ", expr_value(s, static_cast<int>(i)),
             ";");
    }
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    const SpecOutput& out = s.outputs[o];
    if (out.reduced) continue;
    const size_t e = static_cast<size_t>(out.expr);
    const DType from = s.exprs[e].dtype;
    // Through .bits: GCC does not vectorise a copy of a local f16 struct into an array.
    if (!stored[e].empty() && out.dtype == from)
      p.line("y", o, ".bits = ", stored[e], ".bits;");
    else
      p.line("y", o, " = ", store_value("e" + num(out.expr), from, out.dtype), ";");
  }
  if (s.reduce) {
    const std::string v = "e" + num(s.reduce->expr);
    p.line("r = ", info.acc == DType::F32 ? v : "(long long)(" + v + ")", ";");
  }
}

void print_row_input_loads(SourcePrinter& p, const KernelSpec& s, const std::vector<int>& inputs,
                           const std::string& shape,
                           const std::function<std::string(int, int)>& stride,
                           const std::function<std::string(int)>& pointer) {
  if (inputs.empty()) return;
  p.line("// The row's index over the axes before the row, for inputs read once per row.");
  p.line("long long rest = row;");
  for (int d = s.row_axis - 1; d >= 0; --d) {
    p.line("const long long ri", d, " = ", d == 0 ? "rest" : "rest % " + shape + "[" + num(d) + "]",
           ";");
    if (d > 0) p.line("rest /= ", shape, "[", d, "];");
  }
  for (int k : inputs) {
    std::vector<std::string> terms;
    for (int d = 0; d < s.row_axis; ++d)
      if (!((s.inputs[static_cast<size_t>(k)].broadcast_mask >> d) & 1u))
        terms.push_back("ri" + num(d) + " * " + stride(k, d));
    p.line("const ", storage_type(s.inputs[static_cast<size_t>(k)].dtype), " x", k, " = ",
           pointer(k), "[", terms.empty() ? "0" : join(terms, " + "), "];");
  }
}

void print_row_value(SourcePrinter& p, const KernelSpec& s, int i) {
  const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
  const std::string raw = unrounded_value(s, i);
  if (!raw.empty())
    p.line("const float e", i, " = ::hf::fusion::gen::widen(::hf::fusion::gen::narrow_",
           e.dtype == DType::F16 ? "f16(" : "bf16(", raw, "));");
  else
    p.line("const ", compute_type(e.dtype), " e", i, " = ", expr_value(s, i), ";");
}

const char* reduce_op(ReduceMode m) {
  switch (m) {
    case ReduceMode::SUM:
    case ReduceMode::MEAN:
      return "::hf::fusion::gen::RSum";
    case ReduceMode::SUM_SQR:
      return "::hf::fusion::gen::RSumSqr";
    case ReduceMode::PRODUCT:
      return "::hf::fusion::gen::RProd";
    case ReduceMode::MIN:
      return "::hf::fusion::gen::RMin";
    case ReduceMode::MAX:
      return "::hf::fusion::gen::RMax";
  }
  fail("unknown reduce mode");
}

}  // namespace hf::fusion::codegen
