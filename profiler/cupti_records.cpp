#include "profiler/cupti_records.h"

namespace hf::cuda {

namespace {

// The record layouts of CUPTI 13 (the tracer refuses an older library). Only the fields
// every layout since CUDA 11 keeps in place are read: start, end, correlationId.
template <class Record>
uint64_t span_ns(const Record& r) {
  return r.end > r.start ? r.end - r.start : 0;
}

}  // namespace

void ActivityJoin::add(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      spans_.push_back({k.correlationId, span_ns(k)});
      ++device_records;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      spans_.push_back({m.correlationId, span_ns(m)});
      ++device_records;
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      spans_.push_back({m.correlationId, span_ns(m)});
      ++device_records;
      return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& e = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
      if (e.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        external_[e.correlationId] = e.externalId;
      else
        ++other;
      return;
    }
    default:
      ++other;
  }
}

IterationNodeSeconds ActivityJoin::take(size_t iterations) {
  IterationNodeSeconds out(iterations);
  for (const Span& s : spans_) {
    auto it = external_.find(s.correlation);
    const uint64_t iteration = it == external_.end() ? iterations : it->second >> 32;
    if (iteration >= iterations) {
      ++uncorrelated;
      continue;
    }
    out[iteration][it->second & 0xffffffffu] += static_cast<double>(s.ns) * 1e-9;
  }
  spans_.clear();
  external_.clear();
  return out;
}

}  // namespace hf::cuda
