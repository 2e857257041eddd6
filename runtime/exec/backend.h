// What the planner needs from a device: kernels for nodes, and memory.
//
// Backends are peers: the CPU backend is what runs where there is no GPU, and the CUDA
// backend implements the same interface. A Kernel is built once per node at plan time
// (where it may precompute anything shape-dependent) and run every iteration.
#pragma once
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Views carry the node's value shapes and dtypes and are contiguous.
  virtual void run(std::span<const TensorView> inputs, std::span<const TensorView> outputs) = 0;
  // Called in step order once the iteration's work has finished (after Backend::sync): a
  // kernel that checks what its launch found on the host (an index out of range) does it
  // here, so run() only enqueues and can be recorded (Backend::record). Kernels that wrap
  // another forward it.
  virtual void after_iteration() {}
};

// An iteration's launches, recorded once and launched again as a whole, with the data
// pointers they had when recorded (CUDA graphs: one launch instead of one per kernel).
class Recording {
 public:
  virtual ~Recording() = default;
  virtual void launch() = 0;  // asynchronous, like the kernels it replays
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Throws hf::Error naming the node when this backend cannot run it.
  virtual std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) = 0;
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  // Blocks until all work issued so far has finished (a no-op on the CPU).
  virtual void sync() {}
  // Copies between host memory and memory from alloc() (a device's, on the CUDA backend):
  // graph inputs go in and outputs come out this way. Synchronous; memcpy on the CPU.
  virtual void upload(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  virtual void download(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
  // Whether kernels read host memory directly: a plan then reads a constant's shared values
  // (ConstantData: imported weights) in place instead of copying them into its buffers.
  virtual bool reads_host_memory() const { return false; }
  // Whether node n's kernel may write its output over `input`, an input of the output's
  // type that dies at n: it reads each element of it only to compute the same element of the
  // output (a Conv adding a residual as it writes). The plan then gives both one buffer.
  virtual bool writes_over(const Graph& g, const Node& n, ValueId input) const {
    (void)g, (void)n, (void)input;
    return false;
  }
  // Records what `enqueue` issues (each step's Kernel::run) without running it, for
  // Recording::launch. nullptr, with the reason in `why`, when this backend does not record
  // (the default: kernels that run as they are called gain nothing) or recording failed.
  virtual std::unique_ptr<Recording> record(const std::function<void()>& enqueue,
                                            std::string& why) {
    (void)enqueue;
    why = std::string(name()) + " runs kernels as they are called";
    return nullptr;
  }
};

// A backend that makes its own kernels (fused ones, timed or traced ones) and leaves memory,
// copies and synchronisation to the backend it wraps.
class WrappingBackend : public Backend {
 public:
  explicit WrappingBackend(Backend& inner) : inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  void* alloc(size_t bytes) override { return inner_.alloc(bytes); }
  void free(void* p) override { inner_.free(p); }
  void sync() override { inner_.sync(); }
  void upload(void* dst, const void* src, size_t bytes) override { inner_.upload(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override {
    inner_.download(dst, src, bytes);
  }
  bool reads_host_memory() const override { return inner_.reads_host_memory(); }
  bool writes_over(const Graph& g, const Node& n, ValueId input) const override {
    return inner_.writes_over(g, n, input);
  }
  // Wrapped kernels that time or trace each step run step by step; a wrapper whose kernels
  // are plain launches on the inner backend (fused kernels) forwards to inner().record.
  std::unique_ptr<Recording> record(const std::function<void()>& enqueue,
                                    std::string& why) override {
    (void)enqueue;
    why = "its kernels are timed or traced step by step";
    return nullptr;
  }

 protected:
  Backend& inner() const { return inner_; }

 private:
  Backend& inner_;
};

}  // namespace hf
