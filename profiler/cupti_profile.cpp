#include "profiler/cupti_profile.h"

#include <chrono>

#include "profiler/cupti_tracer.h"
#include "runtime/exec/executor.h"

namespace hf::cuda {

namespace {

double median_iteration_ms(Executor& exec, const std::vector<TensorView>& inputs, int iters,
                           CuptiTracer* tracer, StepTimes* times) {
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    exec.run(inputs);  // ends with Backend::sync()
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (tracer) feed_steps(exec.plan(), tracer->collect(), *times);  // iteration boundary
  }
  return median_of(ms);
}

}  // namespace

CuptiProfile profile_with_cupti(const Graph& g, Backend& backend,
                                const std::vector<TensorView>& inputs, int iters) {
  CuptiProfile p;
  {
    Executor plain(g, backend);
    plain.run(inputs);
    p.plain_ms = median_iteration_ms(plain, inputs, iters, nullptr, nullptr);
  }
  std::unique_ptr<CuptiTracer> tracer = CuptiTracer::create(&p.why_not);
  if (!tracer) return p;
  CorrelatedBackend correlated(backend, *tracer);
  Executor traced(g, correlated);
  traced.run(inputs);
  tracer->collect();  // drop the warm-up's records
  StepTimes times(traced.plan().steps().size(), iters);
  p.traced_ms = median_iteration_ms(traced, inputs, iters, tracer.get(), &times);
  p.rows = op_rows(g, traced.plan(), times);
  p.records = tracer->records();
  p.uncorrelated = tracer->uncorrelated();
  p.dropped = tracer->dropped();
  p.ok = true;
  return p;
}

}  // namespace hf::cuda
