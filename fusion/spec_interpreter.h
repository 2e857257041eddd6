// Runs a region's KernelSpec without compiling it: the first tier of a fused region on the
// CPU, ready the moment the region is selected, while a compiled kernel would take a
// compiler's fraction of a second.
//
// Each expression is the unfused op's own dense loop (the elemwise mode table, pow_const's
// loops; an add, subtract, multiply or divide with one operand the same for every element,
// a scalar loop of the same IEEE operation) over chunks of a few hundred elements held in
// L1, so elementwise results are bitwise those of the unfused ops; reductions take the compiled kernels' order
// (codegen_support.h's pairwise tree of leaves), and row-stage specs the compiled kernels'
// phases (row_stages.h). What fusion saves, memory traffic between the ops, the chunks save
// too; what they cost over a compiled kernel is each intermediate going through L1 once.
//
// f32 only: specs with another storage or compute type (f16, integers, bools) are compiled.
#pragma once
#include <memory>
#include <string>

#include "fusion/kernel_abi.h"
#include "fusion/spec.h"

namespace hf::fusion {

// Whether SpecInterpreter runs `spec`; if not and `why` is given, what it lacks.
bool interpretable(const KernelSpec& spec, std::string* why = nullptr);

class SpecInterpreter {
 public:
  // Throws hf::Error (with interpretable's reason) for a spec it does not run.
  explicit SpecInterpreter(const KernelSpec& spec);
  ~SpecInterpreter();
  SpecInterpreter(const SpecInterpreter&) = delete;
  SpecInterpreter& operator=(const SpecInterpreter&) = delete;

  // A compiled kernel's entry point (kernel_abi.h), same arguments and the same ranges:
  // flat element indices, rows of a trailing reduce, or the rows of a row-stage spec that
  // start in [begin, end). Safe to call from several threads on disjoint ranges.
  void run(const KernelArgs& args, i64 begin, i64 end) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hf::fusion
