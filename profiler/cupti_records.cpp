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
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      add_span(span_of<CUpti_ActivityKernel10>(record));
      kernels_.push_back({k.correlationId, {k.start, k.end, k.streamId, k.name}});
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {  // the launch calls: kept for the launch join
      const auto& a = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      api_[a.correlationId] = {a.start, a.end, a.threadId, nullptr};
      ++other;
      return;
    }
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

IterationNodeSeconds ActivityJoin::take(size_t iterations, std::vector<DeviceLaunch>* launches) {
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
  if (launches) {
    for (const auto& [correlation, k] : kernels_) {
      auto ext = external_.find(correlation);
      auto api = api_.find(correlation);
      if (ext == external_.end() || api == api_.end() || (ext->second >> 32) >= iterations)
        continue;
      DeviceLaunch l;
      l.iteration = static_cast<uint32_t>(ext->second >> 32);
      l.node = static_cast<uint32_t>(ext->second & 0xffffffffu);
      l.correlation = correlation;
      l.kernel = k.name ? k.name : "";
      l.stream = k.id;
      l.thread = api->second.id;
      l.api_start_ns = api->second.start;
      l.api_end_ns = api->second.end;
      l.start_ns = k.start;
      l.end_ns = k.end;
      launches->push_back(std::move(l));
    }
  }
  spans_.clear();
  external_.clear();
  kernels_.clear();
  api_.clear();
  return out;
}

}  // namespace hf::cuda
