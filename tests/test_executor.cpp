// The executor on the CPU backend against the naive reference interpreter, on every
// example graph and on graphs that exercise every op type, dtype path and buffer reuse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "tests/support/reference.h"

namespace hf {
namespace {

std::vector<TensorView> views(const std::vector<HostTensor>& ts) {
  std::vector<TensorView> v;
  for (const HostTensor& t : ts) v.push_back(t.view());
  return v;
}

void expect_matches_reference(const Graph& g, double rtol, uint64_t seed = 1) {
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  std::vector<HostTensor> in = random_inputs(g, seed);
  std::vector<HostTensor> ref = test::reference_run(g, in);
  for (int iter = 0; iter < 2; ++iter) {  // the second run reuses every buffer
    auto out = exec.run(views(in));
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < out.size(); ++i) {
      test::Mismatch m = test::compare(ref[i].view(), out[i], rtol, 1e-6);
      EXPECT_EQ(m.index, -1) << g.name << " output " << i << " element " << m.index << ": expected "
                             << m.expected << ", got " << m.actual;
    }
  }
}

TEST(Executor, EveryExampleGraphMatchesTheReference) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(HF_SOURCE_DIR "/traces/graphs")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    expect_matches_reference(read_graph_json(e.path().string()), 1e-5);
    ++count;
  }
  EXPECT_GE(count, 7);
}

// A Constant is computed once, when the plan is built: its buffer must not be reused (nor
// written in place) after its last reader, or the second iteration reads garbage.
TEST(Executor, ConstantsSurviveTheirLastUse) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "nodes": [
      {"name": "c", "op": "Constant", "attrs": {"dtype": "f32", "shape": [4], "value": [1, 2, 3, 4]}, "inputs": []},
      {"name": "y", "op": "Elemwise", "mode": "ADD", "inputs": ["c:0", "x"]},
      {"name": "z", "op": "Elemwise", "mode": "MUL", "inputs": ["y:0", "y:0"]}],
    "outputs": ["z:0"]})";
  expect_matches_reference(parse_graph_json(text, "constant_reuse"), 1e-6);
}

// compare() on contiguous f32 with a positive atol takes a one-pass path; what it finds must
// be what the general element loop finds (taken with atol 0; the data has no zero where that
// would matter): the worst ratio when everything matches, NaN matching NaN and equal
// infinities matching, and the worst failing element otherwise.
TEST(Compare, TheF32PathFindsWhatTheGeneralLoopFinds) {
  const float inf = INFINITY, nan = NAN;
  const std::vector<std::vector<float>> expected_actual[] = {
      {{1, 2, -3, 1e-7f, 1000}, {1, 2.00001f, -3, 1.000001e-7f, 1000.002f}},  // all match
      {{nan, inf, -inf, 5}, {nan, inf, -inf, 5.00001f}},                      // special values
      {{1, 2, 3, 4}, {1, 2.5f, 3, 4.01f}},                                    // two fail
      {{1, 2, 3}, {1, nan, 3}},                                               // NaN vs a number
      {{1, inf, 3}, {1, -inf, 3}},                                            // opposite infinities
  };
  for (const auto& c : expected_actual) {
    const int64_t n = static_cast<int64_t>(c[0].size());
    HostTensor e(DType::F32, {n}), a(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i) {
      e.view().as<float>()[i] = c[0][i];
      a.view().as<float>()[i] = c[1][i];
    }
    Mismatch f = compare(e.view(), a.view(), Tolerance{1e-5, 1e-30});
    Mismatch g = compare(e.view(), a.view(), Tolerance{1e-5, 0});
    EXPECT_EQ(f.index, g.index);
    EXPECT_EQ(f.count, g.count);
    EXPECT_DOUBLE_EQ(f.worst_ratio, g.worst_ratio);
    auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
    if (f.index >= 0) {
      EXPECT_TRUE(same(f.actual, g.actual)) << f.actual << " vs " << g.actual;
      EXPECT_TRUE(same(f.expected, g.expected)) << f.expected << " vs " << g.expected;
    }
  }
  HostTensor e(DType::F32, {3}), a(DType::F32, {3});
  for (int i = 0; i < 3; ++i) e.view().as<float>()[i] = a.view().as<float>()[i] = float(i);
  a.view().as<float>()[1] = 1.5f;
  Mismatch m = compare(e.view(), a.view(), fused_tolerance(DType::F32));
  EXPECT_EQ(m.index, 1);
  EXPECT_EQ(m.count, 1);
  EXPECT_EQ(compare(e.view(), e.view(), fused_tolerance(DType::F32)).worst_ratio, 0);
}

