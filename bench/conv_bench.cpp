// Conv on the CPU: hotfuse's kernel (oneDNN on the pool, runtime/cpu/conv_onednn.h, made
// once as at plan time, weights constant), the im2col + OpenBLAS kernel it replaced (and
// still falls back to), and oneDNN's own OpenMP-threaded convolution primitive, on the layer
// shapes of ResNet-18 and MobileNetV2 at 1x3x224x224, and one large image. They read and
// write plain NCHW f32, as the runtime's tensors are, but for hotfuse_nhwc (the kernel as the
// graph's NHWC Conv chains run it: Winograd for the 3x3 stride-1 layers; hotfuse_nhwc_direct:
// the same with HOTFUSE_F32_PRECISION=highest) and hotfuse_blocked (a blocked nChw8c chain, split
// by output channels); weights are reordered to the preferred layout once, outside the timing.
// Threads: HOTFUSE_NUM_THREADS for the pool (hotfuse*, im2col), OMP_NUM_THREADS for the
// onednn_* columns; bench/RESULTS.md ("Conv on the CPU", issue 20) runs it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "runtime/cpu/conv_im2col.h"
#include "runtime/cpu/conv_onednn.h"
#include "runtime/cpu/conv_winograd.h"
#include "runtime/cpu/nn_kernels.h"
#include "runtime/cpu/onednn_context.h"
#include "runtime/cpu/thread_pool.h"

#if HF_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

struct Layer {
  const char* name;
  int64_t c, hw, m, k, stride, pad, group;
};

const Layer kLayers[] = {
    {"resnet_stem_7x7s2", 3, 224, 64, 7, 2, 3, 1},
    {"resnet_3x3_64@56", 64, 56, 64, 3, 1, 1, 1},
    {"resnet_3x3_128@28", 128, 28, 128, 3, 1, 1, 1},
    {"resnet_3x3_256@14", 256, 14, 256, 3, 1, 1, 1},
    {"resnet_3x3_512@7", 512, 7, 512, 3, 1, 1, 1},
    {"vgg_3x3_64@224", 64, 224, 64, 3, 1, 1, 1},  // a large image: input transforms of 29 MB
    {"resnet_1x1s2_64to128@56", 64, 56, 128, 1, 2, 0, 1},
    {"resnet_3x3s2_128to256@28", 128, 28, 256, 3, 2, 1, 1},
    {"resnet_3x3s2_256to512@14", 256, 14, 512, 3, 2, 1, 1},
    {"resnet_1x1s2_128to256@28", 128, 28, 256, 1, 2, 0, 1},
    {"resnet_1x1s2_256to512@14", 256, 14, 512, 1, 2, 0, 1},
    {"resnet_1x1_1024to256@14", 1024, 14, 256, 1, 1, 0, 1},
    {"resnet_1x1_2048to512@7", 2048, 7, 512, 1, 1, 0, 1},
    {"resnet_1x1_512to2048@7", 512, 7, 2048, 1, 1, 0, 1},
    {"resnet_1x1_64to256@56", 64, 56, 256, 1, 1, 0, 1},
    {"resnet_1x1_256to1024@14", 256, 14, 1024, 1, 1, 0, 1},
    {"resnet_1x1s2_1024to2048@14", 1024, 14, 2048, 1, 2, 0, 1},
    {"mbv2_1x1_24to144@56", 24, 56, 144, 1, 1, 0, 1},
    {"mbv2_dw3x3_144@56", 144, 56, 144, 3, 1, 1, 144},
    {"mbv2_dw3x3s2_144@56", 144, 56, 144, 3, 2, 1, 144},
    {"mbv2_1x1_144to24@56", 144, 56, 24, 1, 1, 0, 1},
    {"mbv2_dw3x3_960@7", 960, 7, 960, 3, 1, 1, 960},
    {"mbv2_1x1_320to1280@7", 320, 7, 1280, 1, 1, 0, 1},
};

int64_t out_size(const Layer& l) {
  return (l.hw + 2 * l.pad - l.k) / l.stride + 1;
}

