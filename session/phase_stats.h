// Per-phase statistics of a session's iterations: how long iterations took while the
// session profiled, compiled, validated and re-profiled, against the unfused median. What
// report.json's `summary.phases` and hotfuse-run's summary show; a stall is a phase's max
// over the unfused median.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "session/session.h"

namespace hf {

struct PhaseStats {
  Phase phase = Phase::Warmup;
  int count = 0;
  double median_ms = 0, p90_ms = 0, max_ms = 0;
  double max_over_unfused = 0;  // max_ms / the profiling iterations' median; 0 without one
};

// One entry per phase that ran, in state-machine order.
std::vector<PhaseStats> phase_stats(std::span<const IterationRecord> iterations);

// When the first steady iteration started, in ms since the session started; none if the
// session never settled.
std::optional<double> steady_after_ms(std::span<const IterationRecord> iterations);

}  // namespace hf
