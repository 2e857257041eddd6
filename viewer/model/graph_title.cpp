#include "viewer/model/graph_title.h"

#include <regex>

#include "viewer/model/format.h"

namespace hf::viewer {

bool nothing_fused(const Summary& s) {
  return !s.speedup || (s.regions_kept && *s.regions_kept == 0);
}

TitleLine after_title(const std::string& line, const Report* report) {
  TitleLine t{line, {}, std::nullopt};
  if (!report) return t;
  static const std::regex ratio(R"(\s*\(\s*[0-9]+(\.[0-9]*)?(e[-+]?[0-9]+)?\s*x\s*\))");
  t.text = std::regex_replace(line, ratio, "");
  const Summary& s = report->summary;
  if (nothing_fused(s)) {
    t.badge = "nothing fused";
  } else {
    t.speedup = *s.speedup;
    t.badge = strf("%.2fx", *s.speedup);
  }
  return t;
}

}  // namespace hf::viewer
