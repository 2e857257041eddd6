// The C++ generator: the loops around the per-element eval (codegen_common.h) that GCC
// vectorises, and the reduce tree of the unfused CPU reduce.
//
// Shape of a generated kernel (docs/codegen.md has complete examples):
//   namespace hf_generated::<name> {
//   eval(x..., y..., [r])  one element, storage values in and out
//   seg(n, ...)            a loop over n elements with __restrict pointers (vectorises)
//   range(args, b, e)      elements [b, e): one seg call when every input is dense, else a
//                          walk over the innermost dimension carrying the N-d index
//   }
//   extern "C" <name>      range(begin, end), or per row: a pairwise tree of range + leaf
//                          reductions, then the reduced outputs
// A row-stage spec (KernelSpec::row_axis) has one such namespace per phase (s0, s1, ...,
// fusion/row_stages.h) and an entry that runs the phases row by row.
#include "fusion/codegen_cpp.h"

#include <optional>
#include <set>
#include <stdexcept>

#include "fusion/codegen_common.h"
#include "fusion/row_stages.h"

namespace hf::fusion {
namespace {

using namespace codegen;

// A reducing pass accumulates its terms in registers (seg_acc / range_acc) when every leaf
// of the reduce tree is one segment of seg: the elements are consecutive (no walk) or the
// reduce is over the innermost axis only. Otherwise its terms go through `red` (seg / range)
// and leaf_reduce. Both sum in the same order.
bool accumulates_in_registers(const KernelSpec& s, const SpecInfo& info) {
  return s.reduce && (!info.walk || s.reduce->first_axis == s.rank - 1);
}

// seg(n, ...): n consecutive elements; the loop GCC vectorises. seg_acc(n, ...): the same
// elements' reduce terms, accumulated in leaf_reduce's order, returned.
// Input `output_input` (if >= 0) is output 0's own values, read before each is overwritten:
// seg reads out0[j] for it (one __restrict pointer, not two to the same memory).
void print_seg(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info, int output_input) {
  const bool acc = accumulates_in_registers(s, info);
  std::vector<std::string> params = {"::hf::i64 n"}, args;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const std::string S = storage_type(s.inputs[k].dtype);
    if (static_cast<int>(k) == output_input) {
      args.push_back("out0[j]");
      continue;
    }
    switch (info.input[k]) {
      case InputUse::Unused:
        break;
      case InputUse::Scalar:
      case InputUse::Invariant:
        params.push_back("const " + S + " x" + num(k));
        args.push_back("x" + num(k));
        break;
      case InputUse::Dense:
        params.push_back("const " + S + "* __restrict in" + num(k));
        args.push_back("in" + num(k) + "[j]");
        break;
      case InputUse::Strided:
        params.push_back("const " + S + "* __restrict in" + num(k));
        params.push_back("::hf::i64 s" + num(k));
        args.push_back("in" + num(k) + "[C ? j : j * s" + num(k) + "]");
        break;
    }
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (s.outputs[o].reduced) continue;
    params.push_back(std::string(storage_type(s.outputs[o].dtype)) + "* __restrict out" + num(o));
    args.push_back("out" + num(o) + "[j]");
  }
  if (s.reduce && !acc) {
    params.push_back(std::string(compute_type(info.acc)) + "* __restrict red");
    args.push_back("red[j]");
  }
  // __restrict works on parameters (GCC ignores it on locals): without it the loop is
  // versioned for overlap or not vectorised at all.
  if (info.inner_stride) {
    p.line(
        "// n elements along the innermost dimension; C: the strided inputs are contiguous there.");
    p.line("template <bool C>");
  } else {
    p.line(info.walk ? "// n elements along the innermost dimension."
                     : "// n consecutive elements.");
  }
  if (!acc) {
    auto f = p.block("static HF_VECTOR_LOOP void seg(", join(params), ")");
    p.line("for (::hf::i64 j = 0; j < n; ++j) eval(", join(args), ");");
    return;
  }
  const std::string A = compute_type(info.acc);
  args.push_back("r");
  const std::string step = "eval(" + join(args) + ");";
  // Not HF_VECTOR_LOOP: GCC inlines it into the row loop only when their optimisation
  // options match, and the call (with its stack realignment) cost ~8% on layernorm.
  auto f = p.block("static inline ", A, " seg_acc(", join(params), ")");
  p.line("// leaf_reduce's lanes (codegen_support.h): lane l sums terms l, l + W, l + 2W, ...");
  p.line("using Op = ", reduce_op(s.reduce->mode), ";");
  p.line("constexpr int W = 128 / (int)sizeof(", A, ");");
  p.line(A, " acc[W];");
  p.line("for (int l = 0; l < W; ++l) acc[l] = Op::identity<", A, ">();");
  p.line("::hf::i64 i = 0;");
  {
    auto outer = p.block("for (; i + W <= n; i += W)");
    auto inner = p.block("for (int l = 0; l < W; ++l)");
    p.line("const ::hf::i64 j = i + l;");
    p.line(A, " r;");
    p.line(step);
    p.line("acc[l] = Op::step(acc[l], r);");
  }
  p.line(A, " tail = Op::identity<", A, ">();");
  {
    auto tail = p.block("for (::hf::i64 j = i; j < n; ++j)");
    p.line(A, " r;");
    p.line(step);
    p.line("tail = Op::step(tail, r);");
  }
  p.line(
      "return ::hf::fusion::gen::lanes_and_tail<Op>(::hf::fusion::gen::combine_lanes<Op>(acc), "
      "tail, n, W);");
}

// Dense kernels whose outputs dwarf the last-level cache (args->stream_out): each block of
// outputs is computed into a buffer that stays in L1, then streamed out (host_stream.h).
void print_streaming_range(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  auto f = p.block("if (args->stream_out)");
  p.line("constexpr ::hf::i64 kBlock = 1024;");
  for (size_t o = 0; o < s.outputs.size(); ++o)
    p.line("alignas(64) ", storage_type(s.outputs[o].dtype), " buf", o, "[kBlock];");
  {
    auto loop = p.block("for (::hf::i64 b = begin; b < end; b += kBlock)");
    p.line("const ::hf::i64 n = end - b < kBlock ? end - b : kBlock;");
    std::vector<std::string> args = {"n"};
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      if (info.input[k] == InputUse::Scalar || info.input[k] == InputUse::Invariant)
        args.push_back("x" + num(k));
      else if (info.input[k] == InputUse::Dense)
        args.push_back("in" + num(k) + " + b");
    }
    for (size_t o = 0; o < s.outputs.size(); ++o) args.push_back("buf" + num(o));
    p.line("seg(", join(args), ");");
    for (size_t o = 0; o < s.outputs.size(); ++o)
      p.line("::hf::fusion::stream_copy(out", o, " + b, buf", o, ", n * sizeof(buf", o, "[0]));");
  }
  p.line("::hf::fusion::stream_fence();");
  p.line("return;");
}

