#include "runtime/io/graph_json.h"
#include "runtime/ir/constant.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "runtime/ir/error.h"

namespace hf {

using json = nlohmann::json;

namespace {

constexpr int kFormatVersion = 1;

std::string where(const json& node, size_t index) {
  if (node.is_object() && node.contains("name") && node["name"].is_string())
    return "node '" + node["name"].get<std::string>() + "'";
  return "node #" + std::to_string(index);
}

void check_keys(const json& obj, const std::set<std::string>& allowed, const std::string& what) {
  if (!obj.is_object()) throw Error(what + " must be a JSON object");
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!allowed.count(it.key())) throw Error(what + ": unknown key '" + it.key() + "'");
}

template <class T>
T get(const json& obj, const char* key, const std::string& what) {
  if (!obj.contains(key)) throw Error(what + ": missing '" + key + "'");
  try {
    return obj.at(key).get<T>();
  } catch (const json::exception&) {
    throw Error(what + ": '" + key + "' has the wrong type");
  }
}

Shape get_shape(const json& obj, const char* key, const std::string& what) {
  // Integers only: nlohmann would convert 2.5 to 2, and 1e128 to int64_t is undefined
  // behaviour (found by fuzz/fuzz_graph_json).
  if (obj.contains(key) && obj.at(key).is_array())
    for (const json& d : obj.at(key))
      if (!d.is_number_integer()) throw Error(what + ": '" + key + "' must hold integers");
  auto dims = get<std::vector<int64_t>>(obj, key, what);
  for (int64_t d : dims)
    if (d < 0) throw Error(what + ": '" + key + "' has a negative dimension");
  Shape s(dims.begin(), dims.end());
  // kMaxElements, like the IR and the ONNX importer: beyond it sizes in bytes could overflow.
  if (!numel_within(s))
    throw Error(what + ": '" + key + "' " + to_string(s) + " has too many elements");
  return s;
}

Attr to_attr(const json& v, const std::string& what) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    bool all_int = true;
    for (const json& e : v) {
      if (!e.is_number()) throw Error(what + " must hold only numbers");
      all_int &= e.is_number_integer();
    }
    if (all_int && !v.empty()) return v.get<std::vector<int64_t>>();
    if (v.empty()) return std::vector<int64_t>{};
    return v.get<std::vector<double>>();
  }
  throw Error(what + " must be a number, a string or a list of numbers");
}

json from_attr(const Attr& a) {
  return std::visit([](const auto& v) { return json(v); }, a);
}

std::optional<Mode> parse_mode(const std::string& s) {
  for (int i = 0; i < kModeCount; ++i)
    if (s == kModeInfo[i].name) return static_cast<Mode>(i);
  return std::nullopt;
}

Graph build(const json& doc) {
  check_keys(doc, {"format", "version", "name", "inputs", "nodes", "outputs"}, "graph");
  if (doc.contains("format") && doc["format"] != "hotfuse-graph")
    throw Error("'format' must be \"hotfuse-graph\"");
  if (doc.contains("version") && doc["version"] != kFormatVersion)
    throw Error("unsupported format version " + doc["version"].dump() + " (this build reads " +
                std::to_string(kFormatVersion) + ")");
  Graph g;
  g.name = doc.contains("name") ? get<std::string>(doc, "name", "graph") : "graph";

  auto lookup = [&](const std::string& name, const std::string& what) {
    auto id = g.find_value(name);
    if (!id) throw Error(what + ": value '" + name + "' is not defined before use");
    return *id;
  };

  const json& inputs = doc.contains("inputs") ? doc["inputs"] : json::array();
  if (!inputs.is_array()) throw Error("'inputs' must be a list");
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string what = "input #" + std::to_string(i);
    check_keys(inputs[i], {"name", "dtype", "shape", "init"}, what);
    std::string name = get<std::string>(inputs[i], "name", what);
    what = "input '" + name + "'";
    auto dtype = parse_dtype(get<std::string>(inputs[i], "dtype", what));
    if (!dtype) throw Error(what + ": unknown dtype '" + inputs[i]["dtype"].dump() + "'");
    std::optional<InitRange> init;
    if (inputs[i].contains("init")) {
      auto r = get<std::vector<double>>(inputs[i], "init", what);
      if (r.size() != 2 || !(r[0] < r[1])) throw Error(what + ": 'init' must be [lo, hi], lo < hi");
      init = InitRange{r[0], r[1]};
    }
    g.add_input(name, *dtype, get_shape(inputs[i], "shape", what), init);
  }

  const json& nodes = get<json>(doc, "nodes", "graph");
  if (!nodes.is_array()) throw Error("'nodes' must be a list");
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& jn = nodes[i];
    std::string what = where(jn, i);
    check_keys(jn, {"name", "op", "mode", "attrs", "inputs", "outputs"}, what);
    Node n;
    n.name = jn.contains("name") ? get<std::string>(jn, "name", what) : "";
    std::string op = get<std::string>(jn, "op", what);
    auto type = parse_op_type(op);
    if (!type || *type == OpType::Fused) throw Error(what + ": unknown op '" + op + "'");
    n.op = *type;
    if (n.op == OpType::Elemwise) {
      std::string mode = get<std::string>(jn, "mode", what);
      auto m = parse_mode(mode);
      if (!m) throw Error(what + ": unknown Elemwise mode '" + mode + "'");
      n.mode = *m;
    } else if (jn.contains("mode")) {
      throw Error(what + ": 'mode' belongs to Elemwise nodes; " + op + " takes attrs");
    }
    if (jn.contains("attrs")) {
      const json& attrs = jn["attrs"];
      if (!attrs.is_object()) throw Error(what + ": 'attrs' must be an object");
      for (auto it = attrs.begin(); it != attrs.end(); ++it)
        n.attrs[it.key()] = to_attr(it.value(), what + ": attribute '" + it.key() + "'");
    }
    for (const std::string& in : get<std::vector<std::string>>(jn, "inputs", what))
      n.inputs.push_back(lookup(in, what));
    std::vector<std::string> outs;
    if (jn.contains("outputs")) outs = get<std::vector<std::string>>(jn, "outputs", what);
    for (const std::string& o : outs)
      if (g.find_value(o)) throw Error(what + ": output name '" + o + "' is already defined");
    g.add_node(std::move(n), outs);
  }

  for (const std::string& o : get<std::vector<std::string>>(doc, "outputs", "graph"))
    g.mark_output(lookup(o, "graph outputs"));
  verify(g);
  return g;
}

}  // namespace

