#include "fusion/row_stages.h"

#include <algorithm>

#include "runtime/ir/op_table.h"

namespace hf::fusion {

int expr_arity(const SpecExpr& e) {
  switch (e.kind) {
    case ExprKind::Elemwise:
      return mode_info(e.mode).arity;
    case ExprKind::PowC:
    case ExprKind::Cvt:
    case ExprKind::RowReduce:
      return 1;
    default:
      return 0;
  }
}

namespace {

// Same for every element of a row without being a row value: literals and scalar inputs.
bool row_constant(const KernelSpec& s, int i) {
  const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
  return e.kind == ExprKind::Literal ||
         (e.kind == ExprKind::Input && s.inputs[static_cast<size_t>(e.input)].scalar);
}

// An input read once per row: broadcast along every row axis (a per-row statistic computed
// outside the kernel, read through a [rows, 1] view).
bool row_input(const KernelSpec& s, int i) {
  const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
  if (e.kind != ExprKind::Input) return false;
  const SpecInput& in = s.inputs[static_cast<size_t>(e.input)];
  if (in.scalar || in.dense) return false;
  for (int d = s.row_axis; d < s.rank; ++d)
    if (!((in.broadcast_mask >> d) & 1u)) return false;
  return true;
}

RowPhase make_phase(const KernelSpec& s, const std::vector<bool>& row_value, int row_reduce) {
  RowPhase ph;
  ph.row_reduce = row_reduce;
  KernelSpec& p = ph.spec;
  p.rank = s.rank;
  p.inputs = s.inputs;
  // What this phase computes per element: back from its targets, stopping at row values.
  std::vector<bool> need(s.exprs.size(), false);
  if (row_reduce >= 0) {
    need[static_cast<size_t>(s.exprs[static_cast<size_t>(row_reduce)].args[0])] = true;
  } else {
    for (const SpecOutput& o : s.outputs) need[static_cast<size_t>(o.expr)] = true;
  }
  for (int i = static_cast<int>(s.exprs.size()) - 1; i >= 0; --i) {
    const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
    if (!need[static_cast<size_t>(i)] || row_value[static_cast<size_t>(i)]) continue;
    for (int j = 0; j < expr_arity(e); ++j) need[static_cast<size_t>(e.args[j])] = true;
  }
  for (size_t i = 0; i < s.exprs.size(); ++i) {
    SpecExpr e = s.exprs[i];
    if (need[i] && row_value[i]) {
      SpecInput in;
      in.dtype = compute_dtype(e.dtype);  // passed as its computed value
      in.scalar = true;
      e = SpecExpr{};
      e.kind = ExprKind::Input;
      e.dtype = s.exprs[i].dtype;
      e.input = static_cast<int>(p.inputs.size());
      p.inputs.push_back(in);
      ph.row_values.push_back(static_cast<int>(i));
    } else if (!need[i]) {
      e = SpecExpr{};  // never printed: nothing live reads it
      e.kind = ExprKind::Literal;
      e.dtype = s.exprs[i].dtype;
    }
    p.exprs.push_back(e);
  }
  if (row_reduce >= 0) {
    const SpecExpr& r = s.exprs[static_cast<size_t>(row_reduce)];
    p.reduce = SpecReduce{r.reduce_mode, r.args[0], s.row_axis};
    p.outputs.push_back(SpecOutput{r.args[0], DType::F32, true});
  } else {
    p.outputs = s.outputs;
  }
  return ph;
}

}  // namespace

RowStagePlan plan_row_stages(const KernelSpec& s, const std::vector<bool>& live) {
  RowStagePlan plan;
  const size_t n = s.exprs.size();
  plan.row_value.assign(n, false);
  std::vector<int> stage(n, 0);  // row values: the phase they become known before
  std::vector<int> reduces;
  for (size_t i = 0; i < n; ++i) {
    const SpecExpr& e = s.exprs[i];
    if (e.kind == ExprKind::RowReduce) {
      if (!live[i]) continue;
      plan.row_value[i] = true;
      reduces.push_back(static_cast<int>(i));
      stage[i] = static_cast<int>(reduces.size());
      continue;
    }
    if (e.kind == ExprKind::Input && live[i] && row_input(s, static_cast<int>(i))) {
      plan.row_value[i] = true;  // stage 0: loaded at the start of the row
      if (std::find(plan.row_inputs.begin(), plan.row_inputs.end(), e.input) ==
          plan.row_inputs.end())
        plan.row_inputs.push_back(e.input);
      continue;
    }
    if (e.kind == ExprKind::Input || e.kind == ExprKind::Literal) continue;
    bool any = false, all = true;
    for (int j = 0; j < expr_arity(e); ++j) {
      const int a = e.args[j];
      any |= plan.row_value[static_cast<size_t>(a)];
      all &= plan.row_value[static_cast<size_t>(a)] || row_constant(s, a);
      if (plan.row_value[static_cast<size_t>(a)])
        stage[i] = std::max(stage[i], stage[static_cast<size_t>(a)]);
    }
    plan.row_value[i] = any && all;
  }
  for (int r : reduces) plan.phases.push_back(make_phase(s, plan.row_value, r));
  plan.phases.push_back(make_phase(s, plan.row_value, -1));
  plan.row_exprs_before.resize(plan.phases.size());
  std::vector<bool> constant(n, false);
  for (size_t i = 0; i < n; ++i) {
    const SpecExpr& e = s.exprs[i];
    if (!plan.row_value[i] || !live[i] || e.kind == ExprKind::RowReduce) continue;
    for (int j = 0; j < expr_arity(e); ++j)
      if (row_constant(s, e.args[j])) constant[static_cast<size_t>(e.args[j])] = true;
    plan.row_exprs_before[static_cast<size_t>(stage[i])].push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < n; ++i)
    if (constant[i]) plan.row_constants.push_back(static_cast<int>(i));
  return plan;
}

bool keep_last_term_in_output(RowStagePlan& plan, const KernelSpec& s) {
  const size_t n_in = s.inputs.size();
  if (plan.phases.size() < 2) return false;
  if (s.outputs.size() != 1 || s.outputs[0].reduced || s.outputs[0].dtype != DType::F32)
    return false;
  RowPhase& last = plan.phases[plan.phases.size() - 2];
  const int term = s.exprs[static_cast<size_t>(last.row_reduce)].args[0];
  if (s.exprs[static_cast<size_t>(term)].dtype != DType::F32 ||
      plan.row_value[static_cast<size_t>(term)])
    return false;
  // What the final phase computes, with the term as a leaf: no input but scalars besides it.
  KernelSpec& f = plan.phases.back().spec;
  std::vector<bool> need(f.exprs.size(), false);
  need[static_cast<size_t>(f.outputs[0].expr)] = true;
  bool reads_term = false;
  for (int i = static_cast<int>(f.exprs.size()) - 1; i >= 0; --i) {
    if (!need[static_cast<size_t>(i)]) continue;
    const SpecExpr& e = f.exprs[static_cast<size_t>(i)];
    if (i == term) {
      reads_term = true;
      continue;
    }
    if (e.kind == ExprKind::Input && !f.inputs[static_cast<size_t>(e.input)].scalar) return false;
    for (int j = 0; j < expr_arity(e); ++j) need[static_cast<size_t>(e.args[j])] = true;
  }
  if (!reads_term) return false;
  for (SpecExpr& e : f.exprs)
    if (e.kind == ExprKind::Input && e.input >= static_cast<int>(n_in)) ++e.input;
  f.inputs.insert(f.inputs.begin() + static_cast<std::ptrdiff_t>(n_in), SpecInput{});
  SpecExpr in;
  in.kind = ExprKind::Input;
  in.dtype = DType::F32;
  in.input = static_cast<int>(n_in);
  f.exprs[static_cast<size_t>(term)] = in;
  last.spec.outputs.insert(last.spec.outputs.begin(), SpecOutput{term, DType::F32, false});
  return true;
}

}  // namespace hf::fusion
