// A kernel loaded from a CUBIN or PTX text through the CUDA runtime's library API
// (cudaLibraryLoadData + cudaLibraryGetKernel, CUDA 12+; the format is recognised from the
// bytes): a CUBIN runs as it is, PTX is JIT-compiled by the driver for the device. Nothing
// here links libcuda. No CUDA header in this file.
#pragma once
#include <cstddef>
#include <string>

namespace hf::cuda {

class ModuleKernel {
 public:
  // Loads `module` (CUBIN bytes or PTX text) and finds `name` in it; hf::Error with the runtime's
  // message (and the JIT log, when the driver gives one) on failure. The block size comes from
  // cudaOccupancyMaxPotentialBlockSize, rounded down to a multiple of 32.
  ModuleKernel(const std::string& module, const std::string& name);
  ~ModuleKernel();
  ModuleKernel(const ModuleKernel&) = delete;
  ModuleKernel& operator=(const ModuleKernel&) = delete;

  // Launches with one by-value parameter: `params` bytes (a struct, 8-byte aligned).
  void launch(unsigned grid, unsigned block, void* params, void* stream) const;

  int occupancy_block() const { return block_; }  // threads per block for full occupancy
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  void* library_ = nullptr;  // cudaLibrary_t
  void* kernel_ = nullptr;   // cudaKernel_t
  int block_ = 256;
};

}  // namespace hf::cuda
