// The CUDA generator. The per-element code (eval) is the C++ generator's; what differs is
// the parallel structure around it:
//   flat       grid-stride over vectors of vector_width elements (16-byte accesses when
//              aligned), then a scalar grid-stride tail
//   strided    grid-stride over elements, the N-d index unravelled per element in int
//              arithmetic when every offset fits (fits32), else in long long
//   reduce     a warp per short row, a block per long row; shuffles + shared memory
//   row stages a warp per short row, a block per long one; per phase (fusion/row_stages.h)
//              an at() and a warp or block reduction every thread of the row receives,
//              the per-row math in every one of them
#include "fusion/codegen_cuda.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "fusion/codegen_common.h"
#include "fusion/row_stages.h"
#include "fusion/source_printer.h"

namespace hf::fusion {
namespace {

using namespace codegen;

bool strided(const SpecInput& in) {
  return !in.dense && !in.scalar;
}

// Strided and Invariant inputs: read through an offset computed from the N-d index.
bool walked(InputUse u) {
  return u == InputUse::Strided || u == InputUse::Invariant;
}

void print_params(SourcePrinter& p, const KernelSpec& s, const CudaParamLayout& layout) {
  p.line("// The kernel's only parameter; pack_cuda_params (fusion/codegen_cuda.h) fills it.");
  auto st = p.block_with_tail(";", "struct Params");
  for (const CudaParam& f : layout.fields) {
    std::string decl;
    switch (f.kind) {
      case CudaParam::Kind::Input:
        decl = std::string("const ") + storage_type(s.inputs[static_cast<size_t>(f.index)].dtype) +
               "* " + f.name;
        break;
      case CudaParam::Kind::Output:
        decl = std::string(storage_type(s.outputs[static_cast<size_t>(f.index)].dtype)) + "* " +
               f.name;
        break;
      case CudaParam::Kind::Shape:
      case CudaParam::Kind::InStrides:
        decl = "long long " + f.name + "[" + num(s.rank) + "]";
        break;
      default:
        decl = "long long " + f.name;
        break;
    }
    p.line(decl, ";  // offset ", f.offset);
  }
}

// eval's arguments for element i (offsets o<k> for walked inputs, x<k> for scalars).
std::vector<std::string> eval_args(const KernelSpec& s, const SpecInfo& info,
                                   const std::string& i) {
  std::vector<std::string> args;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const std::string ks = std::to_string(k);
    switch (info.input[k]) {
      case InputUse::Unused:
        break;
      case InputUse::Scalar:
        args.push_back("x" + ks);
        break;
      case InputUse::Dense:
        args.push_back("p.in" + ks + "[" + i + "]");
        break;
      case InputUse::Strided:
      case InputUse::Invariant:
        args.push_back("p.in" + ks + "[o" + ks + "]");
        break;
    }
  }
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (!s.outputs[o].reduced) args.push_back("p.out" + std::to_string(o) + "[" + i + "]");
  if (s.reduce) args.push_back("r");
  return args;
}

// Scalar inputs, loaded once per thread: declarations, and the parameter list they form.
void print_scalar_loads(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (info.input[k] == InputUse::Scalar)
      p.line("const ", storage_type(s.inputs[k].dtype), " x", k, " = p.in", k, "[0];");
}
std::vector<std::string> scalar_names(const KernelSpec& s, const SpecInfo& info, bool typed) {
  std::vector<std::string> v;
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (info.input[k] == InputUse::Scalar)
      v.push_back((typed ? std::string("const ") + storage_type(s.inputs[k].dtype) + " " : "") +
                  "x" + std::to_string(k));
  return v;
}
// ", x0, x2": the scalar inputs as trailing arguments.
std::string scalar_args(const KernelSpec& s, const SpecInfo& info) {
  const std::vector<std::string> xs = scalar_names(s, info, false);
  return xs.empty() ? "" : ", " + join(xs);
}

// at<I>(p, i, scalars..., [r]): element i of the iteration space.
void print_at(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  const int R = s.rank;
  std::vector<std::string> params = {"const Params& p", "I i"};
  for (const std::string& x : scalar_names(s, info, true)) params.push_back(x);
  if (s.reduce) params.push_back(std::string(compute_type(info.acc)) + "& r");
  p.line("// Element i; I is int when every index and offset fits (fits32), else long long.");
  p.line("template <class I>");
  auto f = p.block("static __device__ __forceinline__ void at(", join(params), ")");
  // Dimensions some walked input moves along; outer ones need no division.
  std::vector<bool> used(static_cast<size_t>(R), false);
  int dmin = R;
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (walked(info.input[k]))
      for (int d = 0; d < R; ++d)
        if (!((s.inputs[k].broadcast_mask >> d) & 1u)) {
          used[static_cast<size_t>(d)] = true;
          dmin = std::min(dmin, d);
        }
  if (dmin < R) p.line("I rest = i;");
  for (int d = R - 1; d >= dmin; --d) {
    const std::string shape = "(I)p.shape[" + num(d) + "]";
    if (used[static_cast<size_t>(d)])
      p.line("const I c", d, " = ", d == 0 ? "rest" : "rest % " + shape, ";");
    if (d > dmin) p.line("rest /= ", shape, ";");
  }
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    if (!walked(info.input[k])) continue;
    std::vector<std::string> terms;
    for (int d = 0; d < R; ++d)
      if (!((s.inputs[k].broadcast_mask >> d) & 1u))
        terms.push_back("c" + num(d) + " * (I)p.in" + std::to_string(k) + "_strides[" + num(d) +
                        "]");
    p.line("const I o", k, " = ", terms.empty() ? "0" : join(terms, " + "), ";");
  }
  p.line("eval(", join(eval_args(s, info, "i")), ");");
}

