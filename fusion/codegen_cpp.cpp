// The C++ generator, and the pieces the CUDA generator shares with it: spec validation and
// analysis, the per-element eval function, conversions, the banner.
//
// Shape of a generated kernel (docs/codegen.md has complete examples):
//   namespace hf_generated::<name> {
//   eval(x..., y..., [r])  one element, storage values in and out
//   seg(n, ...)            a loop over n elements with __restrict pointers (vectorises)
//   range(args, b, e)      elements [b, e): one seg call when every input is dense, else a
//                          walk over the innermost dimension carrying the N-d index
//   }
//   extern "C" <name>      range(begin, end), or per row: a pairwise tree of range + leaf
//                          reductions, then the reduced outputs
// A row-stage spec (KernelSpec::row_axis) has one such namespace per phase (s0, s1, ...,
// fusion/row_stages.h) and an entry that runs the phases row by row.
#include "fusion/codegen_cpp.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>

#include "fusion/kernel_abi.h"
#include "fusion/row_stages.h"
#include "runtime/ops/half.h"
#include "runtime/ops/pow_const.h"

namespace hf::fusion {
namespace codegen_detail {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("codegen: " + what);
}

std::string num(long long v) {
  return std::to_string(v);
}

std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

bool valid_dtype(DType t) {
  return static_cast<int>(t) < kDTypeCount;
}

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

bool admits(ModeKind k, DType compute) {
  switch (k) {
    case ModeKind::Float:
    case ModeKind::Predicate:
      return compute == DType::F32;
    case ModeKind::Numeric:
    case ModeKind::Compare:
      return compute != DType::Bool;
    case ModeKind::Int:
      return is_int(compute);
    case ModeKind::Logic:
      return compute != DType::F32;
  }
  return false;
}

bool is_half(DType t) {
  return t == DType::F16 || t == DType::BF16;
}

// The f32 result of an f16/bf16 expression before it is rounded to its storage type, or ""
// when the expression does not round (inputs, literals, same-type conversions).
std::string unrounded_value(const KernelSpec& s, int i) {
  const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
  if (!is_half(e.dtype)) return "";
  auto arg = [&](int j) { return "e" + num(e.args[j]); };
  switch (e.kind) {
    case ExprKind::Elemwise: {
      const ModeInfo& m = mode_info(e.mode);
      std::vector<std::string> args;
      for (int j = 0; j < m.arity; ++j) args.push_back(arg(j));
      return std::string("::hf::ModeFn<::hf::Mode::") + m.name + ">::apply(" + join(args) + ")";
    }
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
    case ExprKind::Elemwise: {
      const ModeInfo& m = mode_info(e.mode);
      std::vector<std::string> args;
      for (int j = 0; j < m.arity; ++j) args.push_back(arg(j));
      return std::string("::hf::ModeFn<::hf::Mode::") + m.name + ">::apply(" + join(args) + ")";
    }
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

void check_kernel_name(const std::string& name) {
  // Keywords of C++20 and CUDA, and names the generated code itself declares at global scope.
  static const std::set<std::string, std::less<>> reserved = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq",      "restrict",
      "main",          "hf",          "hf_generated",
      "linux",         "unix",        "i386",
      "threadIdx",     "blockIdx",    "blockDim",
      "gridDim",       "warpSize"};
  auto bad = [&](const char* why) {
    fail("kernel name \"" + sanitize_comment(name, 80) + "\" " + why);
  };
  if (name.empty() || name.size() > 200) bad("must have 1 to 200 characters");
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) bad("must start with a letter or '_'");
  for (char c : name)
    if (!alpha(c) && !digit(c)) bad("is not an identifier");
  if (name[0] == '_' && (name.size() == 1 || name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
    bad("is reserved to the implementation");
  if (name.compare(0, 3, "HF_") == 0) bad("would clash with the project's macros");
  if (reserved.count(name)) bad("is a keyword or a name the generated code uses");
}

std::string sanitize_comment(std::string_view text, size_t max_len) {
  std::string out;
  size_t i = 0;
  for (; i < text.size() && out.size() < max_len; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    char ch = static_cast<char>(c);
    if (c >= 0x80) {  // one '?' per UTF-8 sequence (or stray byte)
      ch = '?';
      if (c >= 0xc0)
        while (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xc0) == 0x80) ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      ch = ' ';
    } else if (c < 0x20 || c == 0x7f) {
      ch = '?';
    } else if (c == '\\') {
      ch = '/';  // a trailing backslash would splice the next line into the comment
    }
    // No "*/" or "/*", and no "??/" (a backslash where trigraphs are still read).
    const size_t n = out.size();
    if ((ch == '/' && n >= 1 && out[n - 1] == '*') || (ch == '*' && n >= 1 && out[n - 1] == '/') ||
        (ch == '/' && n >= 2 && out[n - 1] == '?' && out[n - 2] == '?'))
      out += ' ';
    out += ch;
  }
  if (i < text.size()) out += "...";
  return out;
}

SpecInfo analyse(const KernelSpec& s, int max_inputs) {
  const int R = s.rank;
  if (R < 0 || R > kAbiMaxRank)
    fail("rank " + num(R) + " is outside [0, " + num(kAbiMaxRank) + "]");
  if (s.inputs.size() > static_cast<size_t>(max_inputs))
    fail(num(static_cast<long long>(s.inputs.size())) + " inputs, at most " + num(max_inputs));
  if (s.row_stages()) {
    if (s.reduce) fail("a row-stage spec (row_axis) cannot also have a trailing reduce");
    if (s.row_axis >= R) fail("row axis " + num(s.row_axis) + " is outside the rank " + num(R));
  }
  if (s.outputs.empty()) fail("the spec has no outputs");
  if (s.outputs.size() > static_cast<size_t>(kAbiMaxOutputs))
    fail(num(static_cast<long long>(s.outputs.size())) + " outputs, at most " +
         num(kAbiMaxOutputs));
  if (!s.flat() && R < 1) fail("a strided or reducing spec needs rank >= 1");
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (!valid_dtype(s.inputs[k].dtype))
      fail("input " + num(static_cast<long long>(k)) + ": bad dtype");

  const int n = static_cast<int>(s.exprs.size());
  for (int i = 0; i < n; ++i) {
    const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
    const std::string where = "expression " + num(i) + ": ";
    if (!valid_dtype(e.dtype)) fail(where + "bad dtype");
    auto arg = [&](int j) -> const SpecExpr& {
      const int a = e.args[j];
      if (a < 0 || a >= i)
        fail(where + "argument " + num(j) + " (" + num(a) + ") is not an earlier expression");
      return s.exprs[static_cast<size_t>(a)];
    };
    switch (e.kind) {
      case ExprKind::Input:
        if (e.input < 0 || e.input >= static_cast<int>(s.inputs.size()))
          fail(where + "input " + num(e.input) + " does not exist");
        break;
      case ExprKind::Literal:
        break;
      case ExprKind::Elemwise: {
        if (static_cast<int>(e.mode) >= kModeCount) fail(where + "unknown mode");
        const ModeInfo& m = mode_info(e.mode);
        const DType t = compute_dtype(arg(0).dtype);
        for (int j = 1; j < m.arity; ++j)
          if (compute_dtype(arg(j).dtype) != t)
            fail(where + m.name + " has arguments of different types");
        if (!admits(m.kind, t))
          fail(where + m.name + " does not take " + std::string(dtype_name(arg(0).dtype)));
        const bool to_bool = m.kind == ModeKind::Compare || m.kind == ModeKind::Predicate;
        if (compute_dtype(e.dtype) != (to_bool ? DType::Bool : t))
          fail(where + m.name + " cannot produce " + std::string(dtype_name(e.dtype)));
        break;
      }
      case ExprKind::PowC:
        if (!is_float(arg(0).dtype) || !is_float(e.dtype))
          fail(where + "pow_const needs float types");
        break;
      case ExprKind::Cvt:
        arg(0);
        break;
      case ExprKind::RowReduce:
        if (!s.row_stages()) fail(where + "a RowReduce needs a row-stage spec (row_axis)");
        if (!is_float(arg(0).dtype) || !is_float(e.dtype))
          fail(where + "a RowReduce reduces float values");
        if (static_cast<int>(e.reduce_mode) > static_cast<int>(ReduceMode::MEAN))
          fail(where + "unknown reduce mode");
        break;
      default:
        fail(where + "unknown kind");
    }
  }

  auto check_expr = [&](int e, const std::string& what) {
    if (e < 0 || e >= n) fail(what + " refers to expression " + num(e) + ", which does not exist");
  };
  if (s.reduce) {
    check_expr(s.reduce->expr, "the reduce");
    if (R < 1 || s.reduce->first_axis < 0 || s.reduce->first_axis >= R)
      fail("reduce axis " + num(s.reduce->first_axis) + " is outside the rank " + num(R));
    if (static_cast<int>(s.reduce->mode) > static_cast<int>(ReduceMode::MEAN))
      fail("unknown reduce mode");
  }
  SpecInfo info;
  info.live.assign(static_cast<size_t>(n), false);
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    const SpecOutput& out = s.outputs[o];
    const std::string what = "output " + num(static_cast<long long>(o));
    if (!valid_dtype(out.dtype)) fail(what + ": bad dtype");
    if (out.reduced) {
      if (!s.reduce) fail(what + " is reduced but the spec has no reduce");
      if (out.expr != -1 && out.expr != s.reduce->expr)
        fail(what + " is reduced but does not refer to the reduced expression");
    } else {
      check_expr(out.expr, what);
      info.live[static_cast<size_t>(out.expr)] = true;
    }
  }
  if (s.reduce) {
    info.live[static_cast<size_t>(s.reduce->expr)] = true;
    info.acc =
        is_float(s.exprs[static_cast<size_t>(s.reduce->expr)].dtype) ? DType::F32 : DType::I64;
  }
  std::vector<bool> read(s.inputs.size(), false);
  for (int i = n - 1; i >= 0; --i) {
    const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
    if (!info.live[static_cast<size_t>(i)]) continue;
    if (e.kind == ExprKind::Input) read[static_cast<size_t>(e.input)] = true;
    const int arity = expr_arity(e);
    for (int j = 0; j < arity; ++j) info.live[static_cast<size_t>(e.args[j])] = true;
  }
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const SpecInput& in = s.inputs[k];
    InputUse u = InputUse::Unused;
    if (!read[k])
      u = InputUse::Unused;
    else if (in.scalar)
      u = InputUse::Scalar;
    else if (in.dense)
      u = InputUse::Dense;
    else if ((in.broadcast_mask >> (R - 1)) & 1u)
      u = InputUse::Invariant;
    else
      u = InputUse::Strided;
    info.input.push_back(u);
    info.walk = info.walk || u == InputUse::Strided || u == InputUse::Invariant;
    info.inner_stride = info.inner_stride || u == InputUse::Strided;
  }
  return info;
}

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