std::vector<float> random_floats(int64_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void set_flops(benchmark::State& st, const Layer& l) {
  double o = out_size(l);
  double flops = 2.0 * l.m * o * o * (l.c / l.group) * l.k * l.k;
  st.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

hf::ConvGeometry geometry(const Layer& l) {
  hf::ConvGeometry g;
  g.n = 1;
  g.c = l.c;
  g.m = l.m;
  g.group = l.group;
  for (int a = 0; a < 2; ++a) {
    g.win.k[a] = l.k;
    g.win.stride[a] = l.stride;
    g.win.pad_begin[a] = g.win.pad_end[a] = l.pad;
    g.win.in[a] = l.hw;
    g.win.out[a] = out_size(l);
  }
  return g;
}

// im2col = true: the im2col + OpenBLAS kernel alone; else the runtime's Conv kernel, on NCHW
// tensors (with its reorders) or, nhwc = true, as inside the graph's NHWC Conv chains.
void BM_hotfuse(benchmark::State& st, Layer l, bool im2col, bool nhwc, bool direct) {
  using namespace hf;
  const int64_t o = out_size(l);
  std::vector<float> x = random_floats(l.c * l.hw * l.hw),
                     w = random_floats(l.m * (l.c / l.group) * l.k * l.k), b = random_floats(l.m),
                     y(l.m * o * o);
  TensorView xv = contiguous_view(x.data(), DType::F32,
                                  nhwc ? Shape{1, l.hw, l.hw, l.c} : Shape{1, l.c, l.hw, l.hw});
  TensorView wv = contiguous_view(w.data(), DType::F32, {l.m, l.c / l.group, l.k, l.k});
  TensorView bv = contiguous_view(b.data(), DType::F32, {l.m});
  TensorView yv =
      contiguous_view(y.data(), DType::F32, nhwc ? Shape{1, o, o, l.m} : Shape{1, l.m, o, o});
  ConvGeometry g = geometry(l);
  g.nhwc = nhwc;
  cpu::ThreadPool& pool = cpu::ThreadPool::global();
  if (im2col) {
    for (auto _ : st) cpu::conv2d_im2col_f32(g, x.data(), w.data(), b.data(), y.data(), pool);
  } else {
    if (direct) setenv("HOTFUSE_F32_PRECISION", "highest", 1);
    cpu::Conv2d conv(g, pool, DType::F32, /*const_weights=*/true);
    unsetenv("HOTFUSE_F32_PRECISION");
    for (auto _ : st) conv.run(xv, wv, &bv, yv);
    st.SetLabel(conv.describe());
  }
  set_flops(st, l);
}

// The Conv of the graph's NHWC chains with a RELU after it (ResNet's Conv+RELU epilogue), or
// with a residual ADD and then the RELU (a block's last Conv): fused = true, as the Conv's
// post-ops (in oneDNN's kernel or Winograd's output transform), its output written over the
// residual as the plan has it (Backend::writes_over); false, the Conv alone and then a pass
// of ADD and one of RELU, as unfused.
void BM_hotfuse_epilogue(benchmark::State& st, Layer l, bool residual, bool fused) {
  using namespace hf;
  const int64_t o = out_size(l);
  std::vector<float> x = random_floats(l.c * l.hw * l.hw),
                     w = random_floats(l.m * (l.c / l.group) * l.k * l.k), b = random_floats(l.m),
                     y(l.m * o * o), r = random_floats(l.m * o * o);
  ConvGeometry g = geometry(l);
  g.nhwc = true;
  cpu::ThreadPool& pool = cpu::ThreadPool::global();
  std::vector<ConvPostOp> post;
  if (fused && residual) post.push_back({.kind = ConvPostOp::Add, .operand = 0});
  if (fused) post.push_back({.kind = ConvPostOp::Relu});
  auto conv = cpu::OnednnConv::create(g, pool.size(), /*const_weights=*/true, post);
  if (!conv) {
    st.SkipWithError("oneDNN refused the Conv");
    return;
  }
  float *out = y.data(), *res = r.data();
  const int64_t n = static_cast<int64_t>(y.size());
  const float* operands[] = {res};
  auto run = [&] {
    if (fused) {
      conv->run(x.data(), w.data(), b.data(), residual ? res : out, pool,
                std::span<const float* const>(operands, residual ? 1 : 0));
      return;
    }
    conv->run(x.data(), w.data(), b.data(), out, pool);
    if (residual)
      pool.parallel_for(n, 4096, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) res[i] = out[i] + res[i];
      });
    float* v = residual ? res : out;
    pool.parallel_for(n, 4096, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) v[i] = v[i] <= 0 ? 0.0f : v[i];
    });
  };
  run();  // the weights are packed on the first call
  for (auto _ : st) run();
  st.SetLabel(conv->describe());
  set_flops(st, l);
}

#if HF_HAVE_DNNL
// blocked = false: the primitive reads and writes plain NCHW. blocked = true: oneDNN picks
// its own activation layout (nChw8c/16c) and the timing includes the reorders from and back
// to NCHW that a runtime with plain tensors would pay per layer.
// OMP_NUM_THREADS as the process started: hotfuse's Conv sets OpenMP to one thread on the
// threads that call it (this one included), so BM_onednn sets it back for its own run.
const int kOmpThreads = hf::cpu::onednn_omp_threads();

