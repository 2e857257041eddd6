// A region's check in blocks of rows (session/check_parts.h): which regions are cut, along
// which axis and into how many blocks; that the blocks run on their rows of the live-ins
// give the whole run's live-outs; and that a session whose check would take more than its
// slice validates the epilogue in blocks and keeps it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>

#include "fusion/detect.h"
#include "fusion/region_spec.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "session/check_parts.h"
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

}  // namespace
}  // namespace hf