std::string banner(const KernelSpec& spec, const std::string& kernel_name,
                   const std::string& origin_comment, std::string_view target) {
  SourcePrinter p;
  p.line("// hotfuse fused kernel ", kernel_name, " (", target, "), spec ", spec.hash_hex());
  p.line("// origin: ", sanitize_comment(origin_comment));
  return p.str();
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

}  // namespace codegen_detail

namespace {

using namespace codegen_detail;

std::string k_(size_t k) {
  return std::to_string(k);
}

// A reducing pass accumulates its terms in registers (seg_acc / range_acc) when every leaf
// of the reduce tree is one segment of seg: the elements are consecutive (no walk) or the
// reduce is over the innermost axis only. Otherwise its terms go through `red` (seg / range)
// and leaf_reduce. Both sum in the same order.
bool accumulates_in_registers(const KernelSpec& s, const SpecInfo& info) {
  return s.reduce && (!info.walk || s.reduce->first_axis == s.rank - 1);
}

// seg(n, ...): n consecutive elements; the loop GCC vectorises. seg_acc(n, ...): the same
// elements' reduce terms, accumulated in leaf_reduce's order, returned.
void print_seg(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  const bool acc = accumulates_in_registers(s, info);
  std::vector<std::string> params = {"::hf::i64 n"}, args;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const std::string S = storage_type(s.inputs[k].dtype);
    switch (info.input[k]) {
      case InputUse::Unused:
        break;
      case InputUse::Scalar:
      case InputUse::Invariant:
        params.push_back("const " + S + " x" + k_(k));
        args.push_back("x" + k_(k));
        break;
      case InputUse::Dense:
        params.push_back("const " + S + "* __restrict in" + k_(k));
        args.push_back("in" + k_(k) + "[j]");
        break;
      case InputUse::Strided:
        params.push_back("const " + S + "* __restrict in" + k_(k));
        params.push_back("::hf::i64 s" + k_(k));
        args.push_back("in" + k_(k) + "[C ? j : j * s" + k_(k) + "]");
        break;
    }
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (s.outputs[o].reduced) continue;
    params.push_back(std::string(storage_type(s.outputs[o].dtype)) + "* __restrict out" + k_(o));
    args.push_back("out" + k_(o) + "[j]");
  }
  if (s.reduce && !acc) {
    params.push_back(std::string(compute_type(info.acc)) + "* __restrict red");
    args.push_back("red[j]");
  }
  // __restrict works on parameters (GCC ignores it on locals): without it the loop is
  // versioned for overlap or not vectorised at all.
  if (info.inner_stride) {
    p.line(
        "// n elements along the innermost dimension; C: the strided inputs are contiguous there.");
    p.line("template <bool C>");
  } else {
    p.line(info.walk ? "// n elements along the innermost dimension."
                     : "// n consecutive elements.");
  }
  if (!acc) {
    auto f = p.block("static HF_VECTOR_LOOP void seg(", join(params), ")");
    p.line("for (::hf::i64 j = 0; j < n; ++j) eval(", join(args), ");");
    return;
  }
  const std::string A = compute_type(info.acc);
  args.push_back("r");
  const std::string step = "eval(" + join(args) + ");";
  // Not HF_VECTOR_LOOP: GCC inlines it into the row loop only when their optimisation
  // options match, and the call (with its stack realignment) cost ~8% on layernorm.
  auto f = p.block("static inline ", A, " seg_acc(", join(params), ")");
  p.line("// leaf_reduce's lanes (codegen_support.h): lane l sums terms l, l + W, l + 2W, ...");
  p.line("using Op = ", reduce_op(s.reduce->mode), ";");
  p.line("constexpr int W = 128 / (int)sizeof(", A, ");");
  p.line(A, " acc[W];");
  p.line("for (int l = 0; l < W; ++l) acc[l] = Op::identity<", A, ">();");
  p.line("::hf::i64 i = 0;");
  {
    auto outer = p.block("for (; i + W <= n; i += W)");
    auto inner = p.block("for (int l = 0; l < W; ++l)");
    p.line("const ::hf::i64 j = i + l;");
    p.line(A, " r;");
    p.line(step);
    p.line("acc[l] = Op::step(acc[l], r);");
  }
  {
    auto tail = p.block("for (int l = 0; i + l < n; ++l)");
    p.line("const ::hf::i64 j = i + l;");
    p.line(A, " r;");
    p.line(step);
    p.line("acc[l] = Op::step(acc[l], r);");
  }
  p.line("return ::hf::fusion::gen::combine_lanes<Op>(acc);");
}

