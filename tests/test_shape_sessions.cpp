// One model at several input signatures (session/shape_sessions.h): a session per
// signature, kept and reused, the least recently used dropped, no compile for a batch size
// after the first, verdicts carried over where they hold (session/region_verdicts.h), also
// to the next process (session/verdict_store.h), and the values of specialised inputs in
// the signature.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "session/shape_sessions.h"
#include "session/verdict_store.h"
#include "tests/support/fixed_machine.h"
#include "tests/support/jit_env.h"

namespace hf {
namespace {

// ---- verdicts: pure ------------------------------------------------------------------------

RegionVerdict verdict(RegionVerdict::Kind kind, double io_bytes) {
  return {kind, io_bytes, "x [64,64]", "its reason"};
}

TEST(RegionVerdicts, EachKindHoldsInTheDirectionItsEconomicsMove) {
  using V = RegionVerdict;
  // Kept: on at least half the bytes, however many more.
  EXPECT_TRUE(carried_reason(verdict(V::Kept, 1000), 100000));
  EXPECT_TRUE(carried_reason(verdict(V::Kept, 1000), 500));
  EXPECT_FALSE(carried_reason(verdict(V::Kept, 1000), 499));
  // Not faster, not worth it: on at most twice the bytes, however many fewer.
  for (V::Kind k : {V::Slower, V::NotWorthIt}) {
    EXPECT_TRUE(carried_reason(verdict(k, 1000), 1));
    EXPECT_TRUE(carried_reason(verdict(k, 1000), 2000));
    EXPECT_FALSE(carried_reason(verdict(k, 1000), 2001));
  }
  // Wrong: the same code at every size.
  EXPECT_TRUE(carried_reason(verdict(V::Wrong, 1000), 1e9));
  EXPECT_TRUE(carried_reason(verdict(V::Wrong, 1000), 1));
  std::string why = *carried_reason(verdict(V::Slower, 1000), 250);
  EXPECT_NE(why.find("decided at x [64,64]"), std::string::npos) << why;
  EXPECT_NE(why.find("1/4 of those bytes"), std::string::npos) << why;
}

TEST(RegionVerdicts, AWrongVerdictWinsElseTheNearestSize) {
  using V = RegionVerdict;
  RegionVerdicts vs;
  vs.record("k", {V::Kept, 1000, "a", ""});
  vs.record("k", {V::Slower, 100, "b", ""});
  EXPECT_EQ(vs.find("k", 900)->at, "a");
  EXPECT_EQ(vs.find("k", 200)->at, "b");
  EXPECT_EQ(vs.find("other", 200), nullptr);
  vs.record("k", {V::Slower, 1000, "a", ""});  // the same signature again: replaced
  EXPECT_EQ(vs.find("k", 900)->kind, V::Slower);
  vs.record("k", {V::Wrong, 5, "c", ""});
  EXPECT_EQ(vs.find("k", 900)->at, "c");
}

// ---- sessions per signature ------------------------------------------------------------------

// y = (x + b)^2 - x over x [n,64], b [64]: one region, b broadcast along the batch.
Graph chain(int64_t n) {
  return parse_graph_json(
      R"({"format": "hotfuse-graph", "version": 1, "name": "chain", "inputs": [
            {"name": "x", "dtype": "f32", "shape": [)" +
          std::to_string(n) + R"(, 64]}, {"name": "b", "dtype": "f32", "shape": [64]}],
          "nodes": [
            {"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["x", "b"], "outputs": ["a"]},
            {"name": "sq", "op": "Elemwise", "mode": "MUL", "inputs": ["a", "a"], "outputs": ["sq"]},
            {"name": "y", "op": "Elemwise", "mode": "SUB", "inputs": ["sq", "x"], "outputs": ["y"]}],
          "outputs": ["y"]})",
      "test");
}

struct Shapes {
  JitEnv env;
  cpu::CpuBackend backend;
  int graphs_made = 0;
  std::unique_ptr<ShapeSessions> sessions;

