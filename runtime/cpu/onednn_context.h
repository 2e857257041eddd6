// What every oneDNN primitive hotfuse runs shares: the CPU engine, a per-thread stream and
// scratchpad, and the OpenMP setting that keeps oneDNN on the calling thread.
//
// Why not oneDNN's own threads: Debian builds libdnnl with OpenMP, and OpenMP's spinning
// workers next to the pool's collapsed 10-100x on a loaded 2-core machine (bench/RESULTS.md,
// "Conv on the CPU"). So every oneDNN call runs with OpenMP at one thread on the calling
// thread (no OpenMP team is ever started) and hotfuse's pool splits the work into slices,
// one single-threaded primitive each: --threads / HOTFUSE_NUM_THREADS stays the one knob.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

namespace hf::cpu::onednn {

dnnl::engine& engine();

// Primitive attributes with a user-managed scratchpad: no call allocates one.
dnnl::primitive_attr user_scratchpad();

// Runs a primitive on the calling thread, OpenMP at one thread, with the thread's scratch
// buffer (grown to scratch_md) added to args.
void execute(const dnnl::primitive& p, const dnnl::memory::desc& scratch_md,
             std::unordered_map<int, dnnl::memory> args);

// A memory object over caller-owned data (oneDNN's API takes non-const pointers; primitives
// never write their inputs).
inline dnnl::memory mem(const dnnl::memory::desc& d, const float* p) {
  return dnnl::memory(d, engine(), const_cast<float*>(p));
}

}  // namespace hf::cpu::onednn

namespace hf::cpu {

// Sets OpenMP to one thread on the calling thread: see the file comment.
void onednn_single_threaded();

// OpenMP's thread count for parallel sections started on the calling thread, in the OpenMP
// runtime libdnnl uses (bench/conv_bench times oneDNN's own threading with them).
int onednn_omp_threads();
void onednn_set_omp_threads(int n);

}  // namespace hf::cpu