// Dense kernels whose outputs dwarf the last-level cache (args->stream_out): each block of
// outputs is computed into a buffer that stays in L1, then streamed out (host_stream.h).
void print_streaming_range(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  auto f = p.block("if (args->stream_out)");
  p.line("constexpr ::hf::i64 kBlock = 1024;");
  for (size_t o = 0; o < s.outputs.size(); ++o)
    p.line("alignas(64) ", storage_type(s.outputs[o].dtype), " buf", o, "[kBlock];");
  {
    auto loop = p.block("for (::hf::i64 b = begin; b < end; b += kBlock)");
    p.line("const ::hf::i64 n = end - b < kBlock ? end - b : kBlock;");
    std::vector<std::string> args = {"n"};
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      if (info.input[k] == InputUse::Scalar || info.input[k] == InputUse::Invariant)
        args.push_back("x" + k_(k));
      else if (info.input[k] == InputUse::Dense)
        args.push_back("in" + k_(k) + " + b");
    }
    for (size_t o = 0; o < s.outputs.size(); ++o) args.push_back("buf" + k_(o));
    p.line("seg(", join(args), ");");
    for (size_t o = 0; o < s.outputs.size(); ++o)
      p.line("::hf::fusion::stream_copy(out", o, " + b, buf", o, ", n * sizeof(buf", o, "[0]));");
  }
  p.line("::hf::fusion::stream_fence();");
  p.line("return;");
}

