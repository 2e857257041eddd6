#include "tests/support/reference_nn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include "runtime/ops/half.h"
#include "tests/support/reference.h"

namespace hf::test {

namespace {

void store(const TensorView& t, int64_t i, double v) {
  if (!is_float(t.dtype) && t.dtype != DType::U8)
    throw std::logic_error("reference_nn: float or u8 outputs only");
  store_double(t, i, v);
}

std::vector<int64_t> ints(const Node& n, const char* key, std::vector<int64_t> fallback) {
  return n.attr_ints(key, fallback);
}

// Conv and the pools: out[n][c][oh][ow] over the window taps (i, j) at input position
// (oh * sh - pt + i * dh, ow * sw - pl + j * dw).
void windowed(const Node& n, const std::vector<TensorView>& in, const TensorView& out) {
  const Shape& x = in[0].shape;
  const int64_t C = x[1], H = x[2], W = x[3];
  const int64_t M = out.shape[1], OH = out.shape[2], OW = out.shape[3];
  std::vector<int64_t> s = ints(n, "strides", {1, 1}), d = ints(n, "dilations", {1, 1}),
                       p = ints(n, "pads", {0, 0, 0, 0});
  const bool conv = n.op == OpType::Conv;
  int64_t kh, kw, group = 1;
  if (conv) {
    kh = in[1].shape[2];
    kw = in[1].shape[3];
    group = n.attr_int("group", 1);
  } else {
    std::vector<int64_t> k = n.attr_ints("kernel_shape");
    kh = k[0];
    kw = k[1];
  }
  const bool include_pad = n.attr_int("count_include_pad", 0) != 0;
  const int64_t cg = C / group, mg = M / group;
  int64_t o = 0;
  for (int64_t b = 0; b < out.shape[0]; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow, ++o) {
          long double acc = 0;
          double mx = -std::numeric_limits<double>::infinity();
          int64_t inside = 0, padded = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t ih = oh * s[0] - p[0] + i * d[0], iw = ow * s[1] - p[1] + j * d[1];
              if (ih < H + p[2] && iw < W + p[3]) ++padded;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              ++inside;
              if (conv) {
                for (int64_t c = 0; c < cg; ++c) {
                  int64_t xc = (m / mg) * cg + c;
                  acc +=
                      static_cast<long double>(element(in[0], ((b * C + xc) * H + ih) * W + iw)) *
                      element(in[1], ((m * cg + c) * kh + i) * kw + j);
                }
              } else {
                double v = element(in[0], ((b * C + m) * H + ih) * W + iw);
                if (std::isnan(v) || v > mx) mx = std::isnan(mx) ? mx : v;
                acc += v;
              }
            }
          double r;
          if (conv)
            r = static_cast<double>(acc) + (in.size() > 2 ? element(in[2], m) : 0.0);
          else if (n.op == OpType::MaxPool)
            r = mx;
          else
            r = static_cast<double>(acc) / static_cast<double>(include_pad ? padded : inside);
          store(out, o, r);
        }
}

// Copies element `from` of `src` to element `to` of `dst` (same dtype), bit for bit.
void copy_element(const TensorView& src, int64_t from, const TensorView& dst, int64_t to) {
  size_t size = dtype_size(src.dtype);
  std::memcpy(static_cast<char*>(dst.data) + to * size,
              static_cast<const char*>(src.data) + from * size, size);
}

std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t flat(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
  return f;
}

}  // namespace

