// The Elemwise mode enum and its table (name, arity, dtype kind, flops), generated from
// elemwise_modes.def. HF_HD-safe: the code generators and NVRTC include it too.
#pragma once
#include "runtime/ops/hd.h"

namespace hf {

enum class Mode : unsigned short {
#define X(NAME, ARITY, KIND, FLOPS) NAME,
#include "runtime/ops/elemwise_modes.def"
#undef X
};

inline constexpr int kModeCount = 0
#define X(NAME, ARITY, KIND, FLOPS) +1
#include "runtime/ops/elemwise_modes.def"
#undef X
    ;
// MegEngine's list has 40 unary, 40 binary, 5 ternary and 1 4-ary modes: adding a mode
// without its entry everywhere fails here first.
static_assert(kModeCount == 86, "elemwise_modes.def changed: update the mode tests too");

// Which dtypes a mode takes and what it returns.
enum class ModeKind : unsigned char {
  Float,      // float in (f32/f16/bf16), same type out
  Numeric,    // any int or float type in, same type out
  Int,        // integer types only (i32, i64, u8)
  Logic,      // bool or integer in, same out (logical on bool, bitwise on integers)
  Compare,    // any numeric type in, bool out
  Predicate,  // float in, bool out
};

struct ModeInfo {
  const char* name;
  int arity;
  ModeKind kind;
  int flops;
};

inline constexpr ModeInfo kModeInfo[] = {
#define X(NAME, ARITY, KIND, FLOPS) {#NAME, ARITY, ModeKind::KIND, FLOPS},
#include "runtime/ops/elemwise_modes.def"
#undef X
};

constexpr const ModeInfo& mode_info(Mode m) { return kModeInfo[(int)m]; }

}  // namespace hf
