// ONNX ScatterElements (and opset 9's Scatter), ScatterND and GatherND
// (runtime/io/onnx_lower_scatter.cpp, the ScatterRows kernel in runtime/cpu/scatter.cpp):
// every reduction, negative indices, duplicate indices, batch_dims, odd sizes, several
// element types, against the ONNX reference loops written out here; and the errors (a
// constant index out of range at import, a run-time one as an hf::Error of the run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> iota_values(int64_t n, double scale, double offset) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(offset + scale * static_cast<double>((k * 7) % 11));
  return v;
}

double combine(const std::string& r, double a, double b) {
  if (r == "add") return a + b;
  if (r == "mul") return a * b;
  if (r == "max") return std::max(a, b);
  if (r == "min") return std::min(a, b);
  return b;
}

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> unravel(int64_t f, const std::vector<int64_t>& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[d] = f % s[d];
    f /= s[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& s) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
  return f;
}

// ONNX's ScatterElements reference, element by element in index order.
std::vector<double> scatter_elements_ref(std::vector<double> data, const std::vector<int64_t>& ds,
                                         const std::vector<double>& idx,
                                         const std::vector<int64_t>& is,
                                         const std::vector<double>& upd, int axis,
                                         const std::string& r) {
  for (int64_t k = 0; k < numel_of(is); ++k) {
    std::vector<int64_t> p = unravel(k, is);
    int64_t i = static_cast<int64_t>(idx[k]);
    p[axis] = i < 0 ? i + ds[axis] : i;
    double& d = data[ravel(p, ds)];
    d = combine(r, d, upd[k]);
  }
  return data;
}

TEST(OnnxScatterOps, ScatterElementsEveryReductionAndAxis) {
  const std::vector<int64_t> ds = {3, 5}, is = {2, 4};
  const std::vector<double> data = iota_values(15, 1.5, -4);
  const std::vector<double> upd = iota_values(8, -0.5, 2);
  struct Case {
    int opset, axis;
    std::string reduction;
  } cases[] = {{11, 0, "none"}, {13, 1, "none"}, {13, -1, "none"}, {16, 0, "add"},
               {16, 1, "mul"},  {18, 1, "max"},  {18, 0, "min"},   {18, -2, "add"}};
  for (const Case& c : cases) {
    const int axis = c.axis < 0 ? c.axis + 2 : c.axis;
    // Negative indices, and (except for "none", whose order ONNX leaves open) duplicates.
    std::vector<double> idx;
    for (int k = 0; k < 8; ++k) {
      int64_t dim = ds[axis];
      int64_t v = c.reduction == "none" ? (k % 4) % dim : (k * 3) % dim;
      idx.push_back(k % 3 == 1 ? double(v - dim) : double(v));
    }
    if (c.reduction == "none") {  // distinct positions per row/column along the axis
      if (axis == 1)
        idx = {0, -4, 2, 3, 4, 0, -2, 1};
      else
        idx = {0, 2, 1, -1, 1, 0, -3, 0};
    }
    Model m(c.opset);
    m.input("d", TP::FLOAT, ds);
    m.input("i", TP::INT64, is);
    m.input("u", TP::FLOAT, is);
    auto& n = m.node("ScatterElements", {"d", "i", "u"}, {"y"});
    set_i(n, "axis", c.axis);
    if (c.opset >= 16) set_s(n, "reduction", c.reduction);
    m.output("y");
    std::vector<double> want = scatter_elements_ref(data, ds, idx, is, upd, axis, c.reduction);
    auto got = run(m, {tensor(DType::F32, {3, 5}, data), tensor(DType::I64, {2, 4}, idx),
                       tensor(DType::F32, {2, 4}, upd)})[0];
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_FLOAT_EQ(got[k], want[k])
          << "opset " << c.opset << " axis " << c.axis << " " << c.reduction << " element " << k;
  }
}

