// Per-mode block kernels: one dense loop per (mode, compute type), built from ModeFn.
// The table is filled by several translation units (elemwise_modes_*.cpp), each owning a
// range of modes, so the ~180 instantiations compile in parallel.
#pragma once
#include "runtime/cpu/elemwise_engine.h"
#include "runtime/ops/scalar_math.h"

namespace hf::cpu {

// table[mode][compute dtype]; nullptr where the mode does not take that type.
using ModeTable = BlockFn[kModeCount][kDTypeCount];

// Result element type of mode M on T: bool for Compare/Predicate modes, else T.
template <Mode M, class T>
using ModeResult = std::conditional_t<
    mode_info(M).kind == ModeKind::Compare || mode_info(M).kind == ModeKind::Predicate, bool, T>;

// GCC honours __restrict on parameters, not on locals: without it every loop is versioned
// with an overlap check, and in-place calls (out == in) fail it and run the scalar loop.
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeFn<M>::apply(a[i]));
}
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a, const T* __restrict b) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeFn<M>::apply(a[i], b[i]));
}
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a, const T* __restrict b,
                      const T* __restrict c) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeFn<M>::apply(a[i], b[i], c[i]));
}
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a, const T* __restrict b,
                      const T* __restrict c, const T* __restrict d) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeFn<M>::apply(a[i], b[i], c[i], d[i]));
}

template <Mode M, class T>
void mode_block(const void* const* in, void* out, int64_t n, const void*) {
  using R = ModeResult<M, T>;
  constexpr int arity = mode_info(M).arity;
  auto arg = [in](int k) { return static_cast<const T*>(in[k]); };
  R* o = static_cast<R*>(out);
  if constexpr (arity == 1)
    mode_loop<M>(n, o, arg(0));
  else if constexpr (arity == 2)
    mode_loop<M>(n, o, arg(0), arg(1));
  else if constexpr (arity == 3)
    mode_loop<M>(n, o, arg(0), arg(1), arg(2));
  else
    mode_loop<M>(n, o, arg(0), arg(1), arg(2), arg(3));
}

template <Mode M>
void fill_mode(ModeTable& t) {
  BlockFn* row = t[static_cast<int>(M)];
  constexpr ModeKind kind = mode_info(M).kind;
  auto set = [&](DType d, BlockFn f) { row[static_cast<int>(d)] = f; };
  if constexpr (kind == ModeKind::Float || kind == ModeKind::Predicate) {
    set(DType::F32, &mode_block<M, float>);
  } else if constexpr (kind == ModeKind::Numeric || kind == ModeKind::Compare) {
    set(DType::F32, &mode_block<M, float>);
    set(DType::I32, &mode_block<M, i32>);
    set(DType::I64, &mode_block<M, i64>);
    set(DType::U8, &mode_block<M, u8>);
  } else if constexpr (kind == ModeKind::Int) {
    set(DType::I32, &mode_block<M, i32>);
    set(DType::I64, &mode_block<M, i64>);
    set(DType::U8, &mode_block<M, u8>);
  } else {
    static_assert(kind == ModeKind::Logic);
    set(DType::Bool, &mode_block<M, bool>);
    set(DType::I32, &mode_block<M, i32>);
    set(DType::I64, &mode_block<M, i64>);
    set(DType::U8, &mode_block<M, u8>);
  }
}

// Fills the modes numbered [Lo, Hi); the conditions depend on Lo/Hi, so modes outside the
// range are not instantiated in this translation unit.
template <int Lo, int Hi>
void fill_mode_range(ModeTable& t) {
#define X(NAME, ARITY, KIND, FLOPS)                                                      \
  if constexpr (Lo <= static_cast<int>(Mode::NAME) && static_cast<int>(Mode::NAME) < Hi) \
    fill_mode<Mode::NAME>(t);
#include "runtime/ops/elemwise_modes.def"
#undef X
}

// One per elemwise_modes_*.cpp.
void fill_modes_part0(ModeTable& t);
void fill_modes_part1(ModeTable& t);
void fill_modes_part2(ModeTable& t);
void fill_modes_part3(ModeTable& t);
void fill_modes_part4(ModeTable& t);
void fill_modes_part5(ModeTable& t);

}  // namespace hf::cpu