// range(args, begin, end[, red][, x<k>...]): flat elements [begin, end). Inputs from
// `passed` on are scalars passed as arguments (a row-stage phase's row values), not loaded.
// With accumulates_in_registers: range_acc(args, begin, end[, x<k>...]) returns the reduce
// of [begin, end), one leaf of the reduce tree (so one segment).
void print_range(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info, size_t passed,
                 int output_input) {
  const int R = s.rank;
  const bool acc = accumulates_in_registers(s, info);
  std::string sig = acc ? std::string("static ") + compute_type(info.acc) + " range_acc("
                        : std::string("static void range(");
  sig += "const ::hf::fusion::KernelArgs* args, ::hf::i64 begin, ::hf::i64 end";
  if (s.reduce && !acc) sig += std::string(", ") + compute_type(info.acc) + "* red";
  for (size_t k = passed; k < s.inputs.size(); ++k)
    sig += std::string(", const ") + storage_type(s.inputs[k].dtype) + " x" + num(k);
  auto f = p.block(sig, ")");
  if (acc)
    p.line("if (begin >= end) return ", reduce_op(s.reduce->mode), "::identity<",
           compute_type(info.acc), ">();");
  else
    p.line("if (begin >= end) return;");
  for (size_t k = 0; k < passed; ++k) {
    if (static_cast<int>(k) == output_input) continue;
    const std::string S = storage_type(s.inputs[k].dtype);
    const std::string cast = "static_cast<const " + S + "*>(args->in[" + num(k) + "])";
    if (info.input[k] == InputUse::Scalar)
      p.line("const ", S, " x", k, " = ", cast, "[0];");
    else if (info.input[k] != InputUse::Unused)
      p.line("const ", S, "* in", k, " = ", cast, ";");
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (s.outputs[o].reduced) continue;
    const std::string S = storage_type(s.outputs[o].dtype);
    p.line(S, "* out", o, " = static_cast<", S, "*>(args->out[", o, "]);");
  }
  // Arguments of seg for a segment starting at flat index i.
  std::vector<std::string> args = {info.walk ? "n" : "end - begin"};
  const std::string i = info.walk ? "i" : "begin";
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    if (static_cast<int>(k) == output_input) continue;
    switch (info.input[k]) {
      case InputUse::Unused:
        break;
      case InputUse::Scalar:
      case InputUse::Invariant:
        args.push_back("x" + num(k));
        break;
      case InputUse::Dense:
        args.push_back("in" + num(k) + " + " + i);
        break;
      case InputUse::Strided:
        args.push_back("in" + num(k) + " + o" + num(k));
        args.push_back("st" + num(k) + "[" + std::to_string(R - 1) + "]");
        break;
    }
  }
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (!s.outputs[o].reduced) args.push_back("out" + num(o) + " + " + i);
  if (s.reduce && !acc) args.push_back(info.walk ? "red + (i - begin)" : "red");
  const std::string call = acc ? "return seg_acc" : "seg";
  if (!info.walk) {
    // (Not when it reads the output: the output is in cache, written by the phase before.)
    if (!s.reduce && output_input < 0) print_streaming_range(p, s, info);
    p.line(call, "(", join(args), ");");
    return;
  }

  p.line("const ::hf::i64* shape = args->shape;");
  const uint32_t all_dims = R >= 32 ? ~0u : (1u << R) - 1;
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (info.input[k] == InputUse::Strided || (info.input[k] == InputUse::Invariant &&
                                               (s.inputs[k].broadcast_mask & all_dims) != all_dims))
      p.line("const ::hf::i64* st", k, " = args->in_strides[", k, "];");
  p.line("::hf::i64 idx[", R, "];");
  p.line("::hf::i64 rest = begin;");
  {
    auto un = p.block("for (int d = ", R - 1, "; d >= 0; --d)");
    p.line("idx[d] = rest % shape[d];");
    p.line("rest /= shape[d];");
  }
  const std::string last = std::to_string(R - 1);
  std::optional<SourcePrinter::Block> loop;
  if (acc) {
    p.line("// One segment: a leaf of the reduce tree lies within one innermost row.");
    p.line("const ::hf::i64 i = begin;");
    p.line("const ::hf::i64 n = end - begin;");
  } else {
    p.line("// Segments along the innermost dimension; the N-d index is carried, not recomputed.");
    loop.emplace(p.block("for (::hf::i64 i = begin; i < end;)"));
    p.line("const ::hf::i64 avail = shape[", last, "] - idx[", last, "];");
    p.line("const ::hf::i64 n = avail < end - i ? avail : end - i;");
  }
  std::vector<std::string> contiguous;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const InputUse u = info.input[k];
    if (u != InputUse::Strided && u != InputUse::Invariant) continue;
    std::vector<std::string> terms;
    for (int d = 0; d < R; ++d)
      if (!((s.inputs[k].broadcast_mask >> d) & 1u))
        terms.push_back("idx[" + std::to_string(d) + "] * st" + num(k) + "[" + std::to_string(d) +
                        "]");
    p.line("const ::hf::i64 o", k, " = ", terms.empty() ? "0" : join(terms, " + "), ";");
    if (u == InputUse::Invariant)
      p.line("const ", storage_type(s.inputs[k].dtype), " x", k, " = in", k, "[o", k, "];");
    else
      contiguous.push_back("st" + num(k) + "[" + last + "] == 1");
  }
  if (info.inner_stride) {
    p.line("if (", join(contiguous, " && "), ")");
    p.line("  ", call, "<true>(", join(args), ");");
    p.line("else");
    p.line("  ", call, "<false>(", join(args), ");");
  } else {
    p.line(call, "(", join(args), ");");
  }
  if (acc) return;
  p.line("i += n;");
  p.line("idx[", last, "] += n;");
  p.line("for (int d = ", last, "; d > 0 && idx[d] == shape[d]; --d) {");
  p.line("  idx[d] = 0;");
  p.line("  ++idx[d - 1];");
  p.line("}");
}

