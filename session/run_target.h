// What a launcher needs to run a Session on one backend, owned together: the backend, the
// kernel cache of its target, the yardsticks ops are classified against. hotfuse-run and
// --check both run every --fusion mode through one of these, on the CPU or on CUDA.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "profiler/device_launch.h"
#include "profiler/machine_probe.h"
#include "session/session_target.h"

namespace hf {

class Session;

class RunTarget {
 public:
  virtual ~RunTarget() = default;
  // "cpu, 2 threads", "cuda NVIDIA H200 (sm_90)": for headers and the trace.
  virtual std::string where() const = 0;
  virtual Backend& backend() = 0;
  virtual SessionTarget session_target() = 0;
  virtual const MachinePeak& machine() const = 0;
  // After the timed iterations: what this backend can say beyond the session's profile
  // (on CUDA, device time per op from CUPTI). `inputs` are in backend() memory.
  virtual void print_device_profile(Session& s, std::span<const TensorView> inputs, int iters) {}
  // The kernel launches print_device_profile's passes recorded (CUPTI only; none elsewhere),
  // for trace.json's device tracks (dump/trace_json_device.h).
  virtual const std::vector<cuda::DeviceLaunchWindow>& device_launches() const {
    static const std::vector<cuda::DeviceLaunchWindow> none;
    return none;
  }
};

// How long a launcher lets a session settle: seconds (--settle-timeout) and iterations
// (--settle-iters), whichever ends first. A tiny graph runs many thousands of iterations
// per second while a kernel compiles; the count bounds that.
struct SettleBound {
  double seconds = 300;
  int64_t iterations = 1000000;
};

// Runs `s` on `inputs` (in the target's memory) until it settles; past either bound one
// line on stderr says where it stopped, ending with `then` ("measuring as it is").
// `after_each` runs after every iteration (the launcher prints the session's events there).
void settle(Session& s, std::span<const TensorView> inputs, SettleBound bound,
            const std::string& then, const std::function<void()>& after_each = {});

// `cuda`: the CUDA backend BackendChoice made (it must outlive the target), or null for
// the CPU with `threads` threads (0: HOTFUSE_NUM_THREADS, else every hardware thread).
// `fusing`: whether fused kernels will be generated (MGB_JIT_BACKEND is then checked).
std::unique_ptr<RunTarget> make_run_target(Backend* cuda, int threads, bool fusing);

}  // namespace hf
