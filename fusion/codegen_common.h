// What the C++ and CUDA code generators (codegen_cpp.h, codegen_cuda.h) share: the names
// and comments model text reaches generated source through, the validation and analysis of
// a spec, and the per-element code (eval) with the conversions it is built from. The
// generators differ only in the loops and launch structure they print around eval.
//
// Implemented by codegen_names.cpp, spec_analysis.cpp and codegen_eval.cpp.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fusion/source_printer.h"
#include "fusion/spec.h"

namespace hf::fusion::codegen {

// The generators' one error: std::invalid_argument naming the offending part.
[[noreturn]] inline void fail(const std::string& what) {
  throw std::invalid_argument("codegen: " + what);
}

inline std::string num(long long v) {
  return std::to_string(v);
}

inline std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

// ---- names and comments (codegen_names.cpp) ---------------------------------------------

// Throws std::invalid_argument unless `name` is an identifier usable as an extern "C"
// symbol in both targets (not a keyword, not reserved, not a name the generated code uses).
void check_kernel_name(const std::string& name);

// Printable ASCII only, on one line, that cannot end or open a comment or splice a line:
// newlines and tabs become spaces, other control characters and each non-ASCII code point
// '?', backslashes '/', "*/" and "/*" get a space inside; at most max_len characters.
std::string sanitize_comment(std::string_view text, size_t max_len = 400);

// The comment that opens every generated kernel: name, spec hash, target, origin.
std::string banner(const KernelSpec& spec, const std::string& kernel_name,
                   const std::string& origin_comment, std::string_view target);

// ---- spec analysis (spec_analysis.cpp) --------------------------------------------------

enum class InputUse : unsigned char {
  Unused,     // no live expression reads it
  Scalar,     // element 0, loaded once
  Dense,      // flat index
  Strided,    // through runtime strides; the innermost dimension is walked
  Invariant,  // through runtime strides, broadcast along the innermost dimension
};

// What the generators need to know about a validated spec.
struct SpecInfo {
  std::vector<bool> live;       // per expression: reaches an output or the reduce
  std::vector<InputUse> input;  // per input
  bool walk = false;            // some input needs the N-d index (Strided or Invariant)
  bool inner_stride = false;    // some Strided input has a run-time innermost stride
  DType acc = DType::F32;       // reduce accumulator: F32 or I64
};

// Validates the spec (throws std::invalid_argument naming the offending part) and
// analyses it.
// max_inputs: the ABI's, or more for the phases of a row-stage kernel (fusion/row_stages.h),
// whose row values are extra scalar inputs passed as arguments.
SpecInfo analyse(const KernelSpec& spec, int max_inputs = kMaxFusedInputs);

// ---- per-element code (codegen_eval.cpp) ------------------------------------------------

// C++ type of one stored element. Bool is stored as unsigned char (the same 0/1 bytes):
// GCC does not vectorise loads and stores of bool, a 1-bit type to it.
const char* storage_type(DType t);
const char* compute_type(DType t);  // C++ type a value of dtype t is computed in

// Converts a computed value of dtype `from` to dtype `to` (type_convert semantics, result
// rounded through to's storage type); returns the C++ expression.
std::string convert_value(const std::string& v, DType from, DType to);
// The C++ expression storing a computed value of dtype `from` into an element of `to`.
std::string store_value(const std::string& v, DType from, DType to);

// Prints `static HF_HD void eval(...)`: one element. Parameters: `const S x<k>` per used
// input (its storage type), `S& y<o>` per non-reduced output, and `A& r` (the value to
// accumulate) when the spec reduces.
void print_eval(SourcePrinter& p, const KernelSpec& spec, const SpecInfo& info);

// A row-stage kernel's inputs read once per row (RowStagePlan::row_inputs): `const S x<k>`
// at the offset of the row `row` (in scope); `shape` names the shape array, stride(k, d) and
// pointer(k) the stride and base pointer of input k in the target's terms.
void print_row_input_loads(SourcePrinter& p, const KernelSpec& spec, const std::vector<int>& inputs,
                           const std::string& shape,
                           const std::function<std::string(int, int)>& stride,
                           const std::function<std::string(int)>& pointer);

// `const T e<i> = <value>;` for expression i, its arguments already in scope as e<j> (x<k>
// for inputs), f16/bf16 results rounded to their storage type as in eval.
void print_row_value(SourcePrinter& p, const KernelSpec& spec, int i);

// The reduce's combinator in codegen_support.h (RSum, RSumSqr, ...).
const char* reduce_op(ReduceMode m);

}  // namespace hf::fusion::codegen
