// Importing and running small ONNX models built with onnx_builder.h: the graph, the
// importer's error, and the outputs of an unfused CPU run as doubles. Header-only, like
// onnx_builder.h (tests that include it link onnx_proto).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/onnx_import.h"
#include "runtime/ir/error.h"
#include "tests/support/onnx_builder.h"

namespace hf::test::onnx {

inline Graph import(const Model& m, const OnnxImportOptions& options = {}) {
  return parse_graph_onnx(m.bytes(), "m.onnx", {}, options);
}

inline std::string import_error(const Model& m, const OnnxImportOptions& options = {}) {
  try {
    import(m, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

inline HostTensor tensor(DType t, const Shape& s, const std::vector<double>& v) {
  HostTensor h(t, s);
  EXPECT_EQ(h.numel(), static_cast<int64_t>(v.size()));
  for (size_t k = 0; k < v.size(); ++k) store_double(h.view(), static_cast<int64_t>(k), v[k]);
  return h;
}

// Runs the imported graph unfused on the CPU; every output's elements as doubles.
inline std::vector<std::vector<double>> run(const Model& m, const std::vector<HostTensor>& in,
                                            const OnnxImportOptions& options = {}) {
  Graph g = import(m, options);
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  std::vector<TensorView> views;
  for (const HostTensor& t : in) views.push_back(t.view());
  std::vector<std::vector<double>> res;
  for (const TensorView& t : exec.run(views)) {
    res.emplace_back();
    for (int64_t k = 0; k < t.numel(); ++k) res.back().push_back(load_double(t, k));
  }
  return res;
}

// Every element of `got` within rel * (1 + |want|) of `want`.
inline void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                            double rel = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], rel * (1 + std::abs(want[k]))) << "element " << k;
}

}  // namespace hf::test::onnx