void print_entry(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info,
                 const std::string& name) {
  const std::string ns = "::hf_generated::" + name;
  auto f = p.block("extern \"C\" void ", name,
                   "(const ::hf::fusion::KernelArgs* args, long long begin, long long end)");
  if (!s.reduce) {
    p.line(ns, "::range(args, begin, end);");
    return;
  }
  const SpecReduce& r = *s.reduce;
  const std::string A = compute_type(info.acc);
  const DType rd = s.exprs[static_cast<size_t>(r.expr)].dtype;
  const bool in_registers = accumulates_in_registers(s, info);
  p.line("// [begin, end) are rows of row_len elements; each is reduced by the pairwise tree of");
  p.line(in_registers ? "// the unfused reduce, its leaves accumulated as they are computed."
                      : "// the unfused reduce, its leaves computed into `red` first.");
  p.line("using Op = ", reduce_op(r.mode), ";");
  p.line("const ::hf::i64 len = args->row_len;");
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    if (!s.outputs[o].reduced) continue;
    const std::string S = storage_type(s.outputs[o].dtype);
    p.line(S, "* out", o, " = static_cast<", S, "*>(args->out[", o, "]);");
  }
  if (!in_registers) p.line("alignas(64) ", A, " red[::hf::fusion::gen::kReduceLeaf];");
  auto rows = p.block("for (::hf::i64 row = begin; row < end; ++row)");
  p.line("const ::hf::i64 base = row * len;");
  {
    auto tree = p.block_with_tail(");", A, " acc = ::hf::fusion::gen::reduce_tree<Op, ", A,
                                  ">(0, len, [&](::hf::i64 r0, ::hf::i64 n)");
    if (in_registers) {
      p.line("return ", ns, "::range_acc(args, base + r0, base + r0 + n);");
    } else {
      p.line(ns, "::range(args, base + r0, base + r0 + n, red);");
      p.line("return ::hf::fusion::gen::leaf_reduce<Op>(red, n);");
    }
  }
  if (r.mode == ReduceMode::MEAN) p.line("acc = ::hf::fusion::gen::mean_of(acc, len);");
  p.line("const ", compute_type(rd), " v = ", convert_value("acc", info.acc, rd), ";");
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (s.outputs[o].reduced)
      p.line("out", o, "[row] = ", store_value("v", rd, s.outputs[o].dtype), ";");
}

