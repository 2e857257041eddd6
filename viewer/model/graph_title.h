// The after graph's title line as the Summary panel tells it. after.dot's title carries the
// speedup measured when the DOT was written ("... 8.04 ms -> 8.14 ms per iteration (0.99x)"),
// which can disagree with report.json's summary (the numbers the Summary panel shows): a
// dump whose regions were all reverted or rejected still has a ratio in its title. The
// viewer shows the summary's speedup instead, or "nothing fused" when the summary has no
// speedup or kept no region.
#pragma once
#include <optional>
#include <string>

#include "viewer/model/report.h"

namespace hf::viewer {

struct TitleLine {
  std::string text;               // the line without its speedup
  std::string badge;              // "0.99x", "nothing fused", or "" (nothing to add)
  std::optional<double> speedup;  // the summary's, when badge is one
};

// Whether the summary says fusion changed nothing: no speedup, or no region kept.
bool nothing_fused(const Summary& s);

// `line`: the DOT title's first line. Its "(<number>x)" is removed; the badge says what the
// summary says. Without a report the line is left as it is.
TitleLine after_title(const std::string& line, const Report* report);

}  // namespace hf::viewer
