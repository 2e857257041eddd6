// Tensors: a typed, shaped, strided view of memory, and an owning host tensor.
//
// Kernels take TensorViews (no ownership, arbitrary strides, stride 0 for broadcast).
// HostTensor owns 64-byte aligned memory; large buffers ask the kernel for huge pages,
// because page faults on fresh 64 MiB buffers cost more than the kernel writing them.
#pragma once
#include <memory>

#include "runtime/ir/dtype.h"
#include "runtime/ir/shape.h"

namespace hf {

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::F32;
  Shape shape;
  Strides strides;  // elements

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const { return hf::numel(shape); }
  bool is_contiguous() const;
  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
  // The same memory read as `to`, with stride 0 on broadcast dimensions.
  TensorView broadcast_to(const Shape& to) const;
};

TensorView contiguous_view(void* data, DType dtype, Shape shape);

// Stores `v` as element i of `t` (flat index into its memory) in t's dtype: rounded to
// f32/f16/bf16, truncated to the integers, v != 0 for bool.
void store_double(const TensorView& t, int64_t i, double v);
// Element i of `t` (flat index into its memory) as a double.
double load_double(const TensorView& t, int64_t i);

// Aligned host allocation; freed with free_host.
void* alloc_host(size_t bytes);
void free_host(void* p);

class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, Shape shape);  // uninitialised contents
  const TensorView& view() const { return view_; }
  void* data() const { return view_.data; }
  DType dtype() const { return view_.dtype; }
  const Shape& shape() const { return view_.shape; }
  int64_t numel() const { return view_.numel(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype()); }
  template <class T>
  T* as() const {
    return view_.as<T>();
  }

 private:
  std::shared_ptr<void> storage_;
  TensorView view_;
};

}  // namespace hf
