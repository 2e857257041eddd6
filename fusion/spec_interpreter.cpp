#include "fusion/spec_interpreter.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "fusion/codegen_support.h"
#include "fusion/row_stages.h"
#include "runtime/cpu/elemwise_engine.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"

namespace hf::fusion {

namespace {

// Elements per chunk of a flat pass: a chunk of every operand and intermediate stays in L1
// (256 was faster than 128, 512 and 2048 on the examples).
// A reducing pass takes a leaf of the reduce (codegen_support.h) as one chunk, so that its
// terms are reduced where they were computed: a row of LayerNorm or softmax is one chunk.
constexpr i64 kChunk = 256;
constexpr i64 kMaxChunk = gen::kReduceLeaf;

bool elemwise_runs(const SpecExpr& e) {
  const ModeKind k = mode_info(e.mode).kind;
  return (k == ModeKind::Float || k == ModeKind::Numeric) &&
         cpu::mode_block_fn(e.mode, DType::F32) != nullptr;
}

// What an expression reads its operands from, once a chunk is evaluated.
enum class Src : unsigned char { Dense, Scalar, Strided, Literal, Slot };
struct Operand {
  Src src = Src::Slot;
  int index = 0;  // the input, literal or slot
  int buf = 0;    // Scalar, Strided: which of the pass's buffers for such inputs
};

// out[i] = a[i] op s, or s op a[i]: an arithmetic op with one operand the same for every
// element (a row value, a scalar input, a literal), without splatting it. IEEE single
// operations, as the mode table's loops compute them.
using ScalarFn = void (*)(const float* a, float s, float* out, i64 n);
template <Mode M, bool ScalarFirst>
void scalar_op(const float* a, float s, float* out, i64 n) {
  for (i64 i = 0; i < n; ++i) {
    const float x = ScalarFirst ? s : a[i], y = ScalarFirst ? a[i] : s;
    out[i] = M == Mode::ADD ? x + y : M == Mode::SUB ? x - y : M == Mode::MUL ? x * y : x / y;
  }
}
template <bool ScalarFirst>
ScalarFn scalar_fn(Mode m) {
  switch (m) {
    case Mode::ADD:
      return &scalar_op<Mode::ADD, ScalarFirst>;
    case Mode::SUB:
      return &scalar_op<Mode::SUB, ScalarFirst>;
    case Mode::MUL:
      return &scalar_op<Mode::MUL, ScalarFirst>;
    case Mode::TRUE_DIV:
      return &scalar_op<Mode::TRUE_DIV, ScalarFirst>;
    default:
      return nullptr;
  }
}

struct Instr {
  cpu::BlockFn fn = nullptr;
  float exponent = 1;  // PowC's ctx
  bool pow = false;
  int nargs = 0;
  Operand arg[4];
  int dst = 0;  // slot
  // Set where one of two arguments is a scalar or a literal: arg[scalar_arg] is not read as
  // an array but as the value `literal` or the scalar input's.
  ScalarFn sfn = nullptr;
  int scalar_arg = -1;
  float literal = 0;
};

// One pass over elements of a spec without RowReduce: a flat spec, a trailing-reduce spec,
// a phase of a row-stage spec. Inputs come as pointers (the kernel's, then the phase's
// scalars), strides and shape from the kernel's arguments.
class Pass {
 public:
  explicit Pass(const KernelSpec& s) : rank_(s.rank) {
    const size_t n = s.exprs.size();
    std::vector<int> root(n);  // the expression whose value an expression is (Cvt f32 -> f32)
    for (size_t i = 0; i < n; ++i) {
      const SpecExpr& e = s.exprs[i];
      root[i] = e.kind == ExprKind::Cvt ? root[static_cast<size_t>(e.args[0])] : int(i);
    }
    // Live expressions and each one's last reader; outputs and the reduce stay to the end.
    constexpr int kEnd = std::numeric_limits<int>::max();
    std::vector<bool> live(n, false);
    std::vector<int> last(n, -1);
    for (const SpecOutput& o : s.outputs) live[static_cast<size_t>(o.expr)] = true;
    if (s.reduce) live[static_cast<size_t>(s.reduce->expr)] = true;
    for (size_t i = n; i-- > 0;) {
      if (!live[i]) continue;
      const SpecExpr& e = s.exprs[i];
      for (int j = 0; j < expr_arity(e); ++j) live[static_cast<size_t>(e.args[j])] = true;
    }
    for (size_t i = 0; i < n; ++i) {
      if (!live[i]) continue;
      const SpecExpr& e = s.exprs[i];
      for (int j = 0; j < expr_arity(e); ++j) {
        int& l = last[static_cast<size_t>(root[static_cast<size_t>(e.args[j])])];
        l = std::max(l, int(i));
      }
    }
    for (const SpecOutput& o : s.outputs) last[static_cast<size_t>(root[size_t(o.expr)])] = kEnd;
    if (s.reduce) last[static_cast<size_t>(root[static_cast<size_t>(s.reduce->expr)])] = kEnd;

    operand_.resize(n);
    std::vector<int> free_slots;
    auto take_slot = [&] {
      if (free_slots.empty()) return slots_++;
      const int slot = free_slots.back();
      free_slots.pop_back();
      return slot;
    };
    for (size_t i = 0; i < n; ++i) {
      if (!live[i]) continue;
      const SpecExpr& e = s.exprs[i];
      Operand& o = operand_[i];
      switch (e.kind) {
        case ExprKind::Input: {
          const SpecInput& in = s.inputs[static_cast<size_t>(e.input)];
          o = {in.scalar ? Src::Scalar : in.dense ? Src::Dense : Src::Strided, e.input, 0};
          if (o.src == Src::Dense) break;
          auto& used = o.src == Src::Scalar ? scalars_ : strided_;
          auto it = std::find(used.begin(), used.end(), e.input);
          o.buf = static_cast<int>(it - used.begin());
          if (it == used.end()) used.push_back(e.input);
          break;
        }
        case ExprKind::Literal:
          o = {Src::Literal, static_cast<int>(literals_.size()), 0};
          literals_.emplace_back(kMaxChunk, static_cast<float>(e.value));
          break;
        case ExprKind::Cvt:
          o = operand_[static_cast<size_t>(e.args[0])];
          break;
        case ExprKind::Elemwise:
        case ExprKind::PowC: {
          Instr ins;
          ins.nargs = expr_arity(e);
          for (int j = 0; j < ins.nargs; ++j) {
            const int a = e.args[j];
            ins.arg[j] = operand_[static_cast<size_t>(a)];
            const int r = root[static_cast<size_t>(a)];
            // The last reader frees its argument's slot, which may then be its own (in place).
            if (ins.arg[j].src == Src::Slot && last[static_cast<size_t>(r)] == int(i) &&
                std::find(free_slots.begin(), free_slots.end(), ins.arg[j].index) ==
                    free_slots.end())
              free_slots.push_back(ins.arg[j].index);
          }
          if (e.kind == ExprKind::PowC) {
            ins.pow = true;
            ins.exponent = static_cast<float>(e.value);
            ins.fn = cpu::pow_block_fn(ins.exponent);
          } else {
            ins.fn = cpu::mode_block_fn(e.mode, DType::F32);
            for (int j = 0; j < ins.nargs && ins.nargs == 2 && !ins.sfn; ++j) {
              const Src src = ins.arg[j].src, other = ins.arg[1 - j].src;
              if ((src != Src::Scalar && src != Src::Literal) || other == Src::Scalar ||
                  other == Src::Literal)
                continue;
              ins.sfn = j == 0 ? scalar_fn<true>(e.mode) : scalar_fn<false>(e.mode);
              ins.scalar_arg = j;
              if (src == Src::Literal)
                ins.literal = static_cast<float>(s.exprs[static_cast<size_t>(e.args[j])].value);
            }
          }
          ins.dst = take_slot();
          o = {Src::Slot, ins.dst, 0};
          code_.push_back(ins);
          break;
        }
        case ExprKind::RowReduce:
          throw Error("SpecInterpreter: a pass has no RowReduce");
      }
    }
    for (size_t j = 0; j < s.outputs.size(); ++j)
      if (!s.outputs[j].reduced)
        outputs_.push_back({static_cast<int>(j), operand_[size_t(s.outputs[j].expr)]});
    // Scalars read as arrays (by an op without a scalar form, an output, the reduce): splat.
    splat_.assign(scalars_.size(), false);
    auto read_as_array = [&](const Operand& o) {
      if (o.src == Src::Scalar) splat_[static_cast<size_t>(o.buf)] = true;
    };
    for (const Instr& ins : code_)
      for (int j = 0; j < ins.nargs; ++j)
        if (j != ins.scalar_arg) read_as_array(ins.arg[j]);
    for (const auto& out : outputs_) read_as_array(out.second);
    if (s.reduce) read_as_array(operand_[static_cast<size_t>(s.reduce->expr)]);
    if (s.reduce) term_ = operand_[static_cast<size_t>(s.reduce->expr)];
    // The last instruction writes straight into the one output it computes, where nothing
    // read after it could be that output's memory (an input the caller placed it over):
    // the other outputs come from scratch.
    if (code_.empty()) return;
    const int last_slot = code_.back().dst;
    int writes = -1, others_from_scratch = 1;
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const Operand& o = outputs_[k].second;
      if (o.src == Src::Slot && o.index == last_slot) {
        writes = writes < 0 ? static_cast<int>(k) : -2;
      } else {
        others_from_scratch &= o.src == Src::Slot || o.src == Src::Literal;
      }
    }
    if (writes >= 0 && others_from_scratch) direct_ = writes;
  }