  explicit Shapes(SessionOptions o, size_t capacity = ShapeSessions::kDefaultCapacity) {
    o.warmup_iters = 0;
    o.warmup_min_s = 0;
    o.profile_iters = o.reprofile_iters = 1;
    o.sync_compile = true;
    sessions = std::make_unique<ShapeSessions>(
        [this](const std::vector<Shape>& shapes, const SmallInputs&) {
          ++graphs_made;
          return chain(shapes.at(0).at(0));
        },
        cpu_session_target(backend, *env.cache), fixed_machine(), o, capacity);
  }

  // Runs batch n until its session settles and checks its outputs against the unfused
  // plan's; returns the session.
  Session& run(int64_t n) {
    Graph g = chain(n);
    std::vector<HostTensor> in = random_inputs(g, static_cast<uint64_t>(n));
    Executor unfused(g, backend);
    std::vector<HostTensor> want = copies(unfused.run(views(in)));
    Session& s = sessions->session_for(views(in));
    std::span<const TensorView> got;
    for (int i = 0; i < 200 && !s.settled(); ++i) got = sessions->run(views(in));
    EXPECT_TRUE(s.settled()) << "batch " << n << ": " << phase_name(s.phase());
    got = sessions->run(views(in));
    Mismatch m = compare(want[0].view(), got[0], fused_tolerance(DType::F32));
    EXPECT_EQ(m.index, -1) << "batch " << n << ": " << m.actual << " vs " << m.expected;
    return s;
  }
  const ShapeRecord& record(const std::string& x_shape) {
    for (const ShapeRecord& r : sessions->shapes())
      if (r.signature.rfind("x " + x_shape, 0) == 0) return r;
    throw std::runtime_error("no signature " + x_shape);
  }
};

SessionOptions fusion_all() {
  SessionOptions o;
  o.policy = FusionPolicy::All;
  return o;
}

TEST(ShapeSessions, EachSignatureKeepsItsSessionAndANewBatchSizeCompilesNothing) {
  Shapes t(fusion_all());
  Session& one = t.run(1);
  const int compiles = t.env.cache->compiles();
  EXPECT_EQ(compiles, 1);
  Session& four = t.run(4);
  t.run(16);
  EXPECT_EQ(t.env.cache->compiles(), compiles) << "batch 4 and 16 reuse batch 1's kernel";
  EXPECT_EQ(&t.run(1), &one) << "batch 1's session is kept";
  EXPECT_EQ(&t.run(4), &four);
  EXPECT_EQ(t.graphs_made, 3);
  EXPECT_EQ(four.kernels_now(), 1);
  EXPECT_EQ(t.record("[1,64]").compiled, 1);
  for (const char* s : {"[4,64]", "[16,64]"}) {
    EXPECT_EQ(t.record(s).compiled, 0) << s;
    EXPECT_EQ(t.record(s).from_cache, 1) << s;
    EXPECT_EQ(t.record(s).sessions, 1) << s;
    EXPECT_TRUE(t.record(s).live) << s;
  }
  EXPECT_EQ(t.record("[1,64]").signature, "x [1,64], b [64]");
}

TEST(ShapeSessions, TheLeastRecentlyUsedSessionIsDropped) {
  Shapes t(fusion_all(), /*capacity=*/2);
  t.run(1);
  t.run(4);
  t.run(1);   // batch 1 is now the most recently used
  t.run(16);  // drops batch 4
  EXPECT_EQ(t.graphs_made, 3);
  EXPECT_FALSE(t.record("[4,64]").live);
  EXPECT_TRUE(t.record("[1,64]").live);
  t.run(4);  // back: planned again, and still nothing to compile
  EXPECT_EQ(t.graphs_made, 4);
  EXPECT_EQ(t.record("[4,64]").sessions, 2);
  EXPECT_EQ(t.record("[4,64]").compiled, 0);
  EXPECT_EQ(t.record("[4,64]").from_cache, 2);
  EXPECT_FALSE(t.record("[1,64]").live) << "dropped when batch 4 came back";
}

TEST(ShapeSessions, AWrongKernelIsNotFusedAgainAtOtherShapes) {
  SessionOptions o = fusion_all();
  int corrupted = 0;
  o.after_fused_run = [&](int, std::span<const TensorView> out) {
    ++corrupted;
    static_cast<float*>(out[0].data)[5] += 1.0f;  // a miscompile
  };
  Shapes t(o);
  Session& first = t.run(8);
  ASSERT_EQ(first.regions().size(), 1u);
  EXPECT_EQ(first.regions()[0].state, RegionState::Reverted);
  const int runs = corrupted;
  Session& next = t.run(64);
  const RegionRecord& r = next.regions()[0];
  EXPECT_EQ(r.state, RegionState::Rejected);
  EXPECT_FALSE(r.carried.empty());
  EXPECT_NE(r.reason.find("not fused: its kernel differed from its ops at x [8,64]"),
            std::string::npos)
      << r.reason;
  EXPECT_LT(r.compile_end_s, 0) << "nothing compiled or loaded for it";
  EXPECT_EQ(corrupted, runs) << "its kernel never ran at batch 64";
  EXPECT_EQ(t.record("[64,64]").carried, 1);
}

// The session side, without timings: a verdict given in SessionOptions::verdicts replaces
// adaptive's own selection where it holds, and is decided again where it does not.
TEST(ShapeSessions, AdaptiveTakesAKeptVerdictOnlyWhereItHolds) {
  JitEnv env;
  cpu::CpuBackend backend;
  Graph g = chain(32);
  const double io_bytes = (2 * 32 * 64 + 64) * 4.0;  // x, b and y, each once
  std::vector<HostTensor> in = random_inputs(g, 3);
  for (double at : {io_bytes / 1.5, io_bytes * 4}) {
    SessionOptions o;
    o.policy = FusionPolicy::Adaptive;
    o.sync_compile = true;
    o.warmup_iters = 0;
    o.warmup_min_s = 0;
    o.profile_iters = 1;
    o.select.min_share = 2;  // left to itself, it fuses nothing
    RegionVerdicts verdicts;
    Session probe(g, backend, *env.cache, fixed_machine(), o);
    verdicts.record(region_key(probe.graph(), probe.regions()[0]),
                    {RegionVerdict::Kept, at, "x [21,64]", "kept"});
    o.verdicts = &verdicts;
    Session s(g, backend, *env.cache, fixed_machine(), o);
    s.run(views(in));  // the profile; then the selection
    const RegionRecord& r = s.regions()[0];
    if (at < io_bytes) {
      EXPECT_TRUE(r.selection.selected) << r.reason;
      EXPECT_NE(r.reason.find("carried over: its kernel was kept there"), std::string::npos)
          << r.reason;
      EXPECT_FALSE(r.carried.empty());
    } else {
      EXPECT_FALSE(r.selection.selected) << r.reason;
      EXPECT_NE(r.reason.find("decided again: the verdict at x [21,64] does not hold"),
                std::string::npos)
          << r.reason;
      EXPECT_TRUE(r.carried.empty());
    }
  }
}

// A graph specialised to an input's value (as an ONNX Reshape's shape given as an input
// makes it) imports again for another value at the same shapes.
TEST(ShapeSessions, TheValuesOfSpecialisedInputsArePartOfTheSignature) {
  JitEnv env;
  cpu::CpuBackend backend;
  int made = 0;
  auto graph = [&](const std::vector<Shape>& shapes, const SmallInputs& small) {
    ++made;
    const int64_t kn = shapes.at(1).at(0);
    Graph g = parse_graph_json(
        R"({"format": "hotfuse-graph", "version": 1, "name": "s", "inputs": [
              {"name": "x", "dtype": "f32", "shape": [4]}, {"name": "k", "dtype": "f32", "shape": [)" +
            std::to_string(kn) + R"(]}],
            "nodes": [{"name": "y", "op": "Elemwise", "mode": "ADD", "inputs": ["x", "x"],
                       "outputs": ["y"]}],
            "outputs": ["y"]})",
        "test");
    // Small inputs, empty ones too, are given to the import.
    EXPECT_TRUE(small.at(1) && small.at(1)->numel() == kn);
    g.specialised_inputs = {"k"};
    return g;
  };
  SessionOptions o;
  o.policy = FusionPolicy::Off;
  o.warmup_iters = 0;
  o.warmup_min_s = 0;
  ShapeSessions sessions(graph, cpu_session_target(backend, *env.cache), fixed_machine(), o);
  HostTensor x(DType::F32, {4}), k(DType::F32, {2});
  for (int i = 0; i < 4; ++i) static_cast<float*>(x.data())[i] = float(i);
  auto set_k = [&](float a) {
    static_cast<float*>(k.data())[0] = static_cast<float*>(k.data())[1] = a;
  };
  std::vector<TensorView> in{x.view(), k.view()};
  set_k(1);
  Session& a = sessions.session_for(in);
  set_k(2);
  Session& b = sessions.session_for(in);
  EXPECT_NE(&a, &b);
  set_k(1);
  EXPECT_EQ(&sessions.session_for(in), &a);
  EXPECT_EQ(made, 2);
  ASSERT_EQ(sessions.shapes().size(), 2u);
  EXPECT_EQ(sessions.shapes()[1].signature, "x [4], k [2]; given k = [2,2]");
  // An empty value (an ONNX ReduceSum's `axes` given as []) is a value like any other.
  HostTensor none(DType::F32, {0});
  std::vector<TensorView> empty{x.view(), none.view()};
  Session& c = sessions.session_for(empty);
  EXPECT_EQ(&sessions.session_for(empty), &c);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(sessions.shapes()[2].signature, "x [4], k [0]; given k = []");
}

// ---- verdicts across processes ----------------------------------------------------------------

// The store as the user has it by default, whatever this test's environment says; restored.
struct VerdictsOn {
  std::optional<std::string> was;
  VerdictsOn() {
    if (const char* v = std::getenv("HOTFUSE_VERDICTS")) was = v;
    ::unsetenv("HOTFUSE_VERDICTS");
  }
  ~VerdictsOn() {
    if (was) ::setenv("HOTFUSE_VERDICTS", was->c_str(), 1);
  }
};

TEST(VerdictStore, KeepsARegionsVerdictsForItsContextOnly) {
  JitEnv env;
  VerdictStore store(env.disk, "machine A");
  store.save("k", {verdict(RegionVerdict::Kept, 1000),
                   {RegionVerdict::Wrong, 5, "x [1,64]", "differed from its ops"}});
  std::vector<RegionVerdict> got = VerdictStore(env.disk, "machine A").load("k");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, RegionVerdict::Kept);
  EXPECT_EQ(got[0].io_bytes, 1000);
  EXPECT_EQ(got[0].at, "x [64,64]");
  EXPECT_EQ(got[0].reason, "its reason");
  EXPECT_EQ(got[1].kind, RegionVerdict::Wrong);
  EXPECT_EQ(got[1].reason, "differed from its ops");
  EXPECT_TRUE(VerdictStore(env.disk, "machine B").load("k").empty()) << "another context";
  EXPECT_TRUE(store.load("other").empty());
}

