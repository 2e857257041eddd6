// Device memory faults (docs/reliability.md, "out of device memory"). Everywhere: the
// caching allocator's bookkeeping over a fake device (the cap HOTFUSE_CUDA_MAX_BYTES puts
// on the bytes held, giving the cache back to fit, the device saying no, the one-line
// error, try_alloc's nullptr) and the variable's parsing. With a GPU (skipped with the
// runtime's reason otherwise): a plan over the cap is one DeviceOutOfMemory and the backend
// stays usable; a Conv whose preferred cuDNN workspace does not fit runs a leaner algorithm
// and still matches the CPU backend.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "tests/support/jit_env.h"
#include "tests/support/scoped_env.h"
#if HF_HAVE_CUDA_BACKEND
#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/cuda_backend.h"
#include "tests/support/cuda_device.h"
#endif

namespace hf {
namespace {

#if HF_HAVE_CUDA_BACKEND

using cuda::CachingAllocator;
using cuda::DeviceOutOfMemory;

// A device of `limit` bytes: malloc says no (false) past it, as cudaMalloc's
// cudaErrorMemoryAllocation; blocks are host memory so nothing here needs a GPU.
struct FakeDevice {
  size_t limit, used = 0, mallocs = 0, frees = 0;
  std::map<void*, size_t> blocks;
  explicit FakeDevice(size_t bytes) : limit(bytes) {}
  ~FakeDevice() {
    for (auto& [p, n] : blocks) ::operator delete(p);
  }
  cuda::RawDeviceMemory raw() {
    return {[this](void** p, size_t n) {
              if (used + n > limit) return false;
              *p = ::operator new(n);
              blocks[*p] = n;
              used += n;
              ++mallocs;
              return true;
            },
            [this](void* p) {
              used -= blocks.at(p);
              blocks.erase(p);
              ::operator delete(p);
              ++frees;
            }};
  }
};

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

TEST(CudaAllocatorCap, AllocationsOverTheCapAreOneClearErrorAndTheCacheMakesRoom) {
  FakeDevice dev(1024 * kMiB);
  CachingAllocator a(dev.raw(), 64 * kKiB);
  void* p = a.alloc(40 * kKiB);
  EXPECT_EQ(a.live_bytes(), 40 * kKiB);
  try {
    a.alloc(32 * kKiB);  // 40 + 32 > 64 KiB
    FAIL() << "no error";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()),
              "CUDA: out of device memory: 32768 bytes wanted, 40960 in use "
              "(HOTFUSE_CUDA_MAX_BYTES=65536 allows no more)");
  }
  EXPECT_EQ(a.try_alloc(32 * kKiB), nullptr);
  EXPECT_EQ(dev.mallocs, 1u);  // the cap is checked before the device is asked
  // A freed block stays cached and counts against the cap, until a block of another size
  // needs the room: then the cache goes back to the device.
  a.free(p);
  EXPECT_EQ(a.cached_bytes(), 40 * kKiB);
  void* q = a.alloc(32 * kKiB);
  EXPECT_EQ(a.cached_bytes(), 0u);
  EXPECT_EQ(dev.frees, 1u);
  EXPECT_EQ(dev.used, 32 * kKiB);
  a.free(q);
  EXPECT_EQ(a.alloc(32 * kKiB), q);  // same size class: from the cache, no device call
  EXPECT_EQ(dev.mallocs, 2u);
}

TEST(CudaAllocatorCap, TheDeviceSayingNoGivesTheCacheBackThenFailsInOneLine) {
  FakeDevice dev(100 * kKiB);
  CachingAllocator a(dev.raw(), 0);  // no cap: only the device limits
  void* p = a.alloc(60 * kKiB);
  a.free(p);
  void* q = a.alloc(80 * kKiB);  // 60 cached + 80 > 100: the cache goes back, the retry fits
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(dev.frees, 1u);
  try {
    a.alloc(30 * kKiB);
    FAIL() << "no error";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()),
              "CUDA: out of device memory: 30720 bytes wanted, 81920 in use (the device has no "
              "more)");
  }
  a.free(q);
  EXPECT_NE(a.try_alloc(30 * kKiB), nullptr);  // the 80 KiB block went back to make room
}

