// The ONNX importer's driver: model file, opsets, graph inputs, initializers, the node loop,
// graph outputs and the final rebuild that keeps ONNX names and drops dead nodes.
#include "runtime/io/onnx_import.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>

#include "runtime/io/onnx_internal.h"
#include "runtime/ir/memory_cap.h"
#include "runtime/ir/op_table.h"

namespace hf {

namespace onnx_detail {

namespace fs = std::filesystem;

constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 28;

// --- OnnxNode: attribute access -----------------------------------------------------------

const pb::AttributeProto* OnnxNode::attr(const std::string& name) const {
  for (const auto& a : p->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

namespace {
using AT = pb::AttributeProto;
// An attribute is of `type` if it says so, or (old exporters leave `type` unset) if it holds
// that field.
bool attr_is(const AT& a, AT::AttributeType type) {
  if (a.has_type() && a.type() != AT::UNDEFINED) return a.type() == type;
  switch (type) {
    case AT::INT:
      return a.has_i();
    case AT::FLOAT:
      return a.has_f();
    case AT::STRING:
      return a.has_s();
    case AT::TENSOR:
      return a.has_t();
    case AT::INTS:
      return a.ints_size() > 0;
    case AT::FLOATS:
      return a.floats_size() > 0;
    default:
      return false;
  }
}
[[noreturn]] void bad_attr(const std::string& name, const char* kind) {
  throw Error("attribute '" + name + "' must be " + kind);
}
}  // namespace

int64_t OnnxNode::attr_int(const std::string& name, std::optional<int64_t> fallback) const {
  const AT* a = attr(name);
  if (!a) {
    if (fallback) return *fallback;
    throw Error("missing attribute '" + name + "'");
  }
  if (!attr_is(*a, AT::INT)) bad_attr(name, "an int");
  return a->i();
}

double OnnxNode::attr_float(const std::string& name, std::optional<double> fallback) const {
  const AT* a = attr(name);
  if (!a) {
    if (fallback) return *fallback;
    throw Error("missing attribute '" + name + "'");
  }
  if (attr_is(*a, AT::FLOAT)) return a->f();
  if (attr_is(*a, AT::INT)) return static_cast<double>(a->i());
  bad_attr(name, "a float");
}

std::string OnnxNode::attr_str(const std::string& name, std::optional<std::string> fallback) const {
  const AT* a = attr(name);
  if (!a) {
    if (fallback) return *fallback;
    throw Error("missing attribute '" + name + "'");
  }
  if (!attr_is(*a, AT::STRING)) bad_attr(name, "a string");
  return a->s();
}

std::optional<std::vector<int64_t>> OnnxNode::attr_ints(const std::string& name) const {
  const AT* a = attr(name);
  if (!a) return std::nullopt;
  if (!attr_is(*a, AT::INTS) && !(a->ints_size() == 0 && !a->has_type()))
    bad_attr(name, "a list of ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<double> OnnxNode::attr_floats(const std::string& name) const {
  const AT* a = attr(name);
  if (!a) throw Error("missing attribute '" + name + "'");
  if (!attr_is(*a, AT::FLOATS) && !(a->floats_size() == 0 && !a->has_type()))
    bad_attr(name, "a list of floats");
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

const pb::TensorProto* OnnxNode::attr_tensor(const std::string& name) const {
  const AT* a = attr(name);
  if (!a) return nullptr;
  if (!attr_is(*a, AT::TENSOR)) bad_attr(name, "a tensor");
  return &a->t();
}

// --- Importer: driver ---------------------------------------------------------------------

Importer::Importer(const pb::ModelProto& model, std::string origin, fs::path model_dir,
                   const OnnxImportOptions& options,
                   std::unordered_set<std::string> constant_inputs)
    : model_(model),
      origin_(std::move(origin)),
      dir_(std::move(model_dir)),
      options_(options),
      constant_inputs_(std::move(constant_inputs)) {}

void Importer::read_opsets() {
  for (const auto& o : model_.opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    if (opset_ != 0 && opset_ != o.version())
      throw Error("imports the default opset twice (" + std::to_string(opset_) + " and " +
                  std::to_string(o.version()) + ")");
    opset_ = static_cast<int>(o.version());
  }
  if (opset_ == 0)
    throw Error(
        "imports no version of the default ONNX opset (ai.onnx); models of other "
        "domains only are not supported");
  if (opset_ < kMinOpset || opset_ > kMaxOpset)
    throw Error("opset " + std::to_string(opset_) + " is not supported (this build reads opsets " +
                std::to_string(kMinOpset) + "-" + std::to_string(kMaxOpset) + ")");
}

const ConstTensor& Importer::values(ConstEntry& c) const {
  if (c.proto && c.t.f.empty() && c.t.i.empty()) c.t = decode_tensor(*c.proto, dir_);
  return c.t;
}

void Importer::read_initializers() {
  const pb::GraphProto& gp = model_.graph();
  if (gp.sparse_initializer_size() > 0)
    throw Error("initializer '" + gp.sparse_initializer(0).values().name() +
                "': sparse initializers are not supported");
  // Every initializer is held by the plan: their declared sizes together must fit the cap
  // before any is read (external data files included).
  int64_t total = 0;
  for (const pb::TensorProto& t : gp.initializer()) {
    try {
      total += tensor_bytes(t);  // each at most 2^43 bytes: the sum cannot overflow
    } catch (const Error& e) {
      throw Error("initializer '" + t.name() + "': " + e.what());
    }
  }
  check_memory_cap(static_cast<size_t>(total), "holding the model's " +
                                                   std::to_string(gp.initializer_size()) +
                                                   " initializers");
  for (const pb::TensorProto& t : gp.initializer()) {
    const std::string what = "initializer '" + t.name() + "'";
    if (t.name().empty()) throw Error("an initializer has no name");
    if (slots_.count(t.name())) throw Error(what + " is defined twice");
    try {
      auto c = std::make_shared<ConstEntry>();
      c->t = decode_tensor(t, dir_);
      if (c->t.size() > kKeepDecoded) {
        c->proto = &t;
        std::vector<double>().swap(c->t.f);  // freed, not just emptied
        std::vector<int64_t>().swap(c->t.i);
      }
      slots_[t.name()].c = std::move(c);
      bound_.push_back(t.name());
      initializer_names_.insert(t.name());
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
  }
}

void Importer::read_inputs() {
  if (options_.input_shapes_strict) {
    std::string names;
    std::unordered_set<std::string> inputs;
    for (const pb::ValueInfoProto& vi : model_.graph().input())
      if (!initializer_names_.count(vi.name())) {
        inputs.insert(vi.name());
        names += (names.empty() ? "'" : ", '") + vi.name() + "'";
      }
    for (const auto& [name, shape] : options_.input_shapes)
      if (!inputs.count(name))
        throw Error("a shape is given for '" + name + "', which is not an input of the model (" +
                    (names.empty() ? "it has none" : "its inputs: " + names) + ")");
  }
  for (const pb::ValueInfoProto& vi : model_.graph().input()) {
    if (initializer_names_.count(vi.name())) continue;  // a constant with a declared type
    const std::string what = "input '" + vi.name() + "'";
    if (vi.name().empty()) throw Error("a graph input has no name");
    if (slots_.count(vi.name())) throw Error(what + " is defined twice");
    if (!vi.has_type() || !vi.type().has_tensor_type())
      throw Error(what + ": sequence, map and optional inputs are not supported (only tensors)");
    const auto& tt = vi.type().tensor_type();
    auto dt = to_dtype(tt.elem_type());
    if (!dt)
      throw Error(what + ": element type " + elem_type_name(tt.elem_type()) +
                  " is not supported (hotfuse computes in " + kOnnxComputedTypes + ")");
    if (!tt.has_shape()) throw Error(what + ": has no shape (hotfuse needs static shapes)");
    // A shape given for the input (of the model's rank) sizes its unsized dimensions.
    const Shape* given_shape = nullptr;
    if (auto it = options_.input_shapes.find(vi.name()); it != options_.input_shapes.end()) {
      if (int(it->second.size()) == tt.shape().dim_size())
        given_shape = &it->second;
      else if (options_.input_shapes_strict)
        throw Error(what + " has rank " + std::to_string(tt.shape().dim_size()) +
                    "; the shape given for it, " + to_string(it->second) + ", has rank " +
                    std::to_string(it->second.size()));
    }
    Shape shape;
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          throw Error(what + ": dimension " + std::to_string(k) + " is negative");
        shape.push_back(d.dim_value());
      } else if (given_shape && !(d.has_dim_param() && options_.dims.count(d.dim_param())) &&
                 (*given_shape)[k] >= 0) {
        shape.push_back((*given_shape)[k]);
      } else if (d.has_dim_param() && options_.dims.count(d.dim_param())) {
        int64_t v = options_.dims.at(d.dim_param());
        if (v < 0)
          throw Error(what + ": size " + std::to_string(v) + " given for '" + d.dim_param() +
                      "' is negative");
        shape.push_back(v);
      } else if (d.has_dim_param()) {
        throw Error(what + ": dimension " + std::to_string(k) + " is symbolic ('" + d.dim_param() +
                    "') and no size is given: not supported (hotfuse needs static shapes)");
      } else {
        throw Error(what + ": dimension " + std::to_string(k) +
                    " has no size: not supported (hotfuse needs static shapes)");
      }
    }
    checked_numel(shape, what);
    ValueId v = g_.add_input(vi.name(), *dt, shape);
    slots_[vi.name()].rt = v;
    bound_.push_back(vi.name());
    graph_inputs_.push_back(v);
    if (constant_inputs_.count(vi.name())) {  // given, and needed through other ops
      const HostTensor& given = options_.input_values.at(vi.name());
      if (given.dtype() != *dt || given.shape() != shape)
        throw Error(what + ": the value given is " + std::string(dtype_name(given.dtype())) + " " +
                    to_string(given.shape()) + ", the input is " + std::string(dtype_name(*dt)) +
                    " " + to_string(shape));
      auto c = std::make_shared<ConstEntry>();
      c->t = from_host(given);
      c->materialized = v;  // a run-time op reads the input itself
      slots_[vi.name()].c = std::move(c);
      specialised_.push_back(vi.name());
    }
  }
}

std::string Importer::fresh_name(const std::string& base) {
  std::string name = base;
  while (reserved_.count(name) || g_.find_value(name))
    name = base + "_" + std::to_string(++helper_);
  return name;
}

void Importer::import_node(const pb::NodeProto& p, int index) {
  OnnxNode n;
  pb::NodeProto legacy;  // opsets 1-6: the node in its opset-7 form
  n.p = &p;
  n.index = index;
  n.opset = opset_;
  bool default_domain = p.domain().empty() || p.domain() == "ai.onnx";
  std::string op = default_domain ? p.op_type() : p.domain() + "." + p.op_type();
  n.label = "node " + std::to_string(index) + (p.name().empty() ? "" : " '" + p.name() + "'") +
            " (" + op + ")";
  cur_ = &n;
  cur_base_ = p.name().empty() ? p.op_type() + "_" + std::to_string(index) : p.name();
  try {
    for (int k = 0; k < p.input_size(); ++k)
      if (!p.input(k).empty() && !slots_.count(p.input(k)))
        throw Error("input '" + p.input(k) + "' is not defined before use");
    for (int k = 0; k < p.output_size(); ++k)
      if (!p.output(k).empty() && slots_.count(p.output(k)))
        throw Error("output '" + p.output(k) + "' is already defined");
    if (!default_domain) unsupported("domain '" + p.domain() + "'");
    if (opset_ < 7) {
      legacy = p;
      n.p = &legacy;
      upgrade_legacy(legacy);
    }
    if (!try_fold()) lower();
    for (int k = 0; k < p.output_size(); ++k)
      if (!p.output(k).empty() && !slots_.count(p.output(k)))
        throw Error("output " + std::to_string(k) + " ('" + p.output(k) + "') is not supported");
  } catch (const NeedsGivenInputs& e) {
    cur_ = nullptr;
    throw NeedsGivenInputs(n.label + ": " + e.what(), e.inputs);
  } catch (const Error& e) {
    cur_ = nullptr;
    throw Error(n.label + ": " + e.what());
  }
  cur_ = nullptr;
}

void Importer::need_constant(const std::vector<int>& ks, const std::string& message) {
  // Graph inputs with given values that the inputs are computed from; a Shape or Size reads
  // only its input's shape, which is known already.
  std::vector<std::string> found;
  std::unordered_set<std::string> seen;
  std::vector<std::string> todo;
  for (int k : ks)
    if (cur_->has_input(k) && !is_const(k)) todo.push_back(cur_->input(k));
  while (!todo.empty()) {
    std::string v = std::move(todo.back());
    todo.pop_back();
    if (v.empty() || !seen.insert(v).second) continue;
    if (options_.input_values.count(v) && !constant_inputs_.count(v)) found.push_back(v);
    auto p = producer_.find(v);
    if (p == producer_.end()) continue;
    const pb::NodeProto& node = model_.graph().node(p->second);
    if (node.op_type() == "Shape" || node.op_type() == "Size") continue;
    for (const std::string& in : node.input()) todo.push_back(in);
  }
  if (found.empty()) throw Error(message);
  throw NeedsGivenInputs(message, std::move(found));
}

void Importer::check_declared(const pb::ValueInfoProto& vi, ValueId v) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  const Value& val = g_.value(v);
  if (tt.has_elem_type() && tt.elem_type() != 0 && tt.elem_type() != to_elem_type(val.dtype))
    throw Error("output '" + vi.name() + "' is declared " + elem_type_name(tt.elem_type()) +
                " but computes " + elem_type_name(to_elem_type(val.dtype)));
  if (!tt.has_shape()) return;
  bool mismatch = tt.shape().dim_size() != static_cast<int>(val.shape.size());
  for (int k = 0; !mismatch && k < tt.shape().dim_size(); ++k)
    mismatch = tt.shape().dim(k).has_dim_value() && tt.shape().dim(k).dim_value() != val.shape[k];
  if (mismatch) {
    std::string declared = "[";
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      declared += (k ? "," : "") + (d.has_dim_value()   ? std::to_string(d.dim_value())
                                    : d.has_dim_param() ? d.dim_param()
                                                        : "?");
    }
    throw Error("output '" + vi.name() + "' is declared " + declared + "] but computes " +
                to_string(val.shape));
  }
}

void Importer::read_outputs() {
  const pb::GraphProto& gp = model_.graph();
  if (gp.output_size() == 0) throw Error("the graph has no outputs");
  for (const pb::ValueInfoProto& vi : gp.output()) {
    auto it = slots_.find(vi.name());
    if (it == slots_.end()) throw Error("output '" + vi.name() + "' is never computed");
    Slot& s = it->second;
    ValueId v;
    if (s.rt) {
      v = *s.rt;
    } else {
      try {
        v = materialize(*s.c, vi.name());
      } catch (const Error& e) {
        throw Error("output '" + vi.name() + "': " + e.what());
      }
    }
    check_declared(vi, v);
    graph_outputs_.push_back(v);
    output_names_.push_back(vi.name());
  }
}

// Copies the live part of g_ into a new graph, naming each value after the ONNX value it
// computes (graph outputs first), so reports and outputs carry the model's names.
Graph Importer::rebuild() {
  std::vector<std::string> name(g_.values().size());
  for (size_t v = 0; v < name.size(); ++v) name[v] = g_.value(static_cast<ValueId>(v)).name;
  std::vector<bool> renamed(name.size(), false);
  for (ValueId v : graph_inputs_) renamed[v] = true;
  auto prefer = [&](ValueId v, const std::string& onnx_name) {
    if (renamed[v]) return;
    renamed[v] = true;
    name[v] = onnx_name;
  };
  for (size_t k = 0; k < graph_outputs_.size(); ++k) prefer(graph_outputs_[k], output_names_[k]);
  for (const std::string& b : bound_) {
    const Slot& s = slots_.at(b);
    if (s.rt)
      prefer(*s.rt, b);
    else if (s.c && s.c->materialized)
      prefer(*s.c->materialized, b);
  }
  // Helper names were chosen to avoid every ONNX name, and each ONNX name is bound to one
  // value, so the names stay unique.

  std::vector<bool> live(g_.values().size(), false);
  for (ValueId v : graph_outputs_) live[v] = true;
  for (NodeId id = static_cast<NodeId>(g_.nodes().size()) - 1; id >= 0; --id) {
    const Node& n = g_.node(id);
    bool used = std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return live[v]; });
    if (used)
      for (ValueId v : n.inputs) live[v] = true;
  }