// A heavy op with its epilogue is held to fused_tolerance with the absolute term scaled by
// the largest expected magnitude: a residual add that cancels a product to a small value
// keeps the product's rounding (that passes), a wrong epilogue is off by a share of the
// values (that fails); non-finite values set no scale, integers stay exact.
TEST(Compare, HeavyEpilogueToleranceScalesWithTheLargestExpectedValue) {
  HostTensor e(DType::F32, {4}), a(DType::F32, {4});
  const float want[] = {8.0f, -3.0f, 0.0025601387f, 1.0f};
  const float got[] = {8.00001f, -3.0f, 0.0025581121f, 1.0f};  // ResNet's cancelled element
  for (int i = 0; i < 4; ++i) {
    e.view().as<float>()[i] = want[i];
    a.view().as<float>()[i] = got[i];
  }
  Tolerance t = heavy_epilogue_tolerance(e.view());
  EXPECT_DOUBLE_EQ(t.rtol, fused_tolerance(DType::F32).rtol);
  EXPECT_NEAR(t.atol, 8.0 * t.rtol, 1e-12);
  EXPECT_EQ(compare(e.view(), a.view(), t).index, -1);
  EXPECT_EQ(compare(e.view(), a.view(), fused_tolerance(DType::F32)).index, 2);
  a.view().as<float>()[3] = 1.01f;  // an epilogue off by 1% of a value
  EXPECT_EQ(compare(e.view(), a.view(), t).index, 3);

  e.view().as<float>()[0] = INFINITY;  // sets no scale: the largest finite is 3
  EXPECT_NEAR(heavy_epilogue_tolerance(e.view()).atol, 3.0 * t.rtol, 1e-12);
  HostTensor z(DType::F32, {2});  // all zeros: fused_tolerance's own floor
  z.view().as<float>()[0] = z.view().as<float>()[1] = 0;
  EXPECT_EQ(heavy_epilogue_tolerance(z.view()).atol, fused_tolerance(DType::F32).atol);
  HostTensor i(DType::I32, {1});
  i.view().as<int32_t>()[0] = 1000;
  EXPECT_EQ(heavy_epilogue_tolerance(i.view()).atol, 0);
  EXPECT_EQ(heavy_epilogue_tolerance(i.view()).rtol, 0);
}

// A plan's buffers are faulted in by touch_pages, in slices, without changing a byte: a
// plan touched before its first run computes what an untouched one does, constants included.
TEST(Plan, TouchPagesInSlicesKeepsEveryByte) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [300000]}],
    "nodes": [
      {"name": "c", "op": "Constant", "attrs": {"dtype": "f32", "shape": [1], "value": [3]}, "inputs": []},
      {"name": "y", "op": "Elemwise", "mode": "MUL", "inputs": ["c:0", "x"]},
      {"name": "z", "op": "Elemwise", "mode": "EXP", "inputs": ["y:0"]},
      {"name": "w", "op": "Elemwise", "mode": "ADD", "inputs": ["z:0", "y:0"]}],
    "outputs": ["w:0"]})";
  Graph g = parse_graph_json(text, "touch");
  cpu::CpuBackend backend;
  Executor touched(g, backend), untouched(g, backend);
  int calls = 0;
  while (!touched.plan().touch_pages(64 << 10)) ASSERT_LT(++calls, 100000);
  EXPECT_GT(calls, 2);                         // more than one slice of 64 KiB
  EXPECT_TRUE(touched.plan().touch_pages(1));  // done stays done
  std::vector<HostTensor> in = random_inputs(g, 3);
  auto a = touched.run(views(in));
  auto b = untouched.run(views(in));
  EXPECT_EQ(std::memcmp(a[0].data, b[0].data, a[0].numel() * sizeof(float)), 0);
}

