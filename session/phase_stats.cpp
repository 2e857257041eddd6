#include "session/phase_stats.h"

#include <algorithm>
#include <cmath>

#include "profiler/step_times.h"

namespace hf {

namespace {

// The element at rank ceil(q * n) - 1 of the sorted values (nearest rank): an actual
// iteration's time, never an interpolation.
double nearest_rank(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

std::vector<PhaseStats> phase_stats(std::span<const IterationRecord> iterations) {
  constexpr Phase kOrder[] = {Phase::Warmup,     Phase::Profiling,   Phase::Compiling,
                              Phase::Validating, Phase::Reprofiling, Phase::Steady};
  std::vector<double> unfused;
  for (const IterationRecord& it : iterations)
    if (it.phase == Phase::Profiling) unfused.push_back(it.ms);
  const double base = unfused.empty() ? 0 : median_of(unfused);
  std::vector<PhaseStats> out;
  for (Phase p : kOrder) {
    std::vector<double> ms;
    for (const IterationRecord& it : iterations)
      if (it.phase == p) ms.push_back(it.ms);
    if (ms.empty()) continue;
    PhaseStats s;
    s.phase = p;
    s.count = static_cast<int>(ms.size());
    s.median_ms = median_of(ms);
    s.p90_ms = nearest_rank(ms, 0.9);
    s.max_ms = *std::max_element(ms.begin(), ms.end());
    s.max_over_unfused = base > 0 ? s.max_ms / base : 0;
    out.push_back(s);
  }
  return out;
}

std::optional<double> steady_after_ms(std::span<const IterationRecord> iterations) {
  for (const IterationRecord& it : iterations)
    if (it.phase == Phase::Steady) return it.start_s * 1e3;
  return std::nullopt;
}

}  // namespace hf