  Graph out;
  out.name = g_.name;
  std::vector<ValueId> map(g_.values().size(), -1);
  for (ValueId v : graph_inputs_) {
    const Value& val = g_.value(v);
    map[v] = out.add_input(name[v], val.dtype, val.shape, val.init);
  }
  for (const Node& n : g_.nodes()) {
    bool used = std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return live[v]; });
    if (!used) continue;
    Node copy = n;
    for (ValueId& v : copy.inputs) v = map[v];
    std::vector<std::string> names;
    for (ValueId v : n.outputs) names.push_back(name[v]);
    std::vector<ValueId> outs = out.add_node(std::move(copy), names);
    for (size_t k = 0; k < outs.size(); ++k) map[n.outputs[k]] = outs[k];
  }
  for (ValueId v : graph_outputs_) out.mark_output(map[v]);
  verify(out);
  return out;
}

Graph Importer::run() {
  if (!model_.has_graph()) throw Error("the model has no graph");
  const pb::GraphProto& gp = model_.graph();
  g_.name = gp.name();
  read_opsets();
  // Helper values must never take a name the model uses for something else.
  for (const auto& t : gp.initializer()) reserved_.insert(t.name());
  for (const auto& vi : gp.input()) reserved_.insert(vi.name());
  for (const auto& vi : gp.output()) reserved_.insert(vi.name());
  for (const auto& p : gp.node())
    for (const std::string& o : p.output()) reserved_.insert(o);
  read_initializers();
  read_inputs();

  // Nodes whose outputs reach no graph output are skipped, so an unsupported op in a dead
  // branch does not stop the import (ONNX nodes are topologically sorted).
  std::unordered_set<std::string> needed;
  for (const auto& vi : gp.output()) needed.insert(vi.name());
  std::vector<bool> keep(gp.node_size(), false);
  for (int k = gp.node_size() - 1; k >= 0; --k) {
    const pb::NodeProto& p = gp.node(k);
    for (const std::string& o : p.output())
      if (!o.empty() && needed.count(o)) keep[k] = true;
    if (keep[k])
      for (const std::string& i : p.input()) needed.insert(i);
  }
  for (int k = 0; k < gp.node_size(); ++k)
    for (const std::string& o : gp.node(k).output()) producer_.emplace(o, k);
  for (int k = 0; k < gp.node_size(); ++k)
    if (keep[k]) import_node(gp.node(k), k);
  read_outputs();
  Graph g = rebuild();
  g.specialised_inputs = specialised_;
  return g;
}