// range(args, begin, end[, red][, x<k>...]): flat elements [begin, end). Inputs from
// `passed` on are scalars passed as arguments (a row-stage phase's row values), not loaded.
// With accumulates_in_registers: range_acc(args, begin, end[, x<k>...]) returns the reduce
// of [begin, end), one leaf of the reduce tree (so one segment).
void print_range(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info, size_t passed) {
  const int R = s.rank;
  const bool acc = accumulates_in_registers(s, info);
  std::string sig = acc ? std::string("static ") + compute_type(info.acc) + " range_acc("
                        : std::string("static void range(");
  sig += "const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end";
  if (s.reduce && !acc) sig += std::string(", ") + compute_type(info.acc) + "* red";
  for (size_t k = passed; k < s.inputs.size(); ++k)
    sig += std::string(", const ") + storage_type(s.inputs[k].dtype) + " x" + k_(k);
  auto f = p.block(sig, ")");
  if (acc)
    p.line("if (begin >= end) return ", reduce_op(s.reduce->mode), "::identity<",
           compute_type(info.acc), ">();");
  else
    p.line("if (begin >= end) return;");
  for (size_t k = 0; k < passed; ++k) {
    const std::string S = storage_type(s.inputs[k].dtype);
    const std::string cast = "static_cast<const " + S + "*>(args->in[" + k_(k) + "])";
    if (info.input[k] == InputUse::Scalar)
      p.line("const ", S, " x", k, " = ", cast, "[0];");
    else if (info.input[k] != InputUse::Unused)
      p.line("const ", S, "* in", k, " = ", cast, ";");
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (s.outputs[o].reduced) continue;
    const std::string S = storage_type(s.outputs[o].dtype);
    p.line(S, "* out", o, " = static_cast<", S, "*>(args->out[", o, "]);");
  }
  // Arguments of seg for a segment starting at flat index i.
  std::vector<std::string> args = {info.walk ? "n" : "end - begin"};
  const std::string i = info.walk ? "i" : "begin";
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    switch (info.input[k]) {
      case InputUse::Unused:
        break;
      case InputUse::Scalar:
      case InputUse::Invariant:
        args.push_back("x" + k_(k));
        break;
      case InputUse::Dense:
        args.push_back("in" + k_(k) + " + " + i);
        break;
      case InputUse::Strided:
        args.push_back("in" + k_(k) + " + o" + k_(k));
        args.push_back("st" + k_(k) + "[" + std::to_string(R - 1) + "]");
        break;
    }
  }
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (!s.outputs[o].reduced) args.push_back("out" + k_(o) + " + " + i);
  if (s.reduce && !acc) args.push_back(info.walk ? "red + (i - begin)" : "red");
  const std::string call = acc ? "return seg_acc" : "seg";
  if (!info.walk) {
    if (!s.reduce) print_streaming_range(p, s, info);
    p.line(call, "(", join(args), ");");
    return;
  }

  p.line("const ::hf::i64* shape = args->shape;");
  const uint32_t all_dims = R >= 32 ? ~0u : (1u << R) - 1;
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (info.input[k] == InputUse::Strided || (info.input[k] == InputUse::Invariant &&
                                               (s.inputs[k].broadcast_mask & all_dims) != all_dims))
      p.line("const ::hf::i64* st", k, " = args->in_strides[", k, "];");
  p.line("::hf::i64 idx[", R, "];");
  p.line("::hf::i64 rest = begin;");
  {
    auto un = p.block("for (int d = ", R - 1, "; d >= 0; --d)");
    p.line("idx[d] = rest % shape[d];");
    p.line("rest /= shape[d];");
  }
  const std::string last = std::to_string(R - 1);
  std::optional<SourcePrinter::Block> loop;
  if (acc) {
    p.line("// One segment: a leaf of the reduce tree lies within one innermost row.");
    p.line("const ::hf::i64 i = begin;");
    p.line("const ::hf::i64 n = end - begin;");
  } else {
    p.line("// Segments along the innermost dimension; the N-d index is carried, not recomputed.");
    loop.emplace(p.block("for (::hf::i64 i = begin; i < end;)"));
    p.line("const ::hf::i64 avail = shape[", last, "] - idx[", last, "];");
    p.line("const ::hf::i64 n = avail < end - i ? avail : end - i;");
  }
  std::vector<std::string> contiguous;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const InputUse u = info.input[k];
    if (u != InputUse::Strided && u != InputUse::Invariant) continue;
    std::vector<std::string> terms;
    for (int d = 0; d < R; ++d)
      if (!((s.inputs[k].broadcast_mask >> d) & 1u))
        terms.push_back("idx[" + std::to_string(d) + "] * st" + k_(k) + "[" + std::to_string(d) +
                        "]");
    p.line("const ::hf::i64 o", k, " = ", terms.empty() ? "0" : join(terms, " + "), ";");
    if (u == InputUse::Invariant)
      p.line("const ", storage_type(s.inputs[k].dtype), " x", k, " = in", k, "[o", k, "];");
    else
      contiguous.push_back("st" + k_(k) + "[" + last + "] == 1");
  }
  if (info.inner_stride) {
    p.line("if (", join(contiguous, " && "), ")");
    p.line("  ", call, "<true>(", join(args), ");");
    p.line("else");
    p.line("  ", call, "<false>(", join(args), ");");
  } else {
    p.line(call, "(", join(args), ");");
  }
  if (acc) return;
  p.line("i += n;");
  p.line("idx[", last, "] += n;");
  p.line("for (int d = ", last, "; d > 0 && idx[d] == shape[d]; --d) {");
  p.line("  idx[d] = 0;");
  p.line("  ++idx[d - 1];");
  p.line("}");
}