// The adaptive session builds its next plan and its validation's plan on the scratch buffers
// of the plan in use. The borrower must compute what a plan of its own computes, keep its
// observed values and outputs to itself, and outlive the lender.
TEST(Plan, ABorrowerSharesOnlyScratchAndOutlivesTheLender) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [100000]}],
    "nodes": [
      {"name": "y", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"]},
      {"name": "z", "op": "Elemwise", "mode": "EXP", "inputs": ["y:0"]},
      {"name": "u", "op": "Elemwise", "mode": "ADD", "inputs": ["z:0", "y:0"]},
      {"name": "w", "op": "Elemwise", "mode": "SIN", "inputs": ["u:0"]}],
    "outputs": ["w:0"]})";
  Graph g = parse_graph_json(text, "lend");
  const ValueId z = *g.find_value("z:0");
  cpu::CpuBackend backend, other_backend;
  auto lender = std::make_unique<Executor>(g, backend);
  Executor own(g, backend, std::span<const ValueId>(&z, 1));
  Executor borrower(g, backend, std::span<const ValueId>(&z, 1), &lender->plan());
  EXPECT_EQ(own.plan().lent_bytes(), 0u);
  EXPECT_GT(borrower.plan().lent_bytes(), 0u);
  EXPECT_LT(borrower.plan().lent_bytes(), borrower.plan().buffer_bytes());  // z, w: its own
  EXPECT_EQ(borrower.plan().buffer_bytes(), own.plan().buffer_bytes());
  Executor elsewhere(g, other_backend, {}, &lender->plan());  // another backend's memory
  EXPECT_EQ(elsewhere.plan().lent_bytes(), 0u);

  std::vector<HostTensor> a = random_inputs(g, 1), b = random_inputs(g, 2);
  using Floats = std::vector<float>;
  auto floats = [](const TensorView& t) {
    const float* p = static_cast<const float*>(t.data);
    return Floats(p, p + t.numel());
  };
  const Floats w_b = floats(own.run(views(b))[0]), z_b = floats(own.plan().observed(z));
  const Floats w_a = floats(own.run(views(a))[0]);

  auto got = borrower.run(views(b));
  EXPECT_NE(got[0].data, lender->plan().output(0).data);
  EXPECT_EQ(floats(got[0]), w_b);
  EXPECT_EQ(floats(lender->run(views(a))[0]), w_a);     // over the shared scratch
  EXPECT_EQ(floats(borrower.plan().observed(z)), z_b);  // not overwritten by it
  lender.reset();
  EXPECT_EQ(floats(borrower.run(views(a))[0]), w_a);
}

TEST(Executor, EveryOpTypeAndDtypePath) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3, 4, 5]},
               {"name": "h", "dtype": "f16", "shape": [4, 5]},
               {"name": "i", "dtype": "i32", "shape": [3, 1, 5], "init": [-20, 20]},
               {"name": "w", "dtype": "f32", "shape": [5, 6]}],
    "nodes": [
      {"name": "hx", "op": "TypeCvt", "attrs": {"dtype": "f32"}, "inputs": ["h"]},
      {"name": "s", "op": "Elemwise", "mode": "FUSE_MUL_ADD3", "inputs": ["x", "hx:0", "x"]},
      {"name": "t", "op": "Dimshuffle", "attrs": {"perm": [2, 0, -1, 1]}, "inputs": ["s:0"]},
      {"name": "r", "op": "Reduce", "attrs": {"mode": "SUM_SQR", "axes": [0, 3], "keepdims": 0}, "inputs": ["t:0"]},
      {"name": "b", "op": "Broadcast", "attrs": {"shape": [2, 3, 1]}, "inputs": ["r:0"]},
      {"name": "rs", "op": "Reshape", "attrs": {"shape": [-1]}, "inputs": ["b:0"]},
      {"name": "p", "op": "PowC", "attrs": {"exponent": 0.5}, "inputs": ["rs:0"]},
      {"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
      {"name": "mx", "op": "Reduce", "attrs": {"mode": "MAX", "axes": [1]}, "inputs": ["mm:0"]},
      {"name": "sh", "op": "Elemwise", "mode": "SHR", "inputs": ["i", "i"]},
      {"name": "lt", "op": "Elemwise", "mode": "LT", "inputs": ["i", "sh:0"]},
      {"name": "sel", "op": "TypeCvt", "attrs": {"dtype": "f16"}, "inputs": ["lt:0"]},
      {"name": "g", "op": "Elemwise", "mode": "GELU", "inputs": ["sel:0"]},
      {"name": "k", "op": "Constant", "attrs": {"dtype": "i64", "shape": [2], "value": [3, -4]}, "inputs": []},
      {"name": "kk", "op": "Elemwise", "mode": "FLOOR_DIV", "inputs": ["k:0", "k:0"]}
    ],
    "outputs": ["p:0", "mx:0", "g:0", "kk:0", "t:0"]})";
  expect_matches_reference(parse_graph_json(text, "ops.json"), 2e-3);
}

