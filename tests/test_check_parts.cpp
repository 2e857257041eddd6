// A region's check in blocks of rows (session/check_parts.h): which regions are cut, along
// which axis and into how many blocks; that the blocks run on their rows of the live-ins
// give the whole run's live-outs; and that a session whose check would take more than its
// slice validates the epilogue in blocks and keeps it. A generated kernel a block at a time
// (fusion/kernel_blocks.h): the blocks cover every row once, and a kernel run a block per
// run writes only its block and gives the whole run's live-outs, compiled and interpreted.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>

#include "fusion/detect.h"
#include "fusion/kernel_blocks.h"
#include "fusion/region_spec.h"
#include "fusion/spec_interpreter.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "session/check_parts.h"
#include "session/fusing_backend.h"
#include "session/session.h"
#include "tests/support/fixed_machine.h"
#include "tests/support/graph_text.h"
#include "tests/support/jit_env.h"

namespace hf {
namespace {

// A constant of `shape` whose elements differ (so that a block read from the wrong rows
// or columns gives other numbers).
std::string constant(const std::string& name, const std::vector<int64_t>& shape) {
  std::string dims, values;
  int64_t n = 1;
  for (int64_t d : shape) {
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i)
    values += (i ? ", " : "") + std::to_string(((i * 37) % 101 - 50) * 0.002);
  return R"({"name": ")" + name + R"(", "op": "Constant", "attrs": {"dtype": "f32", "shape": [)" +
         dims + R"(], "value": [)" + values + "]}, \"inputs\": []}";
}

// relu(x) @ w + b + relu(r): the MatMul's epilogue reads a computed residual, so its check
// runs on kept values (not graph inputs), as in a transformer block.
Graph linear_residual(int64_t rows, int64_t k, int64_t n) {
  const std::string r = std::to_string(rows), ks = std::to_string(k), ns = std::to_string(n);
  return graph_text(R"({"name": "x", "dtype": "f32", "shape": [1, )" + r + ", " + ks + R"(]},
                  {"name": "r", "dtype": "f32", "shape": [1, )" +
                        r + ", " + ns + "]}",
                    constant("w", {k, n}) + "," + constant("b", {n}) + R"(,
    {"name": "hx", "op": "Elemwise", "mode": "RELU", "inputs": ["x"]},
    {"name": "hr", "op": "Elemwise", "mode": "RELU", "inputs": ["r"]},
    {"name": "mm", "op": "MatMul", "inputs": ["hx:0", "w:0"]},
    {"name": "bias", "op": "Elemwise", "mode": "ADD", "inputs": ["mm:0", "b:0"]},
    {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["bias:0", "hr:0"]},
    {"name": "act", "op": "Elemwise", "mode": "SIGMOID", "inputs": ["res:0"]})",
                    R"("act:0")");
}

const fusion::Region& epilogue_region(const Graph& g, const fusion::Detection& d) {
  for (const fusion::Region& r : d.regions)
    if (r.heavy) return r;
  throw Error("no epilogue region");
}

fusion::Detection detect(const Graph& g) {
  fusion::DetectOptions o;
  o.epilogues = true;
  return fusion::detect_regions(g, o);
}

TEST(CheckParts, CutsAMatMulEpilogueIntoBlocksOfItsRows) {
  const Graph g = linear_residual(48, 32, 40);
  const fusion::Detection d = detect(g);
  const fusion::RegionKernel k = fusion::build_region_kernel(g, epilogue_region(g, d));
  EXPECT_EQ(check_parts(g, k, 1).parts, 1);  // nothing wanted
  const CheckParts p = check_parts(g, k, 5);
  EXPECT_EQ(p.parts, 6);               // the smallest divisor of 48 from 5 on
  ASSERT_EQ(p.cut_shapes.size(), 2u);  // the MatMul's rows and the residual; w and b whole
  EXPECT_EQ(p.cut_shapes.at(*g.find_value("hx:0")), (Shape{1, 8, 32}));
  EXPECT_EQ(p.cut_shapes.at(*g.find_value("hr:0")), (Shape{1, 8, 40}));
  EXPECT_EQ(check_parts(g, k, 1000).parts, 48);  // at most one row a block
  EXPECT_EQ(check_parts(g, k, 7).parts, 8);
}

TEST(CheckParts, KeepsWholeWhatCannotBeCutIntoRows) {
  // One row: only the MatMul's columns are left, and they are its right operand's.
  const Graph one_row = linear_residual(1, 32, 40);
  const fusion::Detection d = detect(one_row);
  EXPECT_EQ(
      check_parts(one_row, fusion::build_region_kernel(one_row, epilogue_region(one_row, d)), 4)
          .parts,
      1);
  // A region that is not an epilogue (a compiled kernel is made for one shape).
  const Graph chain = graph_text(R"({"name": "x", "dtype": "f32", "shape": [64, 64]})",
                                 R"({"name": "a", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
       {"name": "b", "op": "Elemwise", "mode": "NEGATE", "inputs": ["a:0"]})",
                                 R"("b:0")");
  const fusion::Detection dc = detect(chain);
  ASSERT_EQ(dc.regions.size(), 1u);
  EXPECT_EQ(check_parts(chain, fusion::build_region_kernel(chain, dc.regions[0]), 4).parts, 1);
}

TEST(CheckParts, BlocksOnTheirRowsGiveTheWholeRunsLiveOuts) {
  const Graph g = linear_residual(48, 32, 40);
  const fusion::Detection d = detect(g);
  const fusion::Region& r = epilogue_region(g, d);
  const CheckParts p = check_parts(g, fusion::build_region_kernel(g, r), 4);
  ASSERT_EQ(p.parts, 4);
  const fusion::RegionGraph whole = fusion::region_graph(g, r, /*fused=*/true);
  const fusion::RegionGraph blocks = fusion::region_graph(g, r, /*fused=*/true, p.cut_shapes);
  ASSERT_EQ(whole.inputs, blocks.inputs);
  cpu::CpuBackend backend;
  const std::vector<HostTensor> in = random_inputs(whole.graph, 11);
  Executor all(whole.graph, backend), part(blocks.graph, backend);
  const TensorView want = all.run(views(in))[0];
  const int64_t n = want.numel() / p.parts;
  for (int b = 0; b < p.parts; ++b) {
    std::vector<TensorView> bound;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = blocks.graph.value(blocks.graph.inputs()[i]).shape;
      bound.push_back(contiguous_view(
          static_cast<char*>(in[i].view().data) + b * numel(s) * sizeof(float), DType::F32, s));
    }
    const TensorView got = part.run(bound)[0];
    ASSERT_EQ(got.numel(), n);
    const TensorView rows =
        contiguous_view(static_cast<char*>(want.data) + b * n * sizeof(float), DType::F32, {n});
    const TensorView flat = contiguous_view(got.data, DType::F32, {n});
    const Mismatch m = compare(rows, flat, heavy_epilogue_tolerance(rows));
    EXPECT_EQ(m.index, -1) << "block " << b << " element " << m.index << ": " << m.actual << " vs "
                           << m.expected;
  }
}

