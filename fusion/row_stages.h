// A multi-stage row kernel (KernelSpec::row_axis >= 0) as a sequence of plain specs, which
// both generators print with the machinery they have for one pass (eval / seg / range in
// C++, eval / at in CUDA):
//
//   per row:  phase 0   elements of the row -> the first RowReduce's argument, reduced
//             row values computed from it (and literals, scalar inputs), once per row
//             phase 1   elements -> the second RowReduce's argument (may read row values)
//             ...
//             final     elements -> the outputs
//
// A row value (a RowReduce, an input broadcast along the row axes, or an expression whose
// arguments are row values, literals and scalar inputs, at least one a row value) is
// computed once per row and enters a phase as an extra scalar input, so the
// phase specs have no RowReduce and each is a valid one-pass spec over the full iteration
// space (a reducing phase has a trailing reduce over the row axes).
#pragma once
#include <vector>

#include "fusion/spec.h"

namespace hf::fusion {

// How many of e.args an expression reads.
int expr_arity(const SpecExpr& e);

struct RowPhase {
  // inputs: the kernel's, then one scalar per row value this phase reads (`row_values`,
  // same order); exprs: the kernel's, row values replaced by those inputs and expressions
  // the phase does not need by literals. Reducing phases: reduce + one reduced output.
  // The final phase: the kernel's outputs.
  KernelSpec spec;
  std::vector<int> row_values;  // expression index of each extra input
  int row_reduce = -1;          // the RowReduce this phase computes; -1: the final phase
};

struct RowStagePlan {
  std::vector<bool> row_value;   // per expression
  std::vector<RowPhase> phases;  // one per live RowReduce in expression order, then final
  // Per phase: the row values (not RowReduces) computed once the phases before it are
  // done, in expression order.
  std::vector<std::vector<int>> row_exprs_before;
  // The literals and scalar-input expressions those read (the same for every row).
  std::vector<int> row_constants;
  // Inputs broadcast along every row axis: loaded once per row (as x<k>, at the row's
  // offset) before row_exprs_before[0], where their Input expressions are row values.
  std::vector<int> row_inputs;
};

// `live`: per expression, whether it reaches an output (codegen::analyse). The spec
// must be a valid row-stage spec (analyse checked it).
RowStagePlan plan_row_stages(const KernelSpec& spec, const std::vector<bool>& live);

// When the final phase's output is a function of the last reducing phase's term and row
// values only (softmax: exp(x - max) / sum, the term exp(x - max)), that phase stores each
// term in the output as it sums it, and the final phase reads the output back instead of
// computing the term again from the inputs (exp twice per element cost more than the
// unfused ops on AVX2). The final phase then takes the output as input n_in (the kernel's
// input count), read as out0[j] before out0[j] is written, and no input through strides, so
// it is one flat segment per row even where the reducing phases walk theirs. Same values,
// bit for bit: the term is an f32 computed in f32 either way. Rewrites `plan` (the reducing
// phase gains the term as its first output) and returns whether it did.
bool keep_last_term_in_output(RowStagePlan& plan, const KernelSpec& spec);

}  // namespace hf::fusion