void print_fits32(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  p.line("// Whether the grid-stride index and every input offset stay below 2^31.");
  auto f =
      p.block("static __device__ __forceinline__ bool fits32(const Params& p, long long step)");
  p.line("if (p.numel + step > 0x7fffffffll) return false;");
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    if (!walked(info.input[k])) continue;
    const std::string st = "p.in" + std::to_string(k) + "_strides[d]";
    auto b = p.block();
    p.line("long long span = 0;");
    p.line("for (int d = 0; d < ", s.rank, "; ++d) span += (p.shape[d] - 1) * (", st, " < 0 ? -",
           st, " : ", st, ");");
    p.line("if (span > 0x7fffffffll) return false;");
  }
  p.line("return true;");
}

// `extern "C" __global__ void <name>(Params p) {` with the kernel's namespace in scope; with
// grid_stride, the thread's first index t and the grid's step.
SourcePrinter::Block print_entry_head(SourcePrinter& p, const std::string& name, bool grid_stride) {
  auto f = p.block("extern \"C\" __global__ void ", name, "(::hf_generated::", name, "::Params p)");
  p.line("using namespace ::hf_generated::", name, ";");
  if (grid_stride) {
    p.line("const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
    p.line("const long long step = (long long)gridDim.x * blockDim.x;");
  }
  return f;
}

void print_flat_entry(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info,
                      const std::string& name) {
  const int V = cuda_vector_width(s);
  auto f = print_entry_head(p, name, true);
  p.line("const long long n = p.numel;");
  print_scalar_loads(p, s, info);
  // Vector types and alignment conditions of every per-element stream.
  std::vector<std::string> checks, vargs;
  std::vector<std::pair<std::string, std::string>> types;  // alias, storage type
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const std::string ks = std::to_string(k);
    if (info.input[k] == InputUse::Scalar) vargs.push_back("x" + ks);
    if (info.input[k] != InputUse::Dense) continue;
    const DType t = s.inputs[k].dtype;
    types.emplace_back("VI" + ks, storage_type(t));
    checks.push_back("::hf::fusion::gen::aligned(p.in" + ks + ", " +
                     num(V * static_cast<long long>(dtype_size(t))) + ")");
    vargs.push_back("a" + ks + ".v[u]");
  }
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    const std::string os = std::to_string(o);
    const DType t = s.outputs[o].dtype;
    types.emplace_back("VO" + os, storage_type(t));
    checks.push_back("::hf::fusion::gen::aligned(p.out" + os + ", " +
                     num(V * static_cast<long long>(dtype_size(t))) + ")");
    vargs.push_back("b" + os + ".v[u]");
  }
  p.line("long long tail = 0;");
  {
    p.line("// ", V, " elements per step, each stream moved in one access when it is aligned.");
    auto vec = p.block("if (", join(checks, " && "), ")");
    for (const auto& [alias, type] : types)
      p.line("using ", alias, " = ::hf::fusion::gen::Vec<", type, ", ", V, ">;");
    p.line("const long long nv = n / ", V, ";");
    {
      auto loop = p.block("for (long long v = t; v < nv; v += step)");
      for (size_t k = 0; k < s.inputs.size(); ++k)
        if (info.input[k] == InputUse::Dense)
          p.line("const VI", k, " a", k, " = reinterpret_cast<const VI", k, "*>(p.in", k, ")[v];");
      for (size_t o = 0; o < s.outputs.size(); ++o) p.line("VO", o, " b", o, ";");
      p.line("#pragma unroll");
      p.line("for (int u = 0; u < ", V, "; ++u) eval(", join(vargs), ");");
      for (size_t o = 0; o < s.outputs.size(); ++o)
        p.line("reinterpret_cast<VO", o, "*>(p.out", o, ")[v] = b", o, ";");
    }
    p.line("tail = nv * ", V, ";");
  }
  p.line("for (long long i = tail + t; i < n; i += step) eval(", join(eval_args(s, info, "i")),
         ");");
}

