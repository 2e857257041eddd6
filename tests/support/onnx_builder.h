// A small builder of ONNX models with the protobuf classes, for tests that import them
// (tests that include it link onnx_proto). Header-only: hf_test_support does not link ONNX.
#pragma once
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace hf::test::onnx {

namespace pb = ::ONNX_NAMESPACE;
using TP = pb::TensorProto;

inline void set_i(pb::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INT);
  a->set_i(v);
}
inline void set_ints(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void set_s(pb::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::STRING);
  a->set_s(v);
}

struct Model {
  pb::ModelProto m;
  pb::GraphProto* g;

  explicit Model(int opset = 17) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("test");
  }
  void input(const std::string& name, int elem, const std::vector<int64_t>& dims) {
    auto* vi = g->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* s = tt->mutable_shape();
    for (int64_t d : dims) s->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  pb::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                      const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  void init_floats(const std::string& name, const std::vector<int64_t>& dims,
                   const std::vector<float>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
  }
  void init_int64s(const std::string& name, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t x : v) t->add_int64_data(x);
  }
  std::string bytes() const {
    std::string s;
    EXPECT_TRUE(m.SerializeToString(&s));
    return s;
  }
};

}  // namespace hf::test::onnx
