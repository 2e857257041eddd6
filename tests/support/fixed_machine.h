// Fixed machine peaks for the session suites: what a session fuses then depends on the
// graph, not on the machine running the test.
#pragma once
#include "profiler/machine_probe.h"

namespace hf {

inline MachinePeak fixed_machine() {
  MachinePeak m;
  m.bandwidth_gbps = 20;
  m.gflops = 100;  // balance 5 flops per byte
  m.launch_us = 5;
  m.threads = 2;
  return m;
}

}  // namespace hf