TEST(VerdictStore, RegionVerdictsReadAndWriteThroughIt) {
  using V = RegionVerdict;
  JitEnv env;
  auto store = std::make_shared<VerdictStore>(env.disk, "context");
  RegionVerdicts(store).record("k", {V::Slower, 100, "b", "not faster"});
  RegionVerdicts next(store);  // the next process
  const RegionVerdict* v = next.find("k", 100);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->kind, V::Slower);
  EXPECT_EQ(v->reason, "not faster");
  next.record("k", {V::Kept, 1000, "a", "faster"});
  RegionVerdicts third(store);
  EXPECT_EQ(third.find("k", 900)->at, "a");
  EXPECT_EQ(third.find("k", 100)->at, "b") << "the other signature's verdict is kept beside it";
  EXPECT_EQ(RegionVerdicts().find("k", 100), nullptr) << "without a store, nothing is read";
}

TEST(VerdictStore, HotfuseVerdictsOffTurnsItOffAndABadValueIsNamed) {
  JitEnv env;
  VerdictsOn on;
  EXPECT_NE(VerdictStore::from_env(env.disk, "c"), nullptr);
  EXPECT_EQ(VerdictStore::from_env(nullptr, "c"), nullptr) << "no disk cache, no store";
  ::setenv("HOTFUSE_VERDICTS", "on", 1);
  EXPECT_NE(VerdictStore::from_env(env.disk, "c"), nullptr);
  ::setenv("HOTFUSE_VERDICTS", "off", 1);
  EXPECT_EQ(VerdictStore::from_env(env.disk, "c"), nullptr);
  ::setenv("HOTFUSE_VERDICTS", "maybe", 1);
  try {
    VerdictStore::from_env(env.disk, "c");
    ADD_FAILURE() << "HOTFUSE_VERDICTS=maybe was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HOTFUSE_VERDICTS='maybe'"), std::string::npos)
        << e.what();
  }
}

