#include "tools/check_mode.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include "fusion/kernel_cache.h"
#include "profiler/machine_probe.h"
#include "runtime/exec/compare.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"
#include "session/fuse_graph.h"
#include "session/fusing_backend.h"
#include "session/fusing_cuda_backend.h"
#if HF_HAVE_CUDA_BACKEND
#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/device_peak.h"
#endif

namespace hf {

namespace fs = std::filesystem;

namespace {

using RunFn = std::function<std::span<const TensorView>(std::span<const TensorView>)>;

// The plan the data sets run on, and what it is, for the header line.
struct Runner {
  RunFn run;
  std::string plan;
  std::string regions;  // adaptive: one line per region the session considered
  // Whatever `run` refers to.
  std::unique_ptr<FusionResult> fused;
#if HF_HAVE_CUDA_BACKEND
  std::unique_ptr<fusion::KernelCache> cuda_kernels;  // before `backend`: it uses the kernels
#endif
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Executor> executor;
  std::unique_ptr<Session> session;     // after cuda_kernels: its fused plans use them
  std::shared_ptr<struct DeviceIo> io;  // CUDA: freed before the plan's backend goes
};

// The CUDA side of a check: input buffers allocated once (every data set has the graph's
// input shapes, checked when it was read), outputs downloaded into host tensors, so the
// comparison code sees host memory on either backend.
struct DeviceIo {
  Backend& b;
  std::vector<void*> bufs;
  std::vector<TensorView> in;
  std::vector<HostTensor> out;
  std::vector<TensorView> out_views;
  DeviceIo(Backend& backend, const Graph& g) : b(backend) {
    for (ValueId v : g.inputs()) {
      const Value& val = g.value(v);
      bufs.push_back(b.alloc(static_cast<size_t>(numel(val.shape)) * dtype_size(val.dtype)));
      in.push_back(contiguous_view(bufs.back(), val.dtype, val.shape));
    }
  }
  ~DeviceIo() {
    for (void* p : bufs) b.free(p);
  }
  DeviceIo(const DeviceIo&) = delete;
  DeviceIo& operator=(const DeviceIo&) = delete;
  std::span<const TensorView> run(const RunFn& device_run, std::span<const TensorView> host) {
    for (size_t k = 0; k < host.size(); ++k)
      b.upload(in[k].data, host[k].data,
               static_cast<size_t>(host[k].numel()) * dtype_size(host[k].dtype));
    std::span<const TensorView> res = device_run(in);
    out.clear();
    out_views.clear();
    for (const TensorView& v : res) {
      out.emplace_back(v.dtype, v.shape);
      b.download(out.back().data(), v.data, out.back().bytes());
    }
    for (const HostTensor& t : out) out_views.push_back(t.view());
    return out_views;
  }
};

std::vector<TensorView> views_of(const std::vector<HostTensor>& ts) {
  std::vector<TensorView> v;
  for (const HostTensor& t : ts) v.push_back(t.view());
  return v;
}

// --backend cuda with --fusion off|static|all: unfused AOT/cuBLAS/cuDNN kernels, or the
// graph fused with NVRTC kernels (as hotfuse-run's run_cuda); inputs and outputs move
// through DeviceIo.
Runner make_cuda_runner(const CheckOptions& o, const Graph& g, fusion::FusionLevel level) {
  Runner r;
#if HF_HAVE_CUDA_BACKEND
  auto& gpu = static_cast<cuda::CudaBackend&>(*o.cuda);
  const int before = kernel_count(g);
  if (level == fusion::FusionLevel::Off) {
    r.executor = std::make_unique<Executor>(g, gpu);
    r.plan = "off, " + std::to_string(before) + " kernels";
  } else {
    const cuda::DeviceStatus& dev = gpu.device();
    r.cuda_kernels = cuda_kernel_cache(dev.arch);
    fusion::KernelCache* cache = r.cuda_kernels.get();
    r.fused = std::make_unique<FusionResult>(fuse_graph(g, level, *cache));
    for (const std::string& f : r.fused->failures)
      std::fprintf(stderr, "hotfuse-run: %s\n", f.c_str());
    r.backend = std::make_unique<FusingCudaBackend>(gpu, *cache);
    try {
      r.executor = std::make_unique<Executor>(r.fused->graph, *r.backend);
      r.plan = o.fusion + ", kernels " + std::to_string(before) + " -> " +
               std::to_string(kernel_count(r.fused->graph));
    } catch (const cuda::DeviceOutOfMemory& e) {
      // One line, then the unfused plan: its results are as correct (docs/reliability.md).
      std::fprintf(stderr, "hotfuse-run: the fused plan: %s; checking the unfused plan\n",
                   e.what());
      r.executor = std::make_unique<Executor>(g, gpu);
      r.plan =
          o.fusion + " (out of device memory: unfused), " + std::to_string(before) + " kernels";
    }
  }
  r.plan += ", on cuda (" + gpu.device().name + ")";
  r.io = std::make_shared<DeviceIo>(gpu, g);
  Executor* e = r.executor.get();
  RunFn device_run = [e](std::span<const TensorView> in) { return e->run(in); };
  DeviceIo* io = r.io.get();
  r.run = [io, device_run](std::span<const TensorView> in) { return io->run(device_run, in); };
#else
  (void)o, (void)g, (void)level;
  throw Error("this build has no CUDA backend");
#endif
  return r;
}

// off/static/all: the graph as fuse_graph leaves it. adaptive: a Session run on the first
// data set until it settles, so the data sets run on the plan after its swaps.
Runner make_runner(const CheckOptions& o, const Graph& g, cpu::CpuBackend& cpu,
                   const std::vector<HostTensor>& first_inputs) {
  Runner r;
  fusion::KernelCache& cache = fusion::KernelCache::host();
  const int before = kernel_count(g);
  if (o.fusion == "adaptive") {
    // On CUDA the session's inputs and outputs are device memory: the data sets go through
    // DeviceIo, and so does the first one while the session settles on it.
    std::string where;
    if (o.cuda) {
#if HF_HAVE_CUDA_BACKEND
      auto& gpu = static_cast<cuda::CudaBackend&>(*o.cuda);
      const cuda::DeviceStatus& dev = gpu.device();
      r.cuda_kernels = cuda_kernel_cache(dev.arch);
      r.session = std::make_unique<Session>(g, cuda_session_target(gpu, *r.cuda_kernels),
                                            cuda::device_peak(gpu), o.session);
      r.io = std::make_shared<DeviceIo>(gpu, g);
      Session* s = r.session.get();
      DeviceIo* io = r.io.get();
      RunFn device_run = [s](std::span<const TensorView> in) { return s->run(in); };
      r.run = [io, device_run](std::span<const TensorView> in) { return io->run(device_run, in); };
      where = ", on cuda (" + dev.name + ")";
#else
      throw Error("this build has no CUDA backend");
#endif
    } else {
      MachinePeak machine = probe_machine(cpu.pool(), fusion::DiskCache::default_dir());
      r.session = std::make_unique<Session>(g, cpu, cache, machine, o.session);
      Session* s = r.session.get();
      r.run = [s](std::span<const TensorView> in) { return s->run(in); };
    }
    std::vector<TensorView> in = views_of(first_inputs);
    auto t0 = std::chrono::steady_clock::now();
    while (!r.session->settled()) {
      r.run(in);
      if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(o.settle_timeout)) {
        std::fprintf(stderr,
                     "hotfuse-run: still %s after %g s (--settle-timeout); checking as it is\n",
                     std::string(phase_name(r.session->phase())).c_str(), o.settle_timeout);
        break;
      }
    }
    int swapped = 0;
    for (const RegionRecord& rr : r.session->regions()) {
      swapped += rr.state == RegionState::Swapped;
      r.regions += "  region " + std::to_string(rr.id) + " [" +
                   std::string(region_state_name(rr.state)) + "] " + rr.reason + "\n";
    }
    r.plan = "adaptive, settled after " + std::to_string(r.session->iterations().size()) +
             " iterations: " + std::to_string(swapped) + " regions swapped in, kernels " +
             std::to_string(before) + " -> " + std::to_string(r.session->kernels_now());
    r.plan += where;
    return r;
  }
  auto level = fusion::parse_fusion_level(o.fusion);
  if (!level) throw Error("--fusion " + o.fusion + ": not a fusion mode");
  if (o.cuda) return make_cuda_runner(o, g, *level);
  if (*level == fusion::FusionLevel::Off) {
    r.executor = std::make_unique<Executor>(g, cpu);
    r.plan = "off, " + std::to_string(before) + " kernels";
  } else {
    r.fused = std::make_unique<FusionResult>(fuse_graph(g, *level, cache));
    for (const std::string& f : r.fused->failures)
      std::fprintf(stderr, "hotfuse-run: %s\n", f.c_str());
    r.backend = std::make_unique<FusingCpuBackend>(cpu, cache);
    r.executor = std::make_unique<Executor>(r.fused->graph, *r.backend);
    r.plan = o.fusion + ", kernels " + std::to_string(before) + " -> " +
             std::to_string(kernel_count(r.fused->graph));
  }
  Executor* e = r.executor.get();
  r.run = [e](std::span<const TensorView> in) { return e->run(in); };
  return r;
}

std::string coords(int64_t flat, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    c[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  return to_string(Shape(c));
}

// One output against its expected tensor: "" when it matches, else what is wrong.
// `worst` collects the largest share of its tolerance any element used.
std::string check_output(const std::string& name, const HostTensor& expected,
                         const TensorView& actual, const CheckOptions& o, double& worst) {
  if (expected.dtype() != actual.dtype)
    return "output '" + name + "' is " + std::string(dtype_name(actual.dtype)) + ", expected " +
           std::string(dtype_name(expected.dtype()));
  if (expected.shape() != actual.shape)
    return "output '" + name + "' has shape " + to_string(actual.shape) + ", expected " +
           to_string(expected.shape());
  Tolerance tol = is_float(expected.dtype()) ? Tolerance{o.rtol, o.atol} : Tolerance{0, 0};
  Mismatch m = compare(expected.view(), actual, tol);
  worst = std::max(worst, m.worst_ratio);
  if (m.index < 0) return "";
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "output '%s': %lld of %lld elements beyond tolerance; worst element %lld at %s: "
                "expected %.9g, actual %.9g, error %.3g (allowed %.3g)",
                name.c_str(), static_cast<long long>(m.count),
                static_cast<long long>(expected.numel()), static_cast<long long>(m.index),
                coords(m.index, expected.shape()).c_str(), m.expected, m.actual,
                std::fabs(m.actual - m.expected), tol.atol + tol.rtol * std::fabs(m.expected));
  return buf;
}

// DIR/output_<k>.pb, one per graph output, as the outputs' types (BFLOAT16 data may be
// stored as UINT16).
std::vector<HostTensor> read_expected_outputs(const Graph& g, const fs::path& set) {
  const size_t n = g.outputs().size();
  std::vector<fs::path> files = numbered_tensor_files(
      set, "output", n, "the model has " + std::to_string(n) + (n == 1 ? " output" : " outputs"));
  std::vector<HostTensor> out;
  for (size_t k = 0; k < n; ++k)
    out.push_back(as_uint16_bits(read_tensor_file(files[k]), g.value(g.outputs()[k]).dtype,
                                 files[k].string()));
  return out;
}

}  // namespace

