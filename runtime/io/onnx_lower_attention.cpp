// ONNX Attention (opsets 23-25) and RotaryEmbedding (opset 23), lowered to MatMul, the
// softmax's row ops and layout nodes. Each follows the reference the ONNX package gives
// (onnx/reference/ops/op_attention.py, the RotaryEmbedding spec's algorithm) step by step,
// in the same types, so the element-wise parts (scaling, softcap, mask, softmax) fuse and
// the results round as the reference's do.
#include <cmath>
#include <limits>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::string str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

// Y = softmax(mask(softcap((Q sqrt(scale)) (K sqrt(scale))^T))) V per head, with the KV cache
// concatenated in front of K and V and the query heads grouped over the KV heads (GQA).
void Importer::lower_attention() {
  const OnnxNode& n = *cur_;
  ValueId q = rt(0), k = rt(1), v = rt(2);
  const DType t = dtype_of(q);
  if (!is_float(t)) throw Error("needs float Q, K and V");
  if (dtype_of(k) != t || dtype_of(v) != t) throw Error("Q, K and V differ in type");
  const size_t rank = shape_of(q).size();
  if ((rank != 3 && rank != 4) || shape_of(k).size() != rank || shape_of(v).size() != rank)
    throw Error(
        "Q, K and V must all be 3-D (batch, sequence, hidden) or all 4-D (batch, heads, "
        "sequence, head_size)");
  const Attrs to_heads{{"perm", std::vector<int64_t>{0, 2, 1, 3}}};  // its own inverse
  if (rank == 3) {
    if (!n.has_attr("q_num_heads") || !n.has_attr("kv_num_heads"))
      throw Error("3-D Q, K and V need the attributes q_num_heads and kv_num_heads");
    // (batch, seq, heads * size) -> (batch, heads, seq, size)
    auto split = [&](ValueId x, int64_t heads, const char* what) {
      const Shape s = shape_of(x);
      if (heads < 1 || s[2] % heads != 0)
        throw Error(std::string(what) + "'s hidden size " + str(s[2]) + " is not a multiple of " +
                    str(heads) + " heads");
      return op1(OpType::Dimshuffle, to_heads, reshape(x, {s[0], s[1], heads, s[2] / heads}),
                 std::string(what) + "_heads");
    };
    q = split(q, n.attr_int("q_num_heads"), "Q");
    k = split(k, n.attr_int("kv_num_heads"), "K");
    v = split(v, n.attr_int("kv_num_heads"), "V");
  } else {
    // 4-D inputs carry their head counts; given attributes must agree (opset 25 forbids them).
    for (auto [name, x] : {std::pair{"q_num_heads", q}, std::pair{"kv_num_heads", k}})
      if (n.has_attr(name) && (n.opset >= 25 || n.attr_int(name) != shape_of(x)[1]))
        throw Error(std::string(name) + " must not be given with 4-D inputs, or must match them");
  }
  const Shape qs = shape_of(q), ks = shape_of(k), vs = shape_of(v);
  const int64_t B = qs[0], Hq = qs[1], S = qs[2], D = qs[3];
  if (ks[0] != B || vs[0] != B || ks[3] != D || vs[1] != ks[1] || vs[2] != ks[2])
    throw Error("Q " + to_string(qs) + ", K " + to_string(ks) + " and V " + to_string(vs) +
                " do not fit (batch, heads, sequence, head_size) together");
  const int64_t Hk = ks[1], Dv = vs[3];
  if (Hk < 1 || Hq % Hk != 0)
    throw Error("the " + str(Hq) + " query heads are not a multiple of the " + str(Hk) +
                " key/value heads");
  const int64_t groups = Hq / Hk;  // query heads sharing one KV head (GQA), adjacent ones

  // KV cache: past (batch, kv_heads, past, size) in front of the new keys and values.
  const bool past = n.has_input(4) || n.has_input(5);
  if (past && !(n.has_input(4) && n.has_input(5)))
    throw Error("past_key and past_value must be given together");
  const bool nonpad = n.opset >= 24 && n.has_input(6);
  if (nonpad && past) throw Error("nonpad_kv_seqlen cannot be combined with past_key/past_value");
  int64_t P = 0;
  if (past) {
    ValueId pk = cvt(rt(4), t), pv = cvt(rt(5), t);
    const Shape pks = shape_of(pk), pvs = shape_of(pv);
    if (pks.size() != 4 || pvs.size() != 4 || pks[0] != B || pks[1] != Hk || pks[3] != D ||
        pvs[0] != B || pvs[1] != Hk || pvs[2] != pks[2] || pvs[3] != Dv)
      throw Error("past_key " + to_string(pks) + " and past_value " + to_string(pvs) +
                  " do not fit K " + to_string(ks) + " and V " + to_string(vs));
    P = pks[2];
    k = concat_axis({pk, k}, 2);
    v = concat_axis({pv, v}, 2);
  }
  const int64_t T = P + ks[2];  // the total key sequence
  if (S == 0 || T == 0 || D == 0) throw Error("needs non-empty query and key sequences");

  auto matmul = [&](ValueId a, ValueId b, const char* tag) {
    Node m;
    m.op = OpType::MatMul;
    m.inputs = {a, b};
    return emit(std::move(m), tag);
  };
  // Query heads grouped by their KV head: (B, Hq, S, x) <-> (B, Hk, groups * S, x), a free
  // reshape, so K and V are shared by the group instead of repeated.
  auto grouped = [&](ValueId x) { return reshape(x, {B, Hk, groups * S, shape_of(x)[3]}); };
  auto per_head = [&](ValueId x) { return reshape(x, {B, Hq, S, shape_of(x)[3]}); };

  // Q and K each scaled by sqrt(scale) in their own type (the spec's guard against overflow).
  double scale = n.has_attr("scale") ? n.attr_float("scale") : 1.0 / std::sqrt(double(D));
  ValueId root = scalar(t, round_to(to_elem_type(t), std::sqrt(scale)));
  ValueId kt = op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}},
                   ew(Mode::MUL, {k, root}, "k_scaled"), "k_transposed");
  ValueId qk = per_head(matmul(grouped(ew(Mode::MUL, {q, root}, "q_scaled")), kt, "qk"));
  const double softcap = n.attr_float("softcap", 0.0);
  if (softcap > 0)
    qk = ew(Mode::MUL,
            {ew(Mode::TANH, {ew(Mode::TRUE_DIV, {qk, scalar(t, softcap)})}), scalar(t, softcap)},
            "softcap");
  const int64_t mode = n.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) throw Error("qk_matmul_output_mode must be 0-3, not " + str(mode));
  if (mode == 0 && softcap > 0 && n.wants_output(3))
    unsupported(
        "qk_matmul_output_mode 0 with softcap: the spec gives the QK product, the reference "
        "the softcapped one");

  // The additive bias: the mask (bool: 0 or -inf), its last axis padded with -inf to T, plus
  // -inf where the causal frontier or the window (opset 25) excludes a key, plus -inf past each
  // sample's valid keys (nonpad_kv_seqlen, opset 24).
  std::optional<ValueId> bias;
  bool may_mask_row = false;  // whether some query row can end up with no key at all
  auto add_bias = [&](ValueId b) { bias = bias ? ew(Mode::ADD, {*bias, b}, "bias") : b; };
  if (n.has_input(3)) {
    ValueId m = rt(3);
    Shape ms = shape_of(m);
    if (ms.empty() || ms.size() > 4)
      throw Error("attn_mask has shape " + to_string(ms) + ", expected rank 1 to 4");
    m = dtype_of(m) == DType::Bool ? where(m, scalar(t, 0), scalar(t, kNegInf)) : cvt(m, t);
    if (ms.back() > T)
      throw Error("attn_mask's last axis (" + str(ms.back()) +
                  ") is longer than the key sequence (" + str(T) + ")");
    if (ms.back() < T) {
      Shape pad = ms;
      pad.back() = T - ms.back();
      m = concat_axis({m, broadcast_to(scalar(t, kNegInf), pad)}, static_cast<int>(ms.size()) - 1);
    }
    add_bias(m);
    may_mask_row = true;
  }
  // nonpad_kv_seqlen (batch,): the valid keys of each sample, as (B, 1, 1, 1).
  std::optional<ValueId> lens;
  if (nonpad) {
    if (shape(6) != Shape{B}) throw Error("nonpad_kv_seqlen must have shape [" + str(B) + "]");
    lens = reshape(cvt(rt(6), DType::I64), {B, 1, 1, 1});
  }
  const bool causal = n.attr_int("is_causal", 0) != 0;
  const int64_t left = n.opset >= 25 ? n.attr_int("left_window_size", -1) : -1;
  const int64_t right = n.opset >= 25 ? n.attr_int("right_window_size", -1) : -1;
  if (left < -1 || right < -1) throw Error("left_window_size and right_window_size must be >= -1");
  // Query i attends key j iff d = i + offset - j satisfies d >= 0 (causal), d <= left and
  // -d <= right (window); offset: the keys before the query block (the past, or per sample
  // nonpad_kv_seqlen - S).
  if (causal || left >= 0 || right >= 0) {
    auto allowed = [&](int64_t d) {
      return (!causal || d >= 0) && (left < 0 || d <= left) && (right < 0 || -d <= right);
    };
    if (!nonpad) {
      ConstTensor c = make_const(to_elem_type(t), {S, T});
      for (int64_t i = 0; i < S; ++i) {
        bool any = false;
        for (int64_t j = 0; j < T; ++j) {
          bool a = allowed(i + P - j);
          c.f[i * T + j] = a ? 0.0 : kNegInf;
          any |= a;
        }
        may_mask_row |= !any;
      }
      add_bias(constant(c, "causal"));
    } else {
      ConstTensor c = make_const(pb::TensorProto::INT64, {1, 1, S, T});
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < T; ++j) c.i[i * T + j] = i - S - j;
      ValueId d = ew(Mode::ADD, {constant(c, "i_minus_j"), *lens});
      std::optional<ValueId> ok;
      auto also = [&](ValueId w) { ok = ok ? ew(Mode::AND, {*ok, w}) : w; };
      if (causal) also(ew(Mode::LEQ, {scalar(DType::I64, 0), d}));
      if (left >= 0) also(ew(Mode::LEQ, {d, scalar(DType::I64, left)}));
      if (right >= 0) also(ew(Mode::LEQ, {scalar(DType::I64, -right), d}));
      add_bias(where(*ok, scalar(t, 0), scalar(t, kNegInf)));
      may_mask_row = true;
    }
  }
  if (nonpad) {
    ValueId valid = ew(Mode::LT, {iota(T, 3, 4, pb::TensorProto::INT64), *lens});
    add_bias(where(valid, scalar(t, 0), scalar(t, kNegInf)));
    may_mask_row = true;
  }
  ValueId logits = bias ? ew(Mode::ADD, {qk, *bias}, "masked") : qk;

  // The softmax in softmax_precision (hotfuse has no DOUBLE: f32, the widest it computes in).
  DType sp = t;
  if (n.has_attr("softmax_precision")) {
    int64_t p = n.attr_int("softmax_precision");
    if (p == pb::TensorProto::DOUBLE)
      sp = DType::F32;
    else if (auto d = to_dtype(static_cast<int32_t>(p)); d && is_float(*d))
      sp = *d;
    else
      throw Error("softmax_precision " + str(p) + " is not a float type");
  }
  ValueId probs = softmax(cvt(logits, sp), {3}, false);
  if (may_mask_row) {
    // A row whose bias is -inf everywhere attends nothing: zeros, not the softmax's NaN.
    const Shape bs = shape_of(*bias);
    ValueId bmax = reduce(*bias, "MAX", {static_cast<int64_t>(bs.size()) - 1}, true);
    ValueId none = ew(Mode::AND, {ew(Mode::ISINF, {bmax}), ew(Mode::LT, {bmax, scalar(t, 0)})});
    probs = where(none, scalar(sp, 0), probs);
  }
  probs = cvt(probs, t);
  ValueId y = per_head(matmul(grouped(probs), v, "pv"));
  if (rank == 3) y = reshape(op1(OpType::Dimshuffle, to_heads, y, "Y_heads"), {B, S, Hq * Dv});

  set_rt(0, y);
  set_rt(1, k);
  set_rt(2, v);
  set_rt(3, mode == 3 ? probs : mode == 2 ? logits : qk);
}

