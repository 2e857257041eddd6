// Region detection and region -> KernelSpec: kernel counts per example graph and level,
// the regions and the reasons, no cycles ever (also on random DAGs), the limits, kernel
// reuse across batch sizes, and the numbers: every fused region, evaluated from its spec
// by a naive interpreter below, matches the reference interpreter on the unfused graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "fusion/detect.h"
#include "fusion/region_spec.h"
#include "fusion/static_patterns.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "runtime/ops/half.h"
#include "runtime/ops/scalar_math.h"
#include "tests/support/reference.h"

namespace hf::fusion {
namespace {

std::string example_text(const std::string& name) {
  std::ifstream f(HF_SOURCE_DIR "/traces/graphs/" + name + ".json");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// An example graph with every occurrence of each `from` replaced by its `to` (sizes).
Graph example(const std::string& name,
              std::vector<std::pair<std::string, std::string>> subst = {}) {
  std::string text = example_text(name);
  for (auto& [from, to] : subst)
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  return parse_graph_json(text, name + ".json");
}

// The examples at sizes the naive interpreters run in milliseconds; same ranks and
// broadcast patterns as the committed ones.
Graph small_example(const std::string& name) {
  return example(name, {{"1048576", "1000"},
                        {"[1024, 1024]", "[16, 96]"},
                        {"[1024]", "[96]"},
                        {"[8, 64, 32, 64]", "[2, 8, 3, 5]"},
                        {"[64, 1, 1]", "[8, 1, 1]"}});
}

const std::vector<std::string> kExamples = {
    "abc", "ab_plus_c", "gelu_chain", "activation_chain", "adam", "bias_activation", "layernorm"};

DetectOptions level(FusionLevel l, bool reduce = true) {
  DetectOptions o;
  o.level = l;
  o.fuse_reduce = reduce;
  return o;
}

std::set<std::string> names(const Graph& g, const std::vector<NodeId>& nodes) {
  std::set<std::string> s;
  for (NodeId n : nodes) s.insert(g.node(n).name);
  return s;
}

NodeId node_named(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].name == name && !g.nodes()[i].dead) return static_cast<NodeId>(i);
  throw Error("no node '" + name + "'");
}

const std::string& reason(const Graph& g, const Detection& d, const std::string& node) {
  const Decision* dec = d.decision_of(node_named(g, node));
  if (!dec) throw Error("no decision for '" + node + "'");
  return dec->reason;
}

// Fuses every region into a copy of `g` and re-verifies it: what the runtime will do.
Graph fuse_all(const Graph& g, const Detection& d) {
  Graph out = g;
  for (const Region& r : d.regions) fuse_region(out, r);
  verify(out);
  return out;
}

// ---- a naive interpreter of KernelSpecs ---------------------------------------------------

double round_to(DType t, double v) {
  switch (t) {
    case DType::F32:
      return static_cast<float>(v);
    case DType::F16:
      return to_f32(to_f16(static_cast<float>(v)));
    case DType::BF16:
      return to_f32(to_bf16(static_cast<float>(v)));
    default:
      throw Error("spec interpreter: float types only");
  }
}

template <Mode M>
double apply_mode(const double* a) {
  constexpr ModeInfo info = mode_info(M);
  if constexpr (info.kind == ModeKind::Int || info.kind == ModeKind::Logic) {
    throw Error("spec interpreter: float modes only");
  } else {
    float x[4] = {float(a[0]), float(a[1]), float(a[2]), float(a[3])};
    using F = ModeFn<M>;
    if constexpr (info.arity == 1)
      return F::apply(x[0]);
    else if constexpr (info.arity == 2)
      return F::apply(x[0], x[1]);
    else if constexpr (info.arity == 3)
      return F::apply(x[0], x[1], x[2]);
    else
      return F::apply(x[0], x[1], x[2], x[3]);
  }
}

double apply_mode(Mode m, const double* a) {
  switch (m) {
#define X(NAME, ARITY, KIND, FLOPS) \
  case Mode::NAME:                  \
    return apply_mode<Mode::NAME>(a);
#include "runtime/ops/elemwise_modes.def"
#undef X
  }
  return 0;
}

void store(const HostTensor& t, int64_t i, double v) {
  if (!is_float(t.dtype())) throw Error("spec interpreter: float types only");
  store_double(t.view(), i, v);
}

double reduce_init(ReduceMode m) {
  return m == ReduceMode::PRODUCT ? 1
         : m == ReduceMode::MIN   ? INFINITY
         : m == ReduceMode::MAX   ? -INFINITY
                                  : 0;
}

void reduce_step(ReduceMode m, double& r, double v) {
  switch (m) {
    case ReduceMode::SUM:
    case ReduceMode::MEAN:
      r += v;
      break;
    case ReduceMode::SUM_SQR:
      r += v * v;
      break;
    case ReduceMode::PRODUCT:
      r *= v;
      break;
    case ReduceMode::MIN:
      r = std::min(r, v);
      break;
    case ReduceMode::MAX:
      r = std::max(r, v);
      break;
  }
}

// Runs kernel `k` on `inputs` (one tensor per spec input) the slow, obvious way: every
// element of the iteration space through the expression list, inputs read through
// fill_input_strides, the trailing reduce accumulated per row. A row-stage spec goes row by
// row and expression by expression over the whole row, a RowReduce giving every element of
// the row the reduction of its argument.
std::vector<HostTensor> run_spec(const RegionKernel& k, const std::vector<HostTensor>& inputs) {
  const KernelSpec& s = k.spec;
  const Shape& it = k.iteration_shape;
  std::vector<std::array<i64, kAbiMaxRank>> strides(s.inputs.size());
  for (size_t i = 0; i < s.inputs.size(); ++i) fill_input_strides(k, i, it, strides[i].data());
  std::vector<HostTensor> out;
  for (const ValueType& t : k.output_types) out.emplace_back(t.dtype, t.shape);
  int64_t n = numel(it), row_len = 1;
  const int first = s.reduce ? s.reduce->first_axis : s.row_axis;
  if (first >= 0)
    for (size_t d = static_cast<size_t>(first); d < it.size(); ++d) row_len *= it[d];
  const int64_t rows = n / std::max<int64_t>(row_len, 1);
  std::vector<double> acc(static_cast<size_t>(rows), s.reduce ? reduce_init(s.reduce->mode) : 0);
  // val[e][j]: expression e at element j of the current row (one element without row stages).
  const int64_t width = s.row_stages() ? row_len : 1;
  std::vector<std::vector<double>> val(s.exprs.size(), std::vector<double>(width));
  for (int64_t i0 = 0; i0 < n; i0 += width) {
    for (size_t e = 0; e < s.exprs.size(); ++e) {
      const SpecExpr& x = s.exprs[e];
      if (x.kind == ExprKind::RowReduce) {
        double r = reduce_init(x.reduce_mode);
        for (double v : val[x.args[0]]) reduce_step(x.reduce_mode, r, v);
        if (x.reduce_mode == ReduceMode::MEAN) r /= row_len;
        std::fill(val[e].begin(), val[e].end(), round_to(x.dtype, r));
        continue;
      }
      for (int64_t j = 0; j < width; ++j) {
        double a[4] = {};
        for (int q = 0; q < 4; ++q)
          if (x.args[q] >= 0) a[q] = val[x.args[q]][j];
        double& v = val[e][j];
        switch (x.kind) {
          case ExprKind::Input: {
            int64_t off = 0;
            for (size_t d = it.size(), r = i0 + j; d-- > 0;) {
              off += static_cast<int64_t>(r % it[d]) * strides[x.input][d];
              r /= it[d];
            }
            v = test::element(inputs[x.input].view(), off);
            break;
          }
          case ExprKind::Literal:
            v = x.value;
            break;
          case ExprKind::Elemwise:
            v = round_to(x.dtype, apply_mode(x.mode, a));
            break;
          case ExprKind::PowC:
            v = round_to(x.dtype, std::pow(a[0], x.value));
            break;
          case ExprKind::Cvt:
            v = round_to(x.dtype, a[0]);
            break;
          case ExprKind::RowReduce:
            break;
        }
      }
    }
    if (s.reduce) reduce_step(s.reduce->mode, acc[i0 / row_len], val[s.reduce->expr][0]);
    for (size_t o = 0; o < s.outputs.size(); ++o)
      if (!s.outputs[o].reduced)
        for (int64_t j = 0; j < width; ++j) store(out[o], i0 + j, val[s.outputs[o].expr][j]);
  }
  for (size_t o = 0; o < s.outputs.size(); ++o)
    if (s.outputs[o].reduced)
      for (size_t r = 0; r < acc.size(); ++r)
        store(out[o], r, s.reduce->mode == ReduceMode::MEAN ? acc[r] / row_len : acc[r]);
  return out;
}

// Every value of `g` as the reference interpreter computes it.
std::map<ValueId, HostTensor> all_values(const Graph& g, const std::vector<HostTensor>& in) {
  Graph every = g;
  std::vector<ValueId> ids;
  for (NodeId n : g.topo_order())
    for (ValueId v : g.node(n).outputs) ids.push_back(v);
  for (ValueId v : ids) every.mark_output(v);
  std::vector<HostTensor> got = test::reference_run(every, in);
  std::map<ValueId, HostTensor> out;
  for (size_t i = 0; i < g.inputs().size(); ++i) out[g.inputs()[i]] = in[i];
  size_t first = g.outputs().size();
  for (size_t i = 0; i < ids.size(); ++i) out[ids[i]] = got[first + i];
  return out;
}

// Each region's kernel, run on the reference values of its inputs, gives the reference
// values of its outputs.
void expect_regions_compute_the_reference(const Graph& g, const Detection& d, double rtol,
                                          uint64_t seed = 1) {
  std::map<ValueId, HostTensor> ref = all_values(g, random_inputs(g, seed));
  for (const Region& r : d.regions) {
    RegionKernel k = build_region_kernel(g, r);
    std::vector<HostTensor> in;
    for (ValueId v : k.inputs) in.push_back(ref.at(v));
    std::vector<HostTensor> got = run_spec(k, in);
    for (size_t o = 0; o < got.size(); ++o) {
      test::Mismatch m = test::compare(ref.at(k.outputs[o]).view(), got[o].view(), rtol, 1e-6);
      EXPECT_EQ(m.index, -1) << g.name << ": output '" << g.value(k.outputs[o]).name << "' element "
                             << m.index << ": expected " << m.expected << ", got " << m.actual;
    }
  }
}

// The invariants every detection keeps, whatever the graph and options.
void expect_sound(const Graph& g, const Detection& d) {
  std::map<NodeId, int> decided;
  for (const Decision& dec : d.decisions) {
    for (NodeId n : dec.nodes) ++decided[n];
    EXPECT_FALSE(dec.reason.empty()) << g.name << ": " << g.node(dec.nodes[0]).name;
  }
  for (NodeId n : g.topo_order()) EXPECT_EQ(decided[n], 1) << g.name << ": " << g.node(n).name;
  std::set<NodeId> seen;
  for (const Region& r : d.regions) {
    for (NodeId n : r.nodes)
      EXPECT_TRUE(seen.insert(n).second) << "in two regions: " << g.node(n).name;
    RegionKernel k = build_region_kernel(g, r);
    EXPECT_LE(k.spec.inputs.size(), static_cast<size_t>(kMaxFusedInputs));
    EXPECT_LE(k.spec.outputs.size(), 16u);
    EXPECT_GE(k.spec.outputs.size(), 1u);
    // The live-ins and live-outs are the ones replace_nodes computes, in its order.
    Graph copy = g;
    Node f;
    f.op = OpType::Fused;
    f.payload = make_signature(k);
    NodeId id = copy.replace_nodes(r.nodes, f);
    EXPECT_EQ(copy.node(id).inputs, k.live_ins);
    EXPECT_EQ(copy.node(id).outputs, k.outputs);
    EXPECT_NO_THROW(verify(copy));
  }
  EXPECT_NO_THROW(fuse_all(g, d));
}

// ---- the examples -----------------------------------------------------------------------

int static_kernel_count(Graph g) {
  apply_static_patterns(g);
  verify(g);
  return kernel_count(g, detect_regions(g, level(FusionLevel::Off)));
}

TEST(Detect, KernelCountsPerExampleAndLevel) {
  struct Row {
    std::string name;
    int off, stat, all_no_reduce, all;
  };
  // layernorm at "all": one row-stage kernel (mean, var and the per-row rstd inside it).
  // Without reductions: mean | var | var_eps, rstd | centered, sq | normed..y.
  const std::vector<Row> rows = {
      {"abc", 2, 2, 1, 1},        {"ab_plus_c", 2, 1, 1, 1},
      {"gelu_chain", 5, 5, 1, 1}, {"activation_chain", 12, 10, 1, 1},
      {"adam", 14, 10, 1, 1},     {"bias_activation", 3, 2, 1, 1},
      {"layernorm", 9, 8, 5, 1},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    Graph g = example(r.name);
    EXPECT_EQ(kernel_count(g, detect_regions(g, level(FusionLevel::Off))), r.off);
    EXPECT_EQ(kernel_count(g, detect_regions(g, level(FusionLevel::Static))), r.off);
    EXPECT_EQ(static_kernel_count(g), r.stat);
    EXPECT_EQ(kernel_count(g, detect_regions(g, level(FusionLevel::All, false))), r.all_no_reduce);
    EXPECT_EQ(kernel_count(g, detect_regions(g, level(FusionLevel::All))), r.all);
  }
}

TEST(Detect, EveryExampleIsSoundAndComputesTheReference) {
  for (const std::string& name : kExamples)
    for (bool reduce : {false, true}) {
      SCOPED_TRACE(name + (reduce ? " with reduce" : ""));
      Graph g = small_example(name);
      Detection d = detect_regions(g, level(FusionLevel::All, reduce));
      expect_sound(g, d);
      expect_regions_compute_the_reference(g, d, 1e-5);
    }
}

TEST(Detect, AdamIsOneKernelWithThreeOutputsAndLiteralHyperparameters) {
  Graph g = example("adam");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].nodes.size(), 22u);  // 14 element-wise + 8 scalar constants
  RegionKernel k = build_region_kernel(g, d.regions[0]);
  std::vector<std::string> outs;
  for (ValueId v : k.outputs) outs.push_back(g.value(v).name);
  EXPECT_EQ(outs, (std::vector<std::string>{"m_new", "v_new", "p_new"}));  // replace_nodes order
  std::vector<std::string> ins;
  for (ValueId v : k.inputs) ins.push_back(g.value(v).name);
  EXPECT_EQ(ins, (std::vector<std::string>{"m", "g", "v", "p"}));
  int literals = 0;
  for (const SpecExpr& e : k.spec.exprs) literals += e.kind == ExprKind::Literal;
  EXPECT_EQ(literals, 7);  // 8 constants, 0.001 twice (1 - beta2 and lr): one literal
  EXPECT_TRUE(k.spec.flat());
  EXPECT_EQ(d.decisions.size(), 1u);
  EXPECT_TRUE(d.decisions[0].fused);
}

