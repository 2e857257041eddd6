// Fuses a graph with a given kernel cache, runs it fused and unfused on the same random
// inputs and expects every output to match (fused_tolerance): the fault and security tests
// use it to show that whatever went wrong in the cache, the results stayed right.
#pragma once
#include <gtest/gtest.h>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/random_inputs.h"
#include "session/fuse_graph.h"
#include "session/fusing_backend.h"
#include "tests/support/jit_env.h"
#include "tests/support/reference.h"

namespace hf {

inline FusionResult fuse_and_compare(const Graph& g, fusion::KernelCache& cache, uint64_t seed) {
  cpu::CpuBackend cpu_backend;
  std::vector<HostTensor> in = random_inputs(g, seed);
  Executor unfused(g, cpu_backend);
  std::vector<HostTensor> want = copies(unfused.run(views(in)));
  FusionResult fr = fuse_graph(g, fusion::FusionLevel::All, cache);
  FusingCpuBackend fusing(cpu_backend, cache);
  Executor fused(fr.graph, fusing);
  auto got = fused.run(views(in));
  for (size_t i = 0; i < got.size(); ++i) {
    Mismatch m = compare(want[i].view(), got[i], fused_tolerance(got[i].dtype));
    EXPECT_EQ(m.index, -1) << "output " << i << " element " << m.index;
  }
  return fr;
}

}  // namespace hf
