// Host tensors copied into a backend's memory once (plans hold backend pointers; the host
// side stays the caller's), freed when this goes. On the CPU backend alloc/upload are
// malloc/memcpy, so the same code serves both.
#pragma once
#include <vector>

#include "runtime/exec/backend.h"

namespace hf {

struct DeviceInputs {
  Backend& backend;
  std::vector<void*> buffers;
  std::vector<TensorView> views;

  DeviceInputs(Backend& b, const std::vector<HostTensor>& host) : backend(b) {
    for (const HostTensor& t : host) {
      buffers.push_back(b.alloc(t.bytes()));
      b.upload(buffers.back(), t.data(), t.bytes());
      views.push_back(contiguous_view(buffers.back(), t.dtype(), t.shape()));
    }
  }
  ~DeviceInputs() {
    for (void* p : buffers) backend.free(p);
  }
  DeviceInputs(const DeviceInputs&) = delete;
  DeviceInputs& operator=(const DeviceInputs&) = delete;
};

}  // namespace hf
