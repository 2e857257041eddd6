// The Hotspots table: ops (unfused profile, fused plan) and regions from report.json, with
// sorting by any column. Missing values are NaN / empty and always sort last.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "viewer/model/report.h"

namespace hf::viewer {

enum class HotspotTable { OpsBefore, OpsAfter, Regions };

enum class HotspotColumn {
  Name,       // node name / kernel
  Op,         // op / "region r: N ops"
  Output,     // output type
  Time,       // median ms (regions: unfused ms)
  Share,      // of the iteration
  Bytes,      // ideal bytes moved (regions: io bytes)
  Gbps,
  PeakShare,  // achieved / probed bandwidth
  Class,      // memory-bound, ...
  Region,
  State,      // the region's decision: swapped, reverted, rejected, ...
  Reason,
  FusedTime,  // regions: measured fused ms
  Saving,     // regions: predicted saving ms
  Compile,    // regions: compile ms
};

struct HotspotRow {
  std::string name, op, output, cls, state, reason, kernel;
  int64_t node_id = -1, region = -1;
  bool fused = false;
  double time_ms, share, bytes, gbps, peak_share, fused_ms, saving_ms, compile_ms;
  HotspotRow();
};

std::vector<HotspotRow> hotspot_rows(const Report& r, HotspotTable table);

// Stable: equal keys keep their order. NaN and "" sort last in both directions.
void sort_hotspots(std::vector<HotspotRow>& rows, HotspotColumn column, bool ascending);

const char* hotspot_column_name(HotspotColumn c);

}  // namespace hf::viewer
