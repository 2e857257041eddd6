// The adaptive session: selection and classification on their own, the compile worker,
// and the whole state machine with real compiles (profiling -> compiling -> validating ->
// reprofiling -> steady), including the test hooks for a slow compiler, a wrong kernel and
// a slow kernel. Also run under ThreadSanitizer (ctest -L tsan, tests/tsan.cmake).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <sstream>
#include <thread>

#include "profiler/op_class.h"
#include "profiler/step_times.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "session/background_share.h"
#include "session/compile_worker.h"
#include "session/page_faulter.h"
#include "session/phase_stats.h"
#include "session/session.h"
#include "session/session_report.h"
#include "tests/support/fixed_machine.h"
#include "tests/support/graph_text.h"
#include "tests/support/jit_env.h"
#include "tests/support/scoped_env.h"

namespace hf {
namespace {

// ---- classification and selection: pure functions -------------------------------------

TEST(OpClass, RooflineWithALaunchFloor) {
  MachinePeak m = fixed_machine();
  EXPECT_EQ(classify({1e-3, 8e6, 1e6}, m), OpClass::MemoryBound);     // 0.125 flop/byte
  EXPECT_EQ(classify({1e-3, 8e6, 400e6}, m), OpClass::ComputeBound);  // 50 flop/byte
  EXPECT_EQ(classify({4e-6, 64, 16}, m), OpClass::LaunchBound);       // ideal 3 ns << 5 us
  EXPECT_NEAR(peak_share({1e-3, 10e6, 0}, m), 0.5, 1e-12);            // 10 GB/s of 20
}

TEST(OpTable, SaysWhatShareOfTheFlopPeakEachOpReached) {
  OpRow mm{.node = "mm",
           .op = "MatMul",
           .output = "f32[8,8]",
           .seconds = 1e-3,
           .bytes = 1e6,
           .flops = 3e8};
  OpRow add{.node = "add",
            .op = "Elemwise ADD",
            .output = "f32[8,8]",
            .seconds = 1e-3,
            .bytes = 1e6,
            .flops = 0};
  std::ostringstream with, without;
  print_op_table(with, {mm, add}, 400);  // 300 GFLOP/s of 400
  print_op_table(without, {mm, add});
  EXPECT_NE(with.str().find("of peak"), std::string::npos) << with.str();
  EXPECT_NE(with.str().find("300.0    75.0%"), std::string::npos) << with.str();
  EXPECT_EQ(without.str().find("of peak"), std::string::npos) << without.str();
  EXPECT_NE(without.str().find("300.0"), std::string::npos) << without.str();
}

// The session's next plan is faulted in on the faulter's thread while iterations run: it
// must touch every page of the plan's own buffers (touch_pages then has nothing left), keep
// their bytes, and stop at once when cancelled, before the plan goes away.
TEST(PageFaulter, FaultsInEveryPageKeepsTheResultsAndCancels) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1000000]}],
    "nodes": [
      {"name": "y", "op": "Elemwise", "mode": "EXP", "inputs": ["x"]},
      {"name": "z", "op": "Elemwise", "mode": "MUL", "inputs": ["y:0", "x"]}],
    "outputs": ["z:0"]})";
  Graph g = parse_graph_json(text, "fault");
  cpu::CpuBackend backend;
  Executor plain(g, backend), touched(g, backend);
  PageFaulter faulter;
  EXPECT_FALSE(faulter.busy());
  faulter.start({&touched.plan()});
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (faulter.busy() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_FALSE(faulter.busy());
  EXPECT_TRUE(touched.plan().touch_pages(1));  // every page done: nothing left to touch
  std::vector<HostTensor> in = random_inputs(g, 5);
  auto a = plain.run(views(in));
  auto b = touched.run(views(in));
  EXPECT_EQ(std::memcmp(a[0].data, b[0].data, a[0].numel() * sizeof(float)), 0);

  for (int i = 0; i < 20; ++i) {  // cancelled at once, the plan destroyed right after
    auto doomed = std::make_unique<Executor>(g, backend);
    faulter.start({&doomed->plan()});
    faulter.cancel();
    EXPECT_FALSE(faulter.busy());
  }
}

TEST(Selection, HotRegionIsSelectedWithItsNumbers) {
  RegionCandidate c{.unfused_s = 4e-3, .io_bytes = 20e6, .flops = 1e6, .best_gbps = 0};
  Selection s = select_region(c, 10e-3, fixed_machine(), {});
  EXPECT_TRUE(s.selected) << s.reason;
  EXPECT_NEAR(s.predicted_s, 1e-3 + 5e-6, 1e-9);  // 20 MB at 20 GB/s, plus one launch
  EXPECT_NEAR(s.saving_s, 4e-3 - 1e-3 - 5e-6, 1e-9);
  EXPECT_NEAR(s.share, s.saving_s / 10e-3, 1e-12);
  EXPECT_NE(s.reason.find("hot"), std::string::npos) << s.reason;
}

// The in-turn verdict (selection.h): slower when the fastest iteration says so and the
// kernel lost at least three quarters of the pairs, or when its fastest iteration is no
// faster than the ops' median.
TEST(Selection, InTurnVerdictRevertsOnlyAKernelSlowerBeyondTheNoise) {
  // The regression this guards: one quick ops iteration makes the fastest comparison say
  // "slower", while the kernel won most pairs (the GPT-2 block's GELU epilogue).
  const std::vector<double> fused = {4.75, 4.72, 4.71, 4.74, 4.73, 4.76, 4.72, 4.74};
  const std::vector<double> ops = {4.80, 4.79, 4.68, 4.81, 4.78, 4.70, 4.83, 4.79};
  InTurnVerdict v = judge_in_turn(fused, ops);
  EXPECT_EQ(v.pairs, 8);
  EXPECT_EQ(v.fused_slower, 2);
  EXPECT_DOUBLE_EQ(v.fastest_fused_s, 4.71);
  EXPECT_DOUBLE_EQ(v.fastest_unfused_s, 4.68);
  EXPECT_FALSE(v.slower);

  // Slower in every pair: reverted; slower in 6 of 8 (three quarters): reverted.
  std::vector<double> slow = ops;
  for (double& t : slow) t += 0.05;
  EXPECT_TRUE(judge_in_turn(slow, ops).slower);
  slow[0] = slow[1] = ops[0] - 0.2;  // two pairs won, and the fastest iteration is now the kernel's
  EXPECT_FALSE(judge_in_turn(slow, ops).slower);
  slow[0] = slow[1] = ops[1] - 0.05;  // two pairs won, the fastest still the ops'
  v = judge_in_turn(slow, ops);
  EXPECT_EQ(v.fused_slower, 6);
  EXPECT_TRUE(v.slower);
  slow[3] = ops[3] - 0.01;  // a third pair won, the fastest still the ops': 5 of 8 is noise
  EXPECT_FALSE(judge_in_turn(slow, ops).slower);

  // A kernel whose fastest iteration took as long as the ops' median one is slower, however
  // few pairs say so: here one ops iteration was disturbed (a preempted thread), 2 of 3.
  v = judge_in_turn({5, 5, 5}, {0.5, 9, 0.5});
  EXPECT_EQ(v.fused_slower, 2);
  EXPECT_DOUBLE_EQ(v.median_unfused_s, 0.5);
  EXPECT_TRUE(v.slower);

  // Sides of different lengths are paired up to the shorter; nothing to pair decides nothing.
  EXPECT_EQ(judge_in_turn({1, 2, 3}, {1, 2}).pairs, 2);
  v = judge_in_turn({}, ops);
  EXPECT_EQ(v.pairs, 0);
  EXPECT_FALSE(v.slower);
  EXPECT_LT(v.fastest_fused_s, 0);
}