void print_entry(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info,
                 const std::string& name) {
  const std::string ns = "::hf_generated::" + name;
  auto f = p.block("extern \"C\" void ", name,
                   "(const ::hf::fusion::KernelArgs* args, long long begin, long long end)");
  if (!s.reduce) {
    p.line(ns, "::range(args, begin, end);");
    return;
  }
  const SpecReduce& r = *s.reduce;
  const std::string A = compute_type(info.acc);
  const DType rd = s.exprs[static_cast<size_t>(r.expr)].dtype;
  const bool in_registers = accumulates_in_registers(s, info);
  p.line("// [begin, end) are rows of row_len elements; each is reduced by the pairwise tree of");
  p.line(in_registers ? "// the unfused reduce, its leaves accumulated as they are computed."
                      : "// the unfused reduce, its leaves computed into `red` first.");
  p.line("using Op = ", reduce_op(r.mode), ";");
  p.line("const ::hf::i64 len = args->row_len;");
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (!s.outputs[o].reduced) continue;
    const std::string S = storage_type(s.outputs[o].dtype);
    p.line(S, "* out", o, " = static_cast<", S, "*>(args->out[", o, "]);");
  }
  if (!in_registers) p.line("alignas(64) ", A, " red[::hf::fusion::gen::kReduceLeaf];");
  auto rows = p.block("for (::hf::i64 row = begin; row < end; ++row)");
  p.line("const ::hf::i64 base = row * len;");
  {
    auto tree = p.block_with_tail(");", A, " acc = ::hf::fusion::gen::reduce_tree<Op, ", A,
                                  ">(0, len, [&](::hf::i64 r0, ::hf::i64 n)");
    if (in_registers) {
      p.line("return ", ns, "::range_acc(args, base + r0, base + r0 + n);");
    } else {
      p.line(ns, "::range(args, base + r0, base + r0 + n, red);");
      p.line("return ::hf::fusion::gen::leaf_reduce<Op>(red, n);");
    }
  }
  if (r.mode == ReduceMode::MEAN) p.line("acc = ::hf::fusion::gen::mean_of(acc, len);");
  p.line("const ", compute_type(rd), " v = ", convert_value("acc", info.acc, rd), ";");
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (s.outputs[o].reduced)
      p.line("out", o, "[row] = ", store_value("v", rd, s.outputs[o].dtype), ";");
}