// eval, seg and range of one pass (output_input: print_seg's).
void print_pass(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info, size_t passed,
                int output_input = -1) {
  print_eval(p, s, info);
  p.blank();
  print_seg(p, s, info, output_input);
  p.blank();
  print_range(p, s, info, passed, output_input);
}

// A row-stage kernel (fusion/row_stages.h): each phase is a pass in namespace s<j>; the
// entry walks the rows that start in [begin, end), reducing phase by phase with the
// unfused reduce's pairwise tree and computing the row values in between.
void print_row_kernel(SourcePrinter& p, const UnitKernel& k, const SpecInfo& info) {
  const KernelSpec& s = k.spec;
  RowStagePlan plan = plan_row_stages(s, info.live);
  const bool term_in_output = keep_last_term_in_output(plan, s);
  const size_t n_in = s.inputs.size();
  std::vector<bool> in_registers(plan.phases.size());
  {
    auto ns = p.namespace_block("hf_generated::" + k.name);
    for (size_t j = 0; j < plan.phases.size(); ++j) {
      auto ph = p.namespace_block("s" + num(j));
      const KernelSpec& ps = plan.phases[j].spec;
      const SpecInfo pi = analyse(ps, static_cast<int>(ps.inputs.size()));
      in_registers[j] = accumulates_in_registers(ps, pi);
      const bool reads_output = term_in_output && j + 1 == plan.phases.size();
      print_pass(p, ps, pi, n_in + (reads_output ? 1 : 0),
                 reads_output ? static_cast<int>(n_in) : -1);
    }
  }
  p.blank();
  const std::string ns = "::hf_generated::" + k.name;
  auto f = p.block("extern \"C\" void ", k.name,
                   "(const ::hf::fusion::KernelArgs* args, long long begin, long long end)");
  p.line("// [begin, end) are flat element indices; this call does the rows starting in them.");
  p.line("::hf::i64 len = 1;");
  p.line("for (int d = ", s.row_axis, "; d < ", s.rank, "; ++d) len *= args->shape[d];");
  p.line("if (len <= 0) return;");
  for (int c : plan.row_constants) {
    const SpecExpr& e = s.exprs[static_cast<size_t>(c)];
    if (e.kind == ExprKind::Input)
      p.line("const ", storage_type(s.inputs[static_cast<size_t>(e.input)].dtype), " x", e.input,
             " = static_cast<const ", storage_type(s.inputs[static_cast<size_t>(e.input)].dtype),
             "*>(args->in[", e.input, "])[0];");
    print_row_value(p, s, c);
  }
  for (size_t j = 0; j < plan.phases.size(); ++j)
    if (plan.phases[j].row_reduce >= 0 && !in_registers[j]) {
      p.line("alignas(64) float red[::hf::fusion::gen::kReduceLeaf];");
      break;
    }
  auto rows = p.block("for (::hf::i64 row = (begin + len - 1) / len; row * len < end; ++row)");
  p.line("const ::hf::i64 base = row * len;");
  print_row_input_loads(
      p, s, plan.row_inputs, "args->shape",
      [](int k, int d) { return "args->in_strides[" + num(k) + "][" + num(d) + "]"; },
      [&](int k) {
        return std::string("static_cast<const ") +
               storage_type(s.inputs[static_cast<size_t>(k)].dtype) + "*>(args->in[" + num(k) +
               "])";
      });
  for (size_t j = 0; j < plan.phases.size(); ++j) {
    const RowPhase& ph = plan.phases[j];
    for (int i : plan.row_exprs_before[j]) print_row_value(p, s, i);
    std::string extra;
    for (int v : ph.row_values) extra += ", e" + num(v);
    const std::string call = ns + "::s" + num(j) + "::range(args, ";
    if (ph.row_reduce < 0) {
      p.line(call, "base, base + len", extra, ");");
      continue;
    }
    const SpecExpr& r = s.exprs[static_cast<size_t>(ph.row_reduce)];
    const std::string a = "a" + num(ph.row_reduce);
    {
      auto tree = p.block_with_tail(");", "float ", a, " = ::hf::fusion::gen::reduce_tree<",
                                    reduce_op(r.reduce_mode),
                                    ", float>(0, len, [&](::hf::i64 r0, ::hf::i64 n)");
      if (in_registers[j]) {
        p.line("return ", ns, "::s", j, "::range_acc(args, base + r0, base + r0 + n", extra, ");");
      } else {
        p.line(call, "base + r0, base + r0 + n, red", extra, ");");
        p.line("return ::hf::fusion::gen::leaf_reduce<", reduce_op(r.reduce_mode), ">(red, n);");
      }
    }
    if (r.reduce_mode == ReduceMode::MEAN)
      p.line(a, " = ::hf::fusion::gen::mean_of(", a, ", len);");
    p.line("const float e", ph.row_reduce, " = ", convert_value(a, DType::F32, r.dtype), ";");
  }
}