TEST(Selection, BetterAchievedBandwidthLowersThePrediction) {
  RegionCandidate c{.unfused_s = 4e-3, .io_bytes = 20e6, .flops = 0, .best_gbps = 100};
  EXPECT_NEAR(select_region(c, 10e-3, fixed_machine(), {}).predicted_s, 0.2e-3 + 5e-6, 1e-9);
}

TEST(Selection, ColdRegionIsRejectedWithTheThreshold) {
  RegionCandidate c{.unfused_s = 30e-6, .io_bytes = 4096, .flops = 0};
  Selection s = select_region(c, 10e-3, fixed_machine(), {.min_share = 0.01});
  EXPECT_FALSE(s.selected);
  EXPECT_NE(s.reason.find("cold"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("threshold 1.0%"), std::string::npos) << s.reason;
}

TEST(Selection, CompileMustBeRepaidUnlessCached) {
  RegionCandidate c{.unfused_s = 2e-3, .io_bytes = 20e6, .flops = 0};  // saves ~1 ms
  SelectionOptions o{.min_share = 0.01, .expected_iters = 100, .compile_ms = 500};
  Selection s = select_region(c, 10e-3, fixed_machine(), o);
  EXPECT_FALSE(s.selected);
  EXPECT_NEAR(s.payback_iters, 0.5 / s.saving_s, 1e-6);
  EXPECT_NE(s.reason.find("not repaid"), std::string::npos) << s.reason;
  c.cached = true;
  s = select_region(c, 10e-3, fixed_machine(), o);
  EXPECT_TRUE(s.selected) << s.reason;
  EXPECT_EQ(s.compile_ms, 0);
}

TEST(Selection, NoSavingNoKernel) {
  RegionCandidate c{.unfused_s = 0.5e-3, .io_bytes = 20e6, .flops = 0};
  Selection s = select_region(c, 10e-3, fixed_machine(), {});
  EXPECT_FALSE(s.selected);
  EXPECT_LT(s.saving_s, 0);
  EXPECT_NE(s.reason.find("no saving"), std::string::npos) << s.reason;
}

TEST(Selection, RegionsOfOneKernelAreJudgedTogether) {
  // Two regions of one kernel, each saving 0.6% of a 10 ms iteration: cold alone, 1.2%
  // together. A third region of it that saves nothing stays out.
  const MachinePeak m = fixed_machine();
  RegionCandidate c{.unfused_s = 65e-6, .io_bytes = 4096, .flops = 0, .cached = true};
  RegionCandidate none{.unfused_s = 0, .io_bytes = 4096, .flops = 0, .cached = true};
  const SelectionOptions o{.min_share = 0.01, .expected_iters = 10000, .compile_ms = 500};
  std::vector<RegionCandidate> cs = {c, c, none};
  std::vector<Selection> ss;
  for (const RegionCandidate& x : cs) ss.push_back(select_region(x, 10e-3, m, o));
  ASSERT_FALSE(ss[0].selected) << ss[0].reason;
  ASSERT_GT(ss[0].share, 0.005);
  ASSERT_LT(ss[0].share, 0.01);
  select_kernel_group(ss, true, 10e-3, o);
  for (int i : {0, 1}) {
    EXPECT_TRUE(ss[i].selected);
    EXPECT_EQ(ss[i].reason.rfind("hot with its kernel's other regions: ", 0), 0u) << ss[i].reason;
    EXPECT_NE(ss[i].reason.find("3 regions of this kernel save"), std::string::npos)
        << ss[i].reason;
  }
  EXPECT_FALSE(ss[2].selected) << ss[2].reason;

  // Together still under the threshold: nothing changes.
  std::vector<Selection> one = {select_region(c, 10e-3, m, o)};
  select_kernel_group(one, true, 10e-3, o);
  EXPECT_FALSE(one[0].selected);
  std::vector<Selection> two = {select_region(c, 30e-3, m, o), select_region(c, 30e-3, m, o)};
  select_kernel_group(two, true, 30e-3, o);
  EXPECT_FALSE(two[0].selected || two[1].selected) << two[0].reason;

  // Uncached, the compile is repaid by the two together or not at all.
  c.cached = false;
  std::vector<Selection> unpaid = {
      select_region(c, 10e-3, m, {.min_share = 0, .expected_iters = 5000}),
      select_region(c, 10e-3, m, {.min_share = 0, .expected_iters = 5000})};
  ASSERT_FALSE(unpaid[0].selected) << unpaid[0].reason;  // 500 ms over ~60 us: ~8000 iterations
  select_kernel_group(unpaid, false, 10e-3, {.min_share = 0, .expected_iters = 5000});
  EXPECT_TRUE(unpaid[0].selected && unpaid[1].selected) << unpaid[0].reason;
  EXPECT_NE(unpaid[0].reason.find("compile repaid after"), std::string::npos) << unpaid[0].reason;
}

// ---- the compile worker ------------------------------------------------------------------

Graph parse(const std::string& nodes, const std::string& inputs, const std::string& outputs) {
  return graph_text(inputs, nodes, outputs);
}

// A hot chain on 2^22 floats and a cold one on 16: the session should fuse only the first.
Graph hot_and_cold() {
  return parse(
      R"({"name": "sq", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"], "outputs": ["sq"]},
         {"name": "sum", "op": "Elemwise", "mode": "ADD", "inputs": ["sq", "y"], "outputs": ["sum"]},
         {"name": "half", "op": "Elemwise", "mode": "MUL", "inputs": ["sum", "y"], "outputs": ["half"]},
         {"name": "hot", "op": "Elemwise", "mode": "SUB", "inputs": ["half", "x"], "outputs": ["hot"]},
         {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["t"], "outputs": ["e"]},
         {"name": "f", "op": "Elemwise", "mode": "ADD", "inputs": ["e", "t"], "outputs": ["f"]},
         {"name": "cold", "op": "Elemwise", "mode": "NEGATE", "inputs": ["f"], "outputs": ["cold"]})",
      R"({"name": "x", "dtype": "f32", "shape": [4194304]},
         {"name": "y", "dtype": "f32", "shape": [4194304]},
         {"name": "t", "dtype": "f32", "shape": [16]})",
      R"("hot", "cold")");
}

TEST(CompileWorker, CompilesHottestFirstAndNeverBlocksTakeDone) {
  JitEnv env;
  Graph g = hot_and_cold();
  fusion::Detection d = fusion::detect_regions(g);
  ASSERT_EQ(d.regions.size(), 2u);
  std::vector<int> order;
  std::mutex mu;
  std::atomic<bool> release{false};
  CompileWorker worker(*env.cache, [&](int region) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(region);
  });
  std::vector<CompileJob> jobs;
  for (int r = 0; r < 2; ++r)
    jobs.push_back({r, fusion::build_region_kernel(g, d.regions[r]).spec, "test", double(r)});
  worker.submit(jobs);
  EXPECT_TRUE(worker.take_done().empty());  // the job is held by the hook: no blocking
  EXPECT_EQ(worker.pending(), 2);
  release = true;
  worker.wait_idle();
  std::vector<CompileDone> done = worker.take_done();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(order, (std::vector<int>{1, 0}));  // priority 1 first
  for (const CompileDone& c : done) EXPECT_TRUE(c.outcome.ok) << c.outcome.message;
  EXPECT_EQ(worker.pending(), 0);
}