SessionOptions quick(SessionOptions o) {
  o.warmup_iters = 0;
  o.warmup_min_s = 0;
  o.profile_iters = o.reprofile_iters = 2;
  o.sync_compile = true;
  return o;
}

// Runs `in` until its session settles.
Session& settle(ShapeSessions& sessions, const std::vector<HostTensor>& in) {
  Session& s = sessions.session_for(views(in));
  for (int i = 0; i < 200 && !s.settled(); ++i) sessions.run(views(in));
  EXPECT_TRUE(s.settled()) << phase_name(s.phase());
  return s;
}

Graph chain_for(const std::vector<Shape>& shapes, const SmallInputs&) {
  return chain(shapes.at(0).at(0));
}

// A second process over the same disk cache (JitEnv::fresh_process) takes the verdicts the
// first one reached: a kernel that computed wrong results is not fused, nor even loaded.
TEST(ShapeSessions, AWrongVerdictOutlivesTheProcess) {
  VerdictsOn on;
  JitEnv env;
  cpu::CpuBackend backend;
  Graph g = chain(8);
  std::vector<HostTensor> in = random_inputs(g, 8);
  {
    SessionOptions miscompiled = quick(fusion_all());
    miscompiled.after_fused_run = [](int, std::span<const TensorView> out) {
      static_cast<float*>(out[0].data)[5] += 1.0f;
    };
    ShapeSessions first(chain_for, cpu_session_target(backend, *env.cache), fixed_machine(),
                        miscompiled);
    EXPECT_EQ(settle(first, in).regions()[0].state, RegionState::Reverted);
  }  // the process ends: what it decided is on disk
  std::unique_ptr<fusion::KernelCache> cache = env.fresh_process();
  ShapeSessions next(chain_for, cpu_session_target(backend, *cache), fixed_machine(),
                     quick(fusion_all()));
  const RegionRecord& r = settle(next, in).regions()[0];
  EXPECT_EQ(r.state, RegionState::Rejected);
  EXPECT_NE(r.reason.find("not fused: its kernel differed from its ops at x [8,64]"),
            std::string::npos)
      << r.reason;
  EXPECT_EQ(cache->compiles() + cache->disk_hits(), 0) << "its kernel was not even loaded";
}