TEST(Executor, BuffersAreReusedAlongAChain) {
  // A 10-op chain over 1 MiB tensors needs only a few buffers, not ten.
  Graph g = read_graph_json(HF_SOURCE_DIR "/traces/graphs/activation_chain.json");
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  size_t tensor = 1 << 22;  // 2^20 floats
  EXPECT_LE(exec.plan().buffer_bytes(), 4 * tensor + 4096);
  EXPECT_GE(exec.plan().buffer_bytes(), tensor);
}

TEST(Executor, AReshapeOrBitCastOfADyingValueTakesItsBufferAndCopiesNothing) {
  // e's value dies at the Reshape (rs), so rs keeps its bytes where they are; d is still
  // read after its Reshape (rd), which therefore copies into a buffer of its own.
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 6]}],
    "nodes": [
      {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
      {"name": "rs", "op": "Reshape", "attrs": {"shape": [2, 12]}, "inputs": ["e:0"]},
      {"name": "bc", "op": "BitCast", "attrs": {"dtype": "i32"}, "inputs": ["rs:0"]},
      {"name": "back", "op": "BitCast", "attrs": {"dtype": "f32"}, "inputs": ["bc:0"]},
      {"name": "n", "op": "Elemwise", "mode": "NEGATE", "inputs": ["back:0"]},
      {"name": "d", "op": "Elemwise", "mode": "SIN", "inputs": ["x"]},
      {"name": "rd", "op": "Reshape", "attrs": {"shape": [24]}, "inputs": ["d:0"]},
      {"name": "m", "op": "Elemwise", "mode": "MUL", "inputs": ["rd:0", "rd:0"]},
      {"name": "f", "op": "Reshape", "attrs": {"shape": [24]}, "inputs": ["d:0"]},
      {"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["m:0", "f:0"]}
    ],
    "outputs": ["n:0", "a:0"]})";
  Graph g = parse_graph_json(text, "aliases.json");
  expect_matches_reference(g, 1e-6);
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  int aliased = 0, copied = 0;
  for (const Step& st : exec.plan().steps()) {
    const Node& n = g.node(st.node);
    if (n.op != OpType::Reshape && n.op != OpType::BitCast) continue;
    const bool same = st.inputs[0].data == st.outputs[0].data;
    if (n.name == "rd") {
      EXPECT_FALSE(same) << "d is read again after rd";
      ++copied;
    } else {
      EXPECT_TRUE(same) << n.name;
      ++aliased;
    }
  }
  EXPECT_EQ(aliased, 4);  // rs, bc, back, and f (d's last reader)
  EXPECT_EQ(copied, 1);
}

// ---- recorded iterations (Backend::record: CUDA graphs on a GPU) ----------------------------

// The CPU backend with a stand-in for stream capture: while recording, each kernel call is
// kept with the views it was given instead of running, and a launch runs the kept calls
// with those views, as a CUDA graph replays its kernels with the pointers captured.
class RecordingBackend final : public WrappingBackend {
 public:
  explicit RecordingBackend(Backend& inner) : WrappingBackend(inner) {}
  struct Call {
    Kernel* kernel;
    std::vector<TensorView> in, out;
  };
  class Kept final : public Kernel {
   public:
    Kept(RecordingBackend& b, std::unique_ptr<Kernel> k) : b_(b), k_(std::move(k)) {}
    void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
      if (!b_.capturing_) return k_->run(in, out);
      b_.calls_.push_back({k_.get(), {in.begin(), in.end()}, {out.begin(), out.end()}});
    }
    void after_iteration() override { k_->after_iteration(); }

   private:
    RecordingBackend& b_;
    std::unique_ptr<Kernel> k_;
  };
  class Replay final : public Recording {
   public:
    Replay(RecordingBackend& b, std::vector<Call> calls) : b_(b), calls_(std::move(calls)) {}
    void launch() override {
      ++b_.launches;
      for (Call& c : calls_) c.kernel->run(c.in, c.out);
    }

   private:
    RecordingBackend& b_;
    std::vector<Call> calls_;
  };
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override {
    return std::make_unique<Kept>(*this, inner().make_kernel(g, n));
  }
  std::unique_ptr<Recording> record(const std::function<void()>& enqueue,
                                    std::string& why) override {
    ++recordings;
    if (fail) {
      why = "a kernel that cannot be captured";
      return nullptr;
    }
    capturing_ = true;
    calls_.clear();
    enqueue();
    capturing_ = false;
    return std::make_unique<Replay>(*this, std::move(calls_));
  }
  int recordings = 0, launches = 0;
  bool fail = false;

 private:
  bool capturing_ = false;
  std::vector<Call> calls_;
};

