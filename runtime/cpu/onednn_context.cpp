#include "runtime/cpu/onednn_context.h"

#include <vector>

// The OpenMP API, declared here rather than through the compiler's <omp.h>: these calls must
// reach the runtime libdnnl uses (libgomp, linked by CMakeLists.txt), whatever the compiler.
extern "C" {
int omp_get_max_threads();
void omp_set_num_threads(int n);
}

namespace hf::cpu {

int onednn_omp_threads() {
  return omp_get_max_threads();
}

void onednn_set_omp_threads(int n) {
  omp_set_num_threads(n);
}

void onednn_single_threaded() {
  // A per-thread OpenMP setting: oneDNN's parallel sections then run inline on this thread.
  // Checked on every call (reading it is cheap) in case other code on the thread changed it.
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

namespace onednn {
namespace {

// A thread runs one slice at a time: one stream and one scratch buffer per thread.
struct ThreadState {
  dnnl::stream stream{engine()};
  std::vector<char> scratch;
};

ThreadState& thread_state() {
  thread_local ThreadState s;
  return s;
}

}  // namespace

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

void execute(const dnnl::primitive& p, const dnnl::memory::desc& scratch_md,
             std::unordered_map<int, dnnl::memory> args) {
  onednn_single_threaded();
  ThreadState& t = thread_state();
  if (t.scratch.size() < scratch_md.get_size()) t.scratch.resize(scratch_md.get_size());
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratch_md, engine(), t.scratch.data()));
  p.execute(t.stream, args);
}

}  // namespace onednn
}  // namespace hf::cpu