void reference_nn(const Node& n, const std::vector<TensorView>& in, const TensorView& out) {
  const int64_t count = out.numel();
  switch (n.op) {
    case OpType::Conv:
    case OpType::MaxPool:
    case OpType::AveragePool:
      return windowed(n, in, out);
    case OpType::Concat: {
      int64_t axis = n.attr_int("axis");
      if (axis < 0) axis += out.rank();
      for (int64_t i = 0; i < count; ++i) {
        std::vector<int64_t> idx = unravel(i, out.shape);
        size_t k = 0;
        while (idx[axis] >= in[k].shape[axis]) idx[axis] -= in[k++].shape[axis];
        copy_element(in[k], flat(idx, in[k].shape), out, i);
      }
      return;
    }
    case OpType::Slice: {
      // Position along each axis: start + k * step, with start as ONNX resolves it.
      const int rank = in[0].rank();
      std::vector<int64_t> start(rank, 0), step(rank, 1);
      std::vector<int64_t> starts = n.attr_ints("starts"),
                           axes = n.attr_ints("axes", std::vector<int64_t>{});
      std::vector<int64_t> steps = n.attr_ints("steps", std::vector<int64_t>{});
      for (size_t k = 0; k < starts.size(); ++k) {
        int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
        if (a < 0) a += rank;
        int64_t dim = in[0].shape[a], st = steps.empty() ? 1 : steps[k], s = starts[k];
        if (s < 0) s += dim;
        s = st > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, -1, dim - 1);
        start[a] = s;
        step[a] = st;
      }
      for (int64_t i = 0; i < count; ++i) {
        std::vector<int64_t> idx = unravel(i, out.shape);
        for (int d = 0; d < rank; ++d) idx[d] = start[d] + idx[d] * step[d];
        copy_element(in[0], flat(idx, in[0].shape), out, i);
      }
      return;
    }
    case OpType::Gather: {
      int64_t axis = n.attr_int("axis", 0);
      const int rank = in[0].rank();
      if (axis < 0) axis += rank;
      const int ir = in[1].rank();
      for (int64_t i = 0; i < count; ++i) {
        std::vector<int64_t> idx = unravel(i, out.shape);
        std::vector<int64_t> iidx(idx.begin() + axis, idx.begin() + axis + ir);
        int64_t pick = static_cast<int64_t>(element(in[1], flat(iidx, in[1].shape)));
        if (pick < 0) pick += in[0].shape[axis];
        std::vector<int64_t> src(idx.begin(), idx.begin() + axis);
        src.push_back(pick);
        src.insert(src.end(), idx.begin() + axis + ir, idx.end());
        copy_element(in[0], flat(src, in[0].shape), out, i);
      }
      return;
    }
    case OpType::Det: {
      // Laplace expansion along the first row, in long double: independent of the kernel's
      // LU (and exponential, so only for the small matrices tests use).
      const int64_t n = in[0].shape[in[0].rank() - 1];
      std::function<long double(const std::vector<long double>&, int64_t)> det =
          [&](const std::vector<long double>& m, int64_t k) -> long double {
        if (k == 0) return 1;
        long double s = 0;
        for (int64_t c = 0; c < k; ++c) {
          std::vector<long double> minor;
          for (int64_t r = 1; r < k; ++r)
            for (int64_t j = 0; j < k; ++j)
              if (j != c) minor.push_back(m[r * k + j]);
          s += (c % 2 ? -1 : 1) * m[c] * det(minor, k - 1);
        }
        return s;
      };
      for (int64_t b = 0; b < count; ++b) {
        std::vector<long double> m;
        for (int64_t e = 0; e < n * n; ++e) m.push_back(element(in[0], b * n * n + e));
        store_double(out, b, static_cast<double>(det(m, n)));
      }
      return;
    }
    case OpType::ScatterRows: {
      // Element by element in double: out = data, then each update in index order.
      for (int64_t i = 0; i < count; ++i) store_double(out, i, element(in[0], i));
      const int64_t dim = in[0].shape[0], inner = dim ? in[0].numel() / dim : 0;
      const std::string& r = n.attr_str("reduction");
      for (int64_t k = 0; k < in[1].numel(); ++k) {
        int64_t row = static_cast<int64_t>(element(in[1], k));
        if (row < 0) row += dim;
        if (row < 0 || row >= dim) throw std::out_of_range("reference_nn: scatter index");
        for (int64_t c = 0; c < inner; ++c) {
          double a = element(out, row * inner + c), b = element(in[2], k * inner + c);
          double v = r == "add"   ? a + b
                     : r == "mul" ? a * b
                     : r == "max" ? std::max(a, b)
                     : r == "min" ? std::min(a, b)
                                  : b;
          store_double(out, row * inner + c, v);
        }
      }
      return;
    }
    default:
      throw std::logic_error("reference_nn: not a convolution, pooling or data-movement op");
  }
}

}  // namespace hf::test