const char* kRecordedGraph = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [8, 16]},
               {"name": "w", "dtype": "f32", "shape": [16, 4]}],
    "nodes": [
      {"name": "e", "op": "Elemwise", "mode": "TANH", "inputs": ["x"]},
      {"name": "m", "op": "MatMul", "inputs": ["e:0", "w"]},
      {"name": "r", "op": "Elemwise", "mode": "RELU", "inputs": ["m:0"]}
    ],
    "outputs": ["r:0"]})";

// The graph above on the CPU backend through a RecordingBackend.
struct Recorded {
  Graph g = parse_graph_json(kRecordedGraph, "recorded.json");
  cpu::CpuBackend cpu;
  RecordingBackend b{cpu};
  Executor exec{g, b};
};

// Each run's output, from a step-by-step executor of its own (the reference).
void expect_same_as_step_by_step(const Graph& g, std::span<const TensorView> in,
                                 std::span<const TensorView> got) {
  cpu::CpuBackend plain;
  Executor ref(g, plain);
  auto want = ref.run(in);
  test::Mismatch m = test::compare(want[0], got[0], 0, 0);
  EXPECT_EQ(m.index, -1) << "element " << m.index << ": " << m.expected << " vs " << m.actual;
}

TEST(ExecutorRecording, AfterTheFirstRunTheIterationIsRecordedOnceAndLaunched) {
  Recorded r;
  auto& [g, cpu, b, exec] = r;
  std::vector<HostTensor> in = random_inputs(g, 3);
  for (int run = 0; run < 5; ++run) {
    // New values at the same addresses: a launch reads them as the steps would.
    static_cast<float*>(in[0].data())[run] += 1.0f;
    auto out = exec.run(views(in));
    expect_same_as_step_by_step(g, views(in), out);
    EXPECT_EQ(exec.replaying(), run >= 1);
  }
  EXPECT_EQ(b.recordings, 1);
  EXPECT_EQ(b.launches, 4);
  EXPECT_EQ(exec.step_by_step_reason(), "");
}

TEST(ExecutorRecording, InputsAtNewAddressesAreRecordedAgainUpToALimit) {
  Recorded r;
  auto& [g, cpu, b, exec] = r;
  // Two sets of inputs with different values: launching a recording made for the other
  // set would give the other set's results.
  std::vector<HostTensor> a = random_inputs(g, 1), c = random_inputs(g, 2);
  for (int run = 0; run < 2 * Executor::kMaxRecordings + 2; ++run) {
    const std::vector<HostTensor>& in = run % 2 ? c : a;
    auto out = exec.run(views(in));
    expect_same_as_step_by_step(g, views(in), out);
  }
  EXPECT_EQ(b.recordings, Executor::kMaxRecordings);
  EXPECT_FALSE(exec.replaying());
  EXPECT_NE(exec.step_by_step_reason().find("inputs moved"), std::string::npos)
      << exec.step_by_step_reason();
}

TEST(ExecutorRecording, TimedRunsRunStepByStepAndAFailedRecordingSaysWhy) {
  Recorded r;
  auto& [g, cpu, b, exec] = r;
  std::vector<HostTensor> in = random_inputs(g, 3);
  struct Count : StepObserver {
    int steps = 0;
    void on_step(size_t, double) override { ++steps; }
  } timed;
  for (int run = 0; run < 3; ++run) exec.run(views(in), &timed);
  EXPECT_EQ(b.recordings, 0);
  EXPECT_EQ(timed.steps, 3 * static_cast<int>(exec.plan().steps().size()));
  b.fail = true;
  for (int run = 0; run < 3; ++run) expect_same_as_step_by_step(g, views(in), exec.run(views(in)));
  EXPECT_EQ(b.recordings, 1) << "a failed recording is not tried again";
  EXPECT_EQ(exec.step_by_step_reason(), "a kernel that cannot be captured");
  // The CPU backend itself records nothing, and says why.
  Executor plain(g, cpu);
  plain.run(views(in));
  plain.run(views(in));
  EXPECT_FALSE(plain.replaying());
  EXPECT_EQ(plain.step_by_step_reason(), "cpu runs kernels as they are called");
}