// Two regions with the same kernel, compiled by two workers at once: one compile, and the
// other worker waits for it instead of compiling the same source again.
TEST(CompileWorker, ParallelWorkersCompileASharedKernelOnce) {
  JitEnv env;
  Graph g = hot_and_cold();
  fusion::Detection d = fusion::detect_regions(g);
  ASSERT_FALSE(d.regions.empty());
  const fusion::KernelSpec spec = fusion::build_region_kernel(g, d.regions[0]).spec;
  CompileWorker worker(*env.cache, {}, /*background=*/false, /*threads=*/2);
  worker.submit({{0, spec, "test", 1}, {1, spec, "test", 1}});
  worker.wait_idle();
  std::vector<CompileDone> done = worker.take_done();
  ASSERT_EQ(done.size(), 2u);
  for (const CompileDone& c : done) EXPECT_TRUE(c.outcome.ok) << c.outcome.message;
  EXPECT_EQ(env.cache->compiles(), 1);
  EXPECT_EQ(env.cache->memory_hits(), 1);
}

// ---- phase statistics: a pure function of the iteration records ---------------------------

TEST(PhaseStats, MedianNearestRankP90MaxAndTheStallRatioPerPhase) {
  std::vector<IterationRecord> its;
  auto add = [&](Phase p, double ms) {
    const double start = its.empty() ? 0 : its.back().start_s + its.back().ms * 1e-3;
    its.push_back({static_cast<int>(its.size()), start, ms, p, 3});
  };
  add(Phase::Warmup, 9);
  for (double ms : {4.0, 2.0, 3.0, 5.0}) add(Phase::Profiling, ms);  // median 3.5
  for (int i = 1; i <= 10; ++i) add(Phase::Compiling, i);            // p90: the 9th of 10
  add(Phase::Validating, 7);
  add(Phase::Steady, 3);
  add(Phase::Steady, 2);
  std::vector<PhaseStats> st = phase_stats(its);
  ASSERT_EQ(st.size(), 5u);  // no reprofiling iteration ran
  EXPECT_EQ(st[0].phase, Phase::Warmup);
  EXPECT_EQ(st[1].phase, Phase::Profiling);
  EXPECT_EQ(st[1].count, 4);
  EXPECT_DOUBLE_EQ(st[1].median_ms, 3.5);
  EXPECT_DOUBLE_EQ(st[1].max_over_unfused, 5 / 3.5);
  EXPECT_EQ(st[2].phase, Phase::Compiling);
  EXPECT_DOUBLE_EQ(st[2].median_ms, 5.5);
  EXPECT_DOUBLE_EQ(st[2].p90_ms, 9);
  EXPECT_DOUBLE_EQ(st[2].max_ms, 10);
  EXPECT_DOUBLE_EQ(st[2].max_over_unfused, 10 / 3.5);
  EXPECT_EQ(st[3].phase, Phase::Validating);
  EXPECT_DOUBLE_EQ(st[3].p90_ms, 7);
  EXPECT_EQ(st[4].phase, Phase::Steady);
  EXPECT_EQ(st[4].count, 2);
  ASSERT_TRUE(steady_after_ms(its).has_value());
  EXPECT_NEAR(*steady_after_ms(its), (9 + 14 + 55 + 7) * 1.0, 1e-9);

  its.pop_back();
  its.pop_back();
  EXPECT_FALSE(steady_after_ms(its).has_value());
  for (IterationRecord& it : its)
    if (it.phase == Phase::Profiling) it.phase = Phase::Warmup;
  for (const PhaseStats& p : phase_stats(its)) EXPECT_EQ(p.max_over_unfused, 0);  // no base
}

// The background's credit per iteration: the share of the unfused median, plus what the
// plan in use saved against it, less the inline work; an iteration of a plan no slower than
// the unfused median then ends at (1 + share) of it, never later.
TEST(BackgroundShare, AFasterPlanGivesWhatItSavedAndNoMore) {
  const double unfused = 10e-3, share = 0.15;
  EXPECT_DOUBLE_EQ(background_credit_s(share, unfused, unfused, 0), 1.5e-3);
  EXPECT_DOUBLE_EQ(background_credit_s(share, unfused, 6e-3, 0), 5.5e-3);
  EXPECT_DOUBLE_EQ(background_credit_s(share, unfused, 12e-3, 0), 1.5e-3);  // slower: the share
  EXPECT_DOUBLE_EQ(background_credit_s(share, unfused, 6e-3, 1e-3), 4.5e-3);
  for (double plan : {1e-3, 4e-3, 9.9e-3, 10e-3})
    for (double inline_s : {0.0, 0.5e-3, 2e-3})
      EXPECT_NEAR(plan + inline_s + background_credit_s(share, unfused, plan, inline_s),
                  (1 + share) * unfused, 1e-12);
}

// ---- the session -------------------------------------------------------------------------

const MachinePeak& this_machine() {
  static MachinePeak m = [] {
    cpu::ThreadPool& pool = cpu::ThreadPool::global();
    return measure_machine(pool);
  }();
  return m;
}

struct Fixture {
  JitEnv env;
  Graph g;
  cpu::CpuBackend backend;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> want;  // unfused outputs
  explicit Fixture(Graph graph) : g(std::move(graph)) {
    inputs = random_inputs(g, 5);
    Executor unfused(g, backend);
    want = copies(unfused.run(views(inputs)));
  }
  // Runs until steady (or the time limit), checking every iteration's outputs. The limit
  // stands for a hang: under ThreadSanitizer an iteration of the 2^22-element graphs takes
  // about half a second, and a check in blocks takes an observed iteration per block.
  void settle(Session& s, double seconds = 300) {
    auto t0 = std::chrono::steady_clock::now();
    while (!s.settled()) {
      expect_matches(s.run(views(inputs)), s);
      ASSERT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                seconds)
          << "not steady; phase " << phase_name(s.phase());
    }
    for (int i = 0; i < 3; ++i) expect_matches(s.run(views(inputs)), s);
  }
  void expect_matches(std::span<const TensorView> got, const Session& s) {
    for (size_t i = 0; i < got.size(); ++i) {
      Mismatch m = compare(want[i].view(), got[i], fused_tolerance(got[i].dtype));
      EXPECT_EQ(m.index, -1) << "iteration " << s.iterations().size() - 1 << " ("
                             << phase_name(s.iterations().back().phase) << ") output " << i
                             << " element " << m.index << ": " << m.actual << " vs " << m.expected;
    }
  }
};

int region_with(const Session& s, const std::string& node) {
  for (const RegionRecord& r : s.regions())
    for (NodeId n : r.nodes)
      if (s.graph().node(n).name == node) return r.id;
  return -1;
}

