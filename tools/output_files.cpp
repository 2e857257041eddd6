#include "tools/output_files.h"

#include "runtime/io/tensor_file.h"

namespace hf {

dump::DumpDir save_outputs_dir(const std::filesystem::path& dir, bool force) {
  return dump::DumpDir(dir, force, "--save-outputs");
}

void save_outputs(dump::DumpDir& dir, const Graph& g, std::span<const HostTensor> outputs) {
  for (size_t k = 0; k < outputs.size(); ++k)
    dir.write("output_" + std::to_string(k) + ".pb",
              encode_tensor_file(outputs[k].view(), g.value(g.outputs()[k]).name));
}

}  // namespace hf