// Kernels that check on the host what their launch found (CUDA's Gather) do it once the
// iteration has finished, in step order, timed or not, recorded or not; what they throw is
// the run's error.
TEST(ExecutorRecording, KernelsCheckTheirLaunchesAfterTheIteration) {
  Graph g = parse_graph_json(kRecordedGraph, "recorded.json");
  cpu::CpuBackend cpu;
  std::vector<std::string> log;
  std::string fail_at;
  struct Checked final : Kernel {
    Checked(std::unique_ptr<Kernel> k, std::string name, std::vector<std::string>& log,
            std::string& fail_at)
        : k_(std::move(k)), name_(std::move(name)), log_(log), fail_at_(fail_at) {}
    void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
      log_.push_back("run " + name_);
      k_->run(in, out);
    }
    void after_iteration() override {
      log_.push_back("check " + name_);
      if (fail_at_ == name_) throw Error(name_ + ": index 9 is out of range");
    }
    std::unique_ptr<Kernel> k_;
    std::string name_;
    std::vector<std::string>& log_;
    std::string& fail_at_;
  };
  struct CheckingBackend final : WrappingBackend {
    CheckingBackend(Backend& inner, std::vector<std::string>& log, std::string& fail_at)
        : WrappingBackend(inner), log_(log), fail_at_(fail_at) {}
    std::unique_ptr<Kernel> make_kernel(const Graph& gr, const Node& n) override {
      return std::make_unique<Checked>(inner().make_kernel(gr, n), n.name, log_, fail_at_);
    }
    std::vector<std::string>& log_;
    std::string& fail_at_;
  } checking(cpu, log, fail_at);
  RecordingBackend b(checking);  // records the checking kernels' launches
  Executor exec(g, b);
  std::vector<HostTensor> in = random_inputs(g, 3);
  struct Nothing : StepObserver {
    void on_step(size_t, double) override {}
  } timed;
  const std::vector<std::string> one = {"run e", "run m", "run r", "check e", "check m", "check r"};
  exec.run(views(in), &timed);  // timed
  EXPECT_EQ(log, one);
  log.clear();
  exec.run(views(in));  // recorded, then launched
  EXPECT_EQ(log, one);
  log.clear();
  exec.run(views(in));  // the recording launched
  EXPECT_TRUE(exec.replaying());
  EXPECT_EQ(log, one);
  fail_at = "m";
  try {
    exec.run(views(in));
    ADD_FAILURE() << "the check's error was lost";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "m: index 9 is out of range");
  }
}

TEST(Executor, OutputsThatAreInputsAndUnusedValues) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [7]}],
    "nodes": [{"name": "dead", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
              {"name": "y", "op": "Elemwise", "mode": "NEGATE", "inputs": ["x"]}],
    "outputs": ["y:0", "x"]})";
  expect_matches_reference(parse_graph_json(text, "io.json"), 0);
}

TEST(Executor, WrongInputsAreReportedByName) {
  Graph g = read_graph_json(HF_SOURCE_DIR "/traces/graphs/abc.json");
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  std::vector<HostTensor> in = random_inputs(g, 0);
  std::vector<TensorView> v = views(in);
  v.pop_back();
  EXPECT_THROW(exec.run(v), Error);
  HostTensor wrong(DType::F32, {3});
  v.push_back(wrong.view());
  try {
    exec.run(v);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 'c' must be a contiguous f32[1048576] tensor, got f32[3]");
  }
}

TEST(RandomInputs, AreDeterministicAndRespectInitRanges) {
  Graph g = read_graph_json(HF_SOURCE_DIR "/traces/graphs/adam.json");
  auto a = random_inputs(g, 7), b = random_inputs(g, 7), c = random_inputs(g, 8);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(0, std::memcmp(a[3].data(), b[3].data(), a[3].bytes()));
  EXPECT_NE(0, std::memcmp(a[3].data(), c[3].data(), a[3].bytes()));
  const float* v = a[3].as<float>();  // init [0, 0.01): sqrt must see non-negative values
  for (int64_t i = 0; i < a[3].numel(); ++i) ASSERT_TRUE(v[i] >= 0 && v[i] < 0.01f);
}

}  // namespace
}  // namespace hf