TEST(Detect, LayernormIsOneRowStageKernel) {
  Graph g = example("layernorm");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  const Region& r = d.regions[0];
  EXPECT_EQ(r.nodes.size(), 10u);  // every node, eps as a literal
  EXPECT_FALSE(r.reduce);
  EXPECT_EQ(r.row_axis, 1);
  EXPECT_EQ(r.shape, (Shape{1024, 1024}));
  RegionKernel k = build_region_kernel(g, r);
  EXPECT_EQ(k.spec.row_axis, 1);
  EXPECT_FALSE(k.spec.reduce);
  std::vector<ReduceMode> reduces;
  for (const SpecExpr& e : k.spec.exprs)
    if (e.kind == ExprKind::RowReduce) reduces.push_back(e.reduce_mode);
  EXPECT_EQ(reduces, (std::vector<ReduceMode>{ReduceMode::MEAN, ReduceMode::MEAN}));
  ASSERT_EQ(k.spec.outputs.size(), 1u);  // y: the row statistics are never written
  EXPECT_FALSE(k.spec.outputs[0].reduced);
  std::vector<std::string> ins;
  for (ValueId v : k.inputs) ins.push_back(g.value(v).name);
  EXPECT_EQ(ins, (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_TRUE(k.spec.inputs[0].dense);
  EXPECT_EQ(k.spec.inputs[1].broadcast_mask, 0b01u);  // w [1024]: one value per column
  expect_sound(g, d);

  // Without reductions the two Reduce nodes stay unfused, with that reason, and so does the
  // [1024,1] per-row math (it is not recomputed per element).
  Detection plain = detect_regions(g, level(FusionLevel::All, false));
  EXPECT_EQ(reason(g, plain, "var"), "Reduce is not fused at this level (fuse_reduce is off)");
  const std::string& y = reason(g, plain, "y");
  EXPECT_NE(y.find("not with 'rstd': output shape [1024,1] differs from the region's [1024,1024]"),
            std::string::npos)
      << y;
}

TEST(Detect, BiasActivationReadsPerChannelParametersThroughBroadcastStrides) {
  Graph g = example("bias_activation");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  RegionKernel k = build_region_kernel(g, d.regions[0]);
  ASSERT_EQ(k.spec.inputs.size(), 3u);
  EXPECT_TRUE(k.spec.inputs[0].dense);
  EXPECT_EQ(k.spec.inputs[1].broadcast_mask, 0b1101u);
  EXPECT_FALSE(k.spec.inputs[1].dense);
  EXPECT_FALSE(k.spec.flat());
  i64 st[kAbiMaxRank];
  fill_input_strides(k, 1, {8, 64, 32, 64}, st);
  EXPECT_EQ(std::vector<i64>(st, st + 4), (std::vector<i64>{0, 1, 0, 0}));
  fill_input_strides(k, 0, {2, 64, 32, 64}, st);  // another batch: the same kernel
  EXPECT_EQ(std::vector<i64>(st, st + 4), (std::vector<i64>{64 * 32 * 64, 32 * 64, 64, 1}));
  EXPECT_THROW(fill_input_strides(k, 0, {64, 32, 64}, st), Error);
}

// ---- no cycles, ever ---------------------------------------------------------------------

TEST(Detect, NeverFusesAcrossAPathThatLeavesTheRegion) {
  // x -> relu -> exp -> MatMul -> add, and relu -> add. Fusing relu, exp and add would put
  // the MatMul both after and before the fused kernel.
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [8, 8]}, {"name": "w", "dtype": "f32", "shape": [8, 8]}],
    "nodes": [
      {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["x"]},
      {"name": "exp", "op": "Elemwise", "mode": "EXP", "inputs": ["relu:0"]},
      {"name": "mm", "op": "MatMul", "inputs": ["exp:0", "w"]},
      {"name": "add", "op": "Elemwise", "mode": "ADD", "inputs": ["relu:0", "mm:0"]}],
    "outputs": ["add:0"]})",
                             "cycle.json");
  Graph naive = g;
  EXPECT_THROW(naive.replace_nodes(
                   {node_named(g, "relu"), node_named(g, "exp"), node_named(g, "add")}, Node{}),
               Error);

  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(names(g, d.regions[0].nodes), (std::set<std::string>{"relu", "exp"}));
  EXPECT_EQ(reason(g, d, "mm"), "MatMul is not element-wise");
  EXPECT_NE(reason(g, d, "add").find("would create a cycle through 'mm'"), std::string::npos)
      << reason(g, d, "add");
  EXPECT_EQ(kernel_count(g, d), 3);
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-6);
}

