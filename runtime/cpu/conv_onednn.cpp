#include "runtime/cpu/conv_onednn.h"

#include "runtime/cpu/conv_winograd.h"
#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/onednn_context.h"
#include "runtime/cpu/packed_weights.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace hf::cpu {

using dnnl::memory;
using onednn::engine;
using onednn::execute;
using onednn::user_scratchpad;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

namespace {

// The blocked plan's channel block (blocked_layout()).
int64_t channel_block() {
  const auto avx512 = dnnl_cpu_isa_avx512_core;
  static const int64_t cb = (dnnl_get_effective_cpu_isa() & avx512) == avx512 ? 16 : 8;
  return cb;
}

// A plain 4-D layout with explicit strides (a band of rows of a larger tensor).
memory::desc strided(memory::dims dims, memory::dims strides) {
  return memory::desc(dims, kF32, strides);
}

}  // namespace

using onednn::mem;

const char* blocked_layout() {
  return channel_block() == 16 ? "nChw16c" : "nChw8c";
}

struct OnednnConv::Impl {
  ConvGeometry g;
  // nhwc: a plan whose weights are packed (NHWC bands, or blocked), else the NCHW plan (1x1,
  // group 1); g.nhwc: the graph's own NHWC values, no reorders for the bands.
  bool nhwc = false;
  bool blocked = false;  // small images: nChw8c/16c, slices of output channels, either layout
  bool const_weights = false;
  std::string info;
  int slices = 1;
  std::vector<ConvPostOp> post;
  // A first post-op adding an operand of the output's shape (a residual) may run as oneDNN's
  // sum post-op on that operand copied into the output first. Only where the binary form
  // costs the Conv the kernel it has without post-ops and the sum keeps it: oneDNN 2.6 runs
  // ResNet's 1x1 Convs with a full-tensor binary add in jit_1x1 instead of brgconv_1x1, up
  // to 1.4x slower on small images (bench/RESULTS.md). Elsewhere the binary form stays: a
  // kernel may fold the sum into its accumulators, rounding differently from the add.
  bool sum_candidate = false;
  bool sum_first = false;                  // decided on the plan's first slice (conv_pd_for)
  std::unique_ptr<WinogradConv> winograd;  // the fourth plan: it runs the whole Conv

  struct Slice {
    dnnl::convolution_forward conv;
    memory::desc src, wei, bias, dst, conv_scratch;
    int64_t src_off = 0, wei_off = 0, bias_off = 0, dst_off = 0;  // elements, per image 0
    // NHWC plan: the input band this slice reorders in and its output rows reordered out.
    dnnl::reorder in, out;
    memory::desc in_src, in_dst, out_src, out_dst, in_scratch, out_scratch;
    int64_t in_src_off = 0, in_dst_off = 0, out_dst_off = 0;
    // Blocked plan: its weights' reorder from their plain slice (at wei_src_off in the
    // graph's weights) to wei_off in the packed buffer...
    int64_t wei_src_off = 0;
    dnnl::reorder wei_in;
    memory::desc wei_src, wei_in_scratch;
    // ...and a full post-op operand's share of output channels from NHWC into nChw8c/16c.
    dnnl::reorder operand_in;
    memory::desc operand_in_scratch;
    OutBlock block;  // what it writes of one image of the graph's output
    // Per post-op: a binary one's operand layout and offset in one image (else unused).
    std::vector<memory::desc> src1;
    std::vector<int64_t> src1_off;
  };