// The MatMul takes most of an iteration, several times the default share's slice: its check
// runs in blocks of rows, passes, and the epilogue is swapped in; every iteration's results
// match the unfused ones meanwhile.
TEST(CheckParts, ASessionValidatesALongEpilogueInBlocksOfRows) {
  JitEnv env;
  // 400 MFLOP on two threads: well over the 0.25 ms slice on any core.
  const Graph g = linear_residual(384, 1024, 512);
  cpu::ThreadPool pool(2);
  cpu::CpuBackend backend(&pool);
  const std::vector<HostTensor> in = random_inputs(g, 3);
  Executor unfused(g, backend);
  const TensorView w = unfused.run(views(in))[0];
  HostTensor want(w.dtype, w.shape);
  std::memcpy(want.data(), w.data, want.bytes());
  SessionOptions o;  // adaptive, in the background: checks within the share
  o.warmup_min_s = 0;
  Session s(g, backend, *env.cache, fixed_machine(), o);
  int epilogue = -1;
  // Until steady, however many iterations a loaded machine takes (the background share is
  // a share of time), within a generous limit.
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; !s.settled(); ++i) {
    const TensorView got = s.run(views(in))[0];
    const Mismatch m = compare(want.view(), got, heavy_epilogue_tolerance(want.view()));
    ASSERT_EQ(m.index, -1) << "iteration " << i << " element " << m.index;
    ASSERT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 120)
        << "not steady after " << i << " iterations; phase " << phase_name(s.phase());
  }
  for (size_t r = 0; r < s.regions().size(); ++r)
    if (s.regions()[r].kernel.rfind("MatMul", 0) == 0) epilogue = static_cast<int>(r);
  ASSERT_GE(epilogue, 0);
  const RegionRecord& rec = s.regions()[epilogue];
  EXPECT_EQ(rec.validation.rfind("passed", 0), 0u) << rec.validation;
  EXPECT_NE(rec.validation.find("blocks of rows"), std::string::npos) << rec.validation;
}