void print_strided_entry(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info,
                         const std::string& name) {
  auto f = print_entry_head(p, name, true);
  print_scalar_loads(p, s, info);
  const std::string tail = scalar_args(s, info);
  p.line("if (fits32(p, step))");
  p.line("  for (int i = (int)t; i < (int)p.numel; i += (int)step) at<int>(p, i", tail, ");");
  p.line("else");
  p.line("  for (long long i = t; i < p.numel; i += step) at<long long>(p, i", tail, ");");
}

// rows<I>(p, scalars...): the rows of this block (I as in at()).
void print_rows(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  const SpecReduce& r = *s.reduce;
  const std::string A = compute_type(info.acc);
  std::vector<std::string> params = {"const Params& p"};
  for (const std::string& x : scalar_names(s, info, true)) params.push_back(x);
  const std::string at_call = "at<I>(p, (I)(row * len + j)" + scalar_args(s, info) + ", x);";
  p.line("template <class I>");
  auto f = p.block("static __device__ __forceinline__ void rows(", join(params), ")");
  p.line("using Op = ", reduce_op(r.mode), ";");
  p.line("__shared__ ", A, " scratch[32];");
  p.line("const long long len = p.row_len;");
  auto branch = p.block("if (len <= ", kCudaWarpRowMax, ")");
  p.line("// Short rows: a warp each, reduced by shuffles.");
  p.line("const int lane = threadIdx.x & 31;");
  p.line("const long long warps = blockDim.x >> 5;");
  {
    auto rows = p.block(
        "for (long long row = blockIdx.x * warps + (threadIdx.x >> 5); row < p.rows; row += "
        "gridDim.x * warps)");
    p.line(A, " acc = Op::identity<", A, ">();");
    {
      auto loop = p.block("for (long long j = lane; j < len; j += 32)");
      p.line(A, " x;");
      p.line(at_call);
      p.line("acc = Op::step(acc, x);");
    }
    p.line("acc = ::hf::fusion::gen::warp_reduce<Op>(acc);");
    p.line("if (lane == 0) finish(p, row, acc);");
  }
  p.next_branch("else");
  p.line("// Long rows: a block each. Each thread sums a strided share of the row sequentially.");
  auto rows = p.block("for (long long row = blockIdx.x; row < p.rows; row += gridDim.x)");
  p.line(A, " acc = Op::identity<", A, ">();");
  {
    auto loop = p.block("for (long long j = threadIdx.x; j < len; j += blockDim.x)");
    p.line(A, " x;");
    p.line(at_call);
    p.line("acc = Op::step(acc, x);");
  }
  p.line("acc = ::hf::fusion::gen::block_reduce<Op>(acc, scratch);");
  p.line("if (threadIdx.x == 0) finish(p, row, acc);");
}

