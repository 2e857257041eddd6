#include "tools/graph_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>

#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"

namespace hf {

std::vector<std::map<std::string, Shape>> parse_shape_options(
    const std::vector<std::string>& entries) {
  std::vector<std::map<std::string, Shape>> signatures(1);
  std::map<std::string, size_t> times;  // an input's shapes so far
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
    const size_t k = times[name]++;
    if (k == signatures.size()) signatures.push_back(signatures.back());  // the others' last
    for (size_t later = k; later < signatures.size(); ++later) signatures[later][name] = s;
  }
  for (size_t k = 1; k < signatures.size(); ++k)
    for (size_t j = 0; j < k; ++j)
      if (signatures[j] == signatures[k]) {
        std::string text;
        for (const auto& [name, s] : signatures[k])
          text += (text.empty() ? "" : " ") + name + "=" + to_string(s);
        throw Error("--shape: input shapes " + std::to_string(k + 1) + " (" + text +
                    ") repeat input shapes " + std::to_string(j + 1) +
                    " (naming an input again starts another set of shapes)");
      }
  return signatures;
}

namespace {

Graph read_onnx(const std::string& path, const std::map<std::string, Shape>& shapes,
                OnnxImportOptions opt) {
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

struct FileFormat {
  bool json = false;
  bool by_name = false;  // else by its first character
};

// How the graph file reads: by its name (*.onnx, *.json), else by its first character (a
// JSON graph starts with '{'). nullopt: it cannot be read (its reader says why).
std::optional<FileFormat> graph_file_format(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (ext == ".onnx" || ext == ".json") return FileFormat{ext == ".json", true};
  std::ifstream f(path, std::ios::binary);
  char c = 0;
  while (f.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  if (!f) return std::nullopt;  // missing, a directory, empty
  return FileFormat{c == '{', false};
}

Graph read_graph_file(const std::string& path, const std::map<std::string, Shape>& shapes,
                      const std::string& inputs_dir) {
  auto json = [&] {
    if (!shapes.empty())
      throw Error(path + ": --shape applies to ONNX models (a JSON graph's shapes are static)");
    return read_graph_json(path);
  };
  OnnxImportOptions opt;
  if (!inputs_dir.empty()) opt = import_options_from({inputs_dir});
  const std::optional<FileFormat> format = graph_file_format(path);
  if (!format) return read_graph_json(path);  // its own message
  if (format->by_name) return format->json ? json() : read_onnx(path, shapes, opt);
  try {
    return format->json ? json() : read_onnx(path, shapes, opt);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                (format->json
                     ? " (read as a JSON graph: it starts with '{')"
                     : " (read as ONNX: it is not named *.json and does not start with '{')"));
  }
}

GraphForInputs graph_file_for_inputs(const std::string& path, const Graph& g) {
  std::vector<std::string> names;
  for (ValueId v : g.inputs()) names.push_back(g.value(v).name);
  const std::optional<FileFormat> format = graph_file_format(path);
  const bool onnx = format && !format->json;
  return [path, names, onnx, g](const std::vector<Shape>& shapes, const SmallInputs& small) {
    std::map<std::string, Shape> named;
    OnnxImportOptions opt;
    for (size_t k = 0; k < names.size() && k < shapes.size(); ++k) {
      named[names[k]] = shapes[k];
      if (k < small.size() && small[k]) opt.input_values[names[k]] = *small[k];
    }
    if (onnx) return read_onnx(path, named, opt);
    for (ValueId v : g.inputs())
      if (g.value(v).shape != named[g.value(v).name])
        throw Error(path + ": input '" + g.value(v).name + "' is " + to_string(g.value(v).shape) +
                    ", given " + to_string(named[g.value(v).name]) +
                    " (a JSON graph's shapes are static)");
    return g;
  };
}

}  // namespace hf