TEST(Detect, ValuesWithConsumersInTwoRegionsStillFuseWhenNoCycleArises) {
  // t feeds two outputs: MegEngine's rule alone keeps it apart; the merge puts all in one
  // kernel with two live-outs.
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [64]}],
    "nodes": [
      {"name": "t", "op": "Elemwise", "mode": "TANH", "inputs": ["x"]},
      {"name": "a", "op": "Elemwise", "mode": "EXP", "inputs": ["t:0"]},
      {"name": "b", "op": "Elemwise", "mode": "NEGATE", "inputs": ["t:0"]},
      {"name": "c", "op": "Elemwise", "mode": "SIGMOID", "inputs": ["x"]}],
    "outputs": ["a:0", "b:0", "c:0"]})",
                             "fork.json");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].nodes.size(), 4u);  // c reads x too: merged as a sibling
  EXPECT_EQ(kernel_count(g, d), 1);
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-6);
}

// ---- limits and rules -------------------------------------------------------------------

Graph sum_of_inputs(int n) {
  Graph g;
  g.name = "sum" + std::to_string(n);
  ValueId acc = g.add_input("x0", DType::F32, {16});
  for (int i = 1; i < n; ++i) {
    ValueId x = g.add_input("x" + std::to_string(i), DType::F32, {16});
    Node add;
    add.name = "s" + std::to_string(i);
    add.mode = Mode::ADD;
    add.inputs = {acc, x};
    acc = g.add_node(add)[0];
  }
  g.mark_output(acc);
  return g;
}

