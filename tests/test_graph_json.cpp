// The native JSON format: round trips, and a clear message for every kind of bad file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/io/graph_json.h"
#include "runtime/ir/error.h"

namespace hf {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_graph_json(text, "g.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* kSmall = R"({
  "format": "hotfuse-graph", "version": 1, "name": "small",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3], "init": [0, 1]},
             {"name": "k", "dtype": "i32", "shape": [3]}],
  "nodes": [
    {"name": "c", "op": "Constant", "attrs": {"dtype": "f32", "shape": [], "value": [0.5]}, "inputs": []},
    {"name": "m", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "c:0"], "outputs": ["xm"]},
    {"name": "r", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [-1], "keepdims": 0}, "inputs": ["xm"]},
    {"name": "t", "op": "TypeCvt", "attrs": {"dtype": "f32"}, "inputs": ["k"], "outputs": ["kf"]},
    {"name": "p", "op": "PowC", "attrs": {"exponent": 2}, "inputs": ["kf"]}
  ],
  "outputs": ["r:0", "p:0"]
})";

TEST(GraphJson, ParsesAndRoundTrips) {
  Graph g = parse_graph_json(kSmall, "small.json");
  EXPECT_EQ(g.name, "small");
  EXPECT_EQ(g.live_node_count(), 5);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{2}));
  ASSERT_TRUE(g.value(g.inputs()[0]).init.has_value());
  EXPECT_EQ(g.value(g.inputs()[0]).init->hi, 1);
  std::string once = write_graph_json(g);
  Graph g2 = parse_graph_json(once, "again.json");
  EXPECT_EQ(write_graph_json(g2), once);
}

TEST(GraphJson, EveryExampleParsesAndRoundTrips) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(HF_SOURCE_DIR "/traces/graphs")) {
    if (e.path().extension() != ".json") continue;
    Graph g = read_graph_json(e.path().string());
    std::string once = write_graph_json(g);
    EXPECT_EQ(write_graph_json(parse_graph_json(once, "x")), once) << e.path();
    ++count;
  }
  EXPECT_GE(count, 7);
}

TEST(GraphJson, BadFilesGiveOneClearMessage) {
  EXPECT_EQ(error_of("{\"nodes\": [}").substr(0, 45), "g.json: malformed JSON at line 1, column 12: ");
  EXPECT_EQ(error_of("[]"), "g.json: graph must be a JSON object");
  EXPECT_EQ(error_of(R"({"nodes": [], "outputs": [], "extra": 1})"), "g.json: graph: unknown key 'extra'");
  EXPECT_EQ(error_of(R"({"version": 9, "nodes": [], "outputs": []})"),
            "g.json: unsupported format version 9 (this build reads 1)");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f128", "shape": [1]}], "nodes": [], "outputs": ["x"]})"),
            "g.json: input 'x': unknown dtype '\"f128\"'");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [-1]}], "nodes": [], "outputs": ["x"]})"),
            "g.json: input 'x': 'shape' has a negative dimension");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1]}],
      "nodes": [{"name": "n1", "op": "Frobnicate", "inputs": ["x"]}], "outputs": ["x"]})"),
            "g.json: node 'n1': unknown op 'Frobnicate'");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1]}],
      "nodes": [{"name": "n1", "op": "Elemwise", "mode": "FROB", "inputs": ["x"]}], "outputs": ["x"]})"),
            "g.json: node 'n1': unknown Elemwise mode 'FROB'");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1]}],
      "nodes": [{"name": "n1", "op": "Elemwise", "mode": "ADD", "inputs": ["x", "nope"]}], "outputs": ["x"]})"),
            "g.json: node 'n1': value 'nope' is not defined before use");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1]}],
      "nodes": [{"name": "n1", "op": "Elemwise", "mode": "ADD", "inputz": ["x"]}], "outputs": ["x"]})"),
            "g.json: node 'n1': unknown key 'inputz'");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [2]}, {"name": "y", "dtype": "f32", "shape": [3]}],
      "nodes": [{"name": "s", "op": "Elemwise", "mode": "SUB", "inputs": ["x", "y"]}], "outputs": ["s:0"]})"),
            "g.json: node 's' (Elemwise SUB): input shapes [2] and [3] do not broadcast");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [2]}], "nodes": [], "outputs": ["zz"]})"),
            "g.json: graph outputs: value 'zz' is not defined before use");
  EXPECT_EQ(error_of(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
      "nodes": [{"name": "a", "op": "Elemwise", "mode": "RELU", "inputs": ["x"], "outputs": ["x"]}], "outputs": ["x"]})"),
            "g.json: node 'a': output name 'x' is already defined");
}

TEST(GraphJson, MissingFileNamesThePath) {
  try {
    read_graph_json("/nonexistent/graph.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/graph.json: cannot open file");
  }
}

}  // namespace
}  // namespace hf