  // Floats of scratch one call needs (on its thread).
  size_t scratch_floats() const {
    return static_cast<size_t>(slots_ + strided_.size() + scalars_.size()) * kMaxChunk;
  }

  // The call's context: inputs (the kernel's, then the phase's), the kernel's arguments
  // (shape, strides) and outputs, scratch of scratch_floats().
  struct Call {
    const void* const* in;
    const KernelArgs* args;
    void* const* out;
    float* scratch;
  };

  // Once per call that evaluates chunks of at most `extent` elements: scalar inputs splat.
  void begin(const Call& c, i64 extent) const {
    const i64 n = std::min(kMaxChunk, extent);
    for (size_t k = 0; k < scalars_.size(); ++k)
      if (splat_[k])
        std::fill_n(scalar_buf(c, k), n, *static_cast<const float*>(c.in[scalars_[k]]));
  }

  // Elements [c0, c0 + n) of the iteration space, n <= kMaxChunk: writes the outputs that
  // are not reduced and returns where the reduce's terms are.
  const float* chunk(const Call& c, i64 c0, i64 n) const {
    Chunk ch(c, c0);
    for (size_t k = 0; k < strided_.size(); ++k)
      ch.strided[k] = gather(strided_buf(c, k), static_cast<const float*>(c.in[strided_[k]]),
                             c.args->in_strides[strided_[k]], c.args->shape, c0, n);
    const void* args[4];
    for (size_t i = 0; i < code_.size(); ++i) {
      const Instr& ins = code_[i];
      // Arguments first: the last instruction may write in place of its argument's slot,
      // and once `direct` is set that slot reads as the output.
      const float* a0 = nullptr;
      float v = 0;
      if (ins.sfn) {
        const Operand& sc = ins.arg[ins.scalar_arg];
        v = sc.src == Src::Literal ? ins.literal : *static_cast<const float*>(c.in[sc.index]);
        a0 = at(ch, ins.arg[1 - ins.scalar_arg]);
      } else {
        for (int j = 0; j < ins.nargs; ++j) args[j] = at(ch, ins.arg[j]);
      }
      float* dst = slot(c, ins.dst);
      if (direct_ >= 0 && i + 1 == code_.size())
        ch.direct = dst = static_cast<float*>(c.out[outputs_[size_t(direct_)].first]) + c0;
      if (ins.sfn)
        ins.sfn(a0, v, dst, n);
      else
        ins.fn(args, dst, n, ins.pow ? &ins.exponent : nullptr);
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (static_cast<int>(k) == direct_) continue;
      float* dst = static_cast<float*>(c.out[outputs_[k].first]) + c0;
      const float* src = at(ch, outputs_[k].second);
      if (dst != src) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    }
    return term_ ? at(ch, *term_) : nullptr;
  }