TEST(Detect, InputLimitSplitsALongSum) {
  Graph g = sum_of_inputs(100);
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 2u);
  for (const Region& r : d.regions) EXPECT_LE(build_region_kernel(g, r).spec.inputs.size(), 64u);
  EXPECT_EQ(build_region_kernel(g, d.regions[0]).spec.inputs.size(), 64u);  // filled up
  EXPECT_NE(d.decisions[0].reason.find("input limit 64 reached"), std::string::npos)
      << d.decisions[0].reason;
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-5);

  DetectOptions eight;
  eight.max_inputs = 8;
  Detection small = detect_regions(g, eight);
  for (const Region& r : small.regions) EXPECT_LE(build_region_kernel(g, r).spec.inputs.size(), 8u);
  EXPECT_EQ(kernel_count(g, small), 15);  // 14 regions of 7 adds (8 inputs each), s1 alone
  expect_sound(g, small);

  DetectOptions few_exprs;
  few_exprs.max_exprs = 20;
  Detection e = detect_regions(g, few_exprs);
  for (const Region& r : e.regions) EXPECT_LE(build_region_kernel(g, r).spec.exprs.size(), 20u);
  expect_sound(g, e);
}

TEST(Detect, OutputLimit) {
  std::string nodes, outs;
  for (int i = 0; i < 20; ++i) {
    nodes += std::string(i ? "," : "") + R"({"name": "e)" + std::to_string(i) +
             R"(", "op": "PowC", "attrs": {"exponent": )" + std::to_string(i + 2) +
             R"(}, "inputs": ["x"]})";
    outs += std::string(i ? "," : "") + "\"e" + std::to_string(i) + ":0\"";
  }
  Graph g =
      parse_graph_json(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [32]}], "nodes": [)" +
                           nodes + "], \"outputs\": [" + outs + "]}",
                       "outputs.json");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 2u);  // 20 siblings reading x: 16 + 4
  EXPECT_EQ(build_region_kernel(g, d.regions[0]).spec.outputs.size(), 16u);
  expect_sound(g, d);
}

