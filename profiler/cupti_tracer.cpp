#include "profiler/cupti_tracer.h"

#include <cupti.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "runtime/ir/shared_library.h"

namespace hf::cuda {

struct CuptiTracer::Api {
  void* lib = nullptr;
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;  // optional: trace.json's clock mapping

  std::string error(CUptiResult r) const {
    const char* s = nullptr;
    if (result_string && result_string(r, &s) == CUPTI_SUCCESS && s) return s;
    return "CUPTI error " + std::to_string(static_cast<int>(r));
  }
};

namespace {

// What the completion callback extracts, kept until collect(). CUPTI calls the callbacks
// on its own thread, hence the mutex.
struct Records {
  std::mutex mu;
  ActivityJoin join;
  size_t dropped = 0;
  CuptiTracer::Api* api = nullptr;  // of the live tracer; null when none
};
Records& shared_records() {
  static Records r;
  return r;
}

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kAlign = 8;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                               size_t valid) {
  Records& r = shared_records();
  std::lock_guard lock(r.mu);
  if (r.api && valid > 0) {
    CUpti_Activity* rec = nullptr;
    while (r.api->next_record(buffer, valid, &rec) == CUPTI_SUCCESS) r.join.add(*rec);
    size_t dropped = 0;
    if (r.api->dropped_records && r.api->dropped_records(ctx, stream, &dropped) == CUPTI_SUCCESS)
      r.dropped += dropped;
  }
  std::free(buffer);
}

// RUNTIME and DRIVER: CUPTI writes EXTERNAL_CORRELATION records only for the API calls it
// records (cupti_records.h).
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

// Every 13.x library writes the record layouts cupti_records.cpp reads; CUPTI numbers its
// API major * 10000 + minor * 100 + patch since 13.0.
constexpr uint32_t kMinVersion = 130000;

}  // namespace

std::unique_ptr<CuptiTracer> CuptiTracer::create(std::string* why) {
  auto fail = [why](const std::string& w) -> std::unique_ptr<CuptiTracer> {
    if (why) *why = w;
    return nullptr;
  };
  if (shared_records().api) return fail("a CUPTI tracer is already active in this process");
  auto api = std::make_unique<Api>();
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("HOTFUSE_CUPTI_LIB"); env && *env)
    candidates = {env};
  else
    candidates = {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
                  "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
  std::string dl_errors;
  api->lib = open_shared_library(candidates, &dl_errors);
  if (!api->lib) return fail("libcupti could not be loaded (" + dl_errors + ")");
  bool all = true;
  auto sym = [&](auto& fn, const char* name) { all = bind_symbol(api->lib, fn, name) && all; };
  sym(api->get_version, "cuptiGetVersion");
  sym(api->result_string, "cuptiGetResultString");
  sym(api->enable, "cuptiActivityEnable");
  sym(api->disable, "cuptiActivityDisable");
  sym(api->register_callbacks, "cuptiActivityRegisterCallbacks");
  sym(api->next_record, "cuptiActivityGetNextRecord");
  sym(api->dropped_records, "cuptiActivityGetNumDroppedRecords");
  sym(api->flush_all, "cuptiActivityFlushAll");
  sym(api->push, "cuptiActivityPushExternalCorrelationId");
  sym(api->pop, "cuptiActivityPopExternalCorrelationId");
  if (!all) return fail("libcupti lacks an Activity API entry point");
  bind_symbol(api->lib, api->timestamp, "cuptiGetTimestamp");
  uint32_t version = 0;
  if (CUptiResult r = api->get_version(&version); r != CUPTI_SUCCESS)
    return fail("cuptiGetVersion: " + api->error(r));
  if (version < kMinVersion)
    return fail("libcupti API version " + std::to_string(version) +
                " writes older activity records than this build reads (13.0, " +
                std::to_string(kMinVersion) + ", or newer)");
  // The callbacks are the same functions for every tracer: registered once per process.
  static bool registered = false;
  if (!registered) {
    if (CUptiResult r = api->register_callbacks(buffer_requested, buffer_completed);
        r != CUPTI_SUCCESS)
      return fail("cuptiActivityRegisterCallbacks: " + api->error(r));
    registered = true;
  }
  for (CUpti_ActivityKind k : kKinds)
    if (CUptiResult r = api->enable(k); r != CUPTI_SUCCESS) {
      for (CUpti_ActivityKind d : kKinds) api->disable(d);
      return fail("cuptiActivityEnable(" + std::to_string(static_cast<int>(k)) +
                  "): " + api->error(r));
    }
  Records& r = shared_records();
  std::lock_guard lock(r.mu);
  r.join = ActivityJoin();
  r.dropped = 0;
  r.api = api.get();
  return std::unique_ptr<CuptiTracer>(new CuptiTracer(std::move(api)));
}

CuptiTracer::CuptiTracer(std::unique_ptr<Api> api) : api_(std::move(api)) {}

CuptiTracer::~CuptiTracer() {
  for (CUpti_ActivityKind k : kKinds) api_->disable(k);
  api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(shared_records().mu);
  shared_records().api = nullptr;
}

void CuptiTracer::push(uint64_t node) {
  api_->push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
             external_id(iteration_, static_cast<uint32_t>(node)));
}

void CuptiTracer::pop() {
  uint64_t last = 0;
  api_->pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

IterationNodeSeconds CuptiTracer::collect(std::vector<DeviceLaunch>* launches) {
  api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  Records& r = shared_records();
  std::lock_guard lock(r.mu);
  IterationNodeSeconds out = r.join.take(iteration_, launches);
  iteration_ = 0;
  return out;
}

bool CuptiTracer::now(uint64_t* ns) const {
  return api_->timestamp && api_->timestamp(ns) == CUPTI_SUCCESS;
}

size_t CuptiTracer::records() const {
  std::lock_guard lock(shared_records().mu);
  return shared_records().join.device_records;
}
size_t CuptiTracer::uncorrelated() const {
  std::lock_guard lock(shared_records().mu);
  return shared_records().join.uncorrelated;
}
size_t CuptiTracer::dropped() const {
  std::lock_guard lock(shared_records().mu);
  return shared_records().dropped;
}

namespace {

class CorrelatedKernel final : public Kernel {
 public:
  CorrelatedKernel(std::unique_ptr<Kernel> inner, CuptiTracer& t, NodeId node)
      : inner_(std::move(inner)), tracer_(t), node_(node) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    tracer_.push(static_cast<uint64_t>(node_));
    try {
      inner_->run(in, out);
    } catch (...) {
      tracer_.pop();
      throw;
    }
    tracer_.pop();
  }
  void after_iteration() override { inner_->after_iteration(); }

 private:
  std::unique_ptr<Kernel> inner_;
  CuptiTracer& tracer_;
  NodeId node_;
};

}  // namespace

std::unique_ptr<Kernel> CorrelatedBackend::make_kernel(const Graph& g, const Node& n) {
  NodeId id = static_cast<NodeId>(&n - g.nodes().data());
  return std::make_unique<CorrelatedKernel>(inner().make_kernel(g, n), tracer_, id);
}

void feed_steps(const Plan& plan, const IterationNodeSeconds& iterations, StepObserver& observer) {
  const auto& steps = plan.steps();
  for (const auto& node_seconds : iterations)
    for (size_t s = 0; s < steps.size(); ++s) {
      auto it = node_seconds.find(static_cast<uint64_t>(steps[s].node));
      observer.on_step(s, it == node_seconds.end() ? 0.0 : it->second);
    }
}

}  // namespace hf::cuda