void print_reduce_entry(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info,
                        const std::string& name) {
  auto f = print_entry_head(p, name, false);
  print_scalar_loads(p, s, info);
  const std::string tail = scalar_args(s, info);
  if (!info.walk) {
    p.line("rows<long long>(p", tail, ");");
    return;
  }
  p.line("if (fits32(p, 0))");
  p.line("  rows<int>(p", tail, ");");
  p.line("else");
  p.line("  rows<long long>(p", tail, ");");
}

// finish(p, row, acc): the reduced outputs of one row.
void print_finish(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info) {
  const SpecReduce& r = *s.reduce;
  const DType rd = s.exprs[static_cast<size_t>(r.expr)].dtype;
  const std::string A = compute_type(info.acc);
  auto f = p.block("static __device__ __forceinline__ void finish(const Params& p, long long row, ",
                   A, " acc)");
  if (r.mode == ReduceMode::MEAN) p.line("acc = ::hf::fusion::gen::mean_of(acc, p.row_len);");
  p.line("const ", compute_type(rd), " v = ", convert_value("acc", info.acc, rd), ";");
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (s.outputs[o].reduced)
      p.line("p.out", o, "[row] = ", store_value("v", rd, s.outputs[o].dtype), ";");
}

// A row-stage kernel (fusion/row_stages.h): rows of at most kCudaWarpRowStagesMax elements
// a warp each (the reductions shuffles only: many rows in flight, no barrier), longer rows a
// block each; grid-strided. Each phase is at<I>() in namespace s<j>; reducing phases end in a
// reduction every thread of the row's warp or block receives, so the per-row math runs
// (redundantly, it is scalar) in every one of them.
void print_row_stages(SourcePrinter& p, const KernelSpec& s, const SpecInfo& info,
                      const RowStagePlan& plan) {
  const size_t n_in = s.inputs.size();
  std::vector<SpecInfo> infos;
  for (const RowPhase& ph : plan.phases) {
    infos.push_back(analyse(ph.spec, static_cast<int>(ph.spec.inputs.size())));
    p.blank();
    auto ns = p.namespace_block("s" + std::to_string(infos.size() - 1));
    print_eval(p, ph.spec, infos.back());
    p.blank();
    print_at(p, ph.spec, infos.back());
  }
  if (info.walk) {  // print_reduce_entry calls it only then
    p.blank();
    print_fits32(p, s, info);
  }
  p.blank();
  std::vector<std::string> params = {"const Params& p"};
  for (const std::string& x : scalar_names(s, info, true)) params.push_back(x);
  p.line("template <class I>");
  auto f = p.block("static __device__ __forceinline__ void rows(", join(params), ")");
  p.line("__shared__ float scratch[32];");
  p.line("long long len = 1;");
  p.line("for (int d = ", s.row_axis, "; d < ", s.rank, "; ++d) len *= p.shape[d];");
  p.line("if (len <= 0) return;");
  p.line("const long long n_rows = p.numel / len;");
  for (int c : plan.row_constants) print_row_value(p, s, c);
  // One row's phases: `first`/`step` walk the row's elements among the threads sharing it,
  // `reduce(a)` gives all of them the reduction of their partial values.
  auto row_body =
      [&](const std::string& first, const std::string& step,
          const std::function<std::string(const std::string&, const std::string&)>& reduce) {
        print_row_input_loads(
            p, s, plan.row_inputs, "p.shape",
            [](int k, int d) {
              return "p.in" + std::to_string(k) + "_strides[" + std::to_string(d) + "]";
            },
            [](int k) { return "p.in" + std::to_string(k); });
        for (size_t j = 0; j < plan.phases.size(); ++j) {
          const RowPhase& ph = plan.phases[j];
          for (int i : plan.row_exprs_before[j]) print_row_value(p, s, i);
          std::vector<std::string> args = {"p", "(I)(row * len + j)"};
          for (size_t k = 0; k < ph.spec.inputs.size(); ++k)
            if (infos[j].input[k] == InputUse::Scalar)
              args.push_back(k < n_in ? "x" + std::to_string(k)
                                      : "e" + std::to_string(ph.row_values[k - n_in]));
          const std::string at = "s" + std::to_string(j) + "::at<I>(";
          const std::string loop = "for (long long j = " + first + "; j < len; j += " + step + ")";
          if (ph.row_reduce < 0) {
            p.line(loop, " ", at, join(args), ");");
            continue;
          }
          const SpecExpr& r = s.exprs[static_cast<size_t>(ph.row_reduce)];
          const std::string a = "a" + std::to_string(ph.row_reduce);
          const std::string op = reduce_op(r.reduce_mode);
          p.line("float ", a, " = ", op, "::identity<float>();");
          {
            auto body = p.block(loop);
            p.line("float x;");
            args.push_back("x");
            p.line(at, join(args), ");");
            p.line(a, " = ", op, "::step(", a, ", x);");
          }
          p.line(a, " = ", reduce(op, a), ";");
          if (r.reduce_mode == ReduceMode::MEAN)
            p.line(a, " = ::hf::fusion::gen::mean_of(", a, ", len);");
          p.line("const float e", ph.row_reduce, " = ", convert_value(a, DType::F32, r.dtype), ";");
        }
      };
  auto branch = p.block("if (len <= ", kCudaWarpRowStagesMax, ")");
  p.line("const int lane = threadIdx.x & 31;");
  p.line("const long long warps = blockDim.x >> 5;");
  {
    // Warp-uniform: every lane of a warp takes the same rows, so the shuffles see all 32.
    auto rows = p.block(
        "for (long long row = blockIdx.x * warps + (threadIdx.x >> 5); row < n_rows; row += "
        "gridDim.x * warps)");
    row_body("lane", "32", [](const std::string& op, const std::string& a) {
      return "::hf::fusion::gen::warp_reduce<" + op + ">(" + a + ")";
    });
  }
  p.next_branch("else");
  auto rows = p.block("for (long long row = blockIdx.x; row < n_rows; row += gridDim.x)");
  row_body("threadIdx.x", "blockDim.x", [](const std::string& op, const std::string& a) {
    return "::hf::fusion::gen::block_reduce<" + op + ">(" + a + ", scratch)";
  });
}

}  // namespace