TEST(Detect, TypeCvtConstantsAndSingleNodes) {
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 6]}],
    "nodes": [
      {"name": "k", "op": "Constant", "attrs": {"dtype": "f32", "shape": [1, 1], "value": [2.5]}, "inputs": []},
      {"name": "row", "op": "Constant", "attrs": {"dtype": "f32", "shape": [6], "value": [1, 2, 3, 4, 5, 6]}, "inputs": []},
      {"name": "a", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "k:0"]},
      {"name": "b", "op": "Elemwise", "mode": "ADD", "inputs": ["a:0", "row:0"]},
      {"name": "h", "op": "TypeCvt", "attrs": {"dtype": "f16"}, "inputs": ["b:0"]},
      {"name": "s", "op": "Elemwise", "mode": "SIGMOID", "inputs": ["h:0"]},
      {"name": "i", "op": "TypeCvt", "attrs": {"dtype": "i32"}, "inputs": ["s:0"]},
      {"name": "n", "op": "Elemwise", "mode": "NEGATE", "inputs": ["i:0"]}],
    "outputs": ["n:0"]})",
                             "cvt.json");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(names(g, d.regions[0].nodes), (std::set<std::string>{"k", "a", "b", "h", "s"}));
  EXPECT_EQ(reason(g, d, "i"), "TypeCvt f16 -> i32 is not fusible (only between float types)");
  EXPECT_EQ(reason(g, d, "n"),
            "single node: nothing to fuse; not with 'i': TypeCvt f16 -> i32 is not fusible (only "
            "between float types)");
  EXPECT_EQ(reason(g, d, "row"),
            "Constant with 6 elements is read as an input (only single-element constants are "
            "literals)");
  RegionKernel k = build_region_kernel(g, d.regions[0]);
  ASSERT_EQ(k.spec.inputs.size(), 2u);  // x and row; k is a literal
  EXPECT_EQ(k.spec.inputs[1].broadcast_mask, 0b01u);
  int cvt = 0, literal = 0;
  for (const SpecExpr& e : k.spec.exprs) {
    cvt += e.kind == ExprKind::Cvt && e.dtype == DType::F16;
    if (e.kind == ExprKind::Literal) literal = e.value == 2.5;
  }
  EXPECT_EQ(cvt, 1);
  EXPECT_EQ(literal, 1);
  EXPECT_EQ(k.spec.outputs.size(), 1u);
  EXPECT_EQ(k.spec.outputs[0].dtype, DType::F16);
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-3);

  DetectOptions singles;
  singles.single_nodes = true;
  EXPECT_EQ(detect_regions(g, singles).regions.size(), 2u);  // n alone too
}

