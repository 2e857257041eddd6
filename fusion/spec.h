// A fused kernel as plain data: what it reads, the expression DAG it computes, what it
// writes. Code generation is a pure function of (KernelSpec, target), and the spec's hash
// is the kernel's identity in every cache.
//
// Specs are specialised on rank and broadcast pattern, never on sizes: sizes and strides
// are runtime arguments, so a new batch size reuses the compiled kernel.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ir/dtype.h"
#include "runtime/ops/mode.h"
#include "runtime/ops/reduce_mode.h"

namespace hf::fusion {

inline constexpr int kMaxFusedInputs = 64;  // kernel parameter space is finite

struct SpecInput {
  DType dtype = DType::F32;
  // Bit d set: dimension d of the iteration space is broadcast for this input (stride 0).
  uint32_t broadcast_mask = 0;
  // Dense in the iteration space's order (flat index i reads element i): Reshape, full-shape
  // inputs. Otherwise the kernel indexes it through runtime strides (Dimshuffle, Broadcast).
  bool dense = true;
  bool scalar = false;  // a single element, loaded once
};

// RowReduce (only in a row kernel, KernelSpec::row_axis >= 0): the reduction of args[0]
// over the current row, a value per row that later expressions read like any other.
enum class ExprKind : uint8_t { Input, Literal, Elemwise, PowC, Cvt, RowReduce };

struct SpecExpr {
  ExprKind kind = ExprKind::Input;
  DType dtype = DType::F32;                  // the value's storage type in the graph
  Mode mode = Mode::ADD;                     // Elemwise
  int args[4] = {-1, -1, -1, -1};            // earlier expressions (Elemwise, PowC, Cvt)
  int input = -1;                            // Input
  double value = 0;                          // Literal value, PowC exponent
  ReduceMode reduce_mode = ReduceMode::SUM;  // RowReduce
};

struct SpecOutput {
  int expr = -1;
  DType dtype = DType::F32;
  bool reduced = false;  // written once per reduced row (the trailing reduce's result)
};

// One trailing reduction over the innermost axes [first_axis, rank) of the iteration space.
struct SpecReduce {
  ReduceMode mode = ReduceMode::SUM;
  int expr = -1;       // what is reduced
  int first_axis = 0;  // axes first_axis..rank-1 are reduced
};

struct KernelSpec {
  int rank = 1;
  std::vector<SpecInput> inputs;
  std::vector<SpecExpr> exprs;  // topological: arguments precede their users
  std::vector<SpecOutput> outputs;
  std::optional<SpecReduce> reduce;
  // A multi-stage row kernel when >= 0 (and `reduce` is empty): a row is the axes
  // [row_axis, rank), RowReduce expressions reduce over it, and an expression that reads
  // only row values (RowReduces, literals, scalar inputs) is computed once per row and
  // broadcast back over the row. So reduce -> per-row math -> elementwise over the row ->
  // another reduce ... is one kernel that reads the row from memory once (layernorm,
  // softmax). Outputs are full-shape.
  int row_axis = -1;

  // True when every non-scalar input is dense and nothing is reduced: one flat loop.
  bool flat() const;
  // A multi-stage row kernel (row_axis >= 0).
  bool row_stages() const { return row_axis >= 0; }
  // Every field, in a stable byte encoding: two specs are the same kernel exactly when
  // their encodings are equal. What in-memory caches key by.
  std::string canonical() const;
  // FNV-1a of canonical(): stable across processes and builds, the kernel's name
  // (hf_<hash>). 64 bits a collision can be built for offline, so it names a kernel but
  // never identifies one: compare canonical() (operator==).
  uint64_t hash() const;
  std::string hash_hex() const;

  friend bool operator==(const KernelSpec& a, const KernelSpec& b) {
    return a.canonical() == b.canonical();
  }
};

}  // namespace hf::fusion