// ---- a generated kernel a block at a time ---------------------------------------------

// One region of each launch kind, with 7 rows (a prime: blocks of unequal size): flat
// elements; a trailing reduce's rows, with a full-shape live-out beside the reduced one; a
// multi-stage row kernel's rows (softmax).
struct KernelCase {
  const char* name;
  Graph g;
};
std::vector<KernelCase> kernel_cases() {
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": [7, 37]})";
  std::vector<KernelCase> cases;
  cases.push_back({"flat", graph_text(x, R"(
    {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
    {"name": "y", "op": "Elemwise", "mode": "MUL", "inputs": ["e:0", "x"]})",
                                      R"("y:0")")});
  cases.push_back({"reduce", graph_text(x, R"(
    {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
    {"name": "t", "op": "Elemwise", "mode": "MUL", "inputs": ["e:0", "x"]},
    {"name": "s", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [-1]}, "inputs": ["t:0"]})",
                                        R"("s:0", "t:0")")});
  cases.push_back({"row stages", graph_text(x, R"(
    {"name": "m", "op": "Reduce", "attrs": {"mode": "MAX", "axes": [-1]}, "inputs": ["x"]},
    {"name": "d", "op": "Elemwise", "mode": "SUB", "inputs": ["x", "m:0"]},
    {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["d:0"]},
    {"name": "s", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [-1]}, "inputs": ["e:0"]},
    {"name": "y", "op": "Elemwise", "mode": "TRUE_DIV", "inputs": ["e:0", "s:0"]})",
                                            R"("y:0")")});
  return cases;
}

const fusion::Region& only_region(const Graph& g, const fusion::Detection& d) {
  if (d.regions.size() != 1) throw Error("expected one region");
  return d.regions[0];
}

