#include "runtime/cpu/epilogue_program.h"

#include <algorithm>

#include "runtime/cpu/elemwise_engine.h"
#include "runtime/ir/error.h"

namespace hf::cpu {

namespace {

// Elements per chunk: every step's operands and result of one chunk stay in L1.
constexpr int64_t kChunk = 512;

enum class Access : unsigned char {
  Full,      // the output's own layout: element i at i
  Scalar,    // one value
  Periodic,  // a vector along the merged innermost axis of length `period`: i % period
  General,   // anything else: per run of the innermost axis
};

struct Operand {
  int input = 0;  // the Fused node's input
  Access access = Access::Full;
  Strides strides;  // General: over the merged axes
};

struct Instr {
  BlockFn fn = nullptr;
  float exponent = 1;  // PowC's ctx
  bool pow = false;
  int nargs = 0;
  int arg[4] = {0, 0, 0, 0};  // slots
  int dst = 0;
};

}  // namespace

// Slots: 0 the output chunk (in place), 1..operands, then literals, then one per step but
// the last (which writes slot 0).
struct EpilogueProgram::Impl {
  Shape dims;  // the output's shape with adjacent axes merged where every operand allows
  int64_t inner = 1, period = 0;
  std::vector<Operand> ops;
  std::vector<std::vector<float>> literals;  // kChunk copies each
  std::vector<Instr> code;
  int temps = 0;
  bool general = false;

  int literal_slot(size_t k) const { return 1 + static_cast<int>(ops.size() + k); }
  int temp_slot(int k) const { return 1 + static_cast<int>(ops.size() + literals.size()) + k; }
  int slots() const { return temp_slot(temps); }
};

EpilogueProgram::EpilogueProgram(const HeavyEpilogue& e, const Shape& out,
                                 const std::vector<Shape>& inputs)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  // Operands: each input a step reads, once.
  std::vector<int> slot_of_input(inputs.size(), -1);
  for (const EpilogueStep& st : e.steps)
    for (const EpilogueArg& a : st.args)
      if (a.kind == EpilogueArg::Input && slot_of_input.at(a.index) < 0) {
        slot_of_input[a.index] = 1 + static_cast<int>(p.ops.size());
        p.ops.push_back({a.index, Access::Full, {}});
      }
  // Merge adjacent output axes where every operand walks them as one (sizes 1 dropped).
  std::vector<Strides> bs;
  for (const Operand& o : p.ops) bs.push_back(broadcast_strides(inputs[o.input], out));
  Strides os = contiguous_strides(out);
  std::vector<Strides> merged(p.ops.size());
  Strides out_merged;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool join = !p.dims.empty();
    for (size_t k = 0; k < p.ops.size() && join; ++k) join = merged[k].back() == bs[k][d] * out[d];
    if (join) {
      p.dims.back() *= out[d];
      for (size_t k = 0; k < p.ops.size(); ++k) merged[k].back() = bs[k][d];
      out_merged.back() = os[d];
    } else {
      p.dims.push_back(out[d]);
      for (size_t k = 0; k < p.ops.size(); ++k) merged[k].push_back(bs[k][d]);
      out_merged.push_back(os[d]);
    }
  }
  if (p.dims.empty()) {
    p.dims = {1};
    out_merged = {1};
    for (auto& m : merged) m = {0};
  }
  p.inner = p.dims.back();
  for (size_t k = 0; k < p.ops.size(); ++k) {
    Operand& o = p.ops[k];
    const Strides& s = merged[k];
    bool zero_outer = true;
    for (size_t d = 0; d + 1 < s.size(); ++d) zero_outer &= s[d] == 0;
    if (s == out_merged) {
      o.access = Access::Full;
    } else if (zero_outer && s.back() == 0) {
      o.access = Access::Scalar;
    } else if (zero_outer && s.back() == 1) {
      o.access = Access::Periodic;
      p.period = p.inner;
    } else {
      o.access = Access::General;
      o.strides = s;
      p.general = true;
    }
  }
  // Code.
  std::vector<float> literal_values;
  auto literal = [&](float v) {
    auto it = std::find(literal_values.begin(), literal_values.end(), v);
    if (it != literal_values.end()) return static_cast<int>(it - literal_values.begin());
    literal_values.push_back(v);
    return static_cast<int>(literal_values.size() - 1);
  };
  for (const EpilogueStep& st : e.steps)
    for (const EpilogueArg& a : st.args)
      if (a.kind == EpilogueArg::Literal) literal(a.literal);
  for (float v : literal_values) p.literals.emplace_back(kChunk, v);
  p.temps = static_cast<int>(e.steps.size()) - 1;
  for (size_t k = 0; k < e.steps.size(); ++k) {
    const EpilogueStep& st = e.steps[k];
    Instr in;
    if (st.op == OpType::PowC) {
      in.fn = pow_block_fn(st.exponent);
      in.exponent = st.exponent;
      in.pow = true;
    } else {
      const ModeInfo& m = mode_info(st.mode);
      if (m.kind == ModeKind::Float || m.kind == ModeKind::Numeric)
        in.fn = mode_block_fn(st.mode, DType::F32);
      if (!in.fn)
        throw Error("epilogue step '" + st.name + "': " + m.name + " has no f32 loop here");
    }
    in.nargs = static_cast<int>(st.args.size());
    for (int j = 0; j < in.nargs; ++j) {
      const EpilogueArg& a = st.args[j];
      switch (a.kind) {
        case EpilogueArg::Heavy:
          in.arg[j] = 0;
          break;
        case EpilogueArg::Step:
          in.arg[j] = a.index + 1 == static_cast<int>(e.steps.size()) ? 0 : p.temp_slot(a.index);
          break;
        case EpilogueArg::Input:
          in.arg[j] = slot_of_input[a.index];
          break;
        case EpilogueArg::Literal:
          in.arg[j] = p.literal_slot(literal(a.literal));
          break;
      }
    }
    in.dst = k + 1 == e.steps.size() ? 0 : p.temp_slot(static_cast<int>(k));
    p.code.push_back(in);
  }
}

