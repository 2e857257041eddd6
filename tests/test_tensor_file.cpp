// TensorProto files (runtime/io/tensor_file.h) and backend-test data sets
// (runtime/io/test_data.h): round trips of every element type, the typed fields the
// backend tests also use, BFLOAT16 stored as UINT16, and hostile files (every truncation,
// corrupted bytes, sizes that do not match their data) that must give an hf::Error naming
// the file, never a crash or an allocation sized by the file's claims.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "runtime/io/onnx_import.h"
#include "runtime/io/tensor_file.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"
#include "runtime/ops/half.h"
#include "tests/support/error_of.h"
#include "tests/support/temp_dir.h"

namespace hf {
namespace {

namespace fs = std::filesystem;
namespace pb = ::ONNX_NAMESPACE;
using TP = pb::TensorProto;

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A tensor of `t` with values that exercise the type: negatives, NaN and infinities for
// floats, both bool values, the extremes of the integers.
HostTensor sample(DType t, Shape shape) {
  HostTensor h(t, shape);
  const float floats[] = {0.f, -1.5f, 3.25f, NAN, INFINITY, -INFINITY, 1e-3f, 65504.f};
  for (int64_t k = 0; k < h.numel(); ++k) {
    switch (t) {
      case DType::F32:
        h.as<float>()[k] = floats[k % 8] * (k + 1);
        break;
      case DType::F16:
        h.as<f16>()[k] = to_f16(floats[k % 8]);
        break;
      case DType::BF16:
        h.as<bf16>()[k] = to_bf16(floats[k % 8]);
        break;
      case DType::I32:
        h.as<int32_t>()[k] =
            k % 2 ? std::numeric_limits<int32_t>::min() + int32_t(k) : int32_t(k * 1000);
        break;
      case DType::I64:
        h.as<int64_t>()[k] = k % 2 ? std::numeric_limits<int64_t>::max() - k : -k;
        break;
      case DType::Bool:
        h.as<uint8_t>()[k] = k % 3 == 0;
        break;
      case DType::U8:
        h.as<uint8_t>()[k] = static_cast<uint8_t>(250 + k);
        break;
      case DType::F64:  // values beyond f32's range and precision
        h.as<double>()[k] = k % 2 ? 1e300 / (k + 1) : floats[k % 8] + 1e-12 * k;
        break;
      case DType::I8:
        h.as<int8_t>()[k] = static_cast<int8_t>(k % 2 ? -128 + k : 127 - k);
        break;
      case DType::I16:
        h.as<int16_t>()[k] = static_cast<int16_t>(k % 2 ? -32768 + k : 32767 - k);
        break;
      case DType::U16:
        h.as<uint16_t>()[k] = static_cast<uint16_t>(65535 - k);
        break;
      case DType::U32:
        h.as<uint32_t>()[k] = 4294967295u - static_cast<uint32_t>(k);
        break;
      case DType::U64:
        h.as<uint64_t>()[k] = 18446744073709551615ull - static_cast<uint64_t>(k);
        break;
    }
  }
  return h;
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

TEST(TensorFile, RoundTripsEveryTypeAndShape) {
  for (int d = 0; d < kDTypeCount; ++d) {
    DType t = static_cast<DType>(d);
    for (Shape s : {Shape{2, 3, 4}, Shape{}, Shape{0, 3}, Shape{7}}) {
      HostTensor h = sample(t, s);
      NamedTensor back = parse_tensor_file(encode_tensor_file(h.view(), "x.y"), "mem");
      EXPECT_EQ(back.name, "x.y");
      EXPECT_EQ(back.uint16_bits, t == DType::U16);  // UINT16 may hold half bits
      EXPECT_TRUE(same_bytes(h, back.tensor)) << dtype_name(t) << " " << to_string(s);
    }
  }
}

TEST(TensorFile, WritesAndReadsFiles) {
  TempDir dir;
  HostTensor h = sample(DType::F32, {3, 5});
  write_tensor_file(dir.root / "t.pb", h.view(), "out");
  NamedTensor back = read_tensor_file(dir.root / "t.pb");
  EXPECT_EQ(back.name, "out");
  EXPECT_TRUE(same_bytes(h, back.tensor));
  // What ONNX's tools write: the same bytes onnx.numpy_helper.from_array produces.
  TP p;
  ASSERT_TRUE(p.ParseFromString(encode_tensor_file(h.view(), "out")));
  EXPECT_EQ(p.data_type(), TP::FLOAT);
  EXPECT_EQ(p.dims_size(), 2);
  EXPECT_EQ(p.raw_data().size(), 15u * 4);
}

TEST(TensorFile, ReadsTheTypedFields) {
  TP f;
  f.set_data_type(TP::FLOAT);
  f.add_dims(3);
  for (float v : {1.f, -2.f, 0.5f}) f.add_float_data(v);
  NamedTensor t = parse_tensor_file(f.SerializeAsString(), "f");
  ASSERT_EQ(t.tensor.dtype(), DType::F32);
  EXPECT_EQ(t.tensor.as<float>()[1], -2.f);

  TP h;  // FLOAT16 bits in int32_data
  h.set_data_type(TP::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(to_f16(1.5f).bits);
  h.add_int32_data(to_f16(-4.f).bits);
  t = parse_tensor_file(h.SerializeAsString(), "h");
  ASSERT_EQ(t.tensor.dtype(), DType::F16);
  EXPECT_EQ(to_f32(t.tensor.as<f16>()[1]), -4.f);

  TP b;
  b.set_data_type(TP::BOOL);
  b.add_dims(3);
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  t = parse_tensor_file(b.SerializeAsString(), "b");
  ASSERT_EQ(t.tensor.dtype(), DType::Bool);
  EXPECT_EQ(t.tensor.as<uint8_t>()[0], 1);
  EXPECT_EQ(t.tensor.as<uint8_t>()[1], 0);

  TP l;
  l.set_data_type(TP::INT64);
  l.add_dims(1);
  l.add_int64_data(-(int64_t(1) << 60));
  t = parse_tensor_file(l.SerializeAsString(), "l");
  EXPECT_EQ(t.tensor.as<int64_t>()[0], -(int64_t(1) << 60));
}

TEST(TensorFile, Uint16IsReadAsHalfBitsWhereTheModelWantsThem) {
  // ONNX's backend tests store BFLOAT16 data as UINT16.
  TP p;
  p.set_data_type(TP::UINT16);
  p.add_dims(2);
  p.add_int32_data(to_bf16(2.5f).bits);
  p.add_int32_data(to_bf16(-0.75f).bits);
  NamedTensor t = parse_tensor_file(p.SerializeAsString(), "u16.pb");
  EXPECT_TRUE(t.uint16_bits);
  HostTensor b = as_uint16_bits(t, DType::BF16, "u16.pb");
  ASSERT_EQ(b.dtype(), DType::BF16);
  EXPECT_EQ(to_f32(b.as<bf16>()[0]), 2.5f);
  EXPECT_EQ(to_f32(b.as<bf16>()[1]), -0.75f);
  EXPECT_EQ(as_uint16_bits(t, DType::F16, "u16.pb").dtype(), DType::F16);
  EXPECT_EQ(error_of([&] {
              as_uint16_bits(t, DType::F32, "u16.pb");
            }).rfind("u16.pb: element type UINT16 is not supported", 0),
            0u);
  // Other tensors pass through unchanged.
  NamedTensor f{"x", sample(DType::F32, {2}), false};
  EXPECT_TRUE(same_bytes(as_uint16_bits(f, DType::BF16, "x"), f.tensor));
}

TEST(TensorFile, RefusesWhatHotfuseCannotHold) {
  auto err = [](TP p) {
    return error_of([&] { parse_tensor_file(p.SerializeAsString(), "t.pb"); });
  };
  TP d;
  d.set_data_type(TP::COMPLEX64);
  d.add_dims(1);
  d.add_float_data(1);
  d.add_float_data(2);
  EXPECT_EQ(err(d),
            "t.pb: element type COMPLEX64 is not supported (hotfuse computes in FLOAT DOUBLE "
            "FLOAT16 BFLOAT16 INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64 BOOL)");
  TP s;
  s.set_data_type(TP::STRING);
  s.add_string_data("a");
  EXPECT_NE(err(s).find("element type STRING is not supported"), std::string::npos);
  TP e;
  e.set_data_type(TP::FLOAT);
  e.add_dims(1);
  e.set_data_location(TP::EXTERNAL);
  auto* kv = e.add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  EXPECT_EQ(err(e), "t.pb: external data 'w.bin' needs the model's directory");
}

TEST(TensorFile, SizesAreCheckedBeforeAllocating) {
  auto err = [](TP p) {
    return error_of([&] { parse_tensor_file(p.SerializeAsString(), "t.pb"); });
  };
  TP big;  // claims 2^40 floats, holds 8 bytes: refused before 4 TiB are allocated
  big.set_data_type(TP::FLOAT);
  big.add_dims(int64_t(1) << 20);
  big.add_dims(int64_t(1) << 20);
  big.set_raw_data(std::string(8, '\0'));
  EXPECT_EQ(err(big), "t.pb: raw_data has 8 bytes, FLOAT[1048576,1048576] needs 4398046511104");
  TP huge = big;
  huge.add_dims(4);
  EXPECT_NE(err(huge).find("too many elements"), std::string::npos);
  TP neg;
  neg.set_data_type(TP::INT32);
  neg.add_dims(-1);
  EXPECT_NE(err(neg).find("negative dimension"), std::string::npos);
  TP few;
  few.set_data_type(TP::FLOAT);
  few.add_dims(1000000000);
  few.add_float_data(1);
  EXPECT_EQ(err(few), "t.pb: float_data has 1 values, the shape needs 1000000000");
}

TEST(TensorFile, EveryTruncationAndCorruptionIsAnErrorOrATensor) {
  HostTensor h = sample(DType::I64, {3, 4});
  const std::string good = encode_tensor_file(h.view(), "name");
  auto survives = [](const std::string& bytes) {
    try {
      // Every element takes at least a byte of the file (raw or packed): nothing larger
      // than the file was allocated on the file's word.
      NamedTensor t = parse_tensor_file(bytes, "t.pb");
      return t.tensor.numel() <= static_cast<int64_t>(bytes.size());
    } catch (const Error& e) {
      return std::string(e.what()).rfind("t.pb: ", 0) == 0;
    }
  };
  for (size_t n = 0; n < good.size(); ++n) EXPECT_TRUE(survives(good.substr(0, n))) << n;
  std::mt19937 rng(1);
  for (int i = 0; i < 3000; ++i) {
    std::string bad = good;
    for (int k = 0; k < 1 + i % 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    EXPECT_TRUE(survives(bad)) << i;
  }
}

TEST(TensorFile, MissingFilesAreNamed) {
  TempDir dir;
  EXPECT_EQ(error_of([&] { read_tensor_file(dir.root / "nope.pb"); }),
            (dir.root / "nope.pb").string() + ": no such file");
  EXPECT_EQ(error_of([&] { read_tensor_file(dir.root); }), dir.root.string() + ": no such file");
  write_bytes(dir.root / "junk.pb", "\xff\xff\xff\xff");
  EXPECT_EQ(error_of([&] { read_tensor_file(dir.root / "junk.pb"); }),
            (dir.root / "junk.pb").string() +
                ": not a valid TensorProto file (malformed or truncated protobuf)");
}

TEST(TestData, NumberedFilesAndDataSets) {
  TempDir dir;
  HostTensor h = sample(DType::F32, {2});
  EXPECT_NE(error_of([&] { test_data_sets(dir.root); }).find("no test_data_set_* directory"),
            std::string::npos);
  for (const char* set : {"test_data_set_10", "test_data_set_2", "test_data_set_x"})
    fs::create_directory(dir.root / set);
  std::vector<fs::path> sets = test_data_sets(dir.root);
  ASSERT_EQ(sets.size(), 2u);  // by number, not by name; test_data_set_x is not one
  EXPECT_EQ(sets[0].filename(), "test_data_set_2");

  fs::path d = dir.root / "test_data_set_2";
  write_tensor_file(d / "input_0.pb", h.view(), "a");
  write_tensor_file(d / "input_2.pb", h.view(), "c");
  EXPECT_EQ(error_of([&] { numbered_tensor_files(d, "input", 3, "3 inputs"); }),
            (d / "input_1.pb").string() + ": missing (3 inputs)");
  EXPECT_EQ(error_of([&] { numbered_tensor_files(d, "input", 1, "1 input"); }), "");
  write_tensor_file(d / "input_1.pb", h.view(), "b");
  EXPECT_EQ(numbered_tensor_files(d, "input", 3, "").size(), 3u);
  EXPECT_EQ(error_of([&] { numbered_tensor_files(d, "input", 2, "2 inputs"); }),
            (d / "input_2.pb").string() + ": one file too many (2 inputs)");
}

// A graph with inputs a (f32 [2]) and b (i64 [3]); the data files in `dir`.
struct Inputs {
  TempDir dir;
  Graph g;
  HostTensor a = sample(DType::F32, {2}), b = sample(DType::I64, {3});
  Inputs() {
    g.add_input("a", DType::F32, {2});
    g.add_input("b", DType::I64, {3});
  }
  void write(const std::string& n0, const HostTensor& t0, const std::string& n1,
             const HostTensor& t1) {
    write_tensor_file(dir.root / "input_0.pb", t0.view(), n0);
    write_tensor_file(dir.root / "input_1.pb", t1.view(), n1);
  }
};

TEST(TestData, InputsGoByNameWhenEveryNameIsAnInput) {
  Inputs in;
  in.write("b", in.b, "a", in.a);  // numbered in the other order, named
  std::vector<HostTensor> got = read_graph_inputs(in.g, in.dir.root);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(same_bytes(got[0], in.a));
  EXPECT_TRUE(same_bytes(got[1], in.b));
}

TEST(TestData, InputsGoByPositionOtherwise) {
  Inputs in;
  in.write("", in.a, "other", in.b);
  std::vector<HostTensor> got = read_graph_inputs(in.g, in.dir.root);
  EXPECT_TRUE(same_bytes(got[0], in.a));
  EXPECT_TRUE(same_bytes(got[1], in.b));
  in.write("a", in.a, "a", in.b);  // a name twice: by position
  got = read_graph_inputs(in.g, in.dir.root);
  EXPECT_TRUE(same_bytes(got[1], in.b));
}

TEST(TestData, InputTypesAndShapesMustFit) {
  Inputs in;
  in.write("", in.b, "", in.a);  // swapped, unnamed: a gets an INT64 tensor
  EXPECT_EQ(
      error_of([&] { read_graph_inputs(in.g, in.dir.root); }),
      (in.dir.root / "input_0.pb").string() + ": graph input 0 'a' is f32, the file holds i64");
  in.write("", in.a, "", sample(DType::I64, {4}));
  EXPECT_EQ(error_of([&] { read_graph_inputs(in.g, in.dir.root); }),
            (in.dir.root / "input_1.pb").string() +
                ": graph input 1 'b' has shape [3], the file holds [4]; other shapes than the "
                "model declares are not supported (hotfuse plans static shapes)");
}

// A Reshape whose shape is a graph input, as ONNX's backend tests have it: imported only
// when OnnxImportOptions::input_values gives the shape (what --check takes from the data).
std::string reshape_model() {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  pb::GraphProto* g = m.mutable_graph();
  auto input = [&](const char* name, int32_t type, std::vector<int64_t> dims) {
    pb::ValueInfoProto* vi = g->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  input("x", TP::FLOAT, {2, 3});
  input("shape", TP::INT64, {2});
  pb::NodeProto* n = g->add_node();
  n->set_op_type("Reshape");
  n->add_input("x");
  n->add_input("shape");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m.SerializeAsString();
}

HostTensor i64s(std::vector<int64_t> v) {
  HostTensor t(DType::I64, {static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * 8);
  return t;
}

TEST(TestData, InputValuesSpecialiseShapesGivenAsInputs) {
  const std::string model = reshape_model();
  EXPECT_NE(error_of([&] { parse_graph_onnx(model, "m.onnx"); }).find("--inputs, --check"),
            std::string::npos);
  OnnxImportOptions opt;
  opt.input_values["shape"] = i64s({3, -1});
  opt.input_values["x"] = sample(DType::F32, {2, 3});  // given, but not needed: not used
  Graph g = parse_graph_onnx(model, "m.onnx", {}, opt);
  ASSERT_EQ(g.inputs().size(), 2u);  // the shape stays an input
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{3, 2}));
  EXPECT_EQ(g.specialised_inputs, (std::vector<std::string>{"shape"}));
  opt.input_values["shape"] = i64s({6, 1, 1});
  EXPECT_EQ(error_of([&] { parse_graph_onnx(model, "m.onnx", {}, opt); }),
            "m.onnx: node 0 (Reshape): input 1 'shape': the value given has 3 elements, its "
            "shape [2] holds 2");
  opt.input_values["shape"] = sample(DType::I32, {2});
  EXPECT_EQ(error_of([&] { parse_graph_onnx(model, "m.onnx", {}, opt); }),
            "m.onnx: node 0 (Reshape): input 1 'shape': the value given is i32, the model "
            "declares i64");
  opt.input_values = {{"y", i64s({6})}};  // not a graph input: not used
  EXPECT_NE(error_of([&] { parse_graph_onnx(model, "m.onnx", {}, opt); }).find("--inputs"),
            std::string::npos);
}

TEST(TestData, ImportOptionsComeFromWhatAllDataSetsAgreeOn) {
  TempDir dir;
  auto ints = [](std::vector<int64_t> v) {
    HostTensor t(DType::I64, {static_cast<int64_t>(v.size())});
    std::memcpy(t.data(), v.data(), v.size() * 8);
    return t;
  };
  std::vector<fs::path> sets = {dir.root / "test_data_set_0", dir.root / "test_data_set_1"};
  for (size_t s = 0; s < 2; ++s) {
    fs::create_directory(sets[s]);
    write_tensor_file(sets[s] / "input_0.pb", sample(DType::F32, {2, 3}).view(), "x");
    write_tensor_file(sets[s] / "input_1.pb", ints({3, -1}).view(), "same");
    write_tensor_file(sets[s] / "input_2.pb", ints({int64_t(s)}).view(), "differs");
    write_tensor_file(sets[s] / "input_3.pb", ints({1}).view(), "");  // unnamed
    write_tensor_file(sets[s] / "input_4.pb", sample(DType::F32, {int64_t(s) + 1}).view(), "z");
  }
  write_bytes(sets[1] / "input_5.pb", "\xff\xff");  // unreadable: left to read_graph_inputs
  OnnxImportOptions opt = import_options_from(sets);
  // Values: every small input all sets give alike, of any type (x is the same sample).
  ASSERT_EQ(opt.input_values.size(), 2u);
  EXPECT_TRUE(same_value(opt.input_values["same"], ints({3, -1})));
  EXPECT_TRUE(same_value(opt.input_values["x"], sample(DType::F32, {2, 3})));
  // Shapes: x and the integer inputs agree; z's shape differs between the sets.
  EXPECT_EQ(opt.input_shapes.size(), 3u);
  EXPECT_EQ(opt.input_shapes["x"], (Shape{2, 3}));
  EXPECT_EQ(opt.input_shapes.count("z"), 0u);
}

TEST(TestData, DataSetsAreGroupedByTheShapesAndValuesTheyGive) {
  TempDir dir;
  // Batch 1, 4, 1 and 4 again, the last with another value of an integer input.
  const int64_t batch[] = {1, 4, 1, 4};
  const int64_t value[] = {7, 7, 7, 8};
  std::vector<fs::path> sets;
  for (int s = 0; s < 4; ++s) {
    sets.push_back(dir.root / ("test_data_set_" + std::to_string(s)));
    fs::create_directory(sets.back());
    write_tensor_file(sets.back() / "input_0.pb", sample(DType::F32, {batch[s], 3}).view(), "x");
    HostTensor v(DType::I64, {1});
    v.as<int64_t>()[0] = value[s];
    write_tensor_file(sets.back() / "input_1.pb", v.view(), "k");
  }
  std::vector<DataSetGroup> groups = group_data_sets(sets);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].sets, (std::vector<fs::path>{sets[0], sets[2]}));
  EXPECT_EQ(groups[1].sets, (std::vector<fs::path>{sets[1]}));
  EXPECT_EQ(groups[2].sets, (std::vector<fs::path>{sets[3]}));
  EXPECT_EQ(groups[0].options.input_shapes["x"], (Shape{1, 3}));
  EXPECT_EQ(groups[1].options.input_shapes["x"], (Shape{4, 3}));
  EXPECT_EQ(groups[2].options.input_values["k"].as<int64_t>()[0], 8);
  // A graph specialised to no input's value is the import for every group of its shapes;
  // one specialised to k only for the groups that give k alike.
  EXPECT_TRUE(same_import(groups[1].options, groups[2].options, {}));
  EXPECT_FALSE(same_import(groups[1].options, groups[2].options, {"k"}));
  EXPECT_FALSE(same_import(groups[0].options, groups[1].options, {}));
  EXPECT_TRUE(same_import(groups[0].options, groups[0].options, {"k"}));
}

TEST(TestData, InputShapesSizeSymbolicDimensions) {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  pb::GraphProto* g = m.mutable_graph();
  pb::ValueInfoProto* vi = g->add_input();
  vi->set_name("x");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TP::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  pb::NodeProto* n = g->add_node();
  n->set_op_type("Neg");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  const std::string model = m.SerializeAsString();
  EXPECT_NE(error_of([&] { parse_graph_onnx(model, "m.onnx"); }).find("symbolic ('batch')"),
            std::string::npos);
  OnnxImportOptions opt;
  opt.input_shapes["x"] = {5, 7};  // the sized dimension keeps the model's 3
  Graph gr = parse_graph_onnx(model, "m.onnx", {}, opt);
  EXPECT_EQ(gr.value(gr.inputs()[0]).shape, (Shape{5, 3}));
  opt.input_shapes["x"] = {5};  // another rank: not used
  EXPECT_NE(error_of([&] { parse_graph_onnx(model, "m.onnx", {}, opt); }).find("symbolic"),
            std::string::npos);
  opt.dims["batch"] = 2;  // dims win over a given shape
  opt.input_shapes["x"] = {5, 3};
  gr = parse_graph_onnx(model, "m.onnx", {}, opt);
  EXPECT_EQ(gr.value(gr.inputs()[0]).shape, (Shape{2, 3}));
}

}  // namespace
}  // namespace hf
