#include "viewer/model/hotspots.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hf::viewer {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void add_decision(HotspotRow& row, const Report& r) {
  if (row.region < 0) {
    if (r.adaptive()) row.state = "not fusible";
    return;
  }
  if (const Region* reg = r.region(row.region)) {
    row.state = reg->state;
    row.reason = reg->reason;
    row.kernel = reg->kernel;
  }
}

std::vector<HotspotRow> op_rows(const Report& r, const std::vector<OpRow>& ops) {
  std::vector<HotspotRow> rows;
  double total = 0;
  for (const OpRow& o : ops) total += o.time_ms;
  for (const OpRow& o : ops) {
    HotspotRow row;
    row.name = o.node;
    row.op = o.op;
    row.output = o.output;
    row.node_id = o.node_id;
    row.region = o.region;
    row.fused = o.fused;
    row.time_ms = o.time_ms;
    row.share = total > 0 ? o.time_ms / total : kNaN;
    row.bytes = o.bytes;
    row.gbps = o.gbps;
    row.peak_share = o.peak_share.value_or(kNaN);
    row.cls = o.cls;
    add_decision(row, r);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

HotspotRow::HotspotRow()
    : time_ms(kNaN),
      share(kNaN),
      bytes(kNaN),
      gbps(kNaN),
      peak_share(kNaN),
      fused_ms(kNaN),
      saving_ms(kNaN),
      compile_ms(kNaN) {}

std::vector<HotspotRow> hotspot_rows(const Report& r, HotspotTable table) {
  if (table == HotspotTable::OpsBefore) return op_rows(r, r.ops);
  if (table == HotspotTable::OpsAfter) return op_rows(r, r.ops_after);
  std::vector<HotspotRow> rows;
  for (const Region& reg : r.regions) {
    HotspotRow row;
    row.name = reg.kernel;
    row.kernel = reg.kernel;
    int ops = 0;
    for (int64_t id : reg.node_ids) {
      const OpRow* o = r.op_before(id);
      ops += o != nullptr;  // constants have no row
    }
    row.op = "region " + std::to_string(reg.id) + ": " +
             std::to_string(ops ? ops : static_cast<int>(reg.node_ids.size())) + " ops";
    row.region = reg.id;
    row.time_ms = reg.unfused_ms.value_or(kNaN);
    row.share = reg.share.value_or(kNaN);
    row.bytes = reg.io_bytes.value_or(kNaN);
    row.fused_ms = reg.fused_ms.value_or(kNaN);
    if (reg.fused_ms && *reg.fused_ms > 0 && reg.io_bytes)
      row.gbps = *reg.io_bytes / (*reg.fused_ms * 1e-3) * 1e-9;
    if (r.machine.present && r.machine.bandwidth_gbps > 0 && std::isfinite(row.gbps))
      row.peak_share = row.gbps / r.machine.bandwidth_gbps;
    row.saving_ms = reg.predicted_saving_ms.value_or(kNaN);
    row.compile_ms = reg.compile_ms.value_or(kNaN);
    row.state = reg.state;
    row.reason = reg.reason;
    if (const OpRow* f = r.fused_row(reg.id)) {
      row.node_id = f->node_id;
      row.cls = f->cls;
      row.output = f->output;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void sort_hotspots(std::vector<HotspotRow>& rows, HotspotColumn column, bool ascending) {
  auto num = [&](const HotspotRow& r) -> double {
    switch (column) {
      case HotspotColumn::Time: return r.time_ms;
      case HotspotColumn::Share: return r.share;
      case HotspotColumn::Bytes: return r.bytes;
      case HotspotColumn::Gbps: return r.gbps;
      case HotspotColumn::PeakShare: return r.peak_share;
      case HotspotColumn::Region: return r.region >= 0 ? static_cast<double>(r.region) : kNaN;
      case HotspotColumn::FusedTime: return r.fused_ms;
      case HotspotColumn::Saving: return r.saving_ms;
      case HotspotColumn::Compile: return r.compile_ms;
      default: return kNaN;
    }
  };
  auto text = [&](const HotspotRow& r) -> const std::string& {
    switch (column) {
      case HotspotColumn::Op: return r.op;
      case HotspotColumn::Output: return r.output;
      case HotspotColumn::Class: return r.cls;
      case HotspotColumn::State: return r.state;
      case HotspotColumn::Reason: return r.reason;
      default: return r.name;
    }
  };
  const bool numeric = column == HotspotColumn::Time || column == HotspotColumn::Share ||
                       column == HotspotColumn::Bytes || column == HotspotColumn::Gbps ||
                       column == HotspotColumn::PeakShare || column == HotspotColumn::Region ||
                       column == HotspotColumn::FusedTime || column == HotspotColumn::Saving ||
                       column == HotspotColumn::Compile;
  std::stable_sort(rows.begin(), rows.end(), [&](const HotspotRow& a, const HotspotRow& b) {
    if (numeric) {
      const double x = num(a), y = num(b);
      const bool xn = std::isnan(x), yn = std::isnan(y);
      if (xn || yn) return !xn && yn;  // missing last
      return ascending ? x < y : x > y;
    }
    const std::string &x = text(a), &y = text(b);
    if (x.empty() || y.empty()) return !x.empty() && y.empty();
    return ascending ? x < y : x > y;
  });
}

const char* hotspot_column_name(HotspotColumn c) {
  switch (c) {
    case HotspotColumn::Name: return "name";
    case HotspotColumn::Op: return "op";
    case HotspotColumn::Output: return "output";
    case HotspotColumn::Time: return "time";
    case HotspotColumn::Share: return "share";
    case HotspotColumn::Bytes: return "bytes";
    case HotspotColumn::Gbps: return "GB/s";
    case HotspotColumn::PeakShare: return "% of peak";
    case HotspotColumn::Class: return "class";
    case HotspotColumn::Region: return "region";
    case HotspotColumn::State: return "decision";
    case HotspotColumn::Reason: return "reason";
    case HotspotColumn::FusedTime: return "fused";
    case HotspotColumn::Saving: return "saving";
    case HotspotColumn::Compile: return "compile";
  }
  return "?";
}

}  // namespace hf::viewer