// eval, seg and range of one pass.
void print_pass(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info, size_t passed) {
  print_eval(p, s, info);
  p.blank();
  print_seg(p, s, info);
  p.blank();
  print_range(p, s, info, passed);
}

// A row-stage kernel (fusion/row_stages.h): each phase is a pass in namespace s<j>; the
// entry walks the rows that start in [begin, end), reducing phase by phase with the
// unfused reduce's pairwise tree and computing the row values in between.
void print_row_kernel(SourcePrinter& p, const UnitKernel& k, const SpecInfo& info) {
  const KernelSpec& s = k.spec;
  const RowStagePlan plan = plan_row_stages(s, info.live);
  const size_t n_in = s.inputs.size();
  std::vector<bool> in_registers(plan.phases.size());
  {
    auto ns = p.namespace_block("hf_generated::" + k.name);
    for (size_t j = 0; j < plan.phases.size(); ++j) {
      auto ph = p.namespace_block("s" + k_(j));
      const KernelSpec& ps = plan.phases[j].spec;
      const SpecInfo pi = analyse(ps, static_cast<int>(ps.inputs.size()));
      in_registers[j] = accumulates_in_registers(ps, pi);
      print_pass(p, ps, pi, n_in);
    }
  }
  p.blank();
  const std::string ns = "::hf_generated::" + k.name;
  auto f = p.block("extern \"C\" void ", k.name,
                   "(const ::hf::fusion::KernelArgs* args, long long begin, long long end)");
  p.line("// [begin, end) are flat element indices; this call does the rows starting in them.");
  p.line("::hf::i64 len = 1;");
  p.line("for (int d = ", s.row_axis, "; d < ", s.rank, "; ++d) len *= args->shape[d];");
  p.line("if (len <= 0) return;");
  for (int c : plan.row_constants) {
    const SpecExpr& e = s.exprs[static_cast<size_t>(c)];
    if (e.kind == ExprKind::Input)
      p.line("const ", storage_type(s.inputs[static_cast<size_t>(e.input)].dtype), " x", e.input,
             " = static_cast<const ", storage_type(s.inputs[static_cast<size_t>(e.input)].dtype),
             "*>(args->in[", e.input, "])[0];");
    print_row_value(p, s, c);
  }
  for (size_t j = 0; j < plan.phases.size(); ++j)
    if (plan.phases[j].row_reduce >= 0 && !in_registers[j]) {
      p.line("alignas(64) float red[::hf::fusion::gen::kReduceLeaf];");
      break;
    }
  auto rows = p.block("for (::hf::i64 row = (begin + len - 1) / len; row * len < end; ++row)");
  p.line("const ::hf::i64 base = row * len;");
  print_row_input_loads(
      p, s, plan.row_inputs, "args->shape",
      [](int k, int d) {
        return "args->in_strides[" + k_(static_cast<size_t>(k)) + "][" +
               k_(static_cast<size_t>(d)) + "]";
      },
      [&](int k) {
        return std::string("static_cast<const ") +
               storage_type(s.inputs[static_cast<size_t>(k)].dtype) + "*>(args->in[" +
               k_(static_cast<size_t>(k)) + "])";
      });
  for (size_t j = 0; j < plan.phases.size(); ++j) {
    const RowPhase& ph = plan.phases[j];
    for (int i : plan.row_exprs_before[j]) print_row_value(p, s, i);
    std::string extra;
    for (int v : ph.row_values) extra += ", e" + k_(static_cast<size_t>(v));
    const std::string call = ns + "::s" + k_(j) + "::range(args, ";
    if (ph.row_reduce < 0) {
      p.line(call, "base, base + len", extra, ");");
      continue;
    }
    const SpecExpr& r = s.exprs[static_cast<size_t>(ph.row_reduce)];
    const std::string a = "a" + k_(static_cast<size_t>(ph.row_reduce));
    {
      auto tree = p.block_with_tail(");", "float ", a, " = ::hf::fusion::gen::reduce_tree<",
                                    reduce_op(r.reduce_mode),
                                    ", float>(0, len, [&](::hf::i64 r0, ::hf::i64 n)");
      if (in_registers[j]) {
        p.line("return ", ns, "::s", j, "::range_acc(args, base + r0, base + r0 + n", extra, ");");
      } else {
        p.line(call, "base + r0, base + r0 + n, red", extra, ");");
        p.line("return ::hf::fusion::gen::leaf_reduce<", reduce_op(r.reduce_mode), ">(red, n);");
      }
    }
    if (r.reduce_mode == ReduceMode::MEAN)
      p.line(a, " = ::hf::fusion::gen::mean_of(", a, ", len);");
    p.line("const float e", ph.row_reduce, " = ", convert_value(a, DType::F32, r.dtype), ";");
  }
}