int run_check(const CheckOptions& o) {
  const fs::path model = o.dir / "model.onnx";
  std::error_code ec;
  if (!fs::is_regular_file(model, ec)) throw Error(model.string() + ": no such file");
  std::vector<fs::path> sets = test_data_sets(o.dir);
  // hotfuse plans static shapes: where the model takes a shape or axes as an input, the
  // graph is specialised to the value the data sets give it (all alike).
  Graph g = read_graph_onnx(model, import_options_from(sets));
  // Every file is read, and must fit the model, before anything runs.
  std::vector<std::vector<HostTensor>> inputs, expected;
  for (const fs::path& set : sets) {
    inputs.push_back(read_graph_inputs(g, set));
    expected.push_back(read_expected_outputs(g, set));
  }

  cpu::ThreadPool pool(o.threads);
  cpu::CpuBackend cpu(&pool);
  Runner runner = make_runner(o, g, cpu, inputs.front());
  std::printf("check %s: %zu data set%s; --fusion %s; atol %g, rtol %g\n", o.dir.string().c_str(),
              sets.size(), sets.size() == 1 ? "" : "s", runner.plan.c_str(), o.atol, o.rtol);
  std::fputs(runner.regions.c_str(), stdout);
  int passed = 0;
  for (size_t s = 0; s < sets.size(); ++s) {
    std::vector<TensorView> in = views_of(inputs[s]);
    std::span<const TensorView> out = runner.run(in);
    std::vector<std::string> problems;
    double worst = 0;
    for (size_t k = 0; k < out.size(); ++k) {
      std::string p = check_output(g.value(g.outputs()[k]).name, expected[s][k], out[k], o, worst);
      if (!p.empty()) problems.push_back(p);
    }
    const std::string set = sets[s].filename().string();
    if (problems.empty()) {
      ++passed;
      std::printf("%s: PASS (%zu output%s; worst element within %.3g of its tolerance)\n",
                  set.c_str(), out.size(), out.size() == 1 ? "" : "s", worst);
    } else {
      for (const std::string& p : problems) std::printf("%s: FAIL: %s\n", set.c_str(), p.c_str());
    }
  }
  std::printf("%d of %zu data sets passed\n", passed, sets.size());
  return passed == static_cast<int>(sets.size()) ? 0 : 1;
}

}  // namespace hf