void print_kernel(SourcePrinter& p, const UnitKernel& k) {
  const SpecInfo info = analyse(k.spec);
  if (k.spec.row_stages()) return print_row_kernel(p, k, info);
  {
    auto ns = p.namespace_block("hf_generated::" + k.name);
    print_pass(p, k.spec, info, k.spec.inputs.size());
  }
  p.blank();
  print_entry(p, k.spec, info, k.name);
}

void print_includes(SourcePrinter& p) {
  p.line("#include \"fusion/codegen_support.h\"");
  p.line("#include \"fusion/host_stream.h\"");
  p.line("#include \"fusion/kernel_abi.h\"");
}

}  // namespace

std::string generate_cpp(const KernelSpec& spec, const std::string& kernel_name,
                         const std::string& origin_comment) {
  check_kernel_name(kernel_name);
  SourcePrinter p;
  p.raw(banner(spec, kernel_name, origin_comment, "C++"));
  print_includes(p);
  p.blank();
  print_kernel(p, UnitKernel{spec, kernel_name, origin_comment});
  return p.str();
}

std::string generate_cpp_unit(const std::vector<UnitKernel>& kernels) {
  std::set<std::string> names;
  for (const UnitKernel& k : kernels) {
    check_kernel_name(k.name);
    if (!names.insert(k.name).second) fail("kernel name " + k.name + " appears twice in one unit");
  }
  SourcePrinter p;
  p.line("// hotfuse: ", kernels.size(),
         " fused kernels for the host compiler, one translation unit.");
  print_includes(p);
  for (const UnitKernel& k : kernels) {
    p.blank();
    p.raw(banner(k.spec, k.name, k.origin, "C++"));
    print_kernel(p, k);
  }
  return p.str();
}

std::string generate_cpp_unit(const std::vector<std::pair<KernelSpec, std::string>>& kernels) {
  std::vector<UnitKernel> units;
  units.reserve(kernels.size());
  for (const auto& [spec, name] : kernels) units.push_back(UnitKernel{spec, name, ""});
  return generate_cpp_unit(units);
}

}  // namespace hf::fusion