void print_kernel(SourcePrinter& p, const UnitKernel& k) {
  const SpecInfo info = analyse(k.spec);
  if (k.spec.row_stages()) return print_row_kernel(p, k, info);
  {
    auto ns = p.namespace_block("hf_generated::" + k.name);
    print_pass(p, k.spec, info, k.spec.inputs.size());
  }
  p.blank();
  print_entry(p, k.spec, info, k.name);
}

void print_includes(SourcePrinter& p) {
  p.line("#include \"fusion/codegen_support.h\"");
  p.line("#include \"fusion/host_stream.h\"");
  p.line("#include \"fusion/kernel_abi.h\"");
}

}  // namespace

std::string generate_cpp(const KernelSpec& spec, const std::string& kernel_name,
                         const std::string& origin_comment) {
  check_kernel_name(kernel_name);
  SourcePrinter p;
  p.raw(banner(spec, kernel_name, origin_comment, "C++"));
  print_includes(p);
  p.blank();
  print_kernel(p, UnitKernel{spec, kernel_name, origin_comment});
  return p.str();
}

std::string generate_cpp_unit(const std::vector<UnitKernel>& kernels) {
  std::set<std::string> names;
  for (const UnitKernel& k : kernels) {
    check_kernel_name(k.name);
    if (!names.insert(k.name).second) fail("kernel name " + k.name + " appears twice in one unit");
  }
  SourcePrinter p;
  p.line("// hotfuse: ", kernels.size(),
         " fused kernels for the host compiler, one translation unit.");
  print_includes(p);
  for (const UnitKernel& k : kernels) {
    p.blank();
    p.raw(banner(k.spec, k.name, k.origin, "C++"));
    print_kernel(p, k);
  }
  return p.str();
}

std::string generate_cpp_unit(const std::vector<std::pair<KernelSpec, std::string>>& kernels) {
  std::vector<UnitKernel> units;
  units.reserve(kernels.size());
  for (const auto& [spec, name] : kernels) units.push_back(UnitKernel{spec, name, ""});
  return generate_cpp_unit(units);
}

}  // namespace hf::fusion