TEST(OnnxScatterOps, ScatterOpset9AndIntegerTypes) {
  // Opset 9's Scatter is ScatterElements without reduction; INT32 data and indices.
  const std::vector<double> data = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Model m(9);
  m.input("d", TP::INT32, {3, 3});
  m.input("i", TP::INT32, {1, 3});
  m.input("u", TP::INT32, {1, 3});
  set_i(m.node("Scatter", {"d", "i", "u"}, {"y"}), "axis", 0);
  m.output("y");
  auto got = run(m, {tensor(DType::I32, {3, 3}, data), tensor(DType::I32, {1, 3}, {2, -3, 1}),
                     tensor(DType::I32, {1, 3}, {-1, -2, -3})})[0];
  EXPECT_EQ(got, (std::vector<double>{1, -2, 3, 4, 5, -3, -1, 8, 9}));
  // INT64 data, mul with a duplicate index: both updates apply.
  Model mi(16);
  mi.input("d", TP::INT64, {5});
  mi.input("i", TP::INT64, {3});
  mi.input("u", TP::INT64, {3});
  set_s(mi.node("ScatterElements", {"d", "i", "u"}, {"y"}), "reduction", "mul");
  mi.output("y");
  auto gi = run(mi, {tensor(DType::I64, {5}, {1, 2, 3, 4, 5}), tensor(DType::I64, {3}, {4, -1, 0}),
                     tensor(DType::I64, {3}, {3, 7, -2})})[0];
  EXPECT_EQ(gi, (std::vector<double>{-2, 2, 3, 4, 105}));
}

TEST(OnnxScatterOps, ScatterElementsErrors) {
  auto model = [](int64_t bad_index) {
    Model m(13);
    m.input("d", TP::FLOAT, {3, 4});
    m.init_int64s("i", {1, 1}, {bad_index});
    m.input("u", TP::FLOAT, {1, 1});
    m.node("ScatterElements", {"d", "i", "u"}, {"y"});
    m.output("y");
    return m;
  };
  EXPECT_EQ(import_error(model(3)),
            "m.onnx: node 0 (ScatterElements): index 3 is out of range for axis 0 of size 3");
  EXPECT_EQ(import_error(model(-4)),
            "m.onnx: node 0 (ScatterElements): index -4 is out of range for axis 0 of size 3");
  // Run-time indices out of range fail the run with an hf::Error, never a write elsewhere.
  Model m(13);
  m.input("d", TP::FLOAT, {3, 4});
  m.input("i", TP::INT64, {1, 2});
  m.input("u", TP::FLOAT, {1, 2});
  set_i(m.node("ScatterElements", {"d", "i", "u"}, {"y"}, "sc"), "axis", 1);
  m.output("y");
  for (double bad : {4.0, -5.0})
    EXPECT_THROW(run(m, {tensor(DType::F32, {3, 4}, iota_values(12, 1, 0)),
                         tensor(DType::I64, {1, 2}, {0, bad}), tensor(DType::F32, {1, 2}, {1, 2})}),
                 Error);
  // max/min are opset 18's; updates must match the indices.
  Model r(16);
  r.input("d", TP::FLOAT, {3});
  r.input("i", TP::INT64, {2});
  r.input("u", TP::FLOAT, {2});
  set_s(r.node("ScatterElements", {"d", "i", "u"}, {"y"}), "reduction", "max");
  r.output("y");
  EXPECT_EQ(import_error(r),
            "m.onnx: node 0 (ScatterElements): reduction 'max' is not one of opset 16's (none, "
            "add, mul)");
  Model u(13);
  u.input("d", TP::FLOAT, {3});
  u.input("i", TP::INT64, {2});
  u.input("u", TP::FLOAT, {3});
  u.node("ScatterElements", {"d", "i", "u"}, {"y"});
  u.output("y");
  EXPECT_EQ(import_error(u),
            "m.onnx: node 0 (ScatterElements): updates have shape [3], the indices [2]");
}

// ONNX's ScatterND reference: updates[q...] into data[indices[q..., :], ...].
std::vector<double> scatter_nd_ref(std::vector<double> data, const std::vector<int64_t>& ds,
                                   const std::vector<double>& idx, const std::vector<int64_t>& is,
                                   const std::vector<double>& upd, const std::string& r) {
  const int64_t k = is.back(), count = numel_of(is) / k;
  int64_t inner = 1;
  for (size_t d = k; d < ds.size(); ++d) inner *= ds[d];
  for (int64_t q = 0; q < count; ++q) {
    std::vector<int64_t> p(ds.size(), 0);
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = static_cast<int64_t>(idx[q * k + j]);
      p[j] = i < 0 ? i + ds[j] : i;
    }
    int64_t base = ravel(p, ds);
    for (int64_t c = 0; c < inner; ++c) {
      double& d = data[base + c];
      d = combine(r, d, upd[q * inner + c]);
    }
  }
  return data;
}

