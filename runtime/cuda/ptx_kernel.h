// A kernel loaded from PTX text through the CUDA runtime's library API
// (cudaLibraryLoadData + cudaLibraryGetKernel, CUDA 12+): the driver JIT-compiles the PTX
// for the device; nothing here links libcuda. No CUDA header in this file.
#pragma once
#include <cstddef>
#include <string>

namespace hf::cuda {

class PtxKernel {
 public:
  // Loads `ptx` and finds `name` in it; hf::Error with the runtime's message (and the JIT
  // log, when the driver gives one) on failure. The block size comes from
  // cudaOccupancyMaxPotentialBlockSize, rounded down to a multiple of 32.
  PtxKernel(const std::string& ptx, const std::string& name);
  ~PtxKernel();
  PtxKernel(const PtxKernel&) = delete;
  PtxKernel& operator=(const PtxKernel&) = delete;

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