TEST(Session, FusesTheHotChainAndSaysWhyNotTheColdOne) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.sync_compile = true;
  o.trace = true;
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  f.settle(s);
  int hot = region_with(s, "hot"), cold = region_with(s, "cold");
  ASSERT_GE(hot, 0);
  ASSERT_GE(cold, 0);
  const RegionRecord& h = s.regions()[hot];
  const RegionRecord& c = s.regions()[cold];
  EXPECT_EQ(h.state, RegionState::Swapped) << h.reason;
  EXPECT_TRUE(h.validation.rfind("passed", 0) == 0) << h.validation;
  // (Its steady median against the profiling window's is a timing under whatever load the
  // machine has: not asserted. That it was kept says the re-profile found it faster.)
  EXPECT_GT(h.measured_fused_s, 0);
  EXPECT_EQ(c.state, RegionState::Rejected);
  EXPECT_NE(c.reason.find("cold"), std::string::npos) << c.reason;
  EXPECT_EQ(s.kernels_before(), 7);
  EXPECT_EQ(s.kernels_now(), 4);  // the hot chain is one kernel; the cold one stays
  EXPECT_LT(s.peak_bytes_now(), s.peak_bytes_before());  // intermediates released
  // Re-profiling ran the fused plan (4 kernels; first its cold run) and the plan it replaced
  // (7) in turn, and judged the kernel pair by pair (selection.h judge_in_turn).
  std::vector<int> reprofiled;
  for (const IterationRecord& it : s.iterations())
    if (it.phase == Phase::Reprofiling) reprofiled.push_back(it.kernels);
  ASSERT_EQ(reprofiled.size(), 1u + 2u * static_cast<size_t>(o.reprofile_iters));
  for (size_t i = 0; i < reprofiled.size(); ++i)
    EXPECT_EQ(reprofiled[i], i > 0 && i % 2 == 0 ? 7 : 4) << "re-profiled iteration " << i;
  EXPECT_GT(h.reprofiled_fused_s, 0);
  EXPECT_GT(h.reprofiled_unfused_s, 0);
  EXPECT_EQ(h.reprofiled_pairs, o.reprofile_iters);
  EXPECT_LE(h.reprofiled_fused_slower, h.reprofiled_pairs);
  // Kept, so the verdict did not find it slower by the pairs (nor by the ops' median).
  EXPECT_FALSE(h.reprofiled_fused_s >= h.reprofiled_unfused_s &&
               4 * h.reprofiled_fused_slower >= 3 * h.reprofiled_pairs);

  // The phases ran in order, and the report holds the public fields.
  std::vector<Phase> seen;
  for (const IterationRecord& it : s.iterations())
    if (seen.empty() || seen.back() != it.phase) seen.push_back(it.phase);
  EXPECT_EQ(seen, (std::vector<Phase>{Phase::Warmup, Phase::Profiling, Phase::Validating,
                                      Phase::Reprofiling, Phase::Steady}));
  nlohmann::json r = session_report(s, {"hot_and_cold", 3});
  for (const char* k : {"unfused_ms", "fused_ms", "speedup", "kernels_before", "kernels_after",
                        "compile_ms_total", "cache_hits", "peak_bytes_before", "peak_bytes_after"})
    EXPECT_TRUE(r["summary"].contains(k)) << k;
  const nlohmann::json& sum = r["summary"];
  EXPECT_NEAR(sum["speedup"].get<double>(),
              sum["unfused_ms"].get<double>() / sum["fused_ms"].get<double>(),
              1e-9 * sum["speedup"].get<double>());
  ASSERT_EQ(r["regions"].size(), 2u);
  EXPECT_EQ(r["regions"][cold]["state"], "rejected");
  EXPECT_EQ(r["regions"][hot]["reprofiled_iterations"], o.reprofile_iters);
  EXPECT_EQ(r["regions"][hot]["reprofiled_fused_slower"], h.reprofiled_fused_slower);
  EXPECT_TRUE(r["regions"][cold]["reprofiled_iterations"].is_null());
  EXPECT_TRUE(r["regions"][cold]["reprofiled_fused_slower"].is_null());
  EXPECT_EQ(r["ops"].size(), 7u);
  for (const auto& op : r["ops"])
    for (const char* k : {"time_ms", "bytes", "gbps", "peak_share", "class"})
      EXPECT_TRUE(op.contains(k)) << k;
  for (const auto& it : r["iterations"]) EXPECT_TRUE(it.contains("phase"));
  // The per-phase statistics and when the session settled.
  const auto& phases = r["summary"]["phases"];
  EXPECT_EQ(phases["profiling"]["count"], o.profile_iters);
  EXPECT_EQ(phases["validating"]["count"], 1);
  EXPECT_DOUBLE_EQ(phases["profiling"]["median_ms"].get<double>(),
                   r["summary"]["unfused_ms"].get<double>());
  EXPECT_FALSE(phases.contains("compiling"));  // sync: selection to swap is two boundaries
  ASSERT_TRUE(r["summary"]["steady_after_ms"].is_number());
  EXPECT_GT(r["summary"]["steady_after_ms"].get<double>(), 0);

  // The trace: every step of every iteration but the validating one, in order, each
  // inside its iteration, the fused kernel labelled with its region.
  std::vector<int> per_iteration(s.iterations().size(), 0);
  double last_end = 0;
  int last_iteration = -1;
  bool saw_fused = false;
  for (const StepRecord& st : s.traced_steps()) {
    const IterationRecord& it = s.iterations().at(st.iteration);
    ++per_iteration[st.iteration];
    EXPECT_GE(st.dur_s, 0);
    if (st.iteration == last_iteration) {
      EXPECT_GE(st.start_s, last_end - 1e-9);
    }
    EXPECT_GE(st.start_s, it.start_s - 1e-9);
    EXPECT_LE(st.start_s + st.dur_s, it.start_s + it.ms * 1e-3 + 1e-9);
    last_end = st.start_s + st.dur_s;
    last_iteration = st.iteration;
    const TraceLabel& l = s.trace_labels().at(st.label);
    if (l.fused) {
      saw_fused = true;
      EXPECT_EQ(l.region, hot);
    }
  }
  EXPECT_TRUE(saw_fused);
  for (const IterationRecord& it : s.iterations())
    EXPECT_EQ(per_iteration[it.index], it.phase == Phase::Validating ? 0 : it.kernels)
        << "iteration " << it.index;
}

TEST(Session, SlowCompilerNeverStallsIterations) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  // A compiler that takes as long as 5 iterations, however slow they are (ThreadSanitizer
  // makes them ~10x slower), with a time limit rather than a hang if the session stalls.
  std::atomic<int> ran{0};
  o.before_compile = [&](int) {
    auto t0 = std::chrono::steady_clock::now();
    const int start = ran;
    while (ran < start + 5 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  while (!s.settled()) {
    f.expect_matches(s.run(views(f.inputs)), s);
    ++ran;
    ASSERT_LT(ran, 100000);
  }
  int hot = region_with(s, "hot");
  ASSERT_EQ(s.regions()[hot].state, RegionState::Swapped) << s.regions()[hot].reason;
  int compiling = 0;
  for (const IterationRecord& it : s.iterations()) {
    if (it.phase != Phase::Compiling) continue;
    ++compiling;
    // An iteration that waited for the compile would last until the compiler's 60 s limit
    // (the compile waits for 5 iterations); a loaded machine's slow iteration is far less.
    EXPECT_LT(it.ms, 30'000) << "iteration " << it.index << " waited for the compile";
  }
  EXPECT_GE(compiling, 4) << "iterations kept running unfused while the kernel compiled";
  EXPECT_GT(s.regions()[hot].swapped_at,
            s.iterations().front().index + o.warmup_iters + o.profile_iters);
}

// Two hot chains on 2^22 floats, each its own region (a copy between them).
Graph two_hot_chains() {
  return parse(
      R"({"name": "sq0", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"], "outputs": ["s0"]},
         {"name": "sum0", "op": "Elemwise", "mode": "ADD", "inputs": ["s0", "x"], "outputs": ["b0"]},
         {"name": "copy", "op": "Concat", "attrs": {"axis": 0}, "inputs": ["b0"], "outputs": ["c"]},
         {"name": "sq1", "op": "Elemwise", "mode": "MUL", "inputs": ["c", "c"], "outputs": ["s1"]},
         {"name": "sum1", "op": "Elemwise", "mode": "ADD", "inputs": ["s1", "c"], "outputs": ["b1"]})",
      R"({"name": "x", "dtype": "f32", "shape": [4194304]})", R"("b1")");
}