EpilogueProgram::~EpilogueProgram() = default;

void EpilogueProgram::apply(float* out, std::span<const TensorView> inputs,
                            const OutBlock& block) const {
  const Impl& p = *impl_;
  const size_t nops = p.ops.size();
  // Per-thread scratch: temps, then per operand a chunk (scalars, gathered runs) and, for
  // a periodic operand shorter than a chunk, a repetition of it.
  const int64_t tile = p.period > 0 && p.period < kChunk ? kChunk + p.period : 0;
  thread_local std::vector<float> scratch;
  const size_t need = (p.temps + nops) * kChunk + nops * tile;
  if (scratch.size() < need) scratch.resize(need);
  float* temp0 = scratch.data();
  float* own0 = temp0 + p.temps * kChunk;
  float* tile0 = own0 + nops * kChunk;

  thread_local std::vector<const float*> bases;
  thread_local std::vector<const void*> slots;
  bases.resize(nops);
  slots.resize(p.slots());
  const float** bp = bases.data();
  const void** slot = slots.data();
  for (size_t k = 0; k < nops; ++k) {
    const Operand& o = p.ops[k];
    bp[k] = inputs[o.input].as<const float>();
    float* own = own0 + k * kChunk;
    if (o.access == Access::Scalar) std::fill(own, own + kChunk, bp[k][0]);
    if (o.access == Access::Periodic && tile > 0) {
      float* t = tile0 + k * tile;
      for (int64_t j = 0; j < tile; ++j) t[j] = bp[k][j % p.period];
    }
  }

  for (size_t l = 0; l < p.literals.size(); ++l) slot[p.literal_slot(l)] = p.literals[l].data();
  for (int t = 0; t < p.temps; ++t) slot[p.temp_slot(t)] = temp0 + t * kChunk;

  for (int64_t r = 0; r < block.rows; ++r) {
    int64_t i = block.offset + r * block.row_stride;
    int64_t left = block.cols;
    while (left > 0) {
      int64_t n = std::min(left, kChunk);
      const int64_t phase = p.inner > 0 ? i % p.inner : 0;
      if (p.general || p.period >= kChunk) n = std::min(n, p.inner - phase);
      float* acc = out + i;
      slot[0] = acc;
      for (size_t k = 0; k < nops; ++k) {
        const Operand& o = p.ops[k];
        float* own = own0 + k * kChunk;
        switch (o.access) {
          case Access::Full:
            slot[1 + k] = bp[k] + i;
            break;
          case Access::Scalar:
            slot[1 + k] = own;
            break;
          case Access::Periodic:
            slot[1 + k] = tile > 0 ? tile0 + k * tile + phase : bp[k] + phase;
            break;
          case Access::General: {
            int64_t off = 0, rest = i;
            for (size_t d = p.dims.size(); d-- > 0;) {
              off += (rest % p.dims[d]) * o.strides[d];
              rest /= p.dims[d];
            }
            if (o.strides.back() == 1) {
              slot[1 + k] = bp[k] + off;
            } else {
              std::fill(own, own + n, bp[k][off]);
              slot[1 + k] = own;
            }
            break;
          }
        }
      }
      for (const Instr& in : p.code) {
        const void* args[4];
        for (int j = 0; j < in.nargs; ++j) args[j] = slot[in.arg[j]];
        in.fn(args, const_cast<void*>(slot[in.dst]), n, in.pow ? &in.exponent : nullptr);
      }
      i += n;
      left -= n;
    }
  }
}

}  // namespace hf::cpu
