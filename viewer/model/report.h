// report.json (docs/report.md) as the viewer reads it.
//
// Every --fusion level writes `summary` and `ops`; --fusion adaptive adds `machine`,
// `iterations`, `events`, `ops_after` and `regions`. Fields a mode leaves out stay at their
// defaults (std::nullopt / empty); a field with the wrong type is a FormatError naming it.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hf::viewer {

struct Summary {
  std::string graph, graph_file, fusion, phase;
  int64_t iterations = 0;
  std::optional<double> unfused_ms, fused_ms, speedup;
  std::optional<int64_t> kernels_before, kernels_after;
  std::optional<double> compile_ms_total;
  std::optional<int64_t> cache_hits;
  std::optional<int64_t> peak_bytes_before, peak_bytes_after;
  std::optional<int64_t> regions_detected, regions_selected, regions_kept, regions_reverted,
      regions_failed;
  std::optional<int64_t> iterations_total, iterations_listed;
};

struct Machine {
  bool present = false;
  std::string cpu, source;
  int64_t threads = 0;
  double bandwidth_gbps = 0, gflops = 0, launch_us = 0, balance_flops_per_byte = 0;
};

struct Iteration {
  int64_t index = 0;
  std::string phase;  // warmup, profiling, compiling, validating, reprofiling, steady
  double start_ms = 0, ms = 0;
  int64_t kernels = 0;
};

// One step of a profile: an op, or a fused kernel (fused: its region is `region`).
struct OpRow {
  std::string node;
  int64_t node_id = -1;  // -1 when the mode does not write it
  std::string op, output;
  double time_ms = 0, bytes = 0, gbps = 0;
  std::optional<double> flops, peak_share;
  std::string cls;  // memory-bound, compute-bound, launch-bound, or ""
  int64_t region = -1;
  bool fused = false;
};

struct Region {
  int64_t id = -1;
  std::string kernel;  // hf_<hash>
  std::vector<std::string> nodes;
  std::vector<int64_t> node_ids;
  std::string state;  // rejected, queued, failed, swapped, reverted
  std::string reason, detection, validation;
  std::string tier_reason;  // interpreted or compiled, and why ("" in older reports)
  bool selected = false, cache_hit = false;
  std::optional<double> unfused_ms, predicted_ms, fused_ms, predicted_saving_ms, share, io_bytes,
      compile_ms, compile_start_ms, compile_end_ms;
  std::optional<int64_t> swapped_at, reverted_at;
};

struct SessionEvent {
  int64_t iteration = -1;
  std::string text;
};

struct Decision {
  std::vector<std::string> nodes;
  bool fused = false;
  std::string reason;
};

struct Report {
  Summary summary;
  Machine machine;
  std::vector<Iteration> iterations;
  std::vector<SessionEvent> events;
  std::vector<OpRow> ops;        // adaptive: the unfused profile; else the graph that ran last
  std::vector<OpRow> ops_after;  // adaptive: the fused plan's last re-profile
  std::vector<Region> regions;
  std::vector<Decision> decisions;
  std::vector<std::string> failures;

  bool adaptive() const { return summary.fusion == "adaptive"; }
  const Region* region(int64_t id) const;
  // The region whose node_ids hold `node_id` (an original node), or nullptr.
  const Region* region_of_node(int64_t node_id) const;
  // The row of `node_id` in ops / ops_after, or nullptr.
  const OpRow* op_before(int64_t node_id) const;
  const OpRow* op_after(int64_t node_id) const;
  // The fused kernel's row in ops_after of a region, or nullptr.
  const OpRow* fused_row(int64_t region) const;
};

Report parse_report(const nlohmann::json& j);
// Parses the text too; FormatError with the line and column of a syntax error.
Report parse_report_text(const std::string& text);

}  // namespace hf::viewer