  // Elements [begin, end), no reduce.
  // Elements [begin, end), no reduce, in chunks of at most `size` (<= kMaxChunk).
  void run(const Call& c, i64 begin, i64 end, i64 size = kChunk) const {
    this->begin(c, std::min(size, end - begin));
    for (i64 c0 = begin; c0 < end; c0 += size) chunk(c, c0, std::min(size, end - c0));
  }

  // The reduce over elements [base, base + len) in the unfused reduce's order (pairwise over
  // leaves, codegen_support.h), writing the outputs that are not reduced on the way; the
  // raw accumulation (MEAN not divided yet). begin() first.
  template <class Op>
  float reduce(const Call& c, i64 base, i64 len) const {
    return gen::reduce_tree<Op, float>(0, len, [&](i64 r0, i64 n) {
      return gen::leaf_reduce<Op, float>(chunk(c, base + r0, n), n);
    });
  }

 private:
  // A chunk being evaluated: where its strided inputs are (gathered, or in place), and the
  // output the last instruction wrote in place of its slot.
  struct Chunk {
    Chunk(const Call& call, i64 first) : c(call), c0(first) {}  // strided: set as gathered
    const Call& c;
    i64 c0;
    const float* strided[kAbiMaxInputs];
    float* direct = nullptr;
  };