// A re-profile times the plans' steps only, so a compile still running keeps its share
// between them: the second kernel's compile (held until the first kernel's re-profile is
// over) gets slices in that re-profile's iterations, as in compiling ones.
TEST(Session, ACompileKeepsItsShareWhileAnotherKernelIsReprofiled) {
  Fixture f(two_hot_chains());
  SessionOptions o;
  o.interpret_first = false;  // both regions compile before their first swap
  std::atomic<bool> release{false};
  int second = -1;
  o.before_compile = [&](int region) {
    auto t0 = std::chrono::steady_clock::now();
    while (region == second && !release &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  ASSERT_EQ(s.regions().size(), 2u);
  second = region_with(s, "sq1");
  const int first = region_with(s, "sq0");
  bool reprofiled = false;
  int held_until = -1;  // the last iteration before the second compile was let go
  for (int i = 0; !s.settled(); ++i) {
    f.expect_matches(s.run(views(f.inputs)), s);
    ASSERT_LT(i, 100000);
    reprofiled |= s.phase() == Phase::Reprofiling;
    if (!release && reprofiled && s.phase() != Phase::Reprofiling) {
      held_until = static_cast<int>(s.iterations().size()) - 1;
      release = true;
    }
  }
  ASSERT_GE(held_until, 0) << "the first kernel was never re-profiled alone";
  EXPECT_EQ(s.regions()[first].state, RegionState::Swapped) << s.regions()[first].reason;
  EXPECT_EQ(s.regions()[second].state, RegionState::Swapped) << s.regions()[second].reason;
  // Every re-profiling iteration before the release but the window's last (which judges)
  // gave the held compiler a slice: at least the 0.25 ms worth stopping for, well within
  // a share of these iterations' 0.15 x several ms.
  int reprofiling = 0, with_share = 0;
  for (const IterationRecord& it : s.iterations()) {
    if (it.index >= held_until) break;
    if (it.phase != Phase::Reprofiling) continue;
    ++reprofiling;
    with_share += it.ms - it.plan_ms >= 0.2;
  }
  EXPECT_GE(reprofiling, o.reprofile_iters);
  EXPECT_GE(with_share, reprofiling / 2) << "of " << reprofiling << " re-profiling iterations";
}

// Five cheap ops on 4 MiB arrays: one interpreted pass is far faster than five unfused
// ones, and small enough to compile and validate quickly under the sanitizers.
Graph cheap_chain() {
  return parse(
      R"({"name": "sq", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"], "outputs": ["sq"]},
         {"name": "sum", "op": "Elemwise", "mode": "ADD", "inputs": ["sq", "y"], "outputs": ["sum"]},
         {"name": "half", "op": "Elemwise", "mode": "MUL", "inputs": ["sum", "y"], "outputs": ["half"]},
         {"name": "diff", "op": "Elemwise", "mode": "SUB", "inputs": ["half", "x"], "outputs": ["diff"]},
         {"name": "out", "op": "Elemwise", "mode": "MUL", "inputs": ["diff", "diff"], "outputs": ["out"]})",
      R"({"name": "x", "dtype": "f32", "shape": [1048576]},
         {"name": "y", "dtype": "f32", "shape": [1048576]})",
      R"("out")");
}

// A machine whose bandwidth predicts every fused kernel at ~0: whatever an interpreted
// kernel takes, a compiled one is predicted to save it, so the session asks for a compile.
MachinePeak compiles_always_pay() {
  MachinePeak m = this_machine();
  m.bandwidth_gbps = 1e6;
  return m;
}

// Adaptive swaps a region in with its spec interpreted before anything compiles; where a
// compiled kernel could still save enough, it compiles it in the background, validates it
// and judges it against the interpreted kernel, keeping the faster.
TEST(Session, RegionsRunInterpretedBeforeAnyCompileAndCompileWhereItPays) {
  Fixture f(cheap_chain());
  SessionOptions o;
  o.select.min_share = 0;  // any saving over the interpreted kernel is worth a compile
  o.select.expected_iters = int64_t(1) << 40;
  Session s(f.g, f.backend, *f.env.cache, compiles_always_pay(), o);
  const int r = region_with(s, "sq");
  ASSERT_GE(r, 0);
  int first_swap = -1;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; !s.settled(); ++i) {
    f.expect_matches(s.run(views(f.inputs)), s);
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(240))
        << "not steady; phase " << phase_name(s.phase());
    if (first_swap < 0 && s.regions()[r].state == RegionState::Swapped) {
      first_swap = i;
      EXPECT_EQ(s.regions()[r].tier, fusion::KernelTier::Interpreted);
      EXPECT_EQ(f.env.cache->compiles(), 0) << "a compile before the first swap";
    }
  }
  const RegionRecord& rec = s.regions()[r];
  ASSERT_GE(first_swap, 0) << rec.reason;
  EXPECT_EQ(rec.state, RegionState::Swapped) << rec.reason;
  EXPECT_GT(rec.interpreted_s, 0);
  EXPECT_GT(rec.compile_ms, 0);  // compiled afterwards
  EXPECT_FALSE(rec.cache_hit);
  // The compiled kernel was judged against the interpreted one; or, where the interpreted
  // kernel lost to the ops (under the sanitizers, whose checks slow its many short loops),
  // the region waited unfused for its compiled kernel, judged against the ops.
  const bool interpreted_lost = rec.tier_reason.rfind("compiled: interpreted, its kernel", 0) == 0;
  const bool kept_compiled = rec.tier == fusion::KernelTier::Compiled;
  EXPECT_EQ(rec.tier_reason.rfind(kept_compiled ? "compiled: " : "interpreted: its compiled", 0),
            0u)
      << rec.tier_reason;
  if (!interpreted_lost)
    EXPECT_NE(rec.tier_reason.find("against the interpreted kernel's"), std::string::npos)
        << rec.tier_reason;
}

// Where no compile can be repaid, the region stays interpreted and nothing compiles.
TEST(Session, InterpretedRegionIsNotCompiledWhereNoCompileCanPay) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.select.compile_ms = 1e12;
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  f.settle(s);
  const RegionRecord& rec = s.regions()[region_with(s, "hot")];
  EXPECT_EQ(f.env.cache->compiles(), 0);
  if (rec.state == RegionState::Reverted) {
    // The interpreted kernel lost to the ops (under the sanitizers, whose checks slow its
    // many short loops), and no compile could pay either: unfused.
    EXPECT_NE(rec.reason.find("not faster"), std::string::npos) << rec.reason;
    return;
  }
  EXPECT_EQ(rec.state, RegionState::Swapped) << rec.reason;
  EXPECT_NE(rec.reason.find("interpreted first, nothing to compile"), std::string::npos)
      << rec.reason;
  EXPECT_EQ(rec.tier, fusion::KernelTier::Interpreted);
  EXPECT_EQ(rec.tier_reason.rfind("interpreted, not compiled: ", 0), 0u) << rec.tier_reason;
  EXPECT_LT(s.kernels_now(), s.kernels_before());
}

