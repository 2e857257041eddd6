#include "runtime/ir/conv_post_ops.h"

#include <algorithm>

namespace hf {

namespace {

// One value per output channel, broadcast over everything else.
bool per_channel(const Shape& s, const Shape& out, bool nhwc) {
  const size_t rank = out.size();
  if (s.size() > rank) return false;
  const size_t axis = nhwc ? rank - 1 : 1;
  for (size_t d = 0; d < rank; ++d) {
    const size_t from_end = rank - 1 - d;
    const int64_t dim = from_end < s.size() ? s[s.size() - 1 - from_end] : 1;
    if (dim != (d == axis ? out[d] : 1)) return false;
  }
  return true;
}

}  // namespace

bool leads_with_residual(const std::vector<ConvPostOp>& post) {
  if (post.empty() || post[0].kind != ConvPostOp::Add || post[0].operand < 0 || post[0].per_channel)
    return false;
  return std::none_of(post.begin() + 1, post.end(),
                      [&](const ConvPostOp& p) { return p.operand == post[0].operand; });
}

std::optional<ConvEpilogue> conv_epilogue(const HeavyEpilogue& e, const std::vector<Shape>& inputs,
                                          const Shape& out, bool nhwc) {
  ConvEpilogue c;
  for (size_t k = 0; k < e.steps.size(); ++k) {
    const EpilogueStep& st = e.steps[k];
    if (st.op != OpType::Elemwise) return std::nullopt;
    // The previous result, read exactly once; nothing else from the chain.
    int acc = -1;
    for (size_t j = 0; j < st.args.size(); ++j) {
      const EpilogueArg& a = st.args[j];
      const bool prev = k == 0 ? a.kind == EpilogueArg::Heavy
                               : a.kind == EpilogueArg::Step && a.index == static_cast<int>(k) - 1;
      if (prev) {
        if (acc >= 0) return std::nullopt;
        acc = static_cast<int>(j);
      } else if (a.kind == EpilogueArg::Heavy || a.kind == EpilogueArg::Step) {
        return std::nullopt;
      }
    }
    if (acc < 0) return std::nullopt;
    ConvPostOp p;
    switch (st.mode) {
      case Mode::RELU:
        p.kind = ConvPostOp::Relu;
        c.post.push_back(p);
        continue;
      case Mode::CLIP:
        if (acc != 0 || st.args[1].kind != EpilogueArg::Literal ||
            st.args[2].kind != EpilogueArg::Literal || !(st.args[1].literal <= st.args[2].literal))
          return std::nullopt;
        p.kind = ConvPostOp::Clip;
        p.lo = st.args[1].literal;
        p.hi = st.args[2].literal;
        c.post.push_back(p);
        continue;
      case Mode::ADD:
        p.kind = ConvPostOp::Add;
        break;
      case Mode::MUL:
        p.kind = ConvPostOp::Mul;
        break;
      case Mode::SUB:
        p.kind = ConvPostOp::Sub;
        break;
      case Mode::MAX:
        p.kind = ConvPostOp::Max;
        break;
      case Mode::MIN:
        p.kind = ConvPostOp::Min;
        break;
      default:
        return std::nullopt;
    }
    if (st.args.size() != 2 || (p.kind == ConvPostOp::Sub && acc != 0)) return std::nullopt;
    const EpilogueArg& other = st.args[1 - acc];
    if (other.kind == EpilogueArg::Literal) {
      if (p.kind == ConvPostOp::Max || p.kind == ConvPostOp::Min) return std::nullopt;
      p.literal = other.literal;
    } else {
      const Shape& s = inputs.at(other.index);
      if (s == out) {
        p.per_channel = false;
      } else if (per_channel(s, out, nhwc)) {
        p.per_channel = true;
      } else {
        return std::nullopt;
      }
      auto it = std::find(c.operands.begin(), c.operands.end(), other.index);
      p.operand = static_cast<int>(it - c.operands.begin());
      if (it == c.operands.end()) c.operands.push_back(other.index);
    }
    c.post.push_back(p);
  }
  return c;
}

}  // namespace hf