  float* slot(const Call& c, int s) const { return c.scratch + static_cast<i64>(s) * kMaxChunk; }
  float* strided_buf(const Call& c, size_t k) const { return slot(c, slots_ + int(k)); }
  float* scalar_buf(const Call& c, size_t k) const {
    return slot(c, slots_ + static_cast<int>(strided_.size() + k));
  }
  const float* at(const Chunk& ch, const Operand& o) const {
    switch (o.src) {
      case Src::Dense:
        return static_cast<const float*>(ch.c.in[o.index]) + ch.c0;
      case Src::Scalar:
        return scalar_buf(ch.c, static_cast<size_t>(o.buf));
      case Src::Strided:
        return ch.strided[o.buf];
      case Src::Literal:
        return literals_[static_cast<size_t>(o.index)].data();
      case Src::Slot:
        return ch.direct && o.index == code_.back().dst ? ch.direct : slot(ch.c, o.index);
    }
    return nullptr;
  }

  // The elements of flat iteration indices [c0, c0 + n), through element strides: in place
  // where they are one contiguous run of the source, else gathered into `dst`.
  const float* gather(float* dst, const float* src, const i64* stride, const i64* shape, i64 c0,
                      i64 n) const {
    // Adjacent axes merged where the input walks them as one (a per-channel scale over a
    // C x H x W image: one run of H * W repeating its element), sizes of 1 dropped.
    i64 dims[kAbiMaxRank], st[kAbiMaxRank];
    int r = 0;
    for (int d = 0; d < rank_; ++d) {
      if (shape[d] == 1) continue;
      if (r > 0 && st[r - 1] == stride[d] * shape[d]) {
        dims[r - 1] *= shape[d];
        st[r - 1] = stride[d];
      } else {
        dims[r] = shape[d];
        st[r++] = stride[d];
      }
    }
    if (r == 0) {
      std::fill_n(dst, n, src[0]);
      return dst;
    }
    i64 idx[kAbiMaxRank], off = 0, rest = c0;
    for (int d = r - 1; d >= 0; --d) {
      idx[d] = rest % dims[d];
      rest /= dims[d];
      off += idx[d] * st[d];
    }
    const int inner = r - 1;
    const i64 s = st[inner];
    if (s == 1 && dims[inner] - idx[inner] >= n) return src + off;
    for (i64 done = 0; done < n;) {
      const i64 run = std::min(dims[inner] - idx[inner], n - done);
      if (s == 1)
        std::memcpy(dst + done, src + off, static_cast<size_t>(run) * sizeof(float));
      else if (s == 0)
        std::fill_n(dst + done, run, src[off]);
      else
        for (i64 t = 0; t < run; ++t) dst[done + t] = src[off + t * s];
      done += run;
      idx[inner] += run;
      off += run * s;
      for (int d = inner; d > 0 && idx[d] == dims[d]; --d) {
        off -= idx[d] * st[d];
        idx[d] = 0;
        ++idx[d - 1];
        off += st[d - 1];
      }
    }
    return dst;
  }

