#include "runtime/ir/tensor.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "runtime/ir/memory_cap.h"
#include "runtime/ops/half.h"

namespace hf {

double load_double(const TensorView& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32:
      return t.as<float>()[i];
    case DType::F16:
      return to_f32(t.as<f16>()[i]);
    case DType::BF16:
      return to_f32(t.as<bf16>()[i]);
    case DType::I32:
      return t.as<int32_t>()[i];
    case DType::I64:
      return static_cast<double>(t.as<int64_t>()[i]);
    case DType::Bool:
      return t.as<uint8_t>()[i] != 0;
    case DType::U8:
      return t.as<uint8_t>()[i];
    case DType::F64:
      return t.as<double>()[i];
    case DType::I8:
      return t.as<int8_t>()[i];
    case DType::I16:
      return t.as<int16_t>()[i];
    case DType::U16:
      return t.as<uint16_t>()[i];
    case DType::U32:
      return t.as<uint32_t>()[i];
    case DType::U64:
      return static_cast<double>(t.as<uint64_t>()[i]);
  }
  return 0;
}

void store_double(const TensorView& t, int64_t i, double v) {
  switch (t.dtype) {
    case DType::F32:
      t.as<float>()[i] = static_cast<float>(v);
      break;
    case DType::F16:
      t.as<f16>()[i] = to_f16(static_cast<float>(v));
      break;
    case DType::BF16:
      t.as<bf16>()[i] = to_bf16(static_cast<float>(v));
      break;
    case DType::I32:
      t.as<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case DType::I64:
      t.as<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    case DType::Bool:
      t.as<uint8_t>()[i] = v != 0;
      break;
    case DType::U8:
      t.as<uint8_t>()[i] = static_cast<uint8_t>(v);
      break;
    case DType::F64:
      t.as<double>()[i] = v;
      break;
    case DType::I8:
      t.as<int8_t>()[i] = static_cast<int8_t>(v);
      break;
    case DType::I16:
      t.as<int16_t>()[i] = static_cast<int16_t>(v);
      break;
    case DType::U16:
      t.as<uint16_t>()[i] = static_cast<uint16_t>(v);
      break;
    case DType::U32:
      t.as<uint32_t>()[i] = static_cast<uint32_t>(v);
      break;
    case DType::U64:
      t.as<uint64_t>()[i] = static_cast<uint64_t>(v);
      break;
  }
}

bool TensorView::is_contiguous() const {
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

TensorView TensorView::broadcast_to(const Shape& to) const {
  TensorView v{data, dtype, to, Strides(to.size(), 0)};
  size_t off = to.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    v.strides[off + i] = (shape[i] == 1 && to[off + i] != 1) ? 0 : strides[i];
  return v;
}

TensorView contiguous_view(void* data, DType dtype, Shape shape) {
  Strides st = contiguous_strides(shape);
  return TensorView{data, dtype, std::move(shape), std::move(st)};
}

void* alloc_host(size_t bytes) {
  check_memory_cap(bytes, "a host allocation");  // callers that can name the tensor check first
  constexpr size_t kHuge = size_t{2} << 20;
  size_t align = bytes >= kHuge ? kHuge : 64;
  size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (!p) throw std::bad_alloc();
  if (bytes >= kHuge) madvise(p, rounded, MADV_HUGEPAGE);  // a hint; failure is harmless
  return p;
}

void free_host(void* p) {
  std::free(p);
}

HostTensor::HostTensor(DType dtype, Shape shape) {
  size_t bytes = static_cast<size_t>(hf::numel(shape)) * dtype_size(dtype);
  storage_ = std::shared_ptr<void>(alloc_host(bytes), free_host);
  view_ = contiguous_view(storage_.get(), dtype, std::move(shape));
}

}  // namespace hf