CudaParamLayout cuda_param_layout(const KernelSpec& spec) {
  CudaParamLayout l;
  auto add = [&l](CudaParam::Kind kind, int index, std::string name, size_t size) {
    l.fields.push_back(CudaParam{kind, index, std::move(name), l.size, size});
    l.size += size;
  };
  const size_t R = static_cast<size_t>(spec.rank > 0 ? spec.rank : 0);
  for (size_t k = 0; k < spec.inputs.size(); ++k)
    add(CudaParam::Kind::Input, static_cast<int>(k), "in" + std::to_string(k), 8);
  for (size_t o = 0; o < spec.outputs.size(); ++o)
    add(CudaParam::Kind::Output, static_cast<int>(o), "out" + std::to_string(o), 8);
  if (!spec.flat()) {
    add(CudaParam::Kind::Shape, -1, "shape", 8 * R);
    for (size_t k = 0; k < spec.inputs.size(); ++k)
      if (strided(spec.inputs[k]))
        add(CudaParam::Kind::InStrides, static_cast<int>(k), "in" + std::to_string(k) + "_strides",
            8 * R);
  }
  add(CudaParam::Kind::Numel, -1, "numel", 8);
  if (spec.reduce) {
    add(CudaParam::Kind::Rows, -1, "rows", 8);
    add(CudaParam::Kind::RowLen, -1, "row_len", 8);
  }
  return l;
}