  int rank_ = 1;
  std::vector<Operand> operand_;  // per expression
  std::vector<Instr> code_;
  std::vector<std::vector<float>> literals_;  // kMaxChunk copies each
  std::vector<int> strided_, scalars_;        // inputs read through strides / splat
  std::vector<bool> splat_;                   // per scalars_: read as an array somewhere
  std::vector<std::pair<int, Operand>> outputs_;
  std::optional<Operand> term_;  // what a trailing reduce reduces
  int direct_ = -1;              // the output (in outputs_) the last instruction writes
  int slots_ = 0;
};

template <class F>
float with_reduce_op(ReduceMode m, F&& f) {
  switch (m) {
    case ReduceMode::SUM:
    case ReduceMode::MEAN:
      return f(RSum{});
    case ReduceMode::SUM_SQR:
      return f(RSumSqr{});
    case ReduceMode::PRODUCT:
      return f(RProd{});
    case ReduceMode::MIN:
      return f(RMin{});
    case ReduceMode::MAX:
      return f(RMax{});
  }
  throw Error("SpecInterpreter: unknown reduce mode");
}

float reduce_row(const Pass& p, const Pass::Call& c, ReduceMode m, i64 base, i64 len) {
  float a = with_reduce_op(m, [&](auto op) { return p.reduce<decltype(op)>(c, base, len); });
  return m == ReduceMode::MEAN ? mean_of(a, len) : a;
}

// Scratch for one call on this thread; grows, never shrinks.
float* scratch(size_t floats) {
  thread_local std::vector<float> buf;
  if (buf.size() < floats) buf.resize(floats);
  return buf.data();
}

}  // namespace

bool interpretable(const KernelSpec& s, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (s.rank < 0 || s.rank > kAbiMaxRank) return no("rank " + std::to_string(s.rank));
  if (s.inputs.size() > static_cast<size_t>(kAbiMaxInputs) ||
      s.outputs.size() > static_cast<size_t>(kAbiMaxOutputs))
    return no("too many inputs or outputs");
  for (const SpecInput& in : s.inputs)
    if (in.dtype != DType::F32) return no("an input is " + std::string(dtype_name(in.dtype)));
  for (const SpecOutput& o : s.outputs)
    if (o.dtype != DType::F32) return no("an output is " + std::string(dtype_name(o.dtype)));
  for (const SpecExpr& e : s.exprs) {
    if (e.dtype != DType::F32) return no("a value is " + std::string(dtype_name(e.dtype)));
    if (e.kind == ExprKind::Elemwise && !elemwise_runs(e))
      return no(std::string("mode ") + mode_info(e.mode).name + " has no f32 loop");
  }
  return true;
}

struct SpecInterpreter::Impl {
  KernelSpec spec;
  // Flat and trailing-reduce specs: one pass. Row-stage specs: one per phase.
  std::vector<Pass> passes;
  RowStagePlan plan;
  bool term_in_output = false;
  size_t scratch_floats = 0, max_pointers = 0;

  void run_rows(const KernelArgs& a, i64 begin, i64 end) const;
  float row_value(int i, const float* vals) const;
};

SpecInterpreter::SpecInterpreter(const KernelSpec& spec) : impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!interpretable(spec, &why))
    throw Error("kernel hf_" + spec.hash_hex() + " cannot be interpreted: " + why);
  Impl& p = *impl_;
  p.spec = spec;
  if (spec.row_stages()) {
    std::vector<bool> live(spec.exprs.size(), false);
    for (const SpecOutput& o : spec.outputs) live[static_cast<size_t>(o.expr)] = true;
    for (size_t i = spec.exprs.size(); i-- > 0;)
      if (live[i])
        for (int j = 0; j < expr_arity(spec.exprs[i]); ++j)
          live[static_cast<size_t>(spec.exprs[i].args[j])] = true;
    p.plan = plan_row_stages(spec, live);
    p.term_in_output = keep_last_term_in_output(p.plan, spec);
    for (const RowPhase& ph : p.plan.phases) {
      p.passes.emplace_back(ph.spec);
      p.max_pointers = std::max(p.max_pointers, ph.spec.inputs.size());
    }
  } else {
    p.passes.emplace_back(spec);
  }
  for (const Pass& pass : p.passes)
    p.scratch_floats = std::max(p.scratch_floats, pass.scratch_floats());
}

SpecInterpreter::~SpecInterpreter() = default;

void SpecInterpreter::run(const KernelArgs& a, i64 begin, i64 end) const {
  const Impl& p = *impl_;
  if (p.spec.row_stages()) return p.run_rows(a, begin, end);
  const Pass::Call c{a.in, &a, a.out, scratch(p.scratch_floats)};
  if (!p.spec.reduce) return p.passes[0].run(c, begin, end);
  const SpecReduce& r = *p.spec.reduce;
  i64 len = 1;
  for (int d = r.first_axis; d < p.spec.rank; ++d) len *= a.shape[d];
  p.passes[0].begin(c, len);
  for (i64 row = begin; row < end; ++row) {
    const float v = reduce_row(p.passes[0], c, r.mode, row * len, len);
    for (size_t j = 0; j < p.spec.outputs.size(); ++j)
      if (p.spec.outputs[j].reduced) static_cast<float*>(a.out[j])[row] = v;
  }
}

