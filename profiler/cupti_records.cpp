#include "profiler/cupti_records.h"

namespace hf::cuda {

namespace {

// The record layouts of CUPTI 13 (the tracer refuses an older library). Only the fields
// every layout since CUDA 11 keeps in place are read: start, end, correlationId.
template <class Record>
ActivityJoin::Span span_of(const CUpti_Activity& activity) {
  const auto& r = reinterpret_cast<const Record&>(activity);
  return {r.correlationId, r.end > r.start ? r.end - r.start : 0};
}

}  // namespace

void ActivityJoin::add(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      add_span(span_of<CUpti_ActivityKernel10>(record));
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      add_span(span_of<CUpti_ActivityMemcpy6>(record));
      return;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      add_span(span_of<CUpti_ActivityMemset4>(record));
      return;
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

void ActivityJoin::add_span(Span s) {
  spans_.push_back(s);
  ++device_records;
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