// Not faster is a verdict too: the next process does not fuse the region at that size, nor
// load its kernel. (The earlier process's kernel is made slower by a test hook: a sleep
// against microseconds of ops, whatever this machine's load.)
TEST(ShapeSessions, ASlowerVerdictOutlivesTheProcess) {
  VerdictsOn on;
  JitEnv env;
  cpu::CpuBackend backend;
  SessionOptions o = quick({});
  o.policy = FusionPolicy::Adaptive;
  o.select.min_share = 0;
  o.select.expected_iters = int64_t(1) << 40;  // any saving repays the compile
  Graph g = chain(256);
  std::vector<HostTensor> in = random_inputs(g, 256);
  {
    SessionOptions slowed = o;
    slowed.after_fused_run = [](int, std::span<const TensorView>) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
    ShapeSessions first(chain_for, cpu_session_target(backend, *env.cache), fixed_machine(),
                        slowed);
    const RegionRecord& r = settle(first, in).regions()[0];
    ASSERT_EQ(r.state, RegionState::Reverted) << r.reason;
    EXPECT_NE(r.reason.find("not faster"), std::string::npos) << r.reason;
  }
  std::unique_ptr<fusion::KernelCache> cache = env.fresh_process();
  ShapeSessions next(chain_for, cpu_session_target(backend, *cache), fixed_machine(), o);
  const RegionRecord& r = settle(next, in).regions()[0];
  EXPECT_EQ(r.state, RegionState::Rejected);
  EXPECT_NE(r.reason.find("carried over: its kernel was not faster than its ops (decided at x "
                          "[256,64], b [64]"),
            std::string::npos)
      << r.reason;
  EXPECT_EQ(cache->compiles() + cache->disk_hits(), 0) << "its kernel was not even loaded";
}

