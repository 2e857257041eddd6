#include "tools/graph_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"

namespace hf {

std::map<std::string, Shape> parse_shape_options(const std::vector<std::string>& entries) {
  std::map<std::string, Shape> shapes;
  for (const std::string& e : entries) {
    auto bad = [&](const std::string& why) {
      throw Error("--shape '" + e + "': " + why +
                  " (expected NAME=D0xD1x..., e.g. input=4x3x224x224)");
    };
    size_t eq = e.rfind('=');
    if (eq == std::string::npos || eq == 0) bad("no NAME=");
    std::string name = e.substr(0, eq), dims = e.substr(eq + 1);
    Shape s;
    size_t at = 0;
    while (at < dims.size()) {
      size_t x = dims.find('x', at);
      std::string d = dims.substr(at, x == std::string::npos ? std::string::npos : x - at);
      if (d.empty() || d.size() > 15 || !std::all_of(d.begin(), d.end(), ::isdigit))
        bad("dimension '" + d + "' is not a number >= 0");
      s.push_back(std::stoll(d));
      if (x == std::string::npos) break;
      at = x + 1;
      if (at == dims.size()) bad("ends in 'x'");
    }
    if (!shapes.emplace(name, s).second) bad("input '" + name + "' is given twice");
  }
  return shapes;
}

namespace {

Graph read_onnx(const std::string& path, const std::map<std::string, Shape>& shapes,
                const std::string& inputs_dir) {
  OnnxImportOptions opt;
  if (!inputs_dir.empty()) opt = import_options_from({inputs_dir});
  for (const auto& [name, s] : shapes) opt.input_shapes[name] = s;
  opt.input_shapes_strict = !shapes.empty();  // a misspelt --shape is an error, not ignored
  Graph g = read_graph_onnx(path, opt);
  for (const auto& [name, s] : shapes) {
    auto it = std::find_if(g.inputs().begin(), g.inputs().end(),
                           [&](ValueId v) { return g.value(v).name == name; });
    if (it != g.inputs().end() && g.value(*it).shape != s)
      throw Error("--shape " + name + "=...: input '" + name + "' is " +
                  to_string(g.value(*it).shape) + " with that shape, not " + to_string(s) +
                  ": only the dimensions the model leaves symbolic can be set, at its rank");
  }
  return g;
}

}  // namespace

Graph read_graph_file(const std::string& path, const std::map<std::string, Shape>& shapes,
                      const std::string& inputs_dir) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  auto json = [&] {
    if (!shapes.empty())
      throw Error(path + ": --shape applies to ONNX models (a JSON graph's shapes are static)");
    return read_graph_json(path);
  };
  if (ext == ".onnx") return read_onnx(path, shapes, inputs_dir);
  if (ext == ".json") return json();
  std::ifstream f(path, std::ios::binary);
  char c = 0;
  while (f.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  if (!f) return read_graph_json(path);  // missing, a directory, empty: its own message
  const bool is_json = c == '{';
  try {
    return is_json ? json() : read_onnx(path, shapes, inputs_dir);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                (is_json ? " (read as a JSON graph: it starts with '{')"
                         : " (read as ONNX: it is not named *.json and does not start with '{')"));
  }
}

}  // namespace hf
