#include "session/selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "profiler/step_times.h"

namespace hf {

namespace {
std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, s * 1e3 >= 1 ? "%.2f ms" : "%.3f ms", s * 1e3);
  return b;
}
std::string pct(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * f);
  return b;
}
}  // namespace

Selection select_region(const RegionCandidate& c, double iteration_s, const MachinePeak& m,
                        const SelectionOptions& o) {
  Selection s;
  double gbps = std::max(m.bandwidth_gbps, c.best_gbps);
  double t_mem = gbps > 0 ? c.io_bytes / (gbps * 1e9) : 0;
  double t_flop = m.gflops > 0 ? c.flops / (m.gflops * 1e9) : 0;
  s.predicted_s = std::max(t_mem, t_flop) + m.launch_us * 1e-6;
  s.saving_s = c.unfused_s - s.predicted_s;
  s.share = iteration_s > 0 ? s.saving_s / iteration_s : 0;
  const bool no_compile = c.cached || c.interpreted;
  s.compile_ms = no_compile ? 0 : o.compile_ms;
  s.payback_iters = s.saving_s > 0 ? s.compile_ms * 1e-3 / s.saving_s : INFINITY;

  char bw[64];
  std::snprintf(bw, sizeof bw, "%.1f GB/s", gbps);
  std::string prediction = "its ops take " + ms(c.unfused_s) + ", a fused kernel ~" +
                           ms(s.predicted_s) + " (" + std::to_string(int64_t(c.io_bytes)) +
                           " bytes at " + bw + ")";
  if (s.saving_s <= 0) {
    s.reason = "no saving predicted: " + prediction;
  } else if (s.share < o.min_share) {
    s.reason = "cold: saves " + ms(s.saving_s) + " per iteration, " + pct(s.share) +
               " of it (threshold " + pct(o.min_share) + "); " + prediction;
  } else if (!no_compile && s.payback_iters > double(o.expected_iters)) {
    s.reason = "not repaid: saves " + ms(s.saving_s) + " per iteration; a ~" +
               std::to_string(int64_t(s.compile_ms)) + " ms compile needs " +
               std::to_string(int64_t(std::ceil(s.payback_iters))) +
               " iterations, the expected run is " + std::to_string(o.expected_iters);
  } else {
    s.selected = true;
    s.reason =
        "hot: saves " + ms(s.saving_s) + " per iteration (" + pct(s.share) + "); " + prediction +
        (c.cached        ? "; kernel cached"
         : c.interpreted ? "; interpreted first, nothing to compile"
                         : "; compile repaid after " +
                               std::to_string(int64_t(std::ceil(s.payback_iters))) + " iterations");
  }
  return s;
}

void select_kernel_group(std::vector<Selection>& selections, bool cached, double iteration_s,
                         const SelectionOptions& o, bool interpreted) {
  if (selections.size() < 2 || iteration_s <= 0) return;
  double saving_s = 0;
  for (const Selection& s : selections) saving_s += std::max(0.0, s.saving_s);
  if (saving_s <= 0) return;
  const double share = saving_s / iteration_s;
  const double payback = cached || interpreted ? 0 : o.compile_ms * 1e-3 / saving_s;
  if (share < o.min_share || payback > double(o.expected_iters)) return;
  const std::string together =
      std::to_string(selections.size()) + " regions of this kernel save " + ms(saving_s) +
      " per iteration together (" + pct(share) + ")" +
      (cached        ? "; kernel cached"
       : interpreted ? "; interpreted first, nothing to compile"
                     : "; compile repaid after " + std::to_string(int64_t(std::ceil(payback))) +
                           " iterations");
  for (Selection& s : selections) {
    if (s.selected || s.saving_s <= 0) continue;
    s.selected = true;
    s.payback_iters = payback;
    s.reason = "hot with its kernel's other regions: saves " + ms(s.saving_s) + " per iteration (" +
               pct(s.share) + "); " + together;
  }
}

Selection select_epilogue(const RegionCandidate& c, double iteration_s) {
  Selection s;
  s.predicted_s = c.heavy_s;
  s.saving_s = c.unfused_s - c.heavy_s;
  s.share = iteration_s > 0 ? s.saving_s / iteration_s : 0;
  s.compile_ms = 0;
  s.payback_iters = 0;
  const std::string what = "its elementwise ops take " + ms(s.saving_s) +
                           " beside the heavy op's " + ms(c.heavy_s) +
                           "; inside its library call they run on blocks in cache";
  if (s.saving_s <= 0) {
    s.reason = "no saving predicted: " + what;
  } else {
    s.selected = true;
    s.reason = "epilogue: saves ~" + ms(s.saving_s) + " per iteration (" + pct(s.share) + "); " +
               what + "; nothing to compile";
  }
  return s;
}

InTurnVerdict judge_in_turn(const std::vector<double>& fused, const std::vector<double>& unfused) {
  InTurnVerdict v;
  v.pairs = static_cast<int>(std::min(fused.size(), unfused.size()));
  if (v.pairs == 0) return v;
  const auto f_end = fused.begin() + v.pairs, u_end = unfused.begin() + v.pairs;
  v.fastest_fused_s = *std::min_element(fused.begin(), f_end);
  v.fastest_unfused_s = *std::min_element(unfused.begin(), u_end);
  v.median_unfused_s = median_of({unfused.begin(), u_end});
  for (int k = 0; k < v.pairs; ++k) v.fused_slower += fused[k] > unfused[k];
  v.slower = (v.fastest_fused_s >= v.fastest_unfused_s && 4 * v.fused_slower >= 3 * v.pairs) ||
             v.fastest_fused_s >= v.median_unfused_s;
  return v;
}

}  // namespace hf