// A kernel adaptive kept at this very signature in an earlier process goes from the cache
// straight into the plan: no validating iteration, no re-profile, steady right after the
// profile; the plan is then timed in its first steady iterations, for the report.
TEST(ShapeSessions, AKernelKeptBeforeAtThisSignatureIsNotJudgedAgain) {
  VerdictsOn on;
  JitEnv env;
  cpu::CpuBackend backend;
  SessionOptions o = quick({});
  o.policy = FusionPolicy::Adaptive;
  o.select.min_share = 2;  // left to itself, it fuses nothing
  Graph g = chain(32);
  std::vector<HostTensor> in = random_inputs(g, 3);
  Executor unfused(g, backend);
  std::vector<HostTensor> want = copies(unfused.run(views(in)));
  {  // what the earlier process recorded
    Session probe(g, backend, *env.cache, fixed_machine(), o);
    RegionVerdicts earlier(std::make_shared<VerdictStore>(
        env.disk,
        VerdictStore::context(fixed_machine(), env.cache->toolchain().key_parts(), o.select)));
    earlier.record(region_key(probe.graph(), probe.regions()[0]),
                   {RegionVerdict::Kept, (2 * 32 * 64 + 64) * 4.0, "x [32,64], b [64]", "faster"});
  }
  ShapeSessions sessions(chain_for, cpu_session_target(backend, *env.cache), fixed_machine(), o);
  Session& s = sessions.session_for(views(in));
  std::span<const TensorView> got;
  for (int i = 0; i < 50 && !s.settled(); ++i) got = sessions.run(views(in));
  ASSERT_TRUE(s.settled()) << phase_name(s.phase());
  const RegionRecord& r = s.regions()[0];
  EXPECT_EQ(r.state, RegionState::Swapped) << r.reason;
  EXPECT_TRUE(r.kept_before);
  EXPECT_EQ(r.validation.rfind("passed before: kept at x [32,64], b [64]", 0), 0u) << r.validation;
  for (const IterationRecord& it : s.iterations()) {
    EXPECT_NE(it.phase, Phase::Validating) << "iteration " << it.index;
    EXPECT_NE(it.phase, Phase::Reprofiling) << "iteration " << it.index;
  }
  EXPECT_EQ(s.iterations().size(), size_t(o.profile_iters + 1))
      << "steady after the profile and the iteration that swapped the kernel in";
  EXPECT_LT(r.measured_fused_s, 0) << "the swapped plan is not timed yet";
  for (int i = 0; i <= o.reprofile_iters; ++i) got = sessions.run(views(in));
  EXPECT_GT(r.measured_fused_s, 0) << "timed in its first steady iterations";
  EXPECT_FALSE(s.fused_ops().empty());
  Mismatch m = compare(want[0].view(), got[0], fused_tolerance(DType::F32));
  EXPECT_EQ(m.index, -1) << m.actual << " vs " << m.expected;
}

}  // namespace
}  // namespace hf