TEST(OnnxScatterOps, ScatterNDEveryReductionAndDepth) {
  const std::vector<int64_t> ds = {4, 3, 5};
  const std::vector<double> data = iota_values(60, 0.75, -3);
  struct Case {
    int opset;
    std::string reduction;
    std::vector<int64_t> is;
    std::vector<double> idx;
  } cases[] = {
      {11, "none", {2, 1}, {3, -4}},
      {13, "none", {3, 2}, {0, 2, -1, -3, 2, 1}},
      {16, "add", {2, 2, 3}, {0, 0, 4, 3, 2, -1, 0, 0, 4, -4, -3, 0}},
      {16, "mul", {3, 1}, {1, -3, 2}},
      {18, "max", {2, 2}, {1, 1, 1, -2}},
      {18, "min", {2, 3}, {2, 2, 2, -2, -1, -3}},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> us(c.is.begin(), c.is.end() - 1);
    us.insert(us.end(), ds.begin() + c.is.back(), ds.end());
    const std::vector<double> upd = iota_values(numel_of(us), -1.25, 5);
    Model m(c.opset);
    m.input("d", TP::FLOAT, ds);
    m.input("i", TP::INT64, c.is);
    m.input("u", TP::FLOAT, us);
    auto& n = m.node("ScatterND", {"d", "i", "u"}, {"y"});
    if (c.opset >= 16) set_s(n, "reduction", c.reduction);
    m.output("y");
    std::vector<double> want = scatter_nd_ref(data, ds, c.idx, c.is, upd, c.reduction);
    auto got = run(m, {tensor(DType::F32, ds, data), tensor(DType::I64, c.is, c.idx),
                       tensor(DType::F32, us, upd)})[0];
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_FLOAT_EQ(got[k], want[k])
          << c.reduction << " depth " << c.is.back() << " element " << k;
  }
  // An index out of range on any component fails the run (the second component here).
  Model m(13);
  m.input("d", TP::FLOAT, ds);
  m.input("i", TP::INT64, {1, 2});
  m.input("u", TP::FLOAT, {1, 5});
  m.node("ScatterND", {"d", "i", "u"}, {"y"});
  m.output("y");
  for (std::vector<double> bad : {std::vector<double>{0, 3}, {0, -4}, {4, 0}})
    EXPECT_THROW(run(m, {tensor(DType::F32, ds, data), tensor(DType::I64, {1, 2}, bad),
                         tensor(DType::F32, {1, 5}, iota_values(5, 1, 0))}),
                 Error);
  Model w(13);
  w.input("d", TP::FLOAT, ds);
  w.input("i", TP::INT64, {1, 2});
  w.input("u", TP::FLOAT, {1, 4});
  w.node("ScatterND", {"d", "i", "u"}, {"y"});
  w.output("y");
  EXPECT_EQ(import_error(w),
            "m.onnx: node 0 (ScatterND): updates have shape [1,4], expected [1,5]");
}

// ONNX's GatherND reference with batch_dims b.
std::vector<double> gather_nd_ref(const std::vector<double>& data, const std::vector<int64_t>& ds,
                                  const std::vector<double>& idx, const std::vector<int64_t>& is,
                                  int b) {
  const int64_t k = is.back(), count = numel_of(is) / k;
  int64_t inner = 1, batch_inner = 1;
  for (size_t d = b + k; d < ds.size(); ++d) inner *= ds[d];
  for (size_t d = b; d < ds.size(); ++d) batch_inner *= ds[d];
  int64_t per_batch = 1;  // index tuples per batch entry
  for (size_t d = b; d + 1 < is.size(); ++d) per_batch *= is[d];
  std::vector<int64_t> sub(ds.begin() + b, ds.end());
  std::vector<double> out;
  for (int64_t q = 0; q < count; ++q) {
    int64_t batch = q / per_batch;
    std::vector<int64_t> p(sub.size(), 0);
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = static_cast<int64_t>(idx[q * k + j]);
      p[j] = i < 0 ? i + sub[j] : i;
    }
    int64_t base = batch * batch_inner + ravel(p, sub);
    for (int64_t c = 0; c < inner; ++c) out.push_back(data[base + c]);
  }
  return out;
}

