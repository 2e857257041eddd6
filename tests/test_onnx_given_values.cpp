// ONNX models that size something by a graph input's value (OnnxImportOptions::input_values,
// what --check and --inputs take from the data files): the graph is specialised to the
// given values and says so (Graph::specialised_inputs); without them the import says how
// to give them. Window functions, Range, Resize's scales, OneHot's depth and Dropout's
// training_mode, each against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

OnnxImportOptions given(const std::string& name, HostTensor value) {
  OnnxImportOptions o;
  o.input_values[name] = std::move(value);
  return o;
}

TEST(OnnxGivenValues, WindowsOfAGivenSize) {
  struct Case {
    const char* op;
    int64_t size, periodic;
    std::vector<double> want;
  } cases[] = {
      {"HannWindow", 4, 1, {0, 0.5, 1, 0.5}},
      {"HannWindow", 5, 0, {0, 0.5, 1, 0.5, 0}},
      {"HammingWindow", 3, 0, {2.0 / 23, 1, 2.0 / 23}},  // 25/46 - 21/46
      {"HammingWindow", 2, 1, {2.0 / 23, 1}},
      {"BlackmanWindow", 4, 1, {0, 0.34, 1, 0.34}},
      {"BlackmanWindow", 3, 0, {0, 1, 0}},
      {"HannWindow", 0, 1, {}},
  };
  for (const Case& c : cases) {
    Model m(17);
    m.input("size", TP::INT64, {});
    set_i(m.node(c.op, {"size"}, {"w"}), "periodic", c.periodic);
    m.output("w");
    OnnxImportOptions o = given("size", tensor(DType::I64, {}, {double(c.size)}));
    Graph g = import(m, o);
    EXPECT_EQ(g.specialised_inputs, (std::vector<std::string>{"size"})) << c.op;
    EXPECT_EQ(g.value(g.outputs()[0]).dtype, DType::F32);
    expect_near_all(run(m, {tensor(DType::I64, {}, {double(c.size)})}, o)[0], c.want, 1e-6);
  }
  // output_datatype: doubles; an integer type converts as Cast does (truncation).
  Model m(17);
  m.input("size", TP::INT64, {});
  auto& n = m.node("HannWindow", {"size"}, {"w"});
  set_i(n, "output_datatype", TP::DOUBLE);
  m.output("w");
  OnnxImportOptions o = given("size", tensor(DType::I64, {}, {3}));
  EXPECT_EQ(import(m, o).value(import(m, o).outputs()[0]).dtype, DType::F64);
  expect_near_all(run(m, {tensor(DType::I64, {}, {3})}, o)[0], {0, 0.75, 0.75}, 1e-6);
  EXPECT_NE(import_error(m).find("values are given with the input data (--inputs, --check)"),
            std::string::npos)
      << import_error(m);
  EXPECT_NE(import_error(m, given("size", tensor(DType::I64, {}, {-1}))).find(">= 0"),
            std::string::npos);
}

TEST(OnnxGivenValues, RangeOfGivenBounds) {
  Model m(11);
  for (const char* name : {"start", "limit", "delta"}) m.input(name, TP::FLOAT, {});
  m.node("Range", {"start", "limit", "delta"}, {"y"});
  m.output("y");
  OnnxImportOptions o;
  o.input_values["start"] = tensor(DType::F32, {}, {1});
  o.input_values["limit"] = tensor(DType::F32, {}, {2.2});
  o.input_values["delta"] = tensor(DType::F32, {}, {0.5});
  std::vector<HostTensor> in = {o.input_values["start"], o.input_values["limit"],
                                o.input_values["delta"]};
  expect_near_all(run(m, in, o)[0], {1, 1.5, 2}, 1e-6);
  EXPECT_EQ(import(m, o).specialised_inputs.size(), 3u);
  o.input_values.erase("delta");
  EXPECT_NE(import_error(m, o).find("Range is only folded"), std::string::npos);
}