TEST(Detect, ViewsOfInputsBecomeStridedInputs) {
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 6]}, {"name": "t", "dtype": "f32", "shape": [6, 4]},
               {"name": "z", "dtype": "f32", "shape": [24]}, {"name": "w", "dtype": "f32", "shape": [6]},
               {"name": "c", "dtype": "f32", "shape": [4]}],
    "nodes": [
      {"name": "tt", "op": "Dimshuffle", "attrs": {"perm": [1, 0]}, "inputs": ["t"]},
      {"name": "zr", "op": "Reshape", "attrs": {"shape": [4, 6]}, "inputs": ["z"]},
      {"name": "wb", "op": "Broadcast", "attrs": {"shape": [4, 6]}, "inputs": ["w"]},
      {"name": "cc", "op": "Dimshuffle", "attrs": {"perm": [0, -1]}, "inputs": ["c"]},
      {"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["x", "tt:0"]},
      {"name": "b", "op": "Elemwise", "mode": "MUL", "inputs": ["a:0", "zr:0"]},
      {"name": "d", "op": "Elemwise", "mode": "SUB", "inputs": ["b:0", "wb:0"]},
      {"name": "e", "op": "Elemwise", "mode": "MAX", "inputs": ["d:0", "cc:0"]}],
    "outputs": ["e:0"]})",
                             "views.json");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(d.regions[0].nodes.size(), 8u);
  EXPECT_EQ(kernel_count(g, d), 1);  // the three copies are gone too
  RegionKernel k = build_region_kernel(g, d.regions[0]);
  std::vector<std::string> ins;
  for (ValueId v : k.inputs) ins.push_back(g.value(v).name);
  EXPECT_EQ(ins, (std::vector<std::string>{"t", "z", "w", "c", "x"}));
  auto strides = [&](size_t i) {
    i64 st[kAbiMaxRank];
    fill_input_strides(k, i, {4, 6}, st);
    return std::vector<i64>(st, st + 2);
  };
  EXPECT_FALSE(k.spec.inputs[0].dense);  // the transpose
  EXPECT_EQ(strides(0), (std::vector<i64>{1, 4}));
  EXPECT_TRUE(k.spec.inputs[1].dense);  // a Reshape of a contiguous value: the same flat index
  EXPECT_EQ(strides(1), (std::vector<i64>{6, 1}));
  EXPECT_EQ(k.spec.inputs[2].broadcast_mask, 0b01u);
  EXPECT_EQ(strides(2), (std::vector<i64>{0, 1}));
  EXPECT_EQ(k.spec.inputs[3].broadcast_mask, 0b10u);  // c[:, None]
  EXPECT_EQ(strides(3), (std::vector<i64>{1, 0}));
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-6);
}

TEST(Detect, AValueReadDirectlyAndTransposedIsTwoInputs) {
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 5]}],
    "nodes": [
      {"name": "xt", "op": "Dimshuffle", "attrs": {"perm": [1, 0]}, "inputs": ["x"]},
      {"name": "a", "op": "Elemwise", "mode": "SUB", "inputs": ["x", "xt:0"]},
      {"name": "b", "op": "Elemwise", "mode": "ABS", "inputs": ["a:0"]}],
    "outputs": ["b:0"]})",
                             "sym.json");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  RegionKernel k = build_region_kernel(g, d.regions[0]);
  EXPECT_EQ(k.live_ins.size(), 1u);
  ASSERT_EQ(k.inputs.size(), 2u);
  EXPECT_EQ(k.inputs[0], k.inputs[1]);
  EXPECT_NE(k.spec.inputs[0].dense, k.spec.inputs[1].dense);
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-6);
}

TEST(Detect, ViewsOfComputedValuesAreNotFused) {
  // The transpose of a value computed in the kernel would need it before it exists.
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [5, 5]}],
    "nodes": [
      {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
      {"name": "et", "op": "Dimshuffle", "attrs": {"perm": [1, 0]}, "inputs": ["e:0"]},
      {"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["et:0", "x"]},
      {"name": "b", "op": "Elemwise", "mode": "ABS", "inputs": ["a:0"]}],
    "outputs": ["b:0"]})",
                             "tview.json");
  Detection d = detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(names(g, d.regions[0].nodes), (std::set<std::string>{"et", "a", "b"}));
  EXPECT_NE(reason(g, d, "e").find("read through Dimshuffle 'et'"), std::string::npos)
      << reason(g, d, "e");
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-6);
}

TEST(Detect, ReduceRules) {
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [6, 10]}],
    "nodes": [
      {"name": "m", "op": "Reduce", "attrs": {"mode": "MAX", "axes": [-1]}, "inputs": ["x"]},
      {"name": "d", "op": "Elemwise", "mode": "SUB", "inputs": ["x", "m:0"]},
      {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["d:0"]},
      {"name": "s", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [1]}, "inputs": ["e:0"]},
      {"name": "y", "op": "Elemwise", "mode": "TRUE_DIV", "inputs": ["e:0", "s:0"]},
      {"name": "col", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [0]}, "inputs": ["y:0"]},
      {"name": "all", "op": "Reduce", "attrs": {"mode": "SUM", "axes": []}, "inputs": ["y:0"]}],
    "outputs": ["y:0", "col:0", "all:0"]})",
                             "softmax.json");
  Detection d = detect_regions(g);
  // Softmax: max, x - max, exp, row sums, e / s: one row-stage kernel.
  ASSERT_EQ(d.regions.size(), 1u);
  EXPECT_EQ(names(g, d.regions[0].nodes), (std::set<std::string>{"m", "d", "e", "s", "y"}));
  EXPECT_EQ(d.regions[0].row_axis, 1);
  EXPECT_EQ(kernel_count(g, d), 3);
  EXPECT_EQ(reason(g, d, "col"),
            "Reduce is fused only over the innermost axes (a trailing reduce)");
  EXPECT_EQ(reason(g, d, "all"),
            "Reduce over every axis leaves one row: a fused kernel would run it on one thread");
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-5);
}

