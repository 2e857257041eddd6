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
inline void set_f(pb::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::FLOAT);
  a->set_f(v);
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
inline pb::TensorProto& set_t(pb::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::TENSOR);
  return *a->mutable_t();
}

inline void fill_floats(pb::TensorProto& t, const std::vector<int64_t>& dims,
                        const std::vector<float>& v) {
  t.set_data_type(TP::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}
inline void fill_int64s(pb::TensorProto& t, const std::vector<int64_t>& dims,
                        const std::vector<int64_t>& v) {
  t.set_data_type(TP::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t x : v) t.add_int64_data(x);
}

struct Model {
  pb::ModelProto m;
  pb::GraphProto* g;

  explicit Model(int opset = 17) {
    m.set_ir_version(8);
    m.set_producer_name("hotfuse tests");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("test");
  }
  pb::ValueInfoProto& input(const std::string& name, int elem, const std::vector<int64_t>& dims) {
    auto* vi = g->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* s = tt->mutable_shape();
    for (int64_t d : dims) s->add_dim()->set_dim_value(d);
    return *vi;
  }
  pb::ValueInfoProto& output(const std::string& name) {
    auto* vi = g->add_output();
    vi->set_name(name);
    return *vi;
  }
  pb::ValueInfoProto& output(const std::string& name, int elem, const std::vector<int64_t>& dims) {
    auto& vi = output(name);
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* s = tt->mutable_shape();
    for (int64_t d : dims) s->add_dim()->set_dim_value(d);
    return vi;
  }
  pb::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                      const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  pb::TensorProto& init(const std::string& name) {
    auto* t = g->add_initializer();
    t->set_name(name);
    return *t;
  }
  pb::TensorProto& init_floats(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& v) {
    auto& t = init(name);
    fill_floats(t, dims, v);
    return t;
  }
  pb::TensorProto& init_int64s(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& v) {
    auto& t = init(name);
    fill_int64s(t, dims, v);
    return t;
  }
  std::string bytes() const {
    std::string s;
    EXPECT_TRUE(m.SerializeToString(&s));
    return s;
  }
};

}  // namespace hf::test::onnx
