#include "runtime/cpu/conv_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/onednn_context.h"
#include "runtime/cpu/packed_weights.h"
#include "runtime/ir/f32_precision.h"
#include "runtime/ops/scalar_math.h"

namespace hf::cpu {

using dnnl::memory;
using onednn::engine;
using onednn::execute;
using onednn::mem;
using onednn::user_scratchpad;

namespace {

constexpr auto kF32 = memory::data_type::f32;
constexpr int kPos = 36;   // positions of a transformed 6x6 tile
constexpr int kTile = 4;   // outputs per tile side
constexpr int kLanes = 8;  // channels per vector
// Each call reads the transformed weights (4x the direct convolution's) once per tile
// block: with fewer tiles than this the GEMMs wait on memory and the direct plans win
// (ResNet's 512-channel 7x7 stage), from it on Winograd does (bench/conv_bench,
// hotfuse_nhwc against hotfuse_nhwc_direct).
constexpr int64_t kMinTiles = 16;
// Input transforms per wave of images: about 4 MB.
constexpr int64_t kWaveFloats = int64_t{1} << 20;

// The transforms of one line are inlined into their loops: called, they pass 6 vectors
// through memory.
#define HF_WINOGRAD_INLINE inline __attribute__((always_inline))

// 8 channels of one pixel: GCC's vector extension, one AVX register or two SSE ones.
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

HF_WINOGRAD_INLINE Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
HF_WINOGRAD_INLINE void store(float* p, Lanes v) {
  std::memcpy(p, &v, sizeof v);
}

// B^T d for one line of 6 inputs.
HF_WINOGRAD_INLINE void input_line(const Lanes d[6], Lanes r[6]) {
  r[0] = (d[0] * 4.f - d[2] * 5.f) + d[4];
  r[1] = (d[3] + d[4]) - (d[1] + d[2]) * 4.f;
  r[2] = (d[4] - d[3]) + (d[1] - d[2]) * 4.f;
  r[3] = (d[4] - d[2]) + (d[3] - d[1]) * 2.f;
  r[4] = (d[4] - d[2]) - (d[3] - d[1]) * 2.f;
  r[5] = (d[1] * 4.f - d[3] * 5.f) + d[5];
}

// A^T m for one line of 6 products.
HF_WINOGRAD_INLINE void output_line(const Lanes m[6], Lanes o[4]) {
  const Lanes s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
  o[0] = m[0] + s12 + s34;
  o[1] = d12 + d34 * 2.f;
  o[2] = s12 + s34 * 4.f;
  o[3] = (d12 + d34 * 8.f) + m[5];
}

// G g for one line of 3 weights, in double (once per weight).
void weight_line(const double g[3], double u[6]) {
  u[0] = g[0] / 4;
  u[1] = -(g[0] + g[1] + g[2]) / 6;
  u[2] = -(g[0] - g[1] + g[2]) / 6;
  u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
  u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
  u[5] = g[2];
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

struct WinogradConv::Impl {
  ConvGeometry g;
  std::vector<ConvPostOp> post;
  bool const_weights = false;
  std::shared_ptr<const void> owner;
  std::string info;
  int64_t C = 0, M = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t tiles_h = 0, tiles_w = 0, tiles = 0;  // per image
  int64_t block = 0, blocks = 0;                // tiles per GEMM, GEMMs per image and slice

  // A block of output channels [m0, m0 + ms) with its weights packed at wei_off, and its
  // GEMMs for a full block of tiles and for the last, shorter one.
  struct Slice {
    int64_t m0 = 0, ms = 0, wei_off = 0;
    memory::desc wei;
    dnnl::reorder pack;
    memory::desc pack_src, pack_scratch;
    dnnl::matmul gemm[2];
    memory::desc src[2], dst[2], scratch[2];
  };
  std::vector<Slice> s;
  size_t wei_floats = 0;

  std::shared_ptr<const std::vector<float>> packed;
  const float* packed_from = nullptr;
  std::vector<float> zero_bias;
  std::mutex mutex;

  int64_t in_image() const { return C * H * W; }
  int64_t out_image() const { return M * OH * OW; }
  int64_t block_tiles(int64_t b) const { return std::min(block, tiles - b * block); }

  // Tiles and output channels cut into blocks: by tiles when the images are large next to
  // the weights (every slice then reads all the transformed weights), else by whole
  // 8-channel blocks of outputs (every slice reads all the transformed input).
  void plan(int slices) {
    const int64_t max_block = 64;
    int64_t m_slices = 1, t_blocks = ceil_div(tiles, max_block);
    if (M > tiles) {
      m_slices = std::min<int64_t>(slices, M / kLanes);
    } else {
      t_blocks = ceil_div(t_blocks, slices) * slices;
    }
    block = ceil_div(tiles, t_blocks);
    blocks = ceil_div(tiles, block);
    int64_t packed_at = 0;
    for (int64_t i = 0; i < m_slices; ++i) {
      Slice sl;
      const int64_t groups = M / kLanes;
      sl.m0 = groups * i / m_slices * kLanes;
      sl.ms = groups * (i + 1) / m_slices * kLanes - sl.m0;
      for (int k = 0; k < 2; ++k) {
        const int64_t rows = k == 0 ? block : block_tiles(blocks - 1);
        sl.src[k] = memory::desc({kPos, rows, C}, kF32, memory::dims{C, kPos * C, 1});
        sl.dst[k] = memory::desc({kPos, rows, sl.ms}, kF32, memory::dims{sl.ms, kPos * sl.ms, 1});
        const memory::desc want =
            k == 0 ? memory::desc({kPos, C, sl.ms}, kF32, memory::format_tag::any) : sl.wei;
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(sl.src[k], want, sl.dst[k]),
                                        user_scratchpad(), engine());
        if (pd.src_desc() != sl.src[k] || pd.dst_desc() != sl.dst[k] ||
            (k == 1 && pd.weights_desc() != sl.wei))
          throw dnnl::error(dnnl_unimplemented, "winograd GEMM layouts refused");
        if (k == 0) sl.wei = pd.weights_desc();
        sl.scratch[k] = pd.scratchpad_desc();
        sl.gemm[k] = dnnl::matmul(pd);
        if (i == 0 && k == 0)
          info = "winograd F(4x4,3x3), " + std::to_string(blocks) + " tile blocks x " +
                 std::to_string(m_slices) + ", " + pd.impl_info_str();
      }
      sl.pack_src = memory::desc({kPos, C, sl.ms}, kF32, memory::dims{C * M, M, 1});
      dnnl::reorder::primitive_desc rpd(engine(), sl.pack_src, engine(), sl.wei, user_scratchpad());
      sl.pack = dnnl::reorder(rpd);
      sl.pack_scratch = rpd.scratchpad_desc();
      sl.wei_off = packed_at;
      packed_at += sl.wei.get_size() / sizeof(float) + 1;
      s.push_back(std::move(sl));
    }
    wei_floats = static_cast<size_t>(packed_at);
  }

  // The transformed weights U[p][c][m] (dense) into each slice's layout.
  void pack(const float* w, float* to) const {
    std::vector<float> u(kPos * C * M);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c) {
        const float* k = w + (m * C + c) * 9;
        double t[6][3];  // G g: rows transformed
        for (int j = 0; j < 3; ++j) {
          const double col[3] = {k[j], k[3 + j], k[6 + j]};
          double r[6];
          weight_line(col, r);
          for (int i = 0; i < 6; ++i) t[i][j] = r[i];
        }
        for (int i = 0; i < 6; ++i) {
          double r[6];
          weight_line(t[i], r);
          for (int j = 0; j < 6; ++j) u[((i * 6 + j) * C + c) * M + m] = static_cast<float>(r[j]);
        }
      }
    for (const Slice& sl : s)
      execute(sl.pack, sl.pack_scratch,
              {{DNNL_ARG_FROM, mem(sl.pack_src, u.data() + sl.m0)},
               {DNNL_ARG_TO, mem(sl.wei, to + sl.wei_off)}});
  }

