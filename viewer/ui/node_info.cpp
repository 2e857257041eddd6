#include "viewer/ui/node_info.h"

#include <cmath>
#include <limits>

#include "viewer/model/format.h"

namespace hf::viewer::ui {

NodeInfo node_info(SharedState& st, int64_t node_id, const LayoutNode* drawn) {
  NodeInfo n;
  n.id = node_id;
  const Report* r = st.report();
  if (r) {
    n.before = r->op_before(node_id);
    n.after = r->op_after(node_id);
    int64_t region = region_of(node_id, r);
    n.region = region >= 0 ? r->region(region) : nullptr;
  }
  const OpRow* row = n.before ? n.before : n.after;
  if (row) {
    n.name = row->node;
    n.op = row->op;
    n.type = row->output;
    n.fused = row->fused;
  }
  if (drawn) {
    if (n.name.empty() && !drawn->lines.empty()) n.name = drawn->lines[0].text;
    if (drawn->lines.size() > 1 && (n.op.empty() || n.op == "Fused")) n.op = drawn->lines[1].text;
    if (n.type.empty() && drawn->lines.size() > 2) n.type = drawn->lines[2].text;
    if (n.op.rfind("Fused", 0) == 0) n.fused = true;
  }
  if (n.name.empty()) n.name = "node " + std::to_string(node_id);
  n.steps = st.step_stats(node_id);
  return n;
}

namespace {

std::string row_line(const OpRow& o, const Report* r) {
  std::string s = format_ms(o.time_ms) + " median";
  if (o.bytes > 0) s += ", " + format_bytes(o.bytes) + ", " + format_gbps(o.gbps);
  if (o.peak_share) s += " (" + strf("%.0f%%", *o.peak_share * 100) + " of peak)";
  if (!o.cls.empty()) s += ", " + o.cls;
  return s;
}

}  // namespace

std::string node_tooltip(const NodeInfo& n, const Report* r) {
  std::string s = n.name + "  (node " + std::to_string(n.id) + ")\n" + n.op;
  if (!n.type.empty()) s += " -> " + n.type;
  if (n.before) s += "\nunfused: " + row_line(*n.before, r);
  if (n.after) s += "\nfused plan: " + row_line(*n.after, r);
  if (n.steps.count > 0) {
    s += "\ntrace: " + std::to_string(n.steps.count) + " steps, median " +
         format_us(n.steps.median_us);
    if (n.steps.steady > 0) s += " (steady " + format_us(n.steps.steady_median_us) + ")";
  }
  if (n.region) {
    s += "\nregion " + std::to_string(n.region->id) + " (" + n.region->kernel + "): " +
         n.region->state;
    if (n.region->unfused_ms && n.region->fused_ms && *n.region->fused_ms > 0) {
      const double speedup = *n.region->unfused_ms / *n.region->fused_ms;
      s += ", " + format_speedup(speedup) + (is_slowdown(speedup) ? " (slower than unfused)" : "");
    }
    if (!n.region->reason.empty()) s += "\n" + n.region->reason;
  }
  s += "\n(click for details)";
  return s;
}

std::string other_node_tooltip(const LayoutNode& n) {
  if (!n.tooltip.empty()) return n.tooltip;
  std::string s;
  for (const TextLine& l : n.lines) s += (s.empty() ? "" : "\n") + l.text;
  return s.empty() ? n.name : s;
}

double node_share(const Report* r, int64_t node_id, bool after) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (!r) return nan;
  const std::vector<OpRow>& rows = after && !r->ops_after.empty() ? r->ops_after : r->ops;
  double total = 0;
  const OpRow* mine = nullptr;
  for (const OpRow& o : rows) {
    total += o.time_ms;
    if (o.node_id == node_id) mine = &o;
  }
  return mine && total > 0 ? mine->time_ms / total : nan;
}

}  // namespace hf::viewer::ui