// A compiled kernel that fails to build leaves its region as it was: interpreted.
TEST(Session, AFailedCompileLeavesTheRegionInterpreted) {
  ScopedEnv cxx("HOTFUSE_CXX", "/bin/false");
  Fixture f(cheap_chain());
  SessionOptions o;
  o.select.min_share = 0;
  o.select.expected_iters = int64_t(1) << 40;
  Session s(f.g, f.backend, *f.env.cache, compiles_always_pay(), o);
  f.settle(s);
  const RegionRecord& rec = s.regions()[region_with(s, "sq")];
  if (rec.tier_reason.rfind("compiled: interpreted, its kernel", 0) == 0) {
    // The interpreted kernel lost to the ops (under the sanitizers): the region waited
    // unfused for its compiled kernel, which failed, so unfused it stays.
    EXPECT_EQ(rec.state, RegionState::Failed) << rec.reason;
    EXPECT_NE(rec.reason.find(rec.kernel), std::string::npos) << rec.reason;
    return;
  }
  EXPECT_EQ(rec.state, RegionState::Swapped) << rec.reason;
  EXPECT_EQ(rec.tier, fusion::KernelTier::Interpreted);
  EXPECT_EQ(rec.tier_reason.rfind("interpreted: ", 0), 0u) << rec.tier_reason;
  EXPECT_NE(rec.tier_reason.find(rec.kernel), std::string::npos) << rec.tier_reason;
}

TEST(Session, WrongKernelIsCaughtByValidationAndReverted) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.sync_compile = true;
  int hot = -1;
  o.after_fused_run = [&](int region, std::span<const TensorView> out) {
    if (region == hot) static_cast<float*>(out[0].data)[123] += 1.0f;  // a miscompile
  };
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  hot = region_with(s, "hot");
  f.settle(s);  // every returned output still matches: validation returns unfused results
  const RegionRecord& r = s.regions()[hot];
  EXPECT_EQ(r.state, RegionState::Reverted);
  EXPECT_TRUE(r.validation.rfind("failed", 0) == 0) << r.validation;
  EXPECT_NE(r.reason.find("element 123"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find(".cpp"), std::string::npos) << "the source is kept: " << r.reason;
  EXPECT_EQ(s.kernels_now(), s.kernels_before());
}

// A region with two live-outs: validation runs its own ops alone on the inputs the kernel
// read and compares every live-out, each with fused_tolerance: a change within it passes, one
// beyond it in the second output only is caught, and that iteration's results stay right.
Graph two_live_outs() {
  return parse(
      R"({"name": "sq", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"], "outputs": ["sq"]},
         {"name": "sum", "op": "Elemwise", "mode": "ADD", "inputs": ["sq", "y"], "outputs": ["sum"]},
         {"name": "prod", "op": "Elemwise", "mode": "MUL", "inputs": ["sum", "y"], "outputs": ["prod"]},
         {"name": "a", "op": "Elemwise", "mode": "SUB", "inputs": ["prod", "x"], "outputs": ["a"]},
         {"name": "b", "op": "Elemwise", "mode": "ADD", "inputs": ["prod", "sq"], "outputs": ["b"]},
         {"name": "after", "op": "Elemwise", "mode": "NEGATE", "inputs": ["b"], "outputs": ["after"]})",
      R"({"name": "x", "dtype": "f32", "shape": [1048576]},
         {"name": "y", "dtype": "f32", "shape": [1048576]})",
      R"("a", "after")");
}

TEST(Session, ValidationComparesEveryLiveOutWithTheFusedTolerance) {
  for (float nudge : {1e-7f, 1.0f}) {
    SCOPED_TRACE(nudge);
    Fixture f(two_live_outs());
    SessionOptions o;
    o.policy = FusionPolicy::All;
    o.after_fused_run = [&](int, std::span<const TensorView> out) {
      if (out.size() < 2) return;
      float& v = static_cast<float*>(out[1].data)[5];
      v += nudge * std::max(1.0f, std::fabs(v));
    };
    Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
    f.settle(s);
    ASSERT_EQ(s.regions().size(), 1u);
    const RegionRecord& r = s.regions()[0];
    ASSERT_EQ(fusion::build_region_kernel(s.graph(), fusion::detect_regions(s.graph()).regions[0])
                  .outputs.size(),
              2u);
    if (nudge < 1e-5f) {
      EXPECT_EQ(r.state, RegionState::Swapped) << r.reason;
      EXPECT_EQ(r.validation.rfind("passed", 0), 0u) << r.validation;
    } else {
      EXPECT_EQ(r.state, RegionState::Reverted);
      EXPECT_NE(r.reason.find("element 5"), std::string::npos) << r.reason;
      EXPECT_EQ(s.kernels_now(), s.kernels_before());
    }
  }
}

// x * x + y - x over `n` elements: one region, "hot", that reads both graph inputs.
Graph square_plus_minus(int64_t n) {
  const std::string shape = "[" + std::to_string(n) + "]";
  return parse(
      R"({"name": "sq", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"], "outputs": ["sq"]},
         {"name": "sum", "op": "Elemwise", "mode": "ADD", "inputs": ["sq", "y"], "outputs": ["sum"]},
         {"name": "hot", "op": "Elemwise", "mode": "SUB", "inputs": ["sum", "x"], "outputs": ["hot"]})",
      R"({"name": "x", "dtype": "f32", "shape": )" + shape + R"(},
         {"name": "y", "dtype": "f32", "shape": )" +
          shape + "}",
      R"("hot")");
}

// A training loop feeds new inputs every iteration. A kernel is validated on the inputs of
// the iteration whose unfused live-outs it is compared with, though it runs in a later
// iteration's share (short iterations bank their share for many iterations): here every
// iteration's x differs, so a kernel run on a later x would fail validation.
TEST(Session, ValidationRunsTheKernelOnTheObservedIterationsInputs) {
  Fixture f(square_plus_minus(4096));
  SessionOptions o;
  o.warmup_min_s = 0;
  o.select.min_share = 0;  // a tiny graph: fuse it anyway
  o.select.expected_iters = 1'000'000'000;
  const Session* session = nullptr;
  int first_kernel_run = -1;  // the iteration after which the fused kernel first ran
  o.after_fused_run = [&](int, std::span<const TensorView>) {
    if (first_kernel_run < 0) first_kernel_run = static_cast<int>(session->iterations().size()) - 1;
  };
  MachinePeak machine = this_machine();
  machine.bandwidth_gbps = 1e6;  // every region's predicted kernel time ~0: always selected
  Session s(f.g, f.backend, *f.env.cache, machine, o);
  session = &s;
  Executor unfused(f.g, f.backend);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; !s.settled() || i < 4; ++i) {
    f.inputs[0].view().as<float>()[0] = 0.001f * static_cast<float>(i);
    const std::vector<HostTensor> want = copies(unfused.run(views(f.inputs)));
    std::span<const TensorView> got = s.run(views(f.inputs));
    ASSERT_EQ(compare(want[0].view(), got[0], fused_tolerance(got[0].dtype)).index, -1)
        << "iteration " << i;
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(300))
        << phase_name(s.phase());
  }
  int observed = -1;  // the first validation's (a compiled kernel may follow an interpreted one)
  for (const IterationRecord& it : s.iterations())
    if (it.phase == Phase::Validating && observed < 0) observed = it.index;
  ASSERT_GE(observed, 0);
  EXPECT_GE(first_kernel_run, observed);
  const RegionRecord& r = s.regions()[region_with(s, "hot")];
  EXPECT_EQ(r.validation.rfind("passed", 0), 0u) << r.validation;
  EXPECT_EQ(r.reason.find("differs"), std::string::npos) << r.reason;
}

