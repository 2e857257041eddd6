// Host tensors copied into a backend's memory once (plans hold backend pointers; the host
// side stays the caller's), freed when this goes; and copies of results back to the host. On the
// CPU backend alloc/upload are malloc/memcpy, so the same code serves both.
#pragma once
#include <span>
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
      views.push_back(contiguous_view(buffers.back(), t.dtype(), t.shape()));
    }
    upload(host);
  }
  // New values of the same shapes (another data set) into the same buffers.
  void upload(const std::vector<HostTensor>& host) {
    for (size_t k = 0; k < host.size(); ++k)
      backend.upload(buffers[k], host[k].data(), host[k].bytes());
  }
  ~DeviceInputs() {
    for (void* p : buffers) backend.free(p);
  }
  DeviceInputs(const DeviceInputs&) = delete;
  DeviceInputs& operator=(const DeviceInputs&) = delete;
};

// Host copies of a backend's views (device memory on CUDA): outputs, to compare or save.
inline std::vector<HostTensor> download(Backend& b, std::span<const TensorView> views) {
  std::vector<HostTensor> out;
  for (const TensorView& v : views) {
    HostTensor t(v.dtype, v.shape);
    b.download(t.data(), v.data, t.bytes());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace hf