TEST(OnnxScatterOps, GatherNDWithBatchDims) {
  const std::vector<int64_t> ds = {2, 3, 5};
  const std::vector<double> data = iota_values(30, 1.0, 0.5);
  struct Case {
    int opset, b;
    std::vector<int64_t> is;
    std::vector<double> idx;
  } cases[] = {
      {11, 0, {2, 1}, {1, -2}},
      {11, 0, {3, 3}, {0, 2, 4, 1, -1, -5, 1, 0, 3}},
      {12, 0, {2, 2, 2}, {1, 2, 0, 0, -1, -3, 0, 1}},
      {12, 1, {2, 1}, {2, -3}},
      {13, 1, {2, 3, 2}, {0, 4, 2, -1, 1, 1, 2, 0, 0, 0, -3, 3}},
      {13, 2, {2, 3, 1}, {0, 4, -1, 2, 3, -5}},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> os(c.is.begin(), c.is.end() - 1);
    os.insert(os.end(), ds.begin() + c.b + c.is.back(), ds.end());
    Model m(c.opset);
    m.input("d", TP::FLOAT, ds);
    m.input("i", TP::INT64, c.is);
    auto& n = m.node("GatherND", {"d", "i"}, {"y"});
    if (c.opset >= 12) set_i(n, "batch_dims", c.b);
    m.output("y");
    Graph g = import(m);
    EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape(os.begin(), os.end()));
    auto got = run(m, {tensor(DType::F32, ds, data), tensor(DType::I64, c.is, c.idx)})[0];
    EXPECT_EQ(got, gather_nd_ref(data, ds, c.idx, c.is, c.b))
        << "batch_dims " << c.b << " depth " << c.is.back();
  }
  // Constant indices are checked at import, run-time ones when the node runs.
  Model k(13);
  k.input("d", TP::FLOAT, ds);
  k.init_int64s("i", {1, 2}, {1, 3});
  k.node("GatherND", {"d", "i"}, {"y"});
  k.output("y");
  EXPECT_EQ(import_error(k),
            "m.onnx: node 0 (GatherND): index 3 is out of range for axis 1 of size 3");
  Model m(13);
  m.input("d", TP::FLOAT, ds);
  m.input("i", TP::INT32, {2, 1});
  set_i(m.node("GatherND", {"d", "i"}, {"y"}), "batch_dims", 1);
  m.output("y");
  EXPECT_EQ(run(m, {tensor(DType::F32, ds, data), tensor(DType::I32, {2, 1}, {2, -1})})[0].size(),
            10u);
  EXPECT_THROW(run(m, {tensor(DType::F32, ds, data), tensor(DType::I32, {2, 1}, {0, 3})}), Error);
  Model bd(13);
  bd.input("d", TP::FLOAT, ds);
  bd.input("i", TP::INT64, {3, 1});
  set_i(bd.node("GatherND", {"d", "i"}, {"y"}), "batch_dims", 1);
  bd.output("y");
  EXPECT_EQ(import_error(bd),
            "m.onnx: node 0 (GatherND): indices [3,1] and data [2,3,5] differ on batch axis 0");
}

TEST(OnnxScatterOps, TensorScatterLinearAndCircular) {
  // cache [2, 3, 4, 5] (batch, heads, sequence, size), update [2, 3, 3, 5] along axis -2.
  const std::vector<int64_t> cs = {2, 3, 4, 5}, us = {2, 3, 3, 5};
  const std::vector<double> cache = iota_values(120, 1, 0), upd = iota_values(90, -1, 100);
  for (std::string mode : {"linear", "circular"})
    for (bool given : {true, false}) {
      const std::vector<double> wi =
          mode == "linear" ? std::vector<double>{1, 0} : std::vector<double>{3, 2};
      Model m(24);
      m.input("c", TP::FLOAT, cs);
      m.input("u", TP::FLOAT, us);
      std::vector<std::string> ins = {"c", "u"};
      if (given) {
        m.input("w", TP::INT64, {2});
        ins.push_back("w");
      }
      auto& n = m.node("TensorScatter", ins, {"y"});
      set_s(n, "mode", mode);
      m.output("y");
      std::vector<double> want = cache;
      for (int64_t k = 0; k < 90; ++k) {
        std::vector<int64_t> p = unravel(k, us);
        int64_t pos = (given ? static_cast<int64_t>(wi[p[0]]) : 0) + p[2];
        if (mode == "circular") pos %= 4;
        p[2] = pos;
        want[ravel(p, cs)] = upd[k];
      }
      std::vector<HostTensor> in = {tensor(DType::F32, cs, cache), tensor(DType::F32, us, upd)};
      if (given) in.push_back(tensor(DType::I64, {2}, wi));
      EXPECT_EQ(run(m, in)[0], want) << mode << (given ? " with" : " without") << " indices";
    }
  // Linear writes past the sequence fail the run.
  Model m(24);
  m.input("c", TP::FLOAT, cs);
  m.input("u", TP::FLOAT, us);
  m.input("w", TP::INT64, {2});
  m.node("TensorScatter", {"c", "u", "w"}, {"y"});
  m.output("y");
  EXPECT_THROW(run(m, {tensor(DType::F32, cs, cache), tensor(DType::F32, us, upd),
                       tensor(DType::I64, {2}, {0, 2})}),
               Error);
}

}  // namespace
}  // namespace hf