TEST(CudaAllocatorCap, TheVariableIsAByteCountOrAnErrorNamingIt) {
  {
    ScopedEnv env("HOTFUSE_CUDA_MAX_BYTES", nullptr);
    EXPECT_EQ(CachingAllocator::cap_from_env(), 0u);
  }
  {
    ScopedEnv env("HOTFUSE_CUDA_MAX_BYTES", "512M");
    EXPECT_EQ(CachingAllocator::cap_from_env(), 512 * kMiB);
  }
  {
    ScopedEnv env("HOTFUSE_CUDA_MAX_BYTES", "12345");
    EXPECT_EQ(CachingAllocator::cap_from_env(), 12345u);
  }
  for (const char* bad : {"lots", "0", "1.5G", "-1", "8X"}) {
    ScopedEnv env("HOTFUSE_CUDA_MAX_BYTES", bad);
    try {
      CachingAllocator::cap_from_env();
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("HOTFUSE_CUDA_MAX_BYTES='") + bad + "'", 0),
                0u)
          << e.what();
    }
  }
}

// ---- with a GPU ---------------------------------------------------------------------------

Graph parse(const std::string& text) {
  return parse_graph_json(text, "memory test");
}

TEST(CudaDeviceMemory, APlanOverTheCapIsOneErrorAndTheBackendStaysUsable) {
  REQUIRE_CUDA_DEVICE();
  ScopedEnv env("HOTFUSE_CUDA_MAX_BYTES", "1M");
  cuda::CudaBackend b;  // reads the cap
  ASSERT_EQ(b.allocator().cap(), kMiB);
  Graph big = parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1024, 1024]}],
    "nodes": [{"name": "n", "op": "Elemwise", "mode": "NEGATE", "inputs": ["x"]}],
    "outputs": ["n:0"]})");  // a 4 MiB output
  try {
    Executor e(big, b);
    FAIL() << "planned 4 MiB under a 1 MiB cap";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("HOTFUSE_CUDA_MAX_BYTES=1048576 allows no more"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(b.allocator().live_bytes(), 0u);  // nothing leaked by the failed plan
  // The same backend plans and runs a graph that fits, correctly.
  Graph small = parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
    "nodes": [{"name": "n", "op": "Elemwise", "mode": "NEGATE", "inputs": ["x"]}],
    "outputs": ["n:0"]})");
  std::vector<HostTensor> in = random_inputs(small, 1);
  void* dx = b.alloc(in[0].bytes());
  b.upload(dx, in[0].data(), in[0].bytes());
  {
    Executor e(small, b);
    std::vector<TensorView> v{contiguous_view(dx, DType::F32, {1000})};
    auto out = e.run(v);
    HostTensor got(DType::F32, {1000});
    b.download(got.data(), out[0].data, got.bytes());
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(got.as<float>()[i], -in[0].as<float>()[i]) << i;
  }
  b.free(dx);
}

TEST(CudaDeviceMemory, ConvWithoutRoomForItsWorkspaceRunsALeanerAlgorithm) {
  REQUIRE_CUDA_DEVICE();
  Graph g = parse(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [4, 64, 28, 28]},
    {"name": "w", "dtype": "f32", "shape": [64, 64, 3, 3]}, {"name": "b", "dtype": "f32", "shape": [64]}],
    "nodes": [{"name": "conv", "op": "Conv", "attrs": {"pads": [1,1,1,1]}, "inputs": ["x", "w", "b"]}],
    "outputs": ["conv:0"]})");
  std::vector<HostTensor> in = random_inputs(g, 3);
  cpu::CpuBackend cpu_backend;
  Executor cpu_exec(g, cpu_backend);
  std::vector<HostTensor> want = copies(cpu_exec.run(views(in)));
  // Room for the inputs and the output (size classes of 512 B below 1 MiB) and 4 KiB more.
  size_t need = CachingAllocator::bucket(want[0].bytes());
  for (const HostTensor& t : in) need += CachingAllocator::bucket(t.bytes());
  const std::string cap = std::to_string(need + 4 * kKiB);
  ScopedEnv env("HOTFUSE_CUDA_MAX_BYTES", cap.c_str());
  ScopedEnv strict("HOTFUSE_F32_PRECISION", "highest");  // FMA math, compared with the CPU's
  cuda::CudaBackend b;
  DeviceInputs dev(b, in);
  {
    Executor e(g, b);  // the stderr line names the node when the preferred one did not fit
    EXPECT_LE(b.allocator().live_bytes(), need + 4 * kKiB);
    auto out = e.run(dev.views);
    HostTensor got(out[0].dtype, out[0].shape);
    b.download(got.data(), out[0].data, got.bytes());
    Mismatch m = compare(want[0].view(), got.view(), Tolerance{1e-4, 1e-4});
    EXPECT_EQ(m.index, -1) << "element " << m.index << ": cpu " << m.expected << ", cuda "
                           << m.actual;
  }
}

#else

TEST(CudaDeviceMemory, NotBuilt) {
  GTEST_SKIP() << "this build has no CUDA backend (no CUDA toolkit)";
}

#endif

}  // namespace
}  // namespace hf