// RoPE: the rotated part of each head (the first rotary_embedding_dim values), split into
// halves or even/odd pairs (x1, x2), becomes (cos x1 - sin x2, sin x1 + cos x2); cos and sin
// are rows of the caches picked by position_ids (or given per token).
void Importer::lower_rotary_embedding() {
  const OnnxNode& n = *cur_;
  ValueId x = rt(0);
  const DType t = dtype_of(x);
  if (!is_float(t)) throw Error("needs a float input");
  const Shape xs = shape_of(x);
  int64_t B, S, D;
  Shape cs;              // where cos and sin (B, S, half) go to broadcast over the heads
  if (xs.size() == 4) {  // (batch, heads, seq, size): worked on as is
    B = xs[0], S = xs[2], D = xs[3];
    cs = {B, 1, S};
  } else if (xs.size() == 3) {  // (batch, seq, heads * size) as (batch, seq, heads, size)
    int64_t heads = n.attr_int("num_heads", 0);
    if (heads < 1 || xs[2] % heads != 0)
      throw Error("a 3-D input needs num_heads (>= 1) dividing its hidden size " + str(xs[2]));
    B = xs[0], S = xs[1], D = xs[2] / heads;
    x = reshape(x, {B, S, heads, D});
    cs = {B, S, 1};
  } else {
    throw Error("the input must be 3-D or 4-D, not " + to_string(xs));
  }
  int64_t rd = n.attr_int("rotary_embedding_dim", 0);
  if (rd == 0) rd = D;
  if (rd < 0 || rd > D || rd % 2 != 0)
    throw Error("rotary_embedding_dim " + str(rd) + " must be even and at most the head size " +
                str(D));
  const int64_t half = rd / 2;
  cs.push_back(half);
  auto table = [&](int k, const char* what) {
    ValueId c = rt(k);
    if (n.has_input(3)) {  // rows of (max_position + 1, half) picked per token
      if (shape(3) != Shape{B, S})
        throw Error("position_ids has shape " + to_string(shape(3)) + ", expected [" + str(B) +
                    "," + str(S) + "]");
      if (shape_of(c).size() != 2)
        throw Error(std::string(what) + " must be 2-D with position_ids, not " +
                    to_string(shape_of(c)));
      Node g;
      g.op = OpType::Gather;
      g.inputs = {c, rt(3)};
      g.attrs["axis"] = int64_t(0);
      c = emit(std::move(g), std::string(what) + "_rows");
    }
    if (shape_of(c) != Shape{B, S, half})
      throw Error(std::string(what) + " gives " + to_string(shape_of(c)) +
                  " per token, expected [" + str(B) + "," + str(S) + "," + str(half) +
                  "] (rotary_embedding_dim / 2 = " + str(half) + ")");
    return reshape(cvt(c, t), cs);
  };
  ValueId cos = table(1, "cos_cache"), sin = table(2, "sin_cache");
  ValueId rot = rd < D ? slice_axis(x, 3, 0, rd) : x;
  const bool interleaved = n.attr_int("interleaved", 0) != 0;
  ValueId x1 = interleaved ? slice_axis(rot, 3, 0, rd, 2) : slice_axis(rot, 3, 0, half);
  ValueId x2 = interleaved ? slice_axis(rot, 3, 1, rd, 2) : slice_axis(rot, 3, half, rd);
  ValueId re = ew(Mode::SUB, {ew(Mode::MUL, {cos, x1}), ew(Mode::MUL, {sin, x2})}, "real");
  ValueId im = ew(Mode::ADD, {ew(Mode::MUL, {sin, x1}), ew(Mode::MUL, {cos, x2})}, "imag");
  const Shape hs = shape_of(re);
  if (interleaved) {  // pairs (re, im) side by side again
    Shape pair = hs;
    pair.push_back(1);
    Shape whole = hs;
    whole[3] = rd;
    rot = reshape(concat_axis({reshape(re, pair), reshape(im, pair)}, 4), whole);
  } else {
    rot = concat_axis({re, im}, 3);
  }
  ValueId y = rd < D ? concat_axis({rot, slice_axis(x, 3, rd, D)}, 3) : rot;
  set_rt(0, reshape(y, xs));
}

}  // namespace hf::onnx_detail