  const float* packed_weights(const float* w) {
    if (packed && (owner || (const_weights && packed_from == w))) return packed->data();
    auto fill = [&](float* to) { pack(w, to); };
    if (owner) {
      std::string key = "winograd";
      for (const Slice& sl : s) {
        const dnnl_memory_desc_t& d = sl.wei.data;
        key.append(reinterpret_cast<const char*>(&d), sizeof d);
      }
      packed = shared_packed_weights(owner, key, wei_floats, fill);
    } else {
      auto own = std::const_pointer_cast<std::vector<float>>(packed);
      if (!own) own = std::make_shared<std::vector<float>>(wei_floats);
      fill(own->data());
      packed = own;
    }
    packed_from = w;
    return packed->data();
  }

  // Input tile t of an image into v, the image's transform: [tiles][36][C], so that a tile's
  // 36 positions are adjacent (the GEMMs read position p of tile t at (t * 36 + p) * C).
  void input_tile(const float* x, int64_t t, float* v) const {
    const int64_t ih0 = t / tiles_w * kTile - g.win.pad_begin[0];
    const int64_t iw0 = t % tiles_w * kTile - g.win.pad_begin[1];
    const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + 6 <= H && iw0 + 6 <= W;
    for (int64_t c0 = 0; c0 < C; c0 += kLanes) {
      Lanes d[6][6];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          const int64_t ih = ih0 + i, iw = iw0 + j;
          d[i][j] = inside || (ih >= 0 && ih < H && iw >= 0 && iw < W)
                        ? load(x + (ih * W + iw) * C + c0)
                        : Lanes{};
        }
      Lanes tr[6][6];
      for (int j = 0; j < 6; ++j) {
        const Lanes col[6] = {d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j]};
        Lanes r[6];
        input_line(col, r);
        for (int i = 0; i < 6; ++i) tr[i][j] = r[i];
      }
      for (int i = 0; i < 6; ++i) {
        Lanes r[6];
        input_line(tr[i], r);
        for (int j = 0; j < 6; ++j) store(v + (t * kPos + i * 6 + j) * C + c0, r[j]);
      }
    }
  }

  // The bias and the post-ops on `n` pixels' 8 channels `o` (rows of kLanes) at output
  // pixels `pix` (flat, within the image) and channel k0. Each pixel's channels stay in one
  // vector through every step: as loops over the lanes, step after step over the pixels,
  // they made a RELU in the transform slower than a pass of RELU after the Conv
  // (bench/conv_bench, hotfuse_nhwc_relu_fused against hotfuse_nhwc_then_relu). The
  // elementwise modes' definitions (runtime/ops/scalar_math.h), as vector selects.
  void epilogue(float (*o)[kLanes], const int64_t* pix, int n, int64_t k0, const float* bias,
                std::span<const float* const> operands, int64_t image) const {
    const Lanes b0 = load(bias + k0), zero = {};
    for (int q = 0; q < n; ++q) {
      Lanes v = load(o[q]) + b0;
      for (const ConvPostOp& p : post) {
        if (p.kind == ConvPostOp::Relu) {
          v = v <= zero ? zero : v;
          continue;
        }
        if (p.kind == ConvPostOp::Clip) {
          const Lanes lo = zero + p.lo, hi = zero + p.hi;
          const Lanes t = v < lo ? lo : v;
          v = t > hi ? hi : t;
          continue;
        }
        const Lanes b = p.operand < 0
                            ? zero + p.literal
                            : load(operands[p.operand] +
                                   (p.per_channel ? k0 : image * out_image() + pix[q] * M + k0));
        switch (p.kind) {
          case ConvPostOp::Add:
            v = v + b;
            break;
          case ConvPostOp::Mul:
            v = v * b;
            break;
          case ConvPostOp::Sub:
            v = v - b;
            break;
          case ConvPostOp::Max:
            v = v != v ? v : (b != b ? b : (v > b ? v : b));
            break;
          case ConvPostOp::Min:
            v = v != v ? v : (b != b ? b : (v < b ? v : b));
            break;
          default:
            break;
        }
      }
      store(o[q], v);
    }
  }

  // Slice sl's GEMM for tile block b of one image (v: its input transform) and its outputs.
  void multiply_block(const Slice& sl, int64_t b, const float* v, const float* wei,
                      const float* bias, float* y, std::span<const float* const> operands,
                      int64_t image, const OnBlock& on_block) const {
    const int64_t t0 = b * block, rows = block_tiles(b);
    const int k = rows == block ? 0 : 1;
    thread_local std::vector<float> product_buf;
    float* prod = grow(product_buf, kPos * rows * sl.ms);
    execute(sl.gemm[k], sl.scratch[k],
            {{DNNL_ARG_SRC, mem(sl.src[k], v + t0 * kPos * C)},
             {DNNL_ARG_WEIGHTS, mem(sl.wei, wei + sl.wei_off)},
             {DNNL_ARG_DST, mem(sl.dst[k], prod)}});
    for (int64_t tt = 0; tt < rows; ++tt) {
      const int64_t t = t0 + tt, oh0 = t / tiles_w * kTile, ow0 = t % tiles_w * kTile;
      const int rows_in = static_cast<int>(std::min<int64_t>(kTile, OH - oh0));
      const int cols_in = static_cast<int>(std::min<int64_t>(kTile, OW - ow0));
      int64_t pix[kTile * kTile];
      int n = 0;
      for (int i = 0; i < rows_in; ++i)
        for (int j = 0; j < cols_in; ++j) pix[n++] = (oh0 + i) * OW + ow0 + j;
      for (int64_t kk = 0; kk < sl.ms; kk += kLanes) {
        Lanes m[6][6];
        for (int p = 0; p < kPos; ++p) m[p / 6][p % 6] = load(prod + (tt * kPos + p) * sl.ms + kk);
        Lanes s4[4][6];
        for (int j = 0; j < 6; ++j) {
          const Lanes col[6] = {m[0][j], m[1][j], m[2][j], m[3][j], m[4][j], m[5][j]};
          Lanes r[4];
          output_line(col, r);
          for (int i = 0; i < 4; ++i) s4[i][j] = r[i];
        }
        alignas(32) float o[kTile * kTile][kLanes];
        int q = 0;
        for (int i = 0; i < rows_in; ++i) {
          Lanes r[4];
          output_line(s4[i], r);
          for (int j = 0; j < cols_in; ++j) store(o[q++], r[j]);
        }
        epilogue(o, pix, n, sl.m0 + kk, bias, operands, image);
        float* yi = y + image * out_image() + sl.m0 + kk;
        for (int q2 = 0; q2 < n; ++q2) std::memcpy(yi + pix[q2] * M, o[q2], sizeof o[q2]);
      }
    }
    if (on_block) report(sl, t0, rows, image, on_block);
  }

  // Tells on_block of what tiles [t0, t0 + rows) wrote of slice sl's channels, in as few
  // blocks as it can: per tile row, its output rows, whole when the slice has every channel.
  void report(const Slice& sl, int64_t t0, int64_t rows, int64_t image,
              const OnBlock& on_block) const {
    for (int64_t tr = t0 / tiles_w; tr * tiles_w < t0 + rows; ++tr) {
      const int64_t c0 = std::max(t0, tr * tiles_w) - tr * tiles_w;
      const int64_t c1 = std::min(t0 + rows, (tr + 1) * tiles_w) - tr * tiles_w;
      const int64_t ow0 = c0 * kTile, ow1 = std::min(c1 * kTile, OW);
      const int64_t oh0 = tr * kTile, oh1 = std::min(oh0 + kTile, OH);
      const int64_t at = image * out_image() + (oh0 * OW + ow0) * M;
      if (sl.ms == M) {
        on_block({at, oh1 - oh0, (ow1 - ow0) * M, OW * M});
        continue;
      }
      for (int64_t oh = oh0; oh < oh1; ++oh)
        on_block({at + (oh - oh0) * OW * M + sl.m0, ow1 - ow0, sl.ms, M});
    }
  }

  void run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
           const OnBlock& on_block, std::span<const float* const> operands) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!bias) {
      if (zero_bias.empty()) zero_bias.assign(M, 0.0f);
      bias = zero_bias.data();
    }
    const float* wei = packed_weights(w);
    // Images in waves whose input transform stays in the caches' reach (a batch of 32 large
    // images would make it 60 MB): the calling thread's buffer, as for oneDNN's reorders.
    thread_local std::vector<float> v_buf;
    const int64_t v_image = kPos * tiles * C;
    const int64_t wave = std::clamp<int64_t>(kWaveFloats / v_image, 1, g.n);
    float* v = grow(v_buf, wave * v_image);
    const int64_t per = blocks * static_cast<int64_t>(s.size());
    for (int64_t first_image = 0; first_image < g.n; first_image += wave) {
      const int64_t images = std::min(wave, g.n - first_image);
      const float* xw = x + first_image * in_image();
      pool.parallel_for(images * tiles, 1, [&](int64_t first, int64_t last) {
        for (int64_t it = first; it < last; ++it)
          input_tile(xw + it / tiles * in_image(), it % tiles, v + it / tiles * v_image);
      });
      pool.parallel_for(images * per, 1, [&](int64_t first, int64_t last) {
        for (int64_t it = first; it < last; ++it) {
          const int64_t i = it / per, r = it % per;
          multiply_block(s[r % s.size()], r / s.size(), v + i * v_image, wei, bias, y, operands,
                         first_image + i, on_block);
        }
      });
    }
  }
};