// A kernel that reads graph inputs and takes longer than half an iteration's share of
// background work is checked a block of rows at a time, each block right after an observed
// iteration and on that iteration's inputs (new every iteration here): no validating
// iteration runs the whole kernel beside the unfused ops. It passes, every iteration's
// results match the unfused graph's, and a kernel wrong in its last element only is caught.
TEST(Session, ALongKernelThatReadsInputsIsCheckedABlockPerObservedIteration) {
  // 2^21: its ops move 64 MB, over two of the 0.125 ms half slices (the smallest) even at
  // 300 GB/s.
  constexpr int64_t kN = int64_t(1) << 21;
  for (bool wrong : {false, true}) {
    SCOPED_TRACE(wrong ? "wrong in its last element" : "right");
    // The region is the whole iteration, so its check would take several slices of 15% of
    // one on any machine.
    Fixture f(square_plus_minus(kN));
    SessionOptions o;
    o.warmup_min_s = 0;
    o.after_fused_run = [&](int, std::span<const TensorView> out) {
      if (wrong) static_cast<float*>(out[0].data)[kN - 1] += 1.0f;
    };
    MachinePeak machine = this_machine();
    machine.bandwidth_gbps = 1e6;  // the region is always selected
    Session s(f.g, f.backend, *f.env.cache, machine, o);
    Executor unfused(f.g, f.backend);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; !s.settled() || i < 4; ++i) {
      f.inputs[0].view().as<float>()[kN - 1 - i % 7] = 0.001f * static_cast<float>(i);
      const std::vector<HostTensor> want = copies(unfused.run(views(f.inputs)));
      std::span<const TensorView> got = s.run(views(f.inputs));
      ASSERT_EQ(compare(want[0].view(), got[0], fused_tolerance(got[0].dtype)).index, -1)
          << "iteration " << i << " (" << phase_name(s.iterations().back().phase) << ")";
      ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(300))
          << phase_name(s.phase());
    }
    const RegionRecord& r = s.regions()[region_with(s, "hot")];
    int validating = 0;
    for (const IterationRecord& it : s.iterations()) validating += it.phase == Phase::Validating;
    if (wrong) {
      EXPECT_EQ(r.state, RegionState::Reverted) << r.reason;
      EXPECT_NE(r.reason.find("element " + std::to_string(kN - 1)), std::string::npos) << r.reason;
      EXPECT_EQ(s.kernels_now(), s.kernels_before());
      continue;
    }
    EXPECT_EQ(r.state, RegionState::Swapped) << r.reason;
    ASSERT_EQ(r.validation.rfind("passed", 0), 0u) << r.validation;
    const size_t in = r.validation.find("run in ");
    ASSERT_NE(in, std::string::npos) << r.validation;
    const int blocks = std::stoi(r.validation.substr(in + 7));
    EXPECT_GE(blocks, 2) << r.validation;
    EXPECT_GE(validating, blocks) << "one observed iteration per block";
  }
}

// A hook that makes region `hot`'s fused kernel at least four times as slow as the ops it
// replaced took when profiled, however fast this machine is; `hot` and `session` are read
// when it runs. Four, not two: adaptive judges the kernel against those ops re-timed in turn
// with it, and a machine that got busier since the profile (parallel tests) slows them too.
// Not more: every fused iteration sleeps it, and under ThreadSanitizer the ops take long.
decltype(SessionOptions::after_fused_run) much_slower(const int& hot,
                                                      const Session* const& session) {
  return [&hot, &session](int region, std::span<const TensorView>) {
    double unfused = session->regions()[hot].candidate.unfused_s;
    if (region == hot) std::this_thread::sleep_for(std::chrono::duration<double>(4 * unfused));
  };
}

TEST(Session, SlowerKernelIsRevertedAfterReprofiling) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.sync_compile = true;
  int hot = -1;
  const Session* session = nullptr;
  o.after_fused_run = much_slower(hot, session);
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  session = &s;
  hot = region_with(s, "hot");
  f.settle(s);
  const RegionRecord& r = s.regions()[hot];
  EXPECT_EQ(r.state, RegionState::Reverted) << r.reason;
  EXPECT_TRUE(r.validation.rfind("passed", 0) == 0) << r.validation;
  EXPECT_NE(r.reason.find("not faster"), std::string::npos) << r.reason;
  EXPECT_GE(r.measured_fused_s, 2 * r.candidate.unfused_s);
  EXPECT_GE(r.reprofiled_fused_s, r.reprofiled_unfused_s);
  EXPECT_GT(r.reprofiled_unfused_s, 0);
  EXPECT_EQ(s.kernels_now(), s.kernels_before());
}

// An interpreted kernel slower than the ops it replaced (here made slow by the test hook)
// is not the end of its region: it runs unfused until its compiled kernel is ready, which
// is then validated and judged like any.
TEST(Session, ASlowInterpretedKernelGivesWayToItsCompiledOne) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  const Session* session = nullptr;
  int hot = -1;
  const auto slow = much_slower(hot, session);
  // Slow where its speed is judged, in the re-profile: its check runs a block of rows per
  // run, and a sleep per run would make the blocks together many times the whole.
  o.after_fused_run = [&](int region, std::span<const TensorView> out) {
    if (session->regions()[hot].tier == fusion::KernelTier::Interpreted &&
        session->phase() == Phase::Reprofiling)
      slow(region, out);
  };
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  session = &s;
  hot = region_with(s, "hot");
  f.settle(s);
  const RegionRecord& rec = s.regions()[hot];
  EXPECT_EQ(rec.state, RegionState::Swapped) << rec.reason;
  EXPECT_EQ(rec.tier, fusion::KernelTier::Compiled);
  EXPECT_EQ(rec.tier_reason.rfind("compiled: interpreted, its kernel took", 0), 0u)
      << rec.tier_reason;
  EXPECT_GE(rec.interpreted_s, 2 * rec.candidate.unfused_s);
  EXPECT_EQ(f.env.cache->compiles(), 1);
}

TEST(Session, CachedKernelsAreSelectedWithoutCompileCost) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.sync_compile = true;
  {
    Session first(f.g, f.backend, *f.env.cache, this_machine(), o);
    f.settle(first);
  }
  auto second_process = f.env.fresh_process();
  Session s(f.g, f.backend, *second_process, this_machine(), o);
  f.settle(s);
  const RegionRecord& r = s.regions()[region_with(s, "hot")];
  EXPECT_TRUE(r.candidate.cached);
  EXPECT_TRUE(r.cache_hit);
  EXPECT_EQ(r.selection.compile_ms, 0);
  EXPECT_EQ(second_process->compiles(), 0);
}

