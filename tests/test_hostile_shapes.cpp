// Shapes a hostile graph can make its ops infer (issue 23, items 1 and 2): every value the
// IR creates goes through one overflow-checked element count (kMaxElements, shape.h), and
// the window and slice arithmetic that computes those shapes cannot overflow on the way.
// Before, a Conv whose pads made 2^64 + 4 output elements got a 16-byte buffer and wrote
// past it (exit 139), and a Slice read 2^61 elements past a wrapped Broadcast.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/ir/error.h"
#include "runtime/ir/nn_geometry.h"

namespace hf {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `build` and returns the hf::Error's text ("" and a failure if nothing was thrown).
template <class F>
std::string error_of(F&& build) {
  try {
    build();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// The hand-made files in tests/data/hostile/ (also fuzz seeds, and run through
// hotfuse-run by tests/cli_errors.sh): each is one clear error naming its node.
TEST(HostileShapes, FilesAreErrorsNamingTheNode) {
  struct Case {
    const char* file;
    const char* names;
    const char* says;
  } cases[] = {
      {"conv-output-wraps.json", "node 'conv' (Conv)", "more than 2^40 elements"},
      {"conv-output-wraps.onnx", "'conv' (Conv)", "more than 2^40 elements"},
      {"pool-pads-2e62.json", "node 'pool' (MaxPool)", "pads entries must be >= 0 and <= 2^40"},
      {"broadcast-count-wraps.json", "node 'grow' (Broadcast)", "more than 2^40 elements"},
      {"reshape-zero-times-huge.json", "node 'flat' (Reshape)", "more than 2^40 elements"},
      {"constant-count-wraps.json", "node 'c' (Constant)", "more than 2^40 elements"},
      {"slice-past-wrapped-broadcast.json", "node 'grow' (Broadcast)", "more than 2^40 elements"},
  };
  const fs::path dir = fs::path(HF_SOURCE_DIR) / "tests" / "data" / "hostile";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string bytes = read(dir / c.file);
    ASSERT_FALSE(bytes.empty());
    std::string e = error_of([&] {
      if (fs::path(c.file).extension() == ".onnx")
        parse_graph_onnx(bytes, c.file);
      else
        parse_graph_json(bytes, c.file);
    });
    EXPECT_HAS(e, c.file);
    EXPECT_HAS(e, c.names);
    EXPECT_HAS(e, c.says);
  }
}

// The check is where values are created, so it holds for every op, however it computes its
// shape: here a Gather whose output is 2^41 elements from two inputs of at most 2^40.
TEST(HostileShapes, EveryOpsOutputIsCountedWhereItIsCreated) {
  Graph g;
  ValueId data = g.add_input("data", DType::F32, {int64_t{1} << 20, int64_t{1} << 20});
  ValueId idx = g.add_input("idx", DType::I32, {int64_t{1} << 21, 1});
  Node gather;
  gather.name = "pick";
  gather.op = OpType::Gather;
  gather.inputs = {data, idx};
  std::string e = error_of([&] { g.add_node(gather); });
  EXPECT_HAS(e, "node 'pick' (Gather)");
  EXPECT_HAS(e, "[2097152,1,1048576], more than 2^40 elements");

  // Graph inputs made through the API, not only those read from files.
  e = error_of([&] { g.add_input("huge", DType::F32, {int64_t{1} << 21, int64_t{1} << 20}); });
  EXPECT_HAS(e, "value 'huge'");
  e = error_of([&] { g.add_input("zero_times_huge", DType::F32, {0, int64_t{1} << 62}); });
  EXPECT_HAS(e, "more than 2^40 elements");
}

Node window_node(OpType op, Attrs attrs) {
  Node n;
  n.name = "win";
  n.op = op;
  n.attrs = std::move(attrs);
  return n;
}

// Window sizes whose arithmetic overflowed int64_t: pads of 2^62 (their sum wrapped to a
// negative padded size), a kernel times a dilation past 2^63.
TEST(HostileShapes, WindowArithmeticCannotOverflow) {
  const Shape x = {1, 1, 4, 4};
  const int64_t big = int64_t{1} << 62;
  std::string e = error_of([&] {
    pool_geometry(window_node(OpType::MaxPool, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                                {"pads", std::vector<int64_t>{big, 0, big, 0}}}),
                  x);
  });
  EXPECT_HAS(e, "node 'win' (MaxPool): pads entries must be >= 0 and <= 2^40");
  e = error_of([&] {
    pool_geometry(
        window_node(OpType::MaxPool, {{"kernel_shape", std::vector<int64_t>{int64_t{1} << 40, 1}},
                                      {"dilations", std::vector<int64_t>{int64_t{1} << 40, 1}}}),
        x);
  });
  EXPECT_HAS(e, "is larger than the padded input");
  e = error_of([&] {
    pool_geometry(
        window_node(OpType::AveragePool, {{"kernel_shape", std::vector<int64_t>{big, 2}}}), x);
  });
  EXPECT_HAS(e, "kernel_shape entries must be >= 1 and <= 2^40");
  e = error_of([&] {
    conv_geometry(window_node(OpType::Conv, {{"strides", std::vector<int64_t>{1, big}}}), x,
                  {1, 1, 1, 1});
  });
  EXPECT_HAS(e, "strides entries must be >= 1 and <= 2^40");
  // A group that does not fit the channels, with none (c = 0): w[1] * group overflowed.
  e = error_of([&] {
    conv_geometry(window_node(OpType::Conv, {{"group", big}}), {1, 0, 4, 4}, {0, 4, 1, 1});
  });
  EXPECT_HAS(e, "input channels per group");
}

// Slice starts, ends and steps anywhere in int64_t: clamped, counted without overflow.
TEST(HostileShapes, SliceBoundsAndStepsAnywhereInInt64) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Shape in = {4};
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    return slice_geometry(window_node(OpType::Slice, {{"starts", std::vector<int64_t>{start}},
                                                      {"ends", std::vector<int64_t>{end}},
                                                      {"steps", std::vector<int64_t>{step}}}),
                          in);
  };
  // Backwards from the last element by a step of -2^63: that element alone (-step overflowed
  // and the count came out 0).
  SliceGeometry g = slice(3, kMin, kMin);
  EXPECT_EQ(g.count[0], 1);
  EXPECT_EQ(g.start[0], 3);
  EXPECT_EQ(g.step[0], 1);  // one element: the kernels never see the huge step
  // Forwards by 2^63 - 1: the first element alone (end - start + step - 1 overflowed).
  g = slice(0, 4, kMax);
  EXPECT_EQ(g.count[0], 1);
  EXPECT_EQ(g.start[0], 0);
  // Starts near 2^61 are clamped to the dimension: nothing to read.
  g = slice(int64_t{1} << 61, (int64_t{1} << 61) + 4, 1);
  EXPECT_EQ(g.count[0], 0);
  EXPECT_EQ(g.start[0], 0);
  g = slice(kMax, kMin, -1);  // the whole dimension backwards
  EXPECT_EQ(g.count[0], 4);
  EXPECT_EQ(g.start[0], 3);
  EXPECT_EQ(g.step[0], -1);
}

}  // namespace
}  // namespace hf