bool WinogradConv::suits(const ConvGeometry& g) {
  const Window2d& w = g.win;
  return g.nhwc && g.group == 1 && w.k[0] == 3 && w.k[1] == 3 && w.stride[0] == 1 &&
         w.stride[1] == 1 && w.dilation[0] == 1 && w.dilation[1] == 1 && g.c % kLanes == 0 &&
         g.m % kLanes == 0 && ceil_div(w.out[0], kTile) * ceil_div(w.out[1], kTile) >= kMinTiles;
}

WinogradConv::WinogradConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WinogradConv::~WinogradConv() = default;

std::unique_ptr<WinogradConv> WinogradConv::create(const ConvGeometry& g, int slices,
                                                   bool const_weights,
                                                   const std::vector<ConvPostOp>& post,
                                                   std::shared_ptr<const void> weights_owner) {
  if (!suits(g) || g.n <= 0 || f32_precision() == F32Precision::Highest) return nullptr;
  onednn_single_threaded();
  auto impl = std::make_unique<Impl>();
  Impl& p = *impl;
  p.g = g;
  p.post = post;
  p.const_weights = const_weights;
  p.owner = std::move(weights_owner);
  p.C = g.c, p.M = g.m, p.H = g.win.in[0], p.W = g.win.in[1];
  p.OH = g.win.out[0], p.OW = g.win.out[1];
  p.tiles_h = ceil_div(p.OH, kTile), p.tiles_w = ceil_div(p.OW, kTile);
  p.tiles = p.tiles_h * p.tiles_w;
  try {
    p.plan(std::max(1, slices));
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<WinogradConv>(new WinogradConv(std::move(impl)));
}

void WinogradConv::run(const float* x, const float* w, const float* bias, float* y,
                       ThreadPool& pool, const OnBlock& on_block,
                       std::span<const float* const> operands) {
  impl_->run(x, w, bias, y, pool, on_block, operands);
}

const char* WinogradConv::describe() const {
  return impl_->info.c_str();
}

}  // namespace hf::cpu