TEST(KernelBlocks, BlocksCoverEveryRowOnceInOrder) {
  for (const KernelCase& c : kernel_cases()) {
    SCOPED_TRACE(c.name);
    const fusion::Detection d = fusion::detect_regions(c.g);
    const fusion::RegionKernel k = fusion::build_region_kernel(c.g, only_region(c.g, d));
    const std::string kind = k.spec.row_stages() ? "row stages" : k.spec.reduce ? "reduce" : "flat";
    ASSERT_EQ(kind, c.name);
    const int64_t rows = fusion::kernel_rows(k.spec, k.iteration_shape);
    EXPECT_EQ(rows, kind == "flat" ? 7 * 37 : 7);
    const int64_t launch = kind == "reduce" ? 7 : 7 * 37;  // kernel_abi.h's range
    for (int blocks : {1, 2, 3, 6, 7}) {
      int64_t row = 0, at = 0;
      std::vector<int64_t> elements(k.outputs.size(), 0);
      for (int b = 0; b < blocks; ++b) {
        const fusion::KernelBlock kb = fusion::kernel_block(k.spec, k.iteration_shape, b, blocks);
        EXPECT_EQ(kb.rows, rows);
        EXPECT_EQ(kb.first_row, row) << blocks << " blocks, block " << b;
        EXPECT_GT(kb.end_row, kb.first_row) << blocks << " blocks, block " << b;
        EXPECT_EQ(kb.launch_begin, at) << blocks << " blocks, block " << b;
        for (size_t o = 0; o < k.outputs.size(); ++o) {
          const int64_t n = numel(c.g.value(k.outputs[o]).shape);
          EXPECT_EQ(kb.first(n), elements[o]) << "output " << o;
          elements[o] += kb.count(n);
        }
        row = kb.end_row;
        at = kb.launch_end;
      }
      EXPECT_EQ(row, rows);
      EXPECT_EQ(at, launch);
      for (size_t o = 0; o < k.outputs.size(); ++o)
        EXPECT_EQ(elements[o], numel(c.g.value(k.outputs[o]).shape)) << "output " << o;
    }
  }
}

// Run k of a check's kernel (FusedRegion::blocks) computes block k: its elements are the
// whole run's, bit for bit (the same code on the same rows), and nothing outside it is
// written (the rest is left as a marker put there before the run).
TEST(KernelBlocks, AKernelRunABlockAtATimeWritesOnlyItsBlockAndGivesTheWholeRunsLiveOuts) {
  JitEnv env;
  cpu::ThreadPool pool(2);
  cpu::CpuBackend backend(&pool);
  FusingCpuBackend fusing(backend, *env.cache);
  constexpr int kBlocks = 3;
  for (const KernelCase& c : kernel_cases()) {
    const fusion::Detection d = fusion::detect_regions(c.g);
    const fusion::Region& r = only_region(c.g, d);
    const fusion::RegionKernel k = fusion::build_region_kernel(c.g, r);
    ASSERT_TRUE(env.cache->ensure(k.spec, c.name).ok) << c.name;
    const std::vector<HostTensor> in = random_inputs(c.g, 7);
    for (fusion::KernelTier tier :
         {fusion::KernelTier::Compiled, fusion::KernelTier::Interpreted}) {
      SCOPED_TRACE(std::string(c.name) +
                   (tier == fusion::KernelTier::Compiled ? ", compiled" : ", interpreted"));
      const fusion::RegionGraph whole = fusion::region_graph(c.g, r, /*fused=*/true, {}, tier);
      const fusion::RegionGraph blocks =
          fusion::region_graph(c.g, r, /*fused=*/true, {}, tier, kBlocks);
      Executor all(whole.graph, fusing), part(blocks.graph, fusing);
      const std::vector<HostTensor> want = copies(all.run(views(in)));
      for (int b = 0; b < kBlocks; ++b) {
        if (b > 0) {  // marks every output element; the next run must change only its block
          for (size_t o = 0; o < want.size(); ++o) {
            const TensorView& out = part.plan().output(o);
            std::fill_n(static_cast<float*>(out.data), out.numel(), -7.0f);
          }
        }
        std::span<const TensorView> got = part.run(views(in));
        const fusion::KernelBlock kb = fusion::kernel_block(k.spec, k.iteration_shape, b, kBlocks);
        for (size_t o = 0; o < got.size(); ++o) {
          const float* g = static_cast<const float*>(got[o].data);
          const float* w = want[o].view().as<float>();
          const int64_t n = got[o].numel(), first = kb.first(n), end = first + kb.count(n);
          for (int64_t i = 0; i < n; ++i) {
            if (i >= first && i < end) {
              ASSERT_EQ(std::memcmp(g + i, w + i, sizeof(float)), 0)
                  << "block " << b << " output " << o << " element " << i << ": " << g[i] << " vs "
                  << w[i];
            } else if (b > 0) {
              ASSERT_EQ(g[i], -7.0f) << "block " << b << " wrote output " << o << " element " << i;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hf
