// Questions the Timeline asks of a trace, kept out of the drawing code so that they can be
// tested: what a selected time range holds (count / total / mean per event name, as
// Perfetto's area selection and Tracy's find-zone show), and which events match a search
// (Ctrl+F) with next / previous walking the matches in time order.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "viewer/model/trace.h"

namespace hf::viewer {

struct NameStats {
  std::string name;
  int count = 0;
  double total_us = 0;  // the events' whole durations, not only the part inside the range
  double mean_us() const { return count ? total_us / count : 0.0; }
};

// The complete events that overlap [t0, t1] (in either order), grouped by name, largest
// total first (then by name). Instants, flows and counters are not counted.
std::vector<NameStats> range_stats(const Trace& t, double t0, double t1);

// The complete and instant events whose name contains `query` (ASCII case-insensitive), by
// time. An empty query matches nothing.
std::vector<int> search_events(const Trace& t, std::string_view query);

// Walking the matches: the position (index into `matches`) after `current` when `forward`,
// before it otherwise, wrapping around. With no current match (-1) it starts from time `at`:
// the first match at or after it going forward, the last one before it going back. -1 when
// there are no matches.
int step_match(const Trace& t, const std::vector<int>& matches, int current, bool forward,
               double at);

}  // namespace hf::viewer
