#include "profiler/step_times.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "profiler/table_text.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"

namespace hf {

StepTimes::StepTimes(size_t steps, size_t iterations) : times_(steps) {
  for (auto& t : times_) t.reserve(iterations);
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double StepTimes::median(size_t step) const {
  return median_of(times_[step]);
}

std::vector<OpRow> op_rows(const Graph& g, const Plan& plan, const StepTimes& times) {
  std::vector<OpRow> rows;
  for (size_t s = 0; s < plan.steps().size(); ++s) {
    const Step& st = plan.steps()[s];
    const Node& n = g.node(st.node);
    OpRow r;
    r.node = n.name;
    r.op = row_op(n);
    if (!n.outputs.empty()) {
      const Value& v = g.value(n.outputs[0]);
      r.output = std::string(dtype_name(v.dtype)) + to_string(v.shape);
    }
    r.seconds = times.median(s);
    // A Reshape or BitCast the plan put in its input's buffer moves nothing.
    const bool aliased = (n.op == OpType::Reshape || n.op == OpType::BitCast) &&
                         st.inputs[0].data == st.outputs[0].data;
    r.bytes = aliased ? 0 : node_bytes(g, n);
    r.flops = node_flops(g, n);
    rows.push_back(std::move(r));
  }
  return rows;
}

void print_op_table(std::ostream& os, const std::vector<OpRow>& rows, double peak_gflops) {
  double total = 0;
  size_t wn = 4, wo = 2, ws = 6;
  std::vector<std::string> names;  // from the model: printable (runtime/ir/error.h)
  for (const OpRow& r : rows) {
    total += r.seconds;
    names.push_back(printable(r.node));
    wn = std::max(wn, names.back().size());
    wo = std::max(wo, r.op.size());
    ws = std::max(ws, r.output.size());
  }
  char line[512];
  std::snprintf(line, sizeof line, "%4s  %-*s  %-*s  %-*s  %12s  %10s  %8s  %8s", "#", (int)wn,
                "node", (int)wo, "op", (int)ws, "output", "time (med)", "bytes", "GB/s", "GFLOP/s");
  os << line << (peak_gflops > 0 ? "  of peak" : "") << "   share\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const OpRow& r = rows[i];
    std::snprintf(line, sizeof line, "%4zu  %-*s  %-*s  %-*s  %12s  %10s  %8.1f  %8.1f", i, (int)wn,
                  names[i].c_str(), (int)wo, r.op.c_str(), (int)ws, r.output.c_str(),
                  human_time(r.seconds).c_str(), human_bytes(r.bytes).c_str(), r.gbps(),
                  r.gflops());
    os << line;
    if (peak_gflops > 0) {
      std::snprintf(line, sizeof line, "  %6.1f%%", 100 * r.gflops() / peak_gflops);
      os << line;
    }
    std::snprintf(line, sizeof line, "  %5.1f%%\n", total > 0 ? 100 * r.seconds / total : 0.0);
    os << line;
  }
  std::snprintf(line, sizeof line, "%4s  %-*s  %-*s  %-*s  %12s\n", "", (int)wn, "sum of ops",
                (int)wo, "", (int)ws, "", human_time(total).c_str());
  os << line;
}

}  // namespace hf