std::vector<unsigned char> pack_cuda_params(const KernelSpec& spec, const KernelArgs& args) {
  const CudaParamLayout l = cuda_param_layout(spec);
  std::vector<unsigned char> buf(l.size);
  for (const CudaParam& f : l.fields) {
    const void* src = nullptr;
    switch (f.kind) {
      case CudaParam::Kind::Input:
        src = &args.in[f.index];
        break;
      case CudaParam::Kind::Output:
        src = &args.out[f.index];
        break;
      case CudaParam::Kind::Shape:
        src = args.shape;
        break;
      case CudaParam::Kind::InStrides:
        src = args.in_strides[f.index];
        break;
      case CudaParam::Kind::Numel:
        src = &args.numel;
        break;
      case CudaParam::Kind::Rows:
        src = &args.rows;
        break;
      case CudaParam::Kind::RowLen:
        src = &args.row_len;
        break;
    }
    std::memcpy(buf.data() + f.offset, src, f.size);
  }
  return buf;
}

int cuda_vector_width(const KernelSpec& spec) {
  size_t widest = 1;
  for (const SpecInput& in : spec.inputs)
    if (!in.scalar) widest = std::max(widest, dtype_size(in.dtype));
  for (const SpecOutput& out : spec.outputs) widest = std::max(widest, dtype_size(out.dtype));
  return static_cast<int>(16 / widest);
}

CudaLaunch cuda_launch_config(const KernelSpec& spec, const KernelArgs& args, int sm_count) {
  const long long cap = static_cast<long long>(std::max(sm_count, 1)) * 32;
  long long blocks;
  if (spec.row_stages()) {  // a warp per short row, a block per long one
    long long len = 1;
    for (int d = spec.row_axis; d < spec.rank; ++d) len *= args.shape[d];
    if (len <= 0 || args.numel <= 0) return {0, kCudaBlock};
    const long long rows = args.numel / len;
    blocks = len <= kCudaWarpRowStagesMax ? (rows + kCudaBlock / 32 - 1) / (kCudaBlock / 32) : rows;
  } else if (spec.reduce) {
    if (args.rows <= 0) return {0, kCudaBlock};
    blocks = args.row_len <= kCudaWarpRowMax ? (args.rows + kCudaBlock / 32 - 1) / (kCudaBlock / 32)
                                             : args.rows;
  } else {
    if (args.numel <= 0) return {0, kCudaBlock};
    const long long per_block =
        static_cast<long long>(kCudaBlock) * (spec.flat() ? cuda_vector_width(spec) : 1);
    blocks = (args.numel + per_block - 1) / per_block;
  }
  return {static_cast<unsigned>(std::min(blocks, cap)), kCudaBlock};
}

std::string generate_cuda(const KernelSpec& spec, const std::string& kernel_name,
                          const std::string& origin_comment) {
  check_kernel_name(kernel_name);
  const SpecInfo info = analyse(spec);
  SourcePrinter p;
  p.raw(banner(spec, kernel_name, origin_comment, "CUDA"));
  p.line("#include \"fusion/codegen_support.h\"");
  p.blank();
  {
    auto ns = p.namespace_block("hf_generated::" + kernel_name);
    print_params(p, spec, cuda_param_layout(spec));
    if (spec.row_stages()) {
      print_row_stages(p, spec, info, plan_row_stages(spec, info.live));
    } else {
      p.blank();
      print_eval(p, spec, info);
    }
    if (!spec.flat() && !spec.row_stages()) {
      p.blank();
      print_at(p, spec, info);
      if (info.walk || !spec.reduce) {
        p.blank();
        print_fits32(p, spec, info);
      }
    }
    if (spec.reduce) {
      p.blank();
      print_finish(p, spec, info);
      p.blank();
      print_rows(p, spec, info);
    }
  }
  p.blank();
  if (spec.reduce || spec.row_stages())
    print_reduce_entry(p, spec, info, kernel_name);
  else if (spec.flat())
    print_flat_entry(p, spec, info, kernel_name);
  else
    print_strided_entry(p, spec, info, kernel_name);
  return p.str();
}

}  // namespace hf::fusion
