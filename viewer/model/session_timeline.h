// The adaptive session over time, for the Summary plot and the Timeline's markers: one point
// per iteration (time, phase), the runs of each phase, and the moments that matter (phase
// changes, kernels swapped in, regions reverted, the session's messages).
//
// From report.json `iterations[]`, `regions[]` and `events[]` when there is a report (its
// start_ms and trace.json's ts share one clock: the session's start), else from trace.json's
// iteration events and instants.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "viewer/model/report.h"
#include "viewer/model/trace.h"

namespace hf::viewer {

struct IterationPoint {
  int64_t index = 0;
  std::string phase;
  double start_us = 0, ms = 0;
  int64_t kernels = 0;
};

struct PhaseSpan {
  std::string phase;
  int64_t first = 0, last = 0;  // iteration indices, inclusive
  double start_us = 0, end_us = 0;
};

enum class MarkerKind { Phase, Swap, Revert, Message };

struct SessionMarker {
  MarkerKind kind = MarkerKind::Phase;
  int64_t iteration = -1;
  double ts_us = 0;
  std::string label;
};

struct SessionTimeline {
  std::vector<IterationPoint> iterations;
  std::vector<PhaseSpan> phases;
  std::vector<SessionMarker> markers;  // by time
  int64_t first_swap = -1;             // iteration of the first swap, or -1
  // Median iteration ms of a phase (NaN when none).
  double median_ms(const std::string& phase) const;
};

SessionTimeline session_timeline(const Report* report, const Trace* trace);

// A colour-blind-friendly colour per phase (0xAABBGGRR), shared by the plot and timeline.
uint32_t phase_color(const std::string& phase);

}  // namespace hf::viewer
