#include "runtime/io/test_data.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "runtime/ir/error.h"

namespace hf {

namespace fs = std::filesystem;

std::vector<fs::path> test_data_sets(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir.string() + ": no such directory");
  const std::string head = "test_data_set_";
  std::map<long, fs::path> sets;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with(head) || !e.is_directory()) continue;
    std::string digits = name.substr(head.size());
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), ::isdigit))
      continue;
    sets.emplace(std::stol(digits), e.path());
  }
  if (ec) throw Error(dir.string() + ": cannot list the directory: " + ec.message());
  if (sets.empty()) throw Error(dir.string() + ": no test_data_set_* directory");
  std::vector<fs::path> out;
  for (auto& [k, p] : sets) out.push_back(p);
  return out;
}

bool same_value(const HostTensor& a, const HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

namespace {

bool same_values(const std::map<std::string, HostTensor>& a,
                 const std::map<std::string, HostTensor>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
           return x.first == y.first && same_value(x.second, y.second);
         });
}

}  // namespace

bool same_import(const OnnxImportOptions& a, const OnnxImportOptions& b,
                 const std::vector<std::string>& specialised) {
  if (a.input_shapes != b.input_shapes) return false;
  for (const std::string& name : specialised) {
    auto x = a.input_values.find(name), y = b.input_values.find(name);
    if (x == a.input_values.end() || y == b.input_values.end() || !same_value(x->second, y->second))
      return false;
  }
  return true;
}

OnnxImportOptions import_options_from(const std::vector<fs::path>& sets) {
  OnnxImportOptions opt;
  for (size_t s = 0; s < sets.size(); ++s) {
    std::map<std::string, Shape> shapes;
    std::map<std::string, HostTensor> values;
    std::error_code ec;
    for (int k = 0; fs::exists(sets[s] / ("input_" + std::to_string(k) + ".pb"), ec); ++k) {
      NamedTensor t;
      try {
        t = read_tensor_file(sets[s] / ("input_" + std::to_string(k) + ".pb"));
      } catch (const Error&) {
        continue;  // reported when the inputs are read for the model (read_graph_inputs)
      }
      if (t.name.empty()) continue;
      shapes[t.name] = t.tensor.shape();
      if (t.tensor.numel() <= kMaxGivenValue) values[t.name] = t.tensor;
    }
    if (s == 0) {
      opt.input_shapes = std::move(shapes);
      opt.input_values = std::move(values);
      continue;
    }
    std::erase_if(opt.input_shapes, [&](const auto& kv) {
      auto it = shapes.find(kv.first);
      return it == shapes.end() || it->second != kv.second;
    });
    std::erase_if(opt.input_values, [&](const auto& kv) {
      auto it = values.find(kv.first);
      return it == values.end() || !same_value(it->second, kv.second);
    });
  }
  return opt;
}

std::vector<DataSetGroup> group_data_sets(const std::vector<fs::path>& sets) {
  std::vector<DataSetGroup> groups;
  for (const fs::path& set : sets) {
    OnnxImportOptions o = import_options_from({set});
    auto same = [&](const DataSetGroup& g) {
      return g.options.input_shapes == o.input_shapes &&
             same_values(g.options.input_values, o.input_values);
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) it = groups.insert(groups.end(), DataSetGroup{std::move(o), {}});
    it->sets.push_back(set);
  }
  return groups;
}

std::vector<HostTensor> read_graph_inputs(const Graph& g, const fs::path& dir) {
  const std::vector<ValueId>& ins = g.inputs();
  std::vector<fs::path> files = numbered_tensor_files(
      dir, "input", ins.size(),
      "the model has " + std::to_string(ins.size()) + (ins.size() == 1 ? " input" : " inputs"));
  std::vector<NamedTensor> read;
  for (const fs::path& f : files) read.push_back(read_tensor_file(f));

  std::unordered_map<std::string, size_t> input_index;
  for (size_t k = 0; k < ins.size(); ++k) input_index.emplace(g.value(ins[k]).name, k);
  // By name only when the names say unambiguously where every file goes.
  std::vector<size_t> slot(read.size());
  std::vector<bool> taken(ins.size(), false);
  bool by_name = true;
  for (size_t k = 0; k < read.size() && by_name; ++k) {
    auto it = input_index.find(read[k].name);
    by_name = it != input_index.end() && !taken[it->second];
    if (by_name) {
      slot[k] = it->second;
      taken[it->second] = true;
    }
  }
  std::vector<HostTensor> out(ins.size());
  for (size_t k = 0; k < read.size(); ++k) {
    size_t to = by_name ? slot[k] : k;
    const Value& v = g.value(ins[to]);
    const HostTensor t = as_uint16_bits(read[k], v.dtype, files[k].string());
    const std::string what =
        files[k].string() + ": graph input " + std::to_string(to) + " '" + v.name + "' ";
    if (t.dtype() != v.dtype)
      throw Error(what + "is " + std::string(dtype_name(v.dtype)) + ", the file holds " +
                  std::string(dtype_name(t.dtype())));
    if (t.shape() != v.shape)
      throw Error(what + "has shape " + to_string(v.shape) + ", the file holds " +
                  to_string(t.shape()) +
                  "; other shapes than the model declares are not supported (hotfuse plans "
                  "static shapes)");
    out[to] = t;
  }
  return out;
}

}  // namespace hf