// A row-stage region keeps the grow and merge rules: a per-row value that is a graph output
// stays outside (it would have to be written per row), and a path that leaves the region
// and comes back splits it.
TEST(Detect, RowStagesKeepTheEscapeAndCycleRules) {
  Graph g = parse_graph_json(R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [6, 10]},
               {"name": "w", "dtype": "f32", "shape": [10, 10]}],
    "nodes": [
      {"name": "m", "op": "Reduce", "attrs": {"mode": "MEAN", "axes": [-1]}, "inputs": ["x"]},
      {"name": "d", "op": "Elemwise", "mode": "SUB", "inputs": ["x", "m:0"]},
      {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["d:0"]},
      {"name": "s", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [1]}, "inputs": ["e:0"]},
      {"name": "mm", "op": "MatMul", "inputs": ["e:0", "w"]},
      {"name": "q", "op": "Elemwise", "mode": "TRUE_DIV", "inputs": ["e:0", "s:0"]},
      {"name": "y", "op": "Elemwise", "mode": "ADD", "inputs": ["q:0", "mm:0"]}],
    "outputs": ["y:0", "m:0"]})",
                             "rows.json");
  Detection d = detect_regions(g);
  expect_sound(g, d);
  expect_regions_compute_the_reference(g, d, 1e-5);
  EXPECT_NE(reason(g, d, "m").find("is a graph output"), std::string::npos) << reason(g, d, "m");
  // e -> mm -> y leaves {s, q, y}: d and e form their own region, s stays with q and y.
  EXPECT_NE(reason(g, d, "e").find("would create a cycle through 'mm'"), std::string::npos)
      << reason(g, d, "e");
  const Decision* dy = d.decision_of(node_named(g, "y"));
  ASSERT_TRUE(dy && dy->fused);
  EXPECT_EQ(names(g, dy->nodes), (std::set<std::string>{"s", "q", "y"}));
  for (const Region& r : d.regions) {
    if (std::find(r.nodes.begin(), r.nodes.end(), node_named(g, "y")) != r.nodes.end()) {
      EXPECT_EQ(r.row_axis, 1);
    }
  }
}

// ---- kernel reuse ------------------------------------------------------------------------

uint64_t only_hash(const Graph& g) {
  Detection d = detect_regions(g);
  if (d.regions.size() != 1) throw Error(g.name + ": expected one region");
  return build_region_kernel(g, d.regions[0]).spec.hash();
}

TEST(Detect, SameKernelAcrossBatchSizesNewOneForANewRankOrBroadcastPattern) {
  for (const std::string& name : kExamples) {
    EXPECT_EQ(only_hash(example(name)), only_hash(small_example(name))) << name;
  }

  uint64_t base = only_hash(example("bias_activation"));
  EXPECT_EQ(base, only_hash(example("bias_activation", {{"[8, 64, 32, 64]", "[3, 64, 32, 64]"}})));
  // [1,64,1,1] is the same broadcast as [64,1,1]: the same kernel.
  EXPECT_EQ(base, only_hash(example("bias_activation", {{"[64, 1, 1]", "[1, 64, 1, 1]"}})));
  // Per-column instead of per-channel parameters: another broadcast pattern.
  EXPECT_NE(base, only_hash(example("bias_activation", {{"[64, 1, 1]", "[1, 1, 64]"}})));
  // Rank 3 instead of 4.
  EXPECT_NE(base, only_hash(example("bias_activation", {{"[8, 64, 32, 64]", "[64, 32, 64]"}})));
  // The values of literals are part of the kernel.
  EXPECT_NE(only_hash(example("gelu_chain")),
            only_hash(example("gelu_chain", {{"[0.5]", "[0.25]"}})));
}

// ---- random DAGs -------------------------------------------------------------------------