// A row value from the row values it reads (row_stages.h): the unfused op's loop on one
// element.
float SpecInterpreter::Impl::row_value(int i, const float* vals) const {
  const SpecExpr& e = spec.exprs[static_cast<size_t>(i)];
  if (e.kind == ExprKind::Input) return vals[i];  // a row input, loaded with the row
  if (e.kind == ExprKind::Literal) return static_cast<float>(e.value);
  if (e.kind == ExprKind::Cvt) return vals[e.args[0]];
  const void* args[4];
  for (int j = 0; j < expr_arity(e); ++j) args[j] = &vals[e.args[j]];
  float r = 0;
  if (e.kind == ExprKind::PowC) {
    const float exponent = static_cast<float>(e.value);
    cpu::pow_block_fn(exponent)(args, &r, 1, &exponent);
  } else {
    cpu::mode_block_fn(e.mode, DType::F32)(args, &r, 1, nullptr);
  }
  return r;
}

// Row-stage specs: the rows that start in [begin, end), phase by phase, as the compiled
// kernel does them (codegen_cpp.cpp's print_row_kernel).
void SpecInterpreter::Impl::run_rows(const KernelArgs& a, i64 begin, i64 end) const {
  const KernelSpec& s = spec;
  i64 len = 1;
  for (int d = s.row_axis; d < s.rank; ++d) len *= a.shape[d];
  if (len <= 0) return;
  const size_t n_in = s.inputs.size();
  std::vector<float> vals(s.exprs.size(), 0.0f);
  for (int i : plan.row_constants) {
    const SpecExpr& e = s.exprs[static_cast<size_t>(i)];
    vals[static_cast<size_t>(i)] = e.kind == ExprKind::Input
                                       ? *static_cast<const float*>(a.in[e.input])
                                       : row_value(i, vals.data());
  }
  std::vector<const void*> in(max_pointers);
  float* scratch_buf = scratch(scratch_floats);
  for (i64 row = (begin + len - 1) / len; row * len < end; ++row) {
    const i64 base = row * len;
    for (int k : plan.row_inputs) {
      i64 rest = row, off = 0;
      for (int d = s.row_axis - 1; d >= 0; --d) {
        const i64 idx = d == 0 ? rest : rest % a.shape[d];
        if (d > 0) rest /= a.shape[d];
        if (!((s.inputs[static_cast<size_t>(k)].broadcast_mask >> d) & 1u))
          off += idx * a.in_strides[k][d];
      }
      const float v = static_cast<const float*>(a.in[k])[off];
      for (size_t i = 0; i < s.exprs.size(); ++i)
        if (plan.row_value[i] && s.exprs[i].kind == ExprKind::Input && s.exprs[i].input == k)
          vals[i] = v;
    }
    for (size_t j = 0; j < plan.phases.size(); ++j) {
      const RowPhase& ph = plan.phases[j];
      for (int i : plan.row_exprs_before[j])
        vals[static_cast<size_t>(i)] = row_value(i, vals.data());
      size_t k = 0;
      for (; k < n_in; ++k) in[k] = a.in[k];
      if (term_in_output && ph.row_reduce < 0) in[k++] = a.out[0];
      for (int v : ph.row_values) in[k++] = &vals[static_cast<size_t>(v)];
      // A reducing phase's only output that is not reduced is the term kept in output 0.
      const Pass::Call c{in.data(), &a, a.out, scratch_buf};
      const Pass& pass = passes[j];
      if (ph.row_reduce < 0) {  // a row of up to a reduce leaf is one chunk, as in the others
        pass.run(c, base, base + len, len <= kMaxChunk ? std::max<i64>(len, 1) : kChunk);
        continue;
      }
      pass.begin(c, len);
      vals[static_cast<size_t>(ph.row_reduce)] =
          reduce_row(pass, c, s.exprs[static_cast<size_t>(ph.row_reduce)].reduce_mode, base, len);
    }
  }
}

}  // namespace hf::fusion