// ---- every --fusion mode is a policy of the one session ---------------------------------

TEST(SessionPolicy, OffProfilesAndFusesNothing) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.policy = FusionPolicy::Off;
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  f.settle(s);
  EXPECT_GT(s.median_ms(Phase::Profiling), 0);
  EXPECT_EQ(s.unfused_ops().size(), static_cast<size_t>(s.kernels_before()));
  EXPECT_EQ(s.kernels_now(), s.kernels_before());
  ASSERT_FALSE(s.regions().empty());
  for (const RegionRecord& r : s.regions()) {
    EXPECT_EQ(r.state, RegionState::Rejected);
    EXPECT_NE(r.reason.find("--fusion off"), std::string::npos) << r.reason;
  }
  EXPECT_EQ(f.env.cache->compiles(), 0);
  EXPECT_EQ(session_report(s, {"t.json", 3})["summary"]["fusion"], "off");
}

TEST(SessionPolicy, StaticSwapsInTheValidatedPatternRewrites) {
  // a*b+c and relu(x+y): FUSE_MUL_ADD3 and FUSE_ADD_RELU; no kernel is compiled.
  Fixture f(parse(
      R"({"name": "ab", "op": "Elemwise", "mode": "MUL", "inputs": ["a", "b"], "outputs": ["ab"]},
         {"name": "abc", "op": "Elemwise", "mode": "ADD", "inputs": ["ab", "c"], "outputs": ["abc"]},
         {"name": "s", "op": "Elemwise", "mode": "ADD", "inputs": ["abc", "b"], "outputs": ["s"]},
         {"name": "r", "op": "Elemwise", "mode": "RELU", "inputs": ["s"], "outputs": ["r"]})",
      R"({"name": "a", "dtype": "f32", "shape": [1000, 3]},
         {"name": "b", "dtype": "f32", "shape": [3]},
         {"name": "c", "dtype": "f32", "shape": [1000, 3]})",
      R"("r")"));
  SessionOptions o;
  o.policy = FusionPolicy::Static;
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  f.settle(s);  // every iteration, the validating one included, matches unfused
  EXPECT_EQ(s.static_rewrites(), 2);
  EXPECT_EQ(s.kernels_before(), 4);
  EXPECT_EQ(s.kernels_now(), 2);
  EXPECT_TRUE(s.regions().empty());  // static detects no regions
  EXPECT_FALSE(s.fused_ops().empty());
  EXPECT_EQ(f.env.cache->compiles(), 0);
  bool validated = false;
  for (const IterationRecord& it : s.iterations()) validated |= it.phase == Phase::Validating;
  EXPECT_TRUE(validated);
  nlohmann::json r = session_report(s, {"t.json", 3});
  EXPECT_EQ(r["summary"]["static_rewrites"], 2);
  EXPECT_EQ(r["summary"]["kernels_after"], 2);
  EXPECT_FALSE(r["summary"]["fused_ms"].is_null());
}

TEST(SessionPolicy, AllFusesEveryRegionAndKeepsASlowKernel) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.policy = FusionPolicy::All;  // compiles synchronously without being asked
  int hot = -1;
  const Session* session = nullptr;
  o.after_fused_run = much_slower(hot, session);
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  session = &s;
  hot = region_with(s, "hot");
  f.settle(s);
  // The cold region too, whatever the profile said; and the slow one stays: `all` fuses
  // what it was asked to, only adaptive judges speed.
  for (const RegionRecord& r : s.regions()) {
    EXPECT_EQ(r.state, RegionState::Swapped) << r.id << ": " << r.reason;
    EXPECT_TRUE(r.selection.selected);
  }
  EXPECT_GE(s.regions()[hot].measured_fused_s, 2 * s.regions()[hot].candidate.unfused_s);
  EXPECT_EQ(s.kernels_now(), 2);
  // No iteration ran while a compile was outstanding: selection to swap is one boundary.
  for (const IterationRecord& it : s.iterations()) EXPECT_NE(it.phase, Phase::Compiling);
  EXPECT_EQ(session_report(s, {"t.json", 3})["summary"]["fusion"], "all");
}

// Four chains on 2^20 floats, each after a copy (a one-input Concat: a barrier), so each
// region reads the one before through a value the plan computes.
Graph chains_behind_barriers() {
  std::string nodes, in = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string k = std::to_string(i);
    if (i > 0) {
      nodes += R"({"name": "copy)" + k +
               R"(", "op": "Concat", "attrs": {"axis": 0}, "inputs": [")" + in +
               R"("], "outputs": ["c)" + k + R"("]},)";
      in = "c" + k;
    }
    nodes += R"({"name": "sq)" + k + R"(", "op": "Elemwise", "mode": "MUL", "inputs": [")" + in +
             R"(", ")" + in + R"("], "outputs": ["s)" + k + R"("]},)";
    nodes += R"({"name": "sum)" + k + R"(", "op": "Elemwise", "mode": "ADD", "inputs": ["s)" + k +
             R"(", ")" + in + R"("], "outputs": ["b)" + k + R"("]})" + (i < 3 ? "," : "");
    in = "b" + k;
  }
  return parse(nodes, R"({"name": "x", "dtype": "f32", "shape": [1048576]})", R"("b3")");
}

// What the checks need kept (each region's live-ins and live-outs) is more than the plan's
// own buffers, which it reuses along the chain: a round keeps about one plan's worth, so
// the regions are observed over several validating iterations, and all of them pass.
TEST(SessionPolicy, ValidationKeepsAboutOnePlanOfValuesPerRound) {
  Fixture f(chains_behind_barriers());
  SessionOptions o;
  o.policy = FusionPolicy::All;
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  ASSERT_EQ(s.regions().size(), 4u);
  f.settle(s);
  int validating = 0;
  for (const IterationRecord& it : s.iterations()) {
    validating += it.phase == Phase::Validating;
    EXPECT_NE(it.phase, Phase::Compiling);  // waited for: the rounds follow one another
  }
  EXPECT_GE(validating, 2);
  for (const RegionRecord& r : s.regions())
    EXPECT_EQ(r.state, RegionState::Swapped) << r.id << ": " << r.reason << " " << r.validation;
  EXPECT_EQ(s.kernels_now(), 7);  // 4 fused + 3 copies
}

TEST(SessionPolicy, WrongKernelIsRevertedInEveryPolicy) {
  Fixture f(hot_and_cold());
  SessionOptions o;
  o.policy = FusionPolicy::All;
  int hot = -1;
  o.after_fused_run = [&](int region, std::span<const TensorView> out) {
    if (region == hot) static_cast<float*>(out[0].data)[7] += 1.0f;
  };
  Session s(f.g, f.backend, *f.env.cache, this_machine(), o);
  hot = region_with(s, "hot");
  f.settle(s);
  EXPECT_EQ(s.regions()[hot].state, RegionState::Reverted);
  EXPECT_NE(s.regions()[hot].reason.find("element 7"), std::string::npos);
}

TEST(SessionPolicy, NamesRoundTrip) {
  for (FusionPolicy p :
       {FusionPolicy::Off, FusionPolicy::Static, FusionPolicy::All, FusionPolicy::Adaptive})
    EXPECT_EQ(parse_policy(policy_name(p)), p);
  EXPECT_FALSE(parse_policy("fast").has_value());
}

}  // namespace
}  // namespace hf