  // This slice's post-ops: output channels [m0, m0 + ms) of `dst` (at `dst_off` in an image).
  dnnl::post_ops post_ops_for(Slice& sl, int64_t m0, int64_t ms) const {
    using A = dnnl::algorithm;
    dnnl::post_ops po;
    sl.src1.assign(post.size(), memory::desc());
    sl.src1_off.assign(post.size(), 0);
    for (size_t i = 0; i < post.size(); ++i) {
      const ConvPostOp& p = post[i];
      if (i == 0 && sum_first) {
        po.append_sum(1.f);
      } else if (p.kind == ConvPostOp::Relu) {
        po.append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
      } else if (p.kind == ConvPostOp::Clip) {
        po.append_eltwise(1.f, A::eltwise_clip, p.lo, p.hi);
      } else if (p.operand < 0) {  // a literal: exactly x + c, x - c, c * x
        if (p.kind == ConvPostOp::Add)
          po.append_eltwise(1.f, A::eltwise_linear, 1.f, p.literal);
        else if (p.kind == ConvPostOp::Sub)
          po.append_eltwise(1.f, A::eltwise_linear, 1.f, -p.literal);
        else if (p.kind == ConvPostOp::Mul)
          po.append_eltwise(1.f, A::eltwise_linear, p.literal, 0.f);
        else
          throw dnnl::error(dnnl_unimplemented, "a literal max/min");
      } else {
        const A alg = p.kind == ConvPostOp::Add   ? A::binary_add
                      : p.kind == ConvPostOp::Mul ? A::binary_mul
                      : p.kind == ConvPostOp::Sub ? A::binary_sub
                      : p.kind == ConvPostOp::Max ? A::binary_max
                                                  : A::binary_min;
        if (p.per_channel) {
          sl.src1[i] = memory::desc({1, ms, 1, 1}, kF32, memory::dims{ms, 1, 1, 1});
          sl.src1_off[i] = m0;
        } else {
          sl.src1[i] = sl.dst;
          sl.src1_off[i] = sl.dst_off;
        }
        po.append_binary(alg, sl.src1[i]);
      }
    }
    return po;
  }
  std::vector<Slice> s;
  // Blocked plan: the post-op operands read in the output's layout, reordered in per call.
  std::vector<int> full_operands;

  // NHWC plan: weights in the primitive's layout.
  dnnl::reorder wei_reorder;
  memory::desc wei_plain, wei_scratch;
  std::vector<float> wei_buf;  // packed here, unless shared
  size_t wei_floats = 0;
  const float* wei_cached = nullptr;
  std::shared_ptr<const void> owner;                 // the weights' constant, if known
  std::shared_ptr<const std::vector<float>> shared;  // their packed copy, shared by owner

  std::vector<float> zero_bias;
  std::mutex mutex;

  int64_t in_image() const { return g.c * g.win.in[0] * g.win.in[1]; }
  int64_t out_image() const { return g.m * g.win.out[0] * g.win.out[1]; }
  memory::dims wei_dims(int64_t m) const {
    const Window2d& w = g.win;
    if (g.group == 1) return {m, g.c, w.k[0], w.k[1]};
    return {g.group, m / g.group, g.c / g.group, w.k[0], w.k[1]};
  }

