#include "viewer/model/report.h"

#include "viewer/model/json_fields.h"

namespace hf::viewer {

using json = nlohmann::json;

namespace {

Summary parse_summary(const json& s) {
  const std::string p = "summary";
  Summary out;
  out.graph = string_or(s, "graph", p);
  out.graph_file = string_or(s, "graph_file", p);
  out.fusion = string_or(s, "fusion", p);
  out.phase = string_or(s, "phase", p);
  out.iterations = int_or(s, "iterations", p, 0);
  out.unfused_ms = opt_number(s, "unfused_ms", p);
  out.fused_ms = opt_number(s, "fused_ms", p);
  out.speedup = opt_number(s, "speedup", p);
  out.kernels_before = opt_int(s, "kernels_before", p);
  out.kernels_after = opt_int(s, "kernels_after", p);
  out.compile_ms_total = opt_number(s, "compile_ms_total", p);
  out.cache_hits = opt_int(s, "cache_hits", p);
  out.peak_bytes_before = opt_int(s, "peak_bytes_before", p);
  out.peak_bytes_after = opt_int(s, "peak_bytes_after", p);
  out.regions_detected = opt_int(s, "regions_detected", p);
  out.regions_selected = opt_int(s, "regions_selected", p);
  out.regions_kept = opt_int(s, "regions_kept", p);
  out.regions_reverted = opt_int(s, "regions_reverted", p);
  out.regions_failed = opt_int(s, "regions_failed", p);
  out.iterations_total = opt_int(s, "iterations_total", p);
  out.iterations_listed = opt_int(s, "iterations_listed", p);
  return out;
}

Machine parse_machine(const json& root) {
  Machine m;
  if (!root.contains("machine") || root["machine"].is_null()) return m;
  const json& j = object_field(root, "machine", "");
  const std::string p = "machine";
  m.present = true;
  m.cpu = string_or(j, "cpu", p);
  m.source = string_or(j, "source", p);
  m.threads = int_or(j, "threads", p, 0);
  m.bandwidth_gbps = number_or(j, "bandwidth_gbps", p, 0);
  m.gflops = number_or(j, "gflops", p, 0);
  m.launch_us = number_or(j, "launch_us", p, 0);
  m.balance_flops_per_byte = number_or(j, "balance_flops_per_byte", p, 0);
  return m;
}

const json& element_object(const json& a, size_t i, const std::string& path) {
  if (!a[i].is_object())
    throw FormatError(path + ": expected an object, got " + json_type_name(a[i]));
  return a[i];
}

std::vector<OpRow> parse_ops(const json& root, const char* key) {
  std::vector<OpRow> out;
  const json& a = array_field(root, key, "");
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string p = index_path(key, i);
    const json& o = element_object(a, i, p);
    OpRow r;
    r.node = string_or(o, "node", p);
    r.node_id = int_or(o, "node_id", p, -1);
    r.op = string_or(o, "op", p);
    r.output = string_or(o, "output", p);
    r.time_ms = number_or(o, "time_ms", p, 0);
    r.bytes = number_or(o, "bytes", p, 0);
    r.gbps = number_or(o, "gbps", p, 0);
    r.flops = opt_number(o, "flops", p);
    r.peak_share = opt_number(o, "peak_share", p);
    r.cls = string_or(o, "class", p);
    r.region = int_or(o, "region", p, -1);
    r.fused = bool_or(o, "fused", p, r.op == "Fused");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> string_array(const json& o, const char* key, const std::string& p) {
  std::vector<std::string> out;
  const json& a = array_field(o, key, p);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string())
      throw FormatError(index_path(field_path(p, key), i) + ": expected a string, got " +
                        json_type_name(a[i]));
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

std::vector<Region> parse_regions(const json& root) {
  std::vector<Region> out;
  const json& a = array_field(root, "regions", "");
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string p = index_path("regions", i);
    const json& o = element_object(a, i, p);
    Region r;
    r.id = int_or(o, "id", p, static_cast<int64_t>(i));
    r.kernel = string_or(o, "kernel", p);
    r.nodes = string_array(o, "nodes", p);
    const json& ids = array_field(o, "node_ids", p);
    for (size_t k = 0; k < ids.size(); ++k) {
      if (!ids[k].is_number_integer() && !ids[k].is_number_unsigned())
        throw FormatError(index_path(field_path(p, "node_ids"), k) + ": expected an integer, got " +
                          json_type_name(ids[k]));
      r.node_ids.push_back(ids[k].get<int64_t>());
    }
    r.state = string_or(o, "state", p);
    r.reason = string_or(o, "reason", p);
    r.detection = string_or(o, "detection", p);
    r.validation = string_or(o, "validation", p);
    r.tier_reason = string_or(o, "tier_reason", p);
    r.selected = bool_or(o, "selected", p, false);
    r.cache_hit = bool_or(o, "cache_hit", p, false);
    r.unfused_ms = opt_number(o, "unfused_ms", p);
    r.predicted_ms = opt_number(o, "predicted_ms", p);
    r.fused_ms = opt_number(o, "fused_ms", p);
    r.predicted_saving_ms = opt_number(o, "predicted_saving_ms", p);
    r.share = opt_number(o, "share", p);
    r.io_bytes = opt_number(o, "io_bytes", p);
    r.compile_ms = opt_number(o, "compile_ms", p);
    r.compile_start_ms = opt_number(o, "compile_start_ms", p);
    r.compile_end_ms = opt_number(o, "compile_end_ms", p);
    r.swapped_at = opt_int(o, "swapped_at", p);
    r.reverted_at = opt_int(o, "reverted_at", p);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Report parse_report(const json& j) {
  if (!j.is_object())
    throw FormatError(std::string("expected a JSON object, got ") + json_type_name(j));
  if (!j.contains("summary") || !j["summary"].is_object())
    throw FormatError("no \"summary\" object: not a hotfuse report.json (docs/report.md)");
  Report r;
  r.summary = parse_summary(j["summary"]);
  r.machine = parse_machine(j);

  const json& its = array_field(j, "iterations", "");
  for (size_t i = 0; i < its.size(); ++i) {
    const std::string p = index_path("iterations", i);
    const json& o = element_object(its, i, p);
    Iteration it;
    it.index = int_or(o, "index", p, static_cast<int64_t>(i));
    it.phase = string_or(o, "phase", p);
    it.start_ms = number_or(o, "start_ms", p, 0);
    it.ms = number_or(o, "ms", p, 0);
    it.kernels = int_or(o, "kernels", p, 0);
    r.iterations.push_back(std::move(it));
  }

  const json& evs = array_field(j, "events", "");
  for (size_t i = 0; i < evs.size(); ++i) {
    const std::string p = index_path("events", i);
    const json& o = element_object(evs, i, p);
    r.events.push_back({int_or(o, "iteration", p, -1), string_or(o, "text", p)});
  }

  r.ops = parse_ops(j, "ops");
  r.ops_after = parse_ops(j, "ops_after");
  r.regions = parse_regions(j);

  const json& ds = array_field(j, "decisions", "");
  for (size_t i = 0; i < ds.size(); ++i) {
    const std::string p = index_path("decisions", i);
    const json& o = element_object(ds, i, p);
    r.decisions.push_back(
        {string_array(o, "nodes", p), bool_or(o, "fused", p, false), string_or(o, "reason", p)});
  }
  const json& fs = array_field(j, "failures", "");
  for (size_t i = 0; i < fs.size(); ++i)
    r.failures.push_back(fs[i].is_string() ? fs[i].get<std::string>() : fs[i].dump());
  return r;
}

Report parse_report_text(const std::string& text) {
  return parse_report(parse_json_text(text));
}

const Region* Report::region(int64_t id) const {
  for (const Region& r : regions)
    if (r.id == id) return &r;
  return nullptr;
}

const Region* Report::region_of_node(int64_t node_id) const {
  for (const Region& r : regions)
    for (int64_t n : r.node_ids)
      if (n == node_id) return &r;
  return nullptr;
}

const OpRow* Report::op_before(int64_t node_id) const {
  for (const OpRow& o : ops)
    if (o.node_id == node_id) return &o;
  return nullptr;
}

const OpRow* Report::op_after(int64_t node_id) const {
  for (const OpRow& o : ops_after)
    if (o.node_id == node_id) return &o;
  return nullptr;
}

const OpRow* Report::fused_row(int64_t region_id) const {
  for (const OpRow& o : ops_after)
    if (o.fused && o.region == region_id) return &o;
  return nullptr;
}

}  // namespace hf::viewer
