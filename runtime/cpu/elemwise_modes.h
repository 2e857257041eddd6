// Per-mode block kernels: one dense loop per (mode, compute type), built from ModeFn.
// The table is filled by several translation units (elemwise_modes_*.cpp), each owning a
// range of modes, so the ~370 instantiations compile in parallel.
#pragma once
#include <type_traits>

#include "runtime/cpu/elemwise_engine.h"
#include "runtime/cpu/mode_f64.h"
#include "runtime/ops/scalar_math.h"

namespace hf::cpu {

// table[mode][compute dtype]; nullptr where the mode does not take that type.
using ModeTable = BlockFn[kModeCount][kDTypeCount];

// Result element type of mode M on T: bool for Compare/Predicate modes, else T.
template <Mode M, class T>
using ModeResult = std::conditional_t<
    mode_info(M).kind == ModeKind::Compare || mode_info(M).kind == ModeKind::Predicate, bool, T>;

// The scalar formula of mode M on T: ModeFn, or its f64 version for double.
template <Mode M, class T>
using ModeOp = std::conditional_t<std::is_same_v<T, double>, ModeFnF64<M>, ModeFn<M>>;

// GCC honours __restrict on parameters, not on locals: without it every loop is versioned
// with an overlap check, and in-place calls (out == in) fail it and run the scalar loop.
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeOp<M, T>::apply(a[i]));
}
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a, const T* __restrict b) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeOp<M, T>::apply(a[i], b[i]));
}
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a, const T* __restrict b,
                      const T* __restrict c) {
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(ModeOp<M, T>::apply(a[i], b[i], c[i]));
}
template <Mode M, class T, class R>
inline void mode_loop(int64_t n, R* __restrict o, const T* __restrict a, const T* __restrict b,
                      const T* __restrict c, const T* __restrict d) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = static_cast<R>(ModeOp<M, T>::apply(a[i], b[i], c[i], d[i]));
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

// The modes the integer types beyond i32/i64/u8 (i8, i16, u16, u32, u64) have kernels for:
// those the ONNX importer lowers integer ops to. The other Numeric/Int/Logic modes are
// MegEngine's training and quantisation helpers; leaving them out keeps the number of
// instantiations (and the build time of elemwise_modes_*.cpp) down. Elemwise refuses the
// rest by name (elemwise.cpp).
template <Mode M>
inline constexpr bool kWideIntMode =
    M == Mode::ABS || M == Mode::NEGATE || M == Mode::SIGN || M == Mode::RELU || M == Mode::ADD ||
    M == Mode::SUB || M == Mode::MUL || M == Mode::FLOOR_DIV || M == Mode::MOD || M == Mode::MAX ||
    M == Mode::MIN || M == Mode::CLIP || M == Mode::LT || M == Mode::LEQ || M == Mode::EQ ||
    M == Mode::NEQ || M == Mode::SHL || M == Mode::SHR || M == Mode::AND || M == Mode::OR ||
    M == Mode::XOR || M == Mode::NOT || M == Mode::FUSE_MUL_ADD3 || M == Mode::COND_LT_MOV ||
    M == Mode::COND_LEQ_MOV || M == Mode::SWITCH_GT0 || M == Mode::SQUARE ||
    M == Mode::FUSE_ADD_RELU;

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
  if constexpr (ModeFnF64<M>::kDefined && kind != ModeKind::Int && kind != ModeKind::Logic)
    set(DType::F64, &mode_block<M, double>);
  if constexpr (kWideIntMode<M>) {
    set(DType::I8, &mode_block<M, i8>);
    set(DType::I16, &mode_block<M, i16>);
    set(DType::U16, &mode_block<M, u16>);
    set(DType::U32, &mode_block<M, u32>);
    set(DType::U64, &mode_block<M, u64>);
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