  dnnl::convolution_forward::primitive_desc conv_pd(const memory::desc& src,
                                                    const memory::desc& wei,
                                                    const memory::desc& dst, int64_t m,
                                                    int64_t pad_top, int64_t pad_bottom,
                                                    const dnnl::post_ops& po = {}) const {
    const Window2d& w = g.win;
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei,
        memory::desc({m}, kF32, Tag::x), dst, {w.stride[0], w.stride[1]},
        {w.dilation[0] - 1, w.dilation[1] - 1}, {pad_top, w.pad_begin[1]},
        {pad_bottom, w.pad_end[1]});
    dnnl::primitive_attr attr = user_scratchpad();
    attr.set_post_ops(po);
    return dnnl::convolution_forward::primitive_desc(d, attr, engine());
  }

  // conv_pd with this slice's post-ops; on a plan's first slice, also whether a leading
  // residual add runs as a sum (sum_candidate).
  dnnl::convolution_forward::primitive_desc conv_pd_for(Slice& sl, const memory::desc& src,
                                                        const memory::desc& wei,
                                                        const memory::desc& dst, int64_t m,
                                                        int64_t pad_top, int64_t pad_bottom,
                                                        int64_t m0, int64_t ms) {
    const bool first_slice = s.empty();
    if (first_slice) sum_first = false;
    auto pd = conv_pd(src, wei, dst, m, pad_top, pad_bottom, post_ops_for(sl, m0, ms));
    if (!first_slice || !sum_candidate) return pd;
    const std::string plain = conv_pd(src, wei, dst, m, pad_top, pad_bottom).impl_info_str();
    if (pd.impl_info_str() == plain) return pd;
    sum_first = true;
    try {
      auto sum = conv_pd(src, wei, dst, m, pad_top, pad_bottom, post_ops_for(sl, m0, ms));
      if (sum.impl_info_str() == plain) return sum;
    } catch (const dnnl::error&) {
    }
    sum_first = false;
    post_ops_for(sl, m0, ms);  // the slice's operand descriptors for the binary form again
    return pd;
  }

  // Slices of output channels; the primitives read and write dense NCHW / OIHW in place.
  // Throws when oneDNN wants other layouts (the caller then tries the NHWC plan).
  void plan_nchw() {
    const Window2d& w = g.win;
    const int64_t H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
    const int64_t n = std::min<int64_t>(slices, g.m);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t m0 = g.m * i / n, m1 = g.m * (i + 1) / n;
      Slice sl;
      sl.src = memory::desc({1, g.c, H, W}, kF32, Tag::nchw);
      sl.wei = memory::desc(wei_dims(m1 - m0), kF32, Tag::oihw);
      sl.dst = memory::desc({1, m1 - m0, OH, OW}, kF32, Tag::nchw);
      sl.dst_off = m0 * OH * OW;
      auto pd = conv_pd_for(sl, sl.src, sl.wei, sl.dst, m1 - m0, w.pad_begin[0], w.pad_end[0], m0,
                            m1 - m0);
      if (pd.src_desc() != sl.src || pd.weights_desc() != sl.wei || pd.dst_desc() != sl.dst)
        throw dnnl::error(dnnl_unimplemented, "plain layouts refused");
      sl.bias = pd.bias_desc();
      sl.conv_scratch = pd.scratchpad_desc();
      sl.conv = dnnl::convolution_forward(pd);
      sl.wei_off = m0 * g.c * w.k[0] * w.k[1];
      sl.bias_off = m0;
      sl.block = {sl.dst_off, 1, (m1 - m0) * OH * OW, 0};
      info = std::string("nchw ") + pd.impl_info_str();
      s.push_back(std::move(sl));
    }
    nhwc = false;
  }

  // NCHW graph tensors: this slice's share of the input reorder to NHWC and its output rows'
  // reorder back.
  void plan_reorders(Slice& sl, int64_t i, int64_t n) {
    const Window2d& w = g.win;
    const int64_t C = g.c, M = g.m, H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
    const int64_t r0 = OH * i / n, r1 = OH * (i + 1) / n;
    // This slice's share of the input reorder: input rows [q0, q1), disjoint from the
    // other slices' (the bands above overlap by the window's halo).
    const int64_t q0 = H * i / n, q1 = H * (i + 1) / n;
    sl.in_src = strided({1, C, q1 - q0, W}, {C * H * W, H * W, W, 1});
    sl.in_dst = memory::desc({1, C, q1 - q0, W}, kF32, Tag::nhwc);
    dnnl::reorder::primitive_desc in_pd(engine(), sl.in_src, engine(), sl.in_dst,
                                        user_scratchpad());
    sl.in = dnnl::reorder(in_pd);
    sl.in_scratch = in_pd.scratchpad_desc();
    sl.in_src_off = q0 * W;
    sl.in_dst_off = q0 * W * C;
    sl.out_src = sl.dst;
    sl.out_dst = strided({1, M, r1 - r0, OW}, {M * OH * OW, OH * OW, OW, 1});
    dnnl::reorder::primitive_desc out_pd(engine(), sl.out_src, engine(), sl.out_dst,
                                         user_scratchpad());
    sl.out = dnnl::reorder(out_pd);
    sl.out_scratch = out_pd.scratchpad_desc();
    sl.out_dst_off = r0 * OW;
    sl.block = {r0 * OW, M, (r1 - r0) * OW, OH * OW};
  }

  // Bands of output rows, activations in NHWC, weights in the layout oneDNN picks (every
  // band's primitive is then asked for the first one's, so one reorder serves all).
  void plan_nhwc() {
    s.clear();
    const Window2d& w = g.win;
    const int64_t C = g.c, M = g.m, H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
    const int64_t n = std::min<int64_t>(slices, std::min(OH, H));
    memory::desc wei_any(wei_dims(M), kF32, Tag::any);
    for (int64_t i = 0; i < n; ++i) {
      Slice sl;
      // Output rows [r0, r1) read input rows [a, b] of the padded input; the band is the
      // existing rows [h0, h1), the rest of [a, b] is its padding.
      const int64_t r0 = OH * i / n, r1 = OH * (i + 1) / n;
      const int64_t a = r0 * w.stride[0] - w.pad_begin[0];
      const int64_t b = (r1 - 1) * w.stride[0] - w.pad_begin[0] + (w.k[0] - 1) * w.dilation[0];
      // The band also takes the rows after b that its stride skips (they exist, and read
      // or not they leave the output rows as they are): a 1x1 stride-2 Conv then sees
      // ih = oh * stride, as for the whole image, and gets oneDNN's 1x1 kernel, not the
      // general one at a third of its speed (ResNet-50's downsampling Convs on AVX2).
      const int64_t h0 = std::max<int64_t>(a, 0), h1 = std::min(b + w.stride[0], H);
      const int64_t pad_bottom = std::max<int64_t>(0, b + 1 - H);
      if (h1 <= h0) throw dnnl::error(dnnl_unimplemented, "a band reads no input row");
      sl.src = memory::desc({1, C, h1 - h0, W}, kF32, Tag::nhwc);
      sl.dst = memory::desc({1, M, r1 - r0, OW}, kF32, Tag::nhwc);
      sl.dst_off = r0 * OW * M;
      if (!post.empty() && !g.nhwc)
        throw dnnl::error(dnnl_unimplemented, "post-ops on a reordered output");
      auto pd =
          conv_pd_for(sl, sl.src, i == 0 ? wei_any : s[0].wei, sl.dst, M, h0 - a, pad_bottom, 0, M);
      if (pd.src_desc() != sl.src || pd.dst_desc() != sl.dst ||
          (i > 0 && pd.weights_desc() != s[0].wei))
        throw dnnl::error(dnnl_unimplemented, "NHWC layouts refused");
      sl.wei = pd.weights_desc();
      sl.bias = pd.bias_desc();
      sl.conv_scratch = pd.scratchpad_desc();
      sl.conv = dnnl::convolution_forward(pd);
      sl.src_off = h0 * W * C;
      sl.block = {sl.dst_off, 1, (r1 - r0) * OW * M, 0};
      if (!g.nhwc) plan_reorders(sl, i, n);
      if (i == 0) info = std::string(g.nhwc ? "nhwc (graph) " : "nhwc ") + pd.impl_info_str();
      s.push_back(std::move(sl));
    }
    wei_plain = memory::desc(wei_dims(M), kF32, g.group == 1 ? Tag::oihw : Tag::goihw);
    dnnl::reorder::primitive_desc wpd(engine(), wei_plain, engine(), s[0].wei, user_scratchpad());
    wei_reorder = dnnl::reorder(wpd);
    wei_scratch = wpd.scratchpad_desc();
    wei_floats = s[0].wei.get_size() / sizeof(float) + 1;
    nhwc = true;
  }

  // Whether the blocked plan suits: a Conv whose weights outweigh its activations (the small
  // images deep in a network). There bands of output rows split
  // few rows unevenly and each band reads all the weights, where slices of output channels
  // read only theirs (bench/conv_bench, hotfuse_blocked against hotfuse_nhwc). With AVX-512
  // the bands run oneDNN's brgconv kernels, the blocked plan its older jit ones: bands of 98
  // output pixels (14x14 at two threads: ResNet-50's third stage) ran 9-23% faster than the
  // blocked plan in the graph, bands of 24 (7x7) 8-19% slower (bench/RESULTS.md).
  bool wants_blocked() const {
    const Window2d& w = g.win;
    const int64_t weights = g.m * g.c * w.k[0] * w.k[1];
    const int64_t activations = g.c * w.in[0] * w.in[1] + g.m * w.out[0] * w.out[1];
    const int64_t cb = channel_block();
    const int64_t band_pixels = w.out[0] * w.out[1] / std::min<int64_t>(slices, w.out[0]);
    constexpr int64_t kBrgconvBandPixels = 64;
    return g.group == 1 && g.c % cb == 0 && g.m % cb == 0 &&
           std::min<int64_t>(slices, g.m / cb) >= 2 && weights > activations &&
           (cb != 16 || band_pixels < kBrgconvBandPixels);
  }

  // A slice of `cs` channels of an [h, w] image of `channels` in the graph's layout (NHWC or
  // NCHW) as a 4-D view, and where channel c0 starts.
  memory::desc graph_channels(int64_t cs, int64_t h, int64_t w, int64_t channels) const {
    if (g.nhwc) return strided({1, cs, h, w}, {h * w * channels, 1, w * channels, channels});
    return strided({1, cs, h, w}, {h * w * channels, h * w, w, 1});
  }
  int64_t graph_channel_offset(int64_t c0, int64_t h, int64_t w) const {
    return g.nhwc ? c0 : c0 * h * w;
  }

  // Slices of whole output channel blocks over activations in nChw8c/16c: at batch 1 each
  // slice's output, weights and bias are dense, and so is a full post-op operand's share
  // (reordered in per slice). The input is reordered in once per call, channel blocks split
  // over the slices; each slice reorders its output channels back into the graph's layout.
  void plan_blocked() {
    s.clear();
    const Window2d& w = g.win;
    const int64_t C = g.c, M = g.m, H = w.in[0], W = w.in[1], OH = w.out[0], OW = w.out[1];
    const int64_t cb = channel_block(), blocks = M / cb, n = std::min<int64_t>(slices, blocks),
                  in_blocks = C / cb;
    const Tag tag = cb == 16 ? Tag::nChw16c : Tag::nChw8c;
    int64_t packed = 0;
    for (int64_t i = 0; i < n; ++i) {
      Slice sl;
      // Output channels [m0, m0 + ms).
      const int64_t m0 = blocks * i / n * cb, ms = blocks * (i + 1) / n * cb - m0;
      sl.src = memory::desc({1, C, H, W}, kF32, tag);
      sl.dst = memory::desc({1, ms, OH, OW}, kF32, tag);
      sl.dst_off = m0 * OH * OW;
      auto pd = conv_pd_for(sl, sl.src, memory::desc(wei_dims(ms), kF32, Tag::any), sl.dst, ms,
                            w.pad_begin[0], w.pad_end[0], m0, ms);
      if (pd.src_desc() != sl.src || pd.dst_desc() != sl.dst)
        throw dnnl::error(dnnl_unimplemented, "blocked layouts refused");
      sl.wei = pd.weights_desc();
      sl.bias = pd.bias_desc();
      sl.conv_scratch = pd.scratchpad_desc();
      sl.conv = dnnl::convolution_forward(pd);
      sl.wei_off = packed;
      packed += sl.wei.get_size() / sizeof(float) + 1;
      sl.wei_src_off = m0 * C * w.k[0] * w.k[1];
      sl.wei_src = memory::desc(wei_dims(ms), kF32, Tag::oihw);
      dnnl::reorder::primitive_desc wpd(engine(), sl.wei_src, engine(), sl.wei, user_scratchpad());
      sl.wei_in = dnnl::reorder(wpd);
      sl.wei_in_scratch = wpd.scratchpad_desc();
      sl.bias_off = m0;
      // Its share of the input reorder: input channel blocks [q0, q1).
      const int64_t q0 = in_blocks * i / n * cb, q1 = in_blocks * (i + 1) / n * cb;
      if (q1 > q0) {
        sl.in_src = graph_channels(q1 - q0, H, W, C);
        sl.in_dst = memory::desc({1, q1 - q0, H, W}, kF32, tag);
        dnnl::reorder::primitive_desc in_pd(engine(), sl.in_src, engine(), sl.in_dst,
                                            user_scratchpad());
        sl.in = dnnl::reorder(in_pd);
        sl.in_scratch = in_pd.scratchpad_desc();
        sl.in_src_off = graph_channel_offset(q0, H, W);
        sl.in_dst_off = q0 * H * W;
      }
      sl.out_src = sl.dst;
      sl.out_dst = graph_channels(ms, OH, OW, M);
      dnnl::reorder::primitive_desc out_pd(engine(), sl.out_src, engine(), sl.out_dst,
                                           user_scratchpad());
      sl.out = dnnl::reorder(out_pd);
      sl.out_scratch = out_pd.scratchpad_desc();
      sl.out_dst_off = graph_channel_offset(m0, OH, OW);
      dnnl::reorder::primitive_desc op_pd(engine(), sl.out_dst, engine(), sl.out_src,
                                          user_scratchpad());
      sl.operand_in = dnnl::reorder(op_pd);
      sl.operand_in_scratch = op_pd.scratchpad_desc();
      sl.block =
          g.nhwc ? OutBlock{m0, OH * OW, ms, M} : OutBlock{sl.out_dst_off, 1, ms * OH * OW, 0};
      if (i == 0)
        info =
            std::string(blocked_layout()) + (g.nhwc ? " (graph nhwc) " : " ") + pd.impl_info_str();
      s.push_back(std::move(sl));
    }
    wei_floats = static_cast<size_t>(packed);
    full_operands.clear();
    for (const ConvPostOp& p : post)
      if (p.operand >= 0 && !p.per_channel && p.kind != ConvPostOp::Relu &&
          p.kind != ConvPostOp::Clip &&
          std::find(full_operands.begin(), full_operands.end(), p.operand) == full_operands.end())
        full_operands.push_back(p.operand);
    nhwc = blocked = true;
  }

  // operands (post-ops only): their data for the image at `image` (a full one is offset
  // by it; a per-channel one is the same for every image).
  void conv_slice(const Slice& sl, const float* x, const float* wei, const float* bias, float* y,
                  std::span<const float* const> operands = {}, int64_t image = 0) const {
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, mem(sl.src, x + sl.src_off)},
                                                  {DNNL_ARG_WEIGHTS, mem(sl.wei, wei + sl.wei_off)},
                                                  {DNNL_ARG_BIAS, mem(sl.bias, bias + sl.bias_off)},
                                                  {DNNL_ARG_DST, mem(sl.dst, y + sl.dst_off)}};
    for (size_t i = 0; i < post.size(); ++i) {
      const ConvPostOp& p = post[i];
      if (p.operand < 0 || p.kind == ConvPostOp::Relu || p.kind == ConvPostOp::Clip) continue;
      if (i == 0 && sum_first) {  // the slice's output is dense in an image, as its operand's
        const float* from = operands[p.operand] + image * out_image() + sl.dst_off;
        float* to = y + sl.dst_off;
        if (from != to) std::memcpy(to, from, sl.dst.get_size());
        continue;
      }
      const float* base = operands[p.operand] + (p.per_channel ? 0 : image * out_image());
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                   mem(sl.src1[i], base + sl.src1_off[i]));
    }
    execute(sl.conv, sl.conv_scratch, std::move(args));
  }

  // Tells on_block of slice sl's block of image n.
  void done(const OnBlock& on_block, const Slice& sl, int64_t n) const {
    if (!on_block) return;
    OutBlock b = sl.block;
    b.offset += n * out_image();
    on_block(b);
  }

  // The blocked plan's call: the input and the full post-op operands reordered in, then each
  // slice's convolution and its output channels reordered out.
  void run_blocked(const float* x, const float* packed, const float* bias, float* y,
                   ThreadPool& pool, const OnBlock& on_block,
                   std::span<const float* const> operands) {
    const int64_t per = static_cast<int64_t>(s.size()), items = g.n * per;
    // The calling thread's buffers, as for the NHWC plan's reorders.
    thread_local std::vector<float> x_buf, y_buf;
    thread_local std::vector<std::vector<float>> operand_bufs;
    float* xb = grow(x_buf, g.n * in_image());
    float* yb = grow(y_buf, g.n * out_image());
    std::vector<const float*> in_blocked(operands.begin(), operands.end());
    if (operand_bufs.size() < full_operands.size()) operand_bufs.resize(full_operands.size());
    for (size_t k = 0; k < full_operands.size(); ++k)
      in_blocked[full_operands[k]] = grow(operand_bufs[k], g.n * out_image());
    // The sum's operand is reordered straight into the output it is added to.
    if (sum_first) in_blocked[post[0].operand] = yb;
    pool.parallel_for(items, 1, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const Slice& sl = s[it % per];
        const int64_t n = it / per;
        if (sl.in)
          execute(sl.in, sl.in_scratch,
                  {{DNNL_ARG_FROM, mem(sl.in_src, x + n * in_image() + sl.in_src_off)},
                   {DNNL_ARG_TO, mem(sl.in_dst, xb + n * in_image() + sl.in_dst_off)}});
        for (int k : full_operands)
          execute(sl.operand_in, sl.operand_in_scratch,
                  {{DNNL_ARG_FROM, mem(sl.out_dst, operands[k] + n * out_image() + sl.out_dst_off)},
                   {DNNL_ARG_TO, mem(sl.out_src, in_blocked[k] + n * out_image() + sl.dst_off)}});
      }
    });
    pool.parallel_for(items, 1, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const Slice& sl = s[it % per];
        const int64_t n = it / per;
        float* yn = yb + n * out_image();
        conv_slice(sl, xb + n * in_image(), packed, bias, yn, in_blocked, n);
        execute(sl.out, sl.out_scratch,
                {{DNNL_ARG_FROM, mem(sl.out_src, yn + sl.dst_off)},
                 {DNNL_ARG_TO, mem(sl.out_dst, y + n * out_image() + sl.out_dst_off)}});
        done(on_block, sl, n);
      }
    });
  }

  void run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
           const OnBlock& on_block, std::span<const float* const> operands) {
    if (winograd) {
      winograd->run(x, w, bias, y, pool, on_block, operands);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (!bias) {
      if (zero_bias.empty()) zero_bias.assign(g.m, 0.0f);
      bias = zero_bias.data();
    }
    // An operand that is the output itself (Backend::writes_over) is read in place where
    // every slice reads it before writing there: the blocked plan reorders operands in
    // first, and the sum reads its operand from the output. A binary post-op's may be read
    // after a kernel stored partial sums there: it reads a copy.
    thread_local std::vector<float> alias_copy;
    std::vector<const float*> unaliased;  // empty (no allocation) unless an operand is y
    if (!blocked)
      for (size_t i = 0; i < post.size(); ++i) {
        const ConvPostOp& p = post[i];
        if (p.operand < 0 || p.per_channel || (i == 0 && sum_first) || operands[p.operand] != y)
          continue;
        if (unaliased.empty()) unaliased.assign(operands.begin(), operands.end());
        float* copy = grow(alias_copy, g.n * out_image());
        std::memcpy(copy, y, sizeof(float) * g.n * out_image());
        unaliased[p.operand] = copy;
        operands = unaliased;
      }
    const int64_t items = g.n * static_cast<int64_t>(s.size());
    const int64_t per = static_cast<int64_t>(s.size());
    if (!nhwc) {
      pool.parallel_for(items, 1, [&](int64_t b, int64_t e) {
        for (int64_t it = b; it < e; ++it) {
          const int64_t n = it / per;
          conv_slice(s[it % per], x + n * in_image(), w, bias, y + n * out_image(), operands, n);
          done(on_block, s[it % per], n);
        }
      });
      return;
    }
    // (both NHWC plans) Weights in the primitive's layout: shared by their constant, or
    // packed here once when constant, or on every call.
    auto reorder = [&](float* to) {
      if (!blocked) {
        execute(wei_reorder, wei_scratch,
                {{DNNL_ARG_FROM, mem(wei_plain, w)}, {DNNL_ARG_TO, mem(s[0].wei, to)}});
        return;
      }
      for (const Slice& sl : s)
        execute(sl.wei_in, sl.wei_in_scratch,
                {{DNNL_ARG_FROM, mem(sl.wei_src, w + sl.wei_src_off)},
                 {DNNL_ARG_TO, mem(sl.wei, to + sl.wei_off)}});
    };
    const float* packed = nullptr;
    if (owner) {
      if (!shared) {
        // Packed alike exactly when every slice's layout is the same.
        std::string key = blocked ? "blocked" : "";
        for (const Slice& sl : s) {
          const dnnl_memory_desc_t& d = sl.wei.data;
          key.append(reinterpret_cast<const char*>(&d), sizeof d);
          if (!blocked) break;
        }
        shared = shared_packed_weights(owner, key, wei_floats, reorder);
      }
      packed = shared->data();
    } else {
      if (wei_buf.empty()) wei_buf.resize(wei_floats);
      if (!const_weights || wei_cached != w) {
        reorder(wei_buf.data());
        wei_cached = const_weights ? w : nullptr;
      }
      packed = wei_buf.data();
    }
    if (blocked) {
      run_blocked(x, packed, bias, y, pool, on_block, operands);
      return;
    }
    if (g.nhwc) {
      pool.parallel_for(items, 1, [&](int64_t b, int64_t e) {
        for (int64_t it = b; it < e; ++it) {
          conv_slice(s[it % per], x + (it / per) * in_image(), packed, bias,
                     y + (it / per) * out_image(), operands, it / per);
          done(on_block, s[it % per], it / per);
        }
      });
      return;
    }
    // The NHWC activations of all images: the calling thread's, shared by every Conv it runs
    // (the pool's threads write into it while this thread waits), so a plan holds no copy.
    thread_local std::vector<float> x_buf, y_buf;
    float* x_nhwc = grow(x_buf, g.n * in_image());
    float* y_nhwc = grow(y_buf, g.n * out_image());
    pool.parallel_for(items, 1, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const Slice& sl = s[it % per];
        const int64_t n = it / per;
        execute(sl.in, sl.in_scratch,
                {{DNNL_ARG_FROM, mem(sl.in_src, x + n * in_image() + sl.in_src_off)},
                 {DNNL_ARG_TO, mem(sl.in_dst, x_nhwc + n * in_image() + sl.in_dst_off)}});
      }
    });
    pool.parallel_for(items, 1, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const Slice& sl = s[it % per];
        const int64_t n = it / per;
        float* yn = y_nhwc + n * out_image();
        conv_slice(sl, x_nhwc + n * in_image(), packed, bias, yn);
        execute(sl.out, sl.out_scratch,
                {{DNNL_ARG_FROM, mem(sl.out_src, yn + sl.dst_off)},
                 {DNNL_ARG_TO, mem(sl.out_dst, y + n * out_image() + sl.out_dst_off)}});
        done(on_block, sl, n);
      }
    });
  }
};

