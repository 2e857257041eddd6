#include "profiler/cupti_profile.h"

#include <chrono>

#include "profiler/cupti_tracer.h"
#include "runtime/cuda/event_timer.h"
#include "runtime/exec/executor.h"

namespace hf::cuda {

namespace {

// Median wall ms of `iters` runs; after each (synchronised) run, `after` reads its times.
template <class After>
double median_iteration_ms(Executor& exec, const std::vector<TensorView>& inputs, int iters,
                           After after) {
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    exec.run(inputs);  // ends with Backend::sync()
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    after();  // an iteration boundary
  }
  return median_of(ms);
}

}  // namespace

CuptiProfile profile_with_cupti(const Graph& g, Backend& backend, const CudaBackend& cuda,
                                const std::vector<TensorView>& inputs, int iters) {
  CuptiProfile p;
  {
    Executor plain(g, backend);
    plain.run(inputs);
    p.plain_ms = median_iteration_ms(plain, inputs, iters, [] {});
  }
  std::unique_ptr<CuptiTracer> tracer = CuptiTracer::create(&p.why_not);
  if (!tracer) {
    EventTimedBackend timed(backend, cuda);
    Executor exec(g, timed);
    exec.run(inputs);
    StepTimes times(exec.plan().steps().size(), iters);
    p.traced_ms =
        median_iteration_ms(exec, inputs, iters, [&] { timed.feed_steps(exec.plan(), times); });
    p.rows = op_rows(g, exec.plan(), times);
    return p;
  }
  CorrelatedBackend correlated(backend, *tracer);
  Executor traced(g, correlated);
  traced.run(inputs);
  tracer->end_iteration();
  tracer->collect();  // drop the warm-up's records, and the plan's own copies (constants)
  const size_t records0 = tracer->records(), uncorrelated0 = tracer->uncorrelated(),
               dropped0 = tracer->dropped();
  StepTimes times(traced.plan().steps().size(), iters);
  // One flush for the whole window: flushing at every iteration boundary would cost each
  // iteration CUPTI's flush.
  p.traced_ms = median_iteration_ms(traced, inputs, iters, [&] { tracer->end_iteration(); });
  feed_steps(traced.plan(), tracer->collect(&p.launches.launches), times);
  if (p.launches.launches.size() > DeviceLaunchWindow::kMaxLaunches)
    p.launches.launches.resize(DeviceLaunchWindow::kMaxLaunches);
  p.launches.at = std::chrono::steady_clock::now();
  if (!tracer->now(&p.launches.cupti_ns)) p.launches.launches.clear();  // no way to place them
  p.rows = op_rows(g, traced.plan(), times);
  p.records = tracer->records() - records0;
  p.uncorrelated = tracer->uncorrelated() - uncorrelated0;
  p.dropped = tracer->dropped() - dropped0;
  p.cupti = true;
  return p;
}

}  // namespace hf::cuda
