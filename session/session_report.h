// report.json for a run in any --fusion mode: the summary the benchmarks read, and every
// iteration, op and region decision the viewer shows. The schema is documented in
// docs/report.md. The one writer of report.json: --report and --dump both call it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "session/session.h"
#include "session/shape_sessions.h"

namespace hf {

struct ReportContext {
  std::string graph_file;
  int timed_iterations = 0;  // steady iterations the launcher asked for
};

nlohmann::json session_report(const Session& s, const ReportContext& ctx);

// report.json's "shapes": every input signature a ShapeSessions ran, in the order first seen.
nlohmann::json shapes_report(const std::vector<ShapeRecord>& shapes, size_t capacity);

}  // namespace hf