OnednnConv::OnednnConv(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnednnConv::~OnednnConv() = default;

std::unique_ptr<OnednnConv> OnednnConv::create(const ConvGeometry& g, int slices,
                                               bool const_weights,
                                               const std::vector<ConvPostOp>& post,
                                               std::shared_ptr<const void> weights_owner) {
  if (g.n <= 0 || g.m <= 0 || g.c <= 0 || g.win.out[0] <= 0 || g.win.out[1] <= 0) return nullptr;
  // Primitives record the thread count they are made for: one, like every call.
  onednn_single_threaded();
  auto impl = std::make_unique<Impl>();
  impl->g = g;
  impl->slices = std::max(1, slices);
  impl->const_weights = const_weights;
  impl->post = post;
  impl->sum_candidate = leads_with_residual(post);
  impl->owner = std::move(weights_owner);
  const Window2d& w = g.win;
  const bool pointwise = w.k[0] == 1 && w.k[1] == 1 && g.group == 1;
  impl->winograd = WinogradConv::create(g, impl->slices, const_weights, post, impl->owner);
  if (impl->winograd) {
    impl->info = impl->winograd->describe();
    return std::unique_ptr<OnednnConv>(new OnednnConv(std::move(impl)));
  }
  try {
    if (pointwise && !g.nhwc) {
      try {
        impl->plan_nchw();
      } catch (const dnnl::error&) {
        impl->plan_nhwc();
      }
    } else if (impl->wants_blocked()) {
      try {
        impl->plan_blocked();
      } catch (const dnnl::error&) {  // blocked is set only once the plan is made
        impl->plan_nhwc();
      }
    } else {
      impl->plan_nhwc();
    }
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::unique_ptr<OnednnConv>(new OnednnConv(std::move(impl)));
}

void OnednnConv::run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
                     const OnBlock& on_block) {
  impl_->run(x, w, bias, y, pool, on_block, {});
}

void OnednnConv::run(const float* x, const float* w, const float* bias, float* y, ThreadPool& pool,
                     std::span<const float* const> operands) {
  impl_->run(x, w, bias, y, pool, {}, operands);
}

const char* OnednnConv::describe() const {
  return impl_->info.c_str();
}

}  // namespace hf::cpu
