#include "runtime/io/test_data.h"

#include <algorithm>
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

OnnxImportOptions import_options_from(const std::vector<fs::path>& sets) {
  OnnxImportOptions opt;
  for (size_t s = 0; s < sets.size(); ++s) {
    std::map<std::string, Shape> shapes;
    std::map<std::string, std::vector<int64_t>> values;
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
      DType d = t.tensor.dtype();
      if ((d != DType::I32 && d != DType::I64) || t.tensor.numel() > 4096) continue;
      std::vector<int64_t>& v = values[t.name];
      for (int64_t i = 0; i < t.tensor.numel(); ++i)
        v.push_back(d == DType::I64 ? t.tensor.as<int64_t>()[i] : t.tensor.as<int32_t>()[i]);
    }
    if (s == 0) {
      opt.input_shapes = std::move(shapes);
      opt.input_values = std::move(values);
      continue;
    }
    auto keep_shared = [](auto& shared, const auto& here) {
      std::erase_if(shared, [&](const auto& kv) {
        auto it = here.find(kv.first);
        return it == here.end() || it->second != kv.second;
      });
    };
    keep_shared(opt.input_shapes, shapes);
    keep_shared(opt.input_values, values);
  }
  return opt;
}

std::vector<DataSetGroup> group_data_sets(const std::vector<fs::path>& sets) {
  std::vector<DataSetGroup> groups;
  for (const fs::path& set : sets) {
    OnnxImportOptions o = import_options_from({set});
    auto same = [&](const DataSetGroup& g) {
      return g.options.input_shapes == o.input_shapes && g.options.input_values == o.input_values;
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