// A random DAG over [4,4,5]: element-wise ops on values of broadcastable shapes, views of
// inputs, opaque nodes (MatMul, an int round trip, a leading-axis Reduce) that make paths
// leave and re-enter would-be regions, trailing reduces, scalar constants.
Graph random_graph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const Shape full = {4, 4, 5};  // two equal axes: transposes keep the shape
  Graph g;
  g.name = "random" + std::to_string(seed);
  std::vector<ValueId> pool;
  auto node = [&](Node n) { return g.add_node(std::move(n))[0]; };
  auto ew = [&](Mode m, std::vector<ValueId> in) {
    Node n;
    n.mode = m;
    n.inputs = std::move(in);
    return node(n);
  };
  auto op = [&](OpType t, std::vector<ValueId> in, Attrs a) {
    Node n;
    n.op = t;
    n.inputs = std::move(in);
    n.attrs = std::move(a);
    return node(n);
  };
  for (int i = 0; i < 4; ++i) {
    Shape s = full;
    for (auto& d : s)
      if (rng() % 3 == 0) d = 1;
    if (rng() % 4 == 0) s.erase(s.begin());
    pool.push_back(g.add_input("in" + std::to_string(i), DType::F32, s, InitRange{-1, 1}));
  }
  pool.push_back(g.add_input("full", DType::F32, full));
  ValueId t = g.add_input("t", DType::F32, {5, 4, 4});
  ValueId flat = g.add_input("flat", DType::F32, {80});
  ValueId w = g.add_input("w", DType::F32, {5, 5});
  const Mode unary[] = {Mode::TANH, Mode::SIGMOID, Mode::RELU, Mode::NEGATE, Mode::ABS, Mode::SIN};
  const Mode binary[] = {Mode::ADD, Mode::SUB, Mode::MUL, Mode::MAX, Mode::MIN};
  int steps = 10 + static_cast<int>(pick(25));
  for (int i = 0; i < steps; ++i) {
    ValueId a = pool[pool.size() - 1 - pick(std::min<size_t>(pool.size(), 6))];
    ValueId b = pool[pick(pool.size())];
    const Shape& sa = g.value(a).shape;
    switch (pick(18)) {
      case 0:
      case 1:
      case 2:
        pool.push_back(ew(unary[pick(6)], {a}));
        break;
      case 3:
      case 4:
      case 5:
      case 6:
        pool.push_back(ew(binary[pick(5)], {a, b}));
        break;
      case 7:
        pool.push_back(ew(Mode::FUSE_MUL_ADD3, {a, b, pool[pick(pool.size())]}));
        break;
      case 8: {
        Node k;
        k.op = OpType::Constant;
        k.attrs = {{"dtype", std::string("f32")},
                   {"shape", std::vector<int64_t>{}},
                   {"value", std::vector<double>{0.5 + pick(4)}}};
        pool.push_back(ew(Mode::MUL, {a, node(k)}));
        break;
      }
      case 9:
        if (sa == full) pool.push_back(op(OpType::MatMul, {a, w}, {}));
        break;
      case 10: {
        ValueId i32 = op(OpType::TypeCvt, {a}, {{"dtype", std::string("i32")}});
        pool.push_back(op(OpType::TypeCvt, {i32}, {{"dtype", std::string("f32")}}));
        break;
      }
      case 11:
        if (sa.size() == 3)
          pool.push_back(op(OpType::Reduce, {a},
                            {{"mode", std::string("SUM")}, {"axes", std::vector<int64_t>{0}}}));
        break;
      case 12:
        if (!sa.empty() && sa.back() > 1)
          pool.push_back(op(OpType::Reduce, {a},
                            {{"mode", std::string(pick(2) ? "MEAN" : "MAX")},
                             {"axes", std::vector<int64_t>{-1}}}));
        break;
      case 13:
        pool.push_back(ew(Mode::ADD, {a, op(OpType::Dimshuffle, {t},
                                            {{"perm", std::vector<int64_t>{2, 1, 0}}})}));
        break;
      case 14:
        pool.push_back(
            ew(Mode::SUB,
               {op(OpType::Reshape, {flat}, {{"shape", std::vector<int64_t>{4, 4, 5}}}), a}));
        break;
      case 16:
        if (sa.size() == 3)
          pool.push_back(op(OpType::Dimshuffle, {a}, {{"perm", std::vector<int64_t>{1, 0, 2}}}));
        break;
      case 17:
        pool.push_back(
            op(OpType::Reshape, {a}, {{"shape", std::vector<int64_t>(sa.begin(), sa.end())}}));
        break;
      case 15:
        pool.push_back(op(OpType::Broadcast, {a},
                          {{"shape", std::vector<int64_t>(full.begin(), full.end())}}));
        break;
    }
  }
  // Outputs: the last value and a few random ones, so some values escape mid-region.
  g.mark_output(pool.back());
  for (int i = 0; i < 2; ++i) {
    ValueId v = pool[pick(pool.size())];
    if (g.value(v).producer != kNoNode &&
        std::find(g.outputs().begin(), g.outputs().end(), v) == g.outputs().end())
      g.mark_output(v);
  }
  return g;
}

TEST(Detect, RandomDagsNeverGiveACycleAndComputeTheReference) {
  int fused = 0, multi_output = 0, with_reduce = 0, row_stages = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Graph g = random_graph(seed);
    SCOPED_TRACE(g.name);
    for (int variant = 0; variant < 3; ++variant) {
      DetectOptions o;
      o.fuse_reduce = variant != 1;
      if (variant == 2) o.max_inputs = 3;
      Detection d = detect_regions(g, o);
      expect_sound(g, d);
      if (variant == 0) {
        expect_regions_compute_the_reference(g, d, 1e-5, seed);
        for (const Region& r : d.regions) {
          ++fused;
          multi_output += build_region_kernel(g, r).outputs.size() > 1;
          with_reduce += r.reduce.has_value();
          row_stages += r.row_axis >= 0;
        }
      }
      if (HasFailure()) return;
    }
  }
  // The generator does exercise what it is meant to.
  EXPECT_GT(fused, 300);
  EXPECT_GT(multi_output, 30);
  EXPECT_GT(with_reduce, 30);
  EXPECT_GT(row_stages, 10);  // reduces whose result the region reads (RowReduce)
  std::printf("%d regions: %d multi-output, %d trailing reduce, %d row-stage\n", fused,
              multi_output, with_reduce, row_stages);
}

}  // namespace
}  // namespace hf::fusion
