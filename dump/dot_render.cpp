#include "dump/dot_render.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fusion/subprocess_util.h"

namespace hf::dump {

namespace fs = std::filesystem;

namespace {

std::string first_line(const std::string& s) {
  size_t start = s.find_first_not_of(" \n\r\t");
  if (start == std::string::npos) return "";
  size_t end = s.find('\n', start);
  return s.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

DotOutput run_dot(std::string_view dot_text, const std::string& format,
                  std::chrono::milliseconds timeout) {
  DotOutput r;
  std::error_code ec;
  std::string tmpl = (fs::temp_directory_path(ec) / "hf-dot-XXXXXX").string();
  if (ec) tmpl = "/tmp/hf-dot-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    r.error = "cannot create a temporary directory for dot: " + tmpl;
    return r;
  }
  const fs::path dir(tmpl), in = dir / "graph.dot", out = dir / ("graph." + format);
  {
    std::ofstream f(in, std::ios::binary);
    f.write(dot_text.data(), static_cast<std::streamsize>(dot_text.size()));
    if (!f) r.error = "cannot write " + in.string();
  }
  if (r.error.empty()) {
    fusion::ProcessResult p = fusion::run_process(
        {"dot", "-T" + format, "-o", out.string(), in.string()}, timeout, size_t(1) << 16);
    if (!p.started) {
      r.missing = true;
      r.error = "dot (Graphviz) is not on PATH: " + p.error;
    } else if (!p.ok()) {
      r.error = "dot -T" + format + " failed (" + p.status() + "): " + first_line(p.output);
    } else {
      std::ifstream f(out, std::ios::binary);
      std::ostringstream s;
      s << f.rdbuf();
      if (!f) {
        r.error = "dot -T" + format + " wrote no output";
      } else {
        r.output = s.str();
        r.ok = true;
      }
    }
  }
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace hf::dump