Graph parse_graph_json(const std::string& text, const std::string& origin) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column
    // 12: ..."; keep the part after "parse error ", which names the position.
    std::string what = e.what();
    size_t at = what.find("parse error ");
    what = at == std::string::npos ? what : what.substr(at + 12);
    throw Error(printable(origin + ": malformed JSON " + what));
  } catch (const json::exception& e) {
    // A number too large for a double (found by fuzz/fuzz_graph_json), and the like.
    throw Error(printable(origin + ": malformed JSON: " + e.what()));
  }
  try {
    return build(doc);
  } catch (const Error& e) {
    // Names from the file reach the message: one printable line (runtime/ir/error.h).
    throw Error(printable(origin + ": " + e.what()));
  } catch (const json::exception& e) {
    // A type the reader did not check (found by fuzz/fuzz_graph_json): still one clear line.
    throw Error(printable(origin + ": invalid graph: " + e.what()));
  }
}

Graph read_graph_json(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(path + ": is a directory, not a graph file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error(path + ": read error");
  return parse_graph_json(ss.str(), path);
}

std::string write_graph_json(const Graph& g) {
  json doc;
  doc["format"] = "hotfuse-graph";
  doc["version"] = kFormatVersion;
  doc["name"] = g.name;
  doc["inputs"] = json::array();
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    json in = {{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", v.shape}};
    if (v.init) in["init"] = {v.init->lo, v.init->hi};
    doc["inputs"].push_back(in);
  }
  doc["nodes"] = json::array();
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.op == OpType::Fused)
      throw Error(describe(n) + ": fused graphs are not written in the native format");
    json jn = {{"name", n.name}, {"op", op_type_name(n.op)}};
    if (n.op == OpType::Elemwise) jn["mode"] = mode_info(n.mode).name;
    if (!n.attrs.empty()) {
      json attrs = json::object();
      for (const auto& [k, v] : n.attrs) attrs[k] = from_attr(v);
      if (n.op == OpType::Constant && !attrs.contains("value")) {  // ConstantData
        json values = json::array();
        for (int64_t i = 0; i < constant_count(n); ++i) values.push_back(constant_at(n, i));
        attrs["value"] = values;
      }
      jn["attrs"] = attrs;
    }
    jn["inputs"] = json::array();
    for (ValueId v : n.inputs) jn["inputs"].push_back(g.value(v).name);
    jn["outputs"] = json::array();
    for (ValueId v : n.outputs) jn["outputs"].push_back(g.value(v).name);
    doc["nodes"].push_back(jn);
  }
  doc["outputs"] = json::array();
  for (ValueId v : g.outputs()) doc["outputs"].push_back(g.value(v).name);
  return doc.dump(2) + "\n";
}

}  // namespace hf