void BM_onednn(benchmark::State& st, Layer l, bool blocked) {
  struct OmpThreads {
    OmpThreads() { hf::cpu::onednn_set_omp_threads(kOmpThreads); }
    ~OmpThreads() { hf::cpu::onednn_set_omp_threads(1); }
  } omp_threads;
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const int64_t o = out_size(l);
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::dims xd = {1, l.c, l.hw, l.hw}, yd = {1, l.m, o, o}, bd = {l.m};
  memory::dims wd = l.group == 1 ? memory::dims{l.m, l.c, l.k, l.k}
                                 : memory::dims{l.group, l.m / l.group, l.c / l.group, l.k, l.k};
  std::vector<float> x = random_floats(l.c * l.hw * l.hw),
                     w = random_floats(l.m * (l.c / l.group) * l.k * l.k), b = random_floats(l.m),
                     y(l.m * o * o);
  memory xm({xd, dt::f32, tag::nchw}, eng, x.data());
  memory ym({yd, dt::f32, tag::nchw}, eng, y.data());
  memory bm({bd, dt::f32, tag::x}, eng, b.data());
  memory wplain({wd, dt::f32, l.group == 1 ? tag::oihw : tag::goihw}, eng, w.data());
  tag act = blocked ? tag::any : tag::nchw;
  convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                 {xd, dt::f32, act}, {wd, dt::f32, tag::any}, {bd, dt::f32, tag::x},
                                 {yd, dt::f32, act}, {l.stride, l.stride}, {l.pad, l.pad},
                                 {l.pad, l.pad});
  convolution_forward::primitive_desc pd(desc, eng);
  memory wm(pd.weights_desc(), eng);
  reorder(wplain, wm).execute(s, wplain, wm);
  memory xb = blocked ? memory(pd.src_desc(), eng) : xm;
  memory yb = blocked ? memory(pd.dst_desc(), eng) : ym;
  reorder to_blocked(xm, xb), from_blocked(yb, ym);
  convolution_forward conv(pd);
  for (auto _ : st) {
    if (blocked) to_blocked.execute(s, xm, xb);
    conv.execute(
        s, {{DNNL_ARG_SRC, xb}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, yb}});
    if (blocked) from_blocked.execute(s, yb, ym);
    s.wait();
  }
  st.SetLabel(pd.impl_info_str());
  set_flops(st, l);
}

// What a blocked layout kept through a Conv chain would run (issue 20): activations already in
// nChw8c (no reorders: the chain's ends pay them once), the pool's threads each running one
// single-threaded primitive on a slice of whole 8-channel output blocks. At batch 1 such a
// slice of the output is itself a dense nChw8c tensor (its blocks are contiguous), and so
// are its weights and bias: no strided destination. Dense convolutions only.
void BM_hotfuse_blocked(benchmark::State& st, Layer l) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  namespace od = hf::cpu::onednn;
  hf::cpu::ThreadPool& pool = hf::cpu::ThreadPool::global();
  const int64_t o = out_size(l), blocks = l.m / 8;
  const int64_t slices = std::min<int64_t>(pool.size(), blocks);
  std::vector<float> x = random_floats(l.c * l.hw * l.hw), w = random_floats(l.m * l.c * l.k * l.k),
                     b = random_floats(l.m), y(l.m * o * o);
  struct Slice {
    int64_t first_block = 0, n_blocks = 0;
    convolution_forward::primitive_desc pd;
    memory weights;
  };
  std::vector<Slice> sl(slices);
  for (int64_t i = 0; i < slices; ++i) {
    Slice& s = sl[i];
    s.first_block = blocks * i / slices;
    s.n_blocks = blocks * (i + 1) / slices - s.first_block;
    const int64_t m = s.n_blocks * 8;
    memory::dims xd = {1, l.c, l.hw, l.hw}, yd = {1, m, o, o}, wd = {m, l.c, l.k, l.k};
    convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                   {xd, dt::f32, tag::nChw8c}, {wd, dt::f32, tag::any},
                                   {{m}, dt::f32, tag::x}, {yd, dt::f32, tag::nChw8c},
                                   {l.stride, l.stride}, {l.pad, l.pad}, {l.pad, l.pad});
    s.pd = convolution_forward::primitive_desc(desc, od::user_scratchpad(), od::engine());
    s.weights = memory(s.pd.weights_desc(), od::engine());
    memory plain({wd, dt::f32, tag::oihw}, od::engine(),
                 w.data() + s.first_block * 8 * l.c * l.k * l.k);
    stream str(od::engine());
    reorder(plain, s.weights).execute(str, plain, s.weights);
    str.wait();
  }
  std::vector<convolution_forward> prims;
  for (const Slice& s : sl) prims.emplace_back(s.pd);
  const int64_t block_floats = o * o * 8;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const Slice& s = sl[i];
      od::execute(
          prims[i], s.pd.scratchpad_desc(),
          {{DNNL_ARG_SRC, od::mem(s.pd.src_desc(), x.data())},
           {DNNL_ARG_WEIGHTS, s.weights},
           {DNNL_ARG_BIAS, od::mem(s.pd.bias_desc(), b.data() + s.first_block * 8)},
           {DNNL_ARG_DST, od::mem(s.pd.dst_desc(), y.data() + s.first_block * block_floats)}});
    }
  };
  for (auto _ : st) pool.parallel_for(slices, 1, run);
  st.SetLabel(std::to_string(slices) + " slices of 8-channel blocks, " + sl[0].pd.impl_info_str());
  set_flops(st, l);
}
#endif

