// Validation and analysis of a spec for the generators (codegen_common.h).
#include "fusion/codegen_common.h"
#include "fusion/kernel_abi.h"
#include "fusion/row_stages.h"

namespace hf::fusion::codegen {
namespace {

bool valid_dtype(DType t) {
  return static_cast<int>(t) < kDTypeCount;
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

}  // namespace

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

}  // namespace hf::fusion::codegen
