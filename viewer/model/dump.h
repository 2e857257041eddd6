// A dump folder (`hotfuse-run GRAPH --dump DIR`, docs/dumps.md), or one of its files opened
// on its own, loaded for the viewer.
//
//   DIR/report.json   parsed (viewer/model/report.h)
//   DIR/trace.json    parsed (viewer/model/trace.h)
//   DIR/before.dot    kept as text: the layout (Graphviz) is the caller's, possibly on a
//   DIR/after.dot       background thread (viewer/layout/dot_layout.h)
//   DIR/kernels/*.cpp listed; read on demand (kernel_source)
//
// Nothing here throws for a bad dump. A path that does not exist, a folder with none of the
// files, a file that cannot be read or parsed: each is one line in `errors`, naming the file
// and what is wrong with it; the files that did load are still usable. Files a mode does not
// write (trace.json outside --fusion adaptive, after.dot with --fusion off, .svg) are noted
// in `notes`, not errors.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "viewer/model/report.h"
#include "viewer/model/trace.h"

namespace hf::viewer {

struct Dump {
  std::filesystem::path path;  // what was opened (a folder or a file)
  std::filesystem::path dir;   // the folder the files are in
  std::optional<Report> report;
  std::optional<Trace> trace;
  std::string before_dot, after_dot;  // empty when absent
  std::map<std::string, std::filesystem::path> kernels;  // "hf_<hash>" -> its .cpp
  std::vector<std::string> errors;  // one line each: "<file>: <what>"
  std::vector<std::string> notes;   // missing optional files and the like
  // Per file, by the role it plays ("trace.json", "report.json", "before.dot", "after.dot",
  // also for a file opened alone under another name): what is wrong with it, for the panel
  // that shows it to say so (the same text as its line in `errors`, without the name).
  std::map<std::string, std::string> file_errors;
  std::string error_of(const std::string& file) const {
    auto it = file_errors.find(file);
    return it == file_errors.end() ? std::string() : it->second;
  }

  bool ok() const { return errors.empty(); }
  // Nothing at all could be shown.
  bool nothing_loaded() const {
    return !report && !trace && before_dot.empty() && after_dot.empty();
  }
  std::string title() const;  // "adam (adaptive) - DIR"
};

Dump load_dump(const std::filesystem::path& path);

// The generated source of a kernel (kernels/<kernel>.cpp); nullopt with *error set when it
// is not in the dump or cannot be read.
std::optional<std::string> kernel_source(const Dump& d, const std::string& kernel,
                                         std::string* error = nullptr);

// Reads a whole file; nullopt with *error ("cannot open: No such file or directory").
std::optional<std::string> read_text_file(const std::filesystem::path& p, std::string* error);

}  // namespace hf::viewer