// Range's limit computed from a given input (Cast, Add): the input is a constant for the
// whole import, so the ops before Range fold. The data input x stays an input.
TEST(OnnxGivenValues, ValuesComputedFromGivenInputsFold) {
  Model m(13);
  m.input("n", TP::INT64, {});
  m.input("x", TP::FLOAT, {3});
  m.init_floats("zero", {}, {0});
  m.init_floats("one", {}, {1});
  m.node("Cast", {"n"}, {"nf"}).add_attribute()->CopyFrom([] {
    pb::AttributeProto a;
    a.set_name("to");
    a.set_type(pb::AttributeProto::INT);
    a.set_i(TP::FLOAT);
    return a;
  }());
  m.node("Add", {"nf", "one"}, {"limit"});
  m.node("Range", {"zero", "limit", "one"}, {"r"});
  m.node("Mul", {"x", "x"}, {"y"});
  m.output("r");
  m.output("y");
  OnnxImportOptions o = given("n", tensor(DType::I64, {}, {2}));
  o.input_values["x"] = tensor(DType::F32, {3}, {1, 2, 3});
  Graph g = import(m, o);
  EXPECT_EQ(g.specialised_inputs, (std::vector<std::string>{"n"}));
  auto out = run(m, {o.input_values["n"], tensor(DType::F32, {3}, {4, 5, 6})}, o);
  expect_near_all(out[0], {0, 1, 2}, 1e-6);
  expect_near_all(out[1], {16, 25, 36}, 1e-6);  // computed from the data given at run time
  EXPECT_NE(import_error(m).find("Range is only folded"), std::string::npos);
}

TEST(OnnxGivenValues, ResizeByGivenScales) {
  Model m(13);
  m.input("x", TP::FLOAT, {1, 1, 2, 2});
  m.input("scales", TP::FLOAT, {4});
  m.node("Resize", {"x", "", "scales"}, {"y"});  // nearest, half_pixel: a repeat
  m.output("y");
  HostTensor scales = tensor(DType::F32, {4}, {1, 1, 2, 3});
  OnnxImportOptions o = given("scales", scales);
  Graph g = import(m, o);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{1, 1, 4, 6}));
  EXPECT_EQ(g.specialised_inputs, (std::vector<std::string>{"scales"}));
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) want.push_back(1 + 2 * (i / 2) + j / 3);
  expect_near_all(run(m, {tensor(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4}), scales}, o)[0], want,
                  1e-6);
  EXPECT_NE(import_error(m).find("scales (input 2 'scales') must be a constant"),
            std::string::npos);
  EXPECT_NE(import_error(m, given("scales", tensor(DType::F64, {4}, {1, 1, 2, 3})))
                .find("the value given is f64, the model declares f32"),
            std::string::npos);
}

TEST(OnnxGivenValues, OneHotOfAGivenDepth) {
  Model m(11);
  m.input("i", TP::INT64, {3});
  m.input("depth", TP::FLOAT, {});
  m.init_floats("values", {2}, {0, 5});
  m.node("OneHot", {"i", "depth", "values"}, {"y"});
  m.output("y");
  OnnxImportOptions o = given("depth", tensor(DType::F32, {}, {3}));
  expect_near_all(run(m, {tensor(DType::I64, {3}, {0, -1, 7}), o.input_values["depth"]}, o)[0],
                  {5, 0, 0, 0, 0, 5, 0, 0, 0}, 1e-6);
  EXPECT_EQ(import(m, o).specialised_inputs, (std::vector<std::string>{"depth"}));
}

TEST(OnnxGivenValues, DropoutInTrainingModeOnlyWithoutDropping) {
  Model m(13);
  m.input("x", TP::FLOAT, {3});
  m.input("ratio", TP::FLOAT, {});
  m.input("training", TP::BOOL, {});
  m.node("Dropout", {"x", "ratio", "training"}, {"y", "mask"});
  m.output("y");
  m.output("mask");
  HostTensor x = tensor(DType::F32, {3}, {1, -2, 3});
  auto options = [](double ratio, double training) {
    OnnxImportOptions o;
    o.input_values["ratio"] = tensor(DType::F32, {}, {ratio});
    o.input_values["training"] = tensor(DType::Bool, {}, {training});
    return o;
  };
  for (auto [ratio, training] : {std::pair{0.0, 1.0}, std::pair{0.7, 0.0}}) {
    OnnxImportOptions o = options(ratio, training);
    auto out = run(m, {x, o.input_values["ratio"], o.input_values["training"]}, o);
    expect_near_all(out[0], {1, -2, 3}, 1e-6);
    expect_near_all(out[1], {1, 1, 1}, 1e-6);
  }
  EXPECT_NE(import_error(m, options(0.5, 1)).find("random dropout"), std::string::npos);
  // Not in training: the ratio's value is not needed.
  OnnxImportOptions o;
  o.input_values["training"] = tensor(DType::Bool, {}, {0});
  EXPECT_EQ(import(m, o).specialised_inputs, (std::vector<std::string>{"training"}));
}

}  // namespace
}  // namespace hf