// ResNet's stem MaxPool (3x3, stride 2, padded) on the stem Conv's output, as the graph's NHWC
// chains run it (one output row per task); the NCHW kernel on the same data beside it.
void BM_maxpool(benchmark::State& st, bool nhwc) {
  using namespace hf;
  const int64_t c = 64, hw = 112, o = 56;
  std::vector<float> x = random_floats(c * hw * hw), y(c * o * o);
  PoolGeometry g;
  g.n = 1;
  g.c = c;
  g.nhwc = nhwc;
  for (int a = 0; a < 2; ++a) {
    g.win.k[a] = 3;
    g.win.stride[a] = 2;
    g.win.pad_begin[a] = g.win.pad_end[a] = 1;
    g.win.in[a] = hw;
    g.win.out[a] = o;
  }
  TensorView xv =
      contiguous_view(x.data(), DType::F32, nhwc ? Shape{1, hw, hw, c} : Shape{1, c, hw, hw});
  TensorView yv =
      contiguous_view(y.data(), DType::F32, nhwc ? Shape{1, o, o, c} : Shape{1, c, o, o});
  cpu::ThreadPool& pool = cpu::ThreadPool::global();
  for (auto _ : st) cpu::pool2d(true, g, xv, yv, pool);
  st.counters["GB/s"] = benchmark::Counter(4.0 * c * (hw * hw + o * o),
                                           benchmark::Counter::kIsIterationInvariantRate);
}

int register_all() {
  for (bool nhwc : {false, true})
    benchmark::RegisterBenchmark(nhwc ? "maxpool_nhwc/resnet_stem" : "maxpool_nchw/resnet_stem",
                                 BM_maxpool, nhwc)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  for (const Layer& l : kLayers) {
    struct Kind {
      const char* name;
      bool im2col, nhwc, direct;
    };
    for (Kind k :
         {Kind{"hotfuse/", false, false, false}, Kind{"hotfuse_nhwc/", false, true, false},
          Kind{"hotfuse_nhwc_direct/", false, true, true}, Kind{"im2col/", true, false, false}}) {
      hf::ConvGeometry g = geometry(l);
      g.nhwc = true;
      if (k.direct && !hf::cpu::WinogradConv::suits(g)) continue;  // the same as hotfuse_nhwc
      benchmark::RegisterBenchmark((std::string(k.name) + l.name).c_str(), BM_hotfuse, l, k.im2col,
                                   k.nhwc, k.direct)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
    for (bool residual : {false, true})
      for (bool fused : {false, true}) {
        const std::string name = std::string("hotfuse_nhwc_") + (residual ? "add_relu" : "relu") +
                                 (fused ? "_fused/" : "_then/") + l.name;
        benchmark::RegisterBenchmark(name.c_str(), BM_hotfuse_epilogue, l, residual, fused)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }
#if HF_HAVE_DNNL
    if (l.group == 1 && l.m % 8 == 0 && l.c % 8 == 0)
      benchmark::RegisterBenchmark((std::string("hotfuse_blocked/") + l.name).c_str(),
                                   BM_hotfuse_blocked, l)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    for (bool blocked : {false, true})
      benchmark::RegisterBenchmark(
          (std::string(blocked ? "onednn_blocked/" : "onednn_nchw/") + l.name).c_str(), BM_onednn,
          l, blocked)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
#endif
  }
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