std::optional<ConstTensor> Importer::given_input(int k) {
  auto given = options_.input_values.find(cur_->input(k));
  const Slot& s = slot(cur_->input(k));
  if (given == options_.input_values.end() || !s.rt ||
      std::find(graph_inputs_.begin(), graph_inputs_.end(), *s.rt) == graph_inputs_.end())
    return std::nullopt;
  const std::string what = "input " + std::to_string(k) + " '" + cur_->input(k) + "': ";
  const HostTensor& t = given->second;
  if (t.dtype() != dtype(k))
    throw Error(what + "the value given is " + std::string(dtype_name(t.dtype())) +
                ", the model declares " + std::string(dtype_name(dtype(k))));
  if (t.numel() != numel(shape(k)))
    throw Error(what + "the value given has " + std::to_string(t.numel()) +
                " elements, its shape " + to_string(shape(k)) + " holds " +
                std::to_string(numel(shape(k))));
  if (std::find(specialised_.begin(), specialised_.end(), given->first) == specialised_.end())
    specialised_.push_back(given->first);
  ConstTensor c = from_host(t);
  c.shape = shape(k);
  return c;
}

}  // namespace onnx_detail

namespace {

Graph import_model(const onnx_detail::pb::ModelProto& model, const std::string& origin,
                   const std::filesystem::path& model_dir, const OnnxImportOptions& options) {
  try {
    std::unordered_set<std::string> constant_inputs;
    Graph g;
    for (;;) {
      try {
        g = onnx_detail::Importer(model, origin, model_dir, options, constant_inputs).run();
        break;
      } catch (const onnx_detail::NeedsGivenInputs& e) {
        const size_t before = constant_inputs.size();
        constant_inputs.insert(e.inputs.begin(), e.inputs.end());
        if (constant_inputs.size() == before) throw Error(e.what());
      }
    }
    if (g.name.empty()) g.name = std::filesystem::path(origin).stem().string();
    return g;
  } catch (const Error& e) {
    // Names from the model reach the message: one printable line (runtime/ir/error.h).
    throw Error(printable(origin + ": " + e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(printable(origin) + ": out of memory while importing");
  } catch (const std::exception& e) {
    throw Error(printable(origin + ": internal error while importing: " + e.what()));
  }
}

}  // namespace

Graph parse_graph_onnx(const std::string& bytes, const std::string& origin,
                       const std::filesystem::path& model_dir, const OnnxImportOptions& options) {
  onnx_detail::pb::ModelProto model;
  // ParseFromString rejects truncated and malformed messages (and nesting deeper than
  // protobuf's recursion limit) without reading past the buffer.
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromString(bytes))
    throw Error(origin + ": not a valid ONNX model (malformed or truncated protobuf)");
  return import_model(model, origin, model_dir, options);
}

// Parsed from the file as it streams in: no copy of the file's bytes is held next to the
// parsed model (with 100 MB of weights, each copy is 100 MB of peak memory).
Graph read_graph_onnx(const std::filesystem::path& file, const OnnxImportOptions& options) {
  const std::string origin = file.string();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw Error(origin + ": is a directory, not a model file");
  std::ifstream f(file, std::ios::binary);
  if (!f) throw Error(origin + ": cannot open file");
  const auto size = std::filesystem::file_size(file, ec);
  onnx_detail::pb::ModelProto model;
  if ((!ec && size > static_cast<uintmax_t>(std::numeric_limits<int>::max())) ||
      !model.ParseFromIstream(&f)) {
    if (f.bad()) throw Error(origin + ": read error");
    throw Error(origin + ": not a valid ONNX model (malformed or truncated protobuf)");
  }
  std::filesystem::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  return import_model(model, origin, dir, options);
}

bool is_onnx_path(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".onnx";
}

}  // namespace hf
