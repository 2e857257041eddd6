#include "tools/check_mode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "profiler/table_text.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/device_inputs.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"
#include "session/run_target.h"
#include "session/shape_sessions.h"

namespace hf {

namespace fs = std::filesystem;

namespace {

// The session options a check runs with: the --fusion mode's, where only adaptive's choice
// depends on timings (the others need no warm-up or profile worth the wait).
SessionOptions check_session_options(const CheckOptions& o) {
  SessionOptions so = o.session;
  if (so.policy != FusionPolicy::Adaptive) {
    so.warmup_iters = 0;
    so.warmup_min_s = 0;
    so.profile_iters = so.reprofile_iters = 1;
  }
  return so;
}

// "all, settled after 9 iterations: 1 region swapped in, kernels 6 -> 1, on cpu, 2 threads"
// and, for adaptive, one line per region the session considered.
std::string describe_plan(const Session& s, const std::string& where) {
  int swapped = 0;
  for (const RegionRecord& rr : s.regions()) swapped += rr.state == RegionState::Swapped;
  std::string plan = std::string(policy_name(s.options().policy)) + ", settled after " +
                     std::to_string(s.iterations().size()) + " iterations: ";
  if (s.static_rewrites() > 0)
    plan += count_of(s.static_rewrites(), "static rewrite");
  else
    plan += count_of(swapped, "region") + " swapped in";
  plan += ", kernels " + std::to_string(s.kernels_before()) + " -> " +
          std::to_string(s.kernels_now()) + ", on " + where + "\n";
  if (s.options().policy == FusionPolicy::Adaptive)
    for (const RegionRecord& rr : s.regions())
      plan += "  region " + std::to_string(rr.id) + " [" +
              std::string(region_state_name(rr.state)) + "] " + rr.reason + "\n";
  return plan;
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
  // 9 digits tell f32 values apart; f64 and 64-bit integers need 17.
  const int digits = dtype_size(expected.dtype()) == 8 ? 17 : 9;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "output '%s': %lld of %lld elements beyond tolerance; worst element %lld at %s: "
                "expected %.*g, actual %.*g, error %.3g (allowed %.3g)",
                name.c_str(), static_cast<long long>(m.count),
                static_cast<long long>(expected.numel()), static_cast<long long>(m.index),
                coords(m.index, expected.shape()).c_str(), digits, m.expected, digits, m.actual,
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

namespace {

// The data sets of one input shape signature, imported for it and read before anything runs.
struct Planned {
  OnnxImportOptions options;
  Graph g;
  std::vector<fs::path> sets;
  std::vector<std::vector<HostTensor>> inputs, expected;
};

}  // namespace

int run_check(const CheckOptions& o) {
  const fs::path model = o.dir / "model.onnx";
  std::error_code ec;
  if (!fs::is_regular_file(model, ec)) throw Error(model.string() + ": no such file");
  std::vector<fs::path> sets = test_data_sets(o.dir);
  // hotfuse plans static shapes: the data sets are grouped by the input shapes (and the
  // values given as inputs that the import needs as constants: a Reshape's shape, Resize's
  // scales, ...) they give, and the model is imported, planned and fused once per group.
  // The kernel cache is the process's, so a group whose regions only differ in sizes from
  // an earlier one's compiles nothing.
  std::vector<Planned> plans;
  for (DataSetGroup& group : group_data_sets(sets)) {
    auto same = [&](const Planned& p) {
      return same_import(p.options, group.options, p.g.specialised_inputs);
    };
    auto it = std::find_if(plans.begin(), plans.end(), same);
    if (it == plans.end()) {
      Graph g = read_graph_onnx(model, group.options);
      it = plans.insert(plans.end(), Planned{std::move(group.options), std::move(g), {}, {}, {}});
    }
    Planned& p = *it;
    // Every file is read, and must fit the model, before anything runs.
    for (const fs::path& set : group.sets) {
      p.sets.push_back(set);
      p.inputs.push_back(read_graph_inputs(p.g, set));
      p.expected.push_back(read_expected_outputs(p.g, set));
    }
  }

  // One ShapeSessions over the groups: a group's session takes over what the earlier
  // groups' sessions decided, and its graph is the one imported for it above.
  std::unique_ptr<RunTarget> target =
      make_run_target(o.cuda, o.threads, o.session.policy != FusionPolicy::Off);
  auto graph_for = [&](const std::vector<Shape>& shapes, const SmallInputs& small) {
    for (const Planned& p : plans) {
      const Graph& g = p.g;
      bool same = takes_shapes(g, shapes);
      for (size_t k = 0; same && k < shapes.size(); ++k) {
        const std::string& name = g.value(g.inputs()[k]).name;
        if (std::count(g.specialised_inputs.begin(), g.specialised_inputs.end(), name))
          same = small[k] && same_value(*small[k], p.options.input_values.at(name));
      }
      if (same) return g;
    }
    throw Error("--check: no model import fits the inputs given");  // cannot happen: see above
  };
  const size_t capacity = 1;  // each group runs once, in turn
  ShapeSessions sessions(graph_for, target->session_target(), target->machine(),
                         check_session_options(o), capacity);
  int passed = 0;
  for (size_t k = 0; k < plans.size(); ++k) {
    const Planned& p = plans[k];
    const Graph& g = p.g;
    // Inputs go up and outputs come down through the backend (memcpy on the CPU), so the
    // comparison sees host memory on either backend.
    DeviceInputs in(target->backend(), p.inputs.front());
    Session& session = sessions.session_for(in.views);
    settle(session, in.views, o.settle, "checking as it is");
    for (const RegionRecord& rr : session.regions())
      if (rr.state == RegionState::Failed)
        std::fprintf(stderr, "hotfuse-run: %s\n", printable(rr.reason).c_str());
    if (k == 0)
      std::printf(
          "check %s: %s; atol %g, rtol %g%s; %s", o.dir.string().c_str(),
          count_of(static_cast<int>(sets.size()), "data set").c_str(), o.atol, o.rtol,
          o.tolerance_note.c_str(),
          plans.size() > 1 ? (std::to_string(plans.size()) + " input shapes\n").c_str() : "");
    if (plans.size() > 1) {
      const ShapeRecord& r = sessions.shape_now();
      std::printf("input shapes %d of %zu (%s): kernels compiled %d, from the cache %d; ",
                  static_cast<int>(k + 1), plans.size(), r.signature.c_str(), r.compiled,
                  r.from_cache);
    }
    std::printf("--fusion %s", describe_plan(session, target->where()).c_str());
    for (size_t s = 0; s < p.sets.size(); ++s) {
      in.upload(p.inputs[s]);
      std::vector<HostTensor> out = download(target->backend(), session.run(in.views));
      std::vector<std::string> problems;
      double worst = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        std::string pr =
            check_output(g.value(g.outputs()[i]).name, p.expected[s][i], out[i].view(), o, worst);
        if (!pr.empty()) problems.push_back(pr);
      }
      const std::string set = p.sets[s].filename().string();
      if (problems.empty()) {
        ++passed;
        std::printf("%s: PASS (%zu output%s; worst element within %.3g of its tolerance)\n",
                    set.c_str(), out.size(), out.size() == 1 ? "" : "s", worst);
      } else {
        for (const std::string& pr : problems)
          std::printf("%s: FAIL: %s\n", set.c_str(), printable(pr).c_str());
      }
    }
  }
  std::printf("%d of %zu data sets passed\n", passed, sets.size());
  return passed == static_cast<int>(sets.size()) ? 0 : 1;
}

}  // namespace hf
