#include "viewer/model/dump.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "viewer/model/json_fields.h"

namespace hf::viewer {

namespace fs = std::filesystem;

namespace {

constexpr uintmax_t kMaxFile = uintmax_t{2} << 30;  // 2 GiB: beyond, refuse rather than thrash

// `role`: what the file is loaded as ("trace.json" also for a trace opened under another
// name), the key the panels ask file_errors for.
void note_error(Dump& d, const fs::path& p, const char* role, const std::string& what) {
  d.errors.push_back(p.filename().string() + ": " + what);
  d.file_errors.emplace(role, what);
}

// The file's text, or nullopt and an entry in d.errors naming the file.
std::optional<std::string> read_or_note(Dump& d, const fs::path& p, const char* role) {
  std::string err;
  auto text = read_text_file(p, &err);
  if (!text) note_error(d, p, role, err);
  return text;
}

// Parses the file into `out`; a failure is an entry in d.errors, not an exception.
template <class T, class Parse>
void load_parsed(Dump& d, const fs::path& p, const char* role, std::optional<T>& out, Parse parse) {
  auto text = read_or_note(d, p, role);
  if (!text) return;
  try {
    out = parse(*text);
  } catch (const std::exception& e) {
    note_error(d, p, role, e.what());
  }
}

void load_report(Dump& d, const fs::path& p) {
  load_parsed(d, p, "report.json", d.report, parse_report_text);
}

void load_trace(Dump& d, const fs::path& p) {
  load_parsed(d, p, "trace.json", d.trace, parse_trace_text);
}

void load_dot(Dump& d, const fs::path& p, const char* role, std::string& out) {
  auto text = read_or_note(d, p, role);
  if (!text) return;
  if (text->find_first_not_of(" \t\r\n") == std::string::npos) {
    note_error(d, p, role, "the file is empty");
    return;
  }
  out = std::move(*text);
}

bool is_json_of(const fs::path& p, const char* key) {
  // A .json file opened directly: report or trace? Look for the distinguishing key near
  // the start (cheap), then decide by name.
  std::ifstream f(p, std::ios::binary);
  std::string head(4096, '\0');
  f.read(head.data(), head.size());
  head.resize(static_cast<size_t>(f.gcount()));
  return head.find(key) != std::string::npos;
}

}  // namespace

std::optional<std::string> read_text_file(const fs::path& p, std::string* error) {
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    if (error) *error = "no such file";
    return std::nullopt;
  }
  if (fs::is_directory(p, ec)) {
    if (error) *error = "is a directory, not a file";
    return std::nullopt;
  }
  const uintmax_t size = fs::file_size(p, ec);
  if (!ec && size > kMaxFile) {
    if (error) *error = "too large (" + std::to_string(size >> 20) + " MiB)";
    return std::nullopt;
  }
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    if (error) *error = std::string("cannot open: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) {
    if (error) *error = "read error";
    return std::nullopt;
  }
  return s.str();
}

Dump load_dump(const fs::path& path) {
  Dump d;
  d.path = path;
  std::error_code ec;
  const std::string shown = path.string();
  if (!fs::exists(path, ec)) {
    d.errors.push_back(shown + ": no such file or directory");
    return d;
  }

  if (!fs::is_directory(path, ec)) {
    // One file opened directly.
    d.dir = path.parent_path();
    const std::string name = path.filename().string();
    const std::string ext = path.extension().string();
    if (ext == ".dot" || ext == ".gv") {
      const bool after = name.rfind("after", 0) == 0;
      load_dot(d, path, after ? "after.dot" : "before.dot", after ? d.after_dot : d.before_dot);
    } else if (ext == ".json") {
      const bool trace =
          name.find("trace") != std::string::npos ||
          (name.find("report") == std::string::npos && is_json_of(path, "traceEvents"));
      if (trace)
        load_trace(d, path);
      else
        load_report(d, path);
    } else {
      d.errors.push_back(shown + ": not a dump folder, report.json, trace.json or .dot file");
    }
    return d;
  }

  d.dir = path;
  const fs::path report = path / "report.json", trace = path / "trace.json",
                 before = path / "before.dot", after = path / "after.dot",
                 kernels = path / "kernels";
  const bool any = fs::exists(report, ec) || fs::exists(trace, ec) || fs::exists(before, ec) ||
                   fs::exists(after, ec);
  if (!any) {
    d.errors.push_back(shown +
                       ": not a dump folder: none of report.json, trace.json, before.dot, "
                       "after.dot is there (write one with hotfuse-run GRAPH --dump DIR)");
    return d;
  }
  if (fs::exists(report, ec))
    load_report(d, report);
  else
    d.notes.push_back("report.json is missing: no hotspots or summary");
  if (fs::exists(trace, ec))
    load_trace(d, trace);
  else
    d.notes.push_back("trace.json is missing (only --fusion adaptive writes one): no timeline");
  if (fs::exists(before, ec))
    load_dot(d, before, "before.dot", d.before_dot);
  else
    d.notes.push_back("before.dot is missing");
  if (fs::exists(after, ec))
    load_dot(d, after, "after.dot", d.after_dot);
  else
    d.notes.push_back("after.dot is missing (--fusion off writes none)");

  if (fs::is_directory(kernels, ec)) {
    for (const auto& entry : fs::directory_iterator(kernels, ec)) {
      const fs::path& p = entry.path();
      if (p.extension() == ".cpp" || p.extension() == ".cu")
        d.kernels.emplace(p.stem().string(), p);
    }
  }
  return d;
}

std::optional<std::string> kernel_source(const Dump& d, const std::string& kernel,
                                         std::string* error) {
  auto it = d.kernels.find(kernel);
  if (it == d.kernels.end()) {
    if (error)
      *error = "kernels/" + kernel + ".cpp is not in this dump" +
               (d.kernels.empty() ? std::string(" (it has no kernels/ folder)") : std::string());
    return std::nullopt;
  }
  std::string err;
  auto text = read_text_file(it->second, &err);
  if (!text && error) *error = "kernels/" + it->second.filename().string() + ": " + err;
  return text;
}

std::string Dump::title() const {
  std::string t;
  if (report && !report->summary.graph.empty()) {
    t = report->summary.graph;
    if (!report->summary.fusion.empty()) t += " (" + report->summary.fusion + ")";
    t += " - ";
  }
  return t + path.string();
}

}  // namespace hf::viewer
