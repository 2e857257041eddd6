// ONNX Einsum (runtime/io/onnx_lower_einsum.cpp): single-node models run unfused on the CPU
// and compared with a naive einsum written here: every assignment of the labels visited once,
// the product of the operands' elements added to the output's (a size-1 axis broadcasts).
// Equations with '...' are checked against the same equation with letters in its place.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> values(int64_t n, int seed) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(float(std::sin(0.61 * double(k) + 1.7 * seed)));
  return v;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Letters only, explicit output ("ab,bc->ac").
std::vector<double> naive(const std::string& eq, const std::vector<std::vector<int64_t>>& shapes,
                          const std::vector<std::vector<double>>& data,
                          std::vector<int64_t>& out_shape) {
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  std::string lhs = eq.substr(0, arrow), out = eq.substr(arrow + 2);
  for (size_t start = 0;;) {
    size_t c = lhs.find(',', start);
    terms.push_back(lhs.substr(start, c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  std::map<char, int64_t> size;
  for (size_t k = 0; k < terms.size(); ++k)
    for (size_t a = 0; a < terms[k].size(); ++a)
      size[terms[k][a]] = std::max(size[terms[k][a]], shapes[k][a]);
  std::vector<char> letters;
  for (auto [l, s] : size) letters.push_back(l);
  out_shape.clear();
  for (char l : out) out_shape.push_back(size[l]);
  std::vector<double> y(numel(out_shape), 0);
  std::map<char, int64_t> at;
  for (char l : letters) at[l] = 0;
  while (true) {
    double prod = 1;
    for (size_t k = 0; k < terms.size(); ++k) {
      int64_t flat = 0;
      for (size_t a = 0; a < terms[k].size(); ++a)
        flat = flat * shapes[k][a] + (shapes[k][a] == 1 ? 0 : at[terms[k][a]]);
      prod *= data[k][flat];
    }
    int64_t o = 0;
    for (char l : out) o = o * size[l] + at[l];
    y[o] += prod;
    size_t i = letters.size();  // next assignment, last letter fastest
    while (i > 0 && ++at[letters[i - 1]] == size[letters[i - 1]]) at[letters[--i]] = 0;
    if (i == 0) break;
  }
  return y;
}

// Runs `eq` (with '...' allowed) and compares it with naive(ref_eq) over the same data.
// f32 contractions of two operands take the MatMul path, f64 ones the product path.
void check(const std::string& eq, const std::vector<std::vector<int64_t>>& shapes,
           const std::string& ref_eq = "", int elem = TP::FLOAT) {
  const DType dt = elem == TP::FLOAT ? DType::F32 : DType::F64;
  Model m(12);
  std::vector<std::string> names;
  std::vector<HostTensor> in;
  std::vector<std::vector<double>> data;
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back("x" + std::to_string(k));
    m.input(names.back(), elem, shapes[k]);
    data.push_back(values(numel(shapes[k]), static_cast<int>(k) + 1));
    in.push_back(tensor(dt, Shape(shapes[k].begin(), shapes[k].end()), data.back()));
  }
  set_s(m.node("Einsum", names, {"y"}), "equation", eq);
  m.output("y");
  std::vector<int64_t> ys;
  auto want = naive(ref_eq.empty() ? eq : ref_eq, shapes, data, ys);
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape(ys.begin(), ys.end()));
  auto got = run(m, in);
  ASSERT_EQ(got[0].size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_NEAR(got[0][k], want[k], 1e-5 * (1 + std::abs(want[k]))) << eq << " element " << k;
}

TEST(OnnxEinsum, ContractionsWithOddSizes) {
  check("bij,bjk->bik", {{3, 2, 5}, {3, 5, 7}});
  check("ij,jk->ik", {{3, 5}, {5, 1}});
  check("i,i->", {{7}, {7}});
  check("i,j->ij", {{3}, {5}});
  check("ij,ij->ij", {{3, 4}, {3, 4}});
  check("bhqd,bhkd->bhqk", {{2, 3, 5, 4}, {2, 3, 3, 4}});
  check("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}});
  check("abc,cd->ba", {{2, 3, 5}, {5, 3}});  // d summed in the second operand alone
  check("ij,kj->ki", {{3, 4}, {5, 4}});
  check("...ij,...jk", {{1, 2, 3}, {4, 3, 5}}, "bij,bjk->bik");  // broadcast batch
}

// Which path a contraction took: the number of MatMul nodes in the imported graph.
int matmuls(const std::string& eq, int elem, const std::vector<std::vector<int64_t>>& shapes) {
  Model m(12);
  std::vector<std::string> names;
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back("x" + std::to_string(k));
    m.input(names.back(), elem, shapes[k]);
  }
  set_s(m.node("Einsum", names, {"y"}), "equation", eq);
  m.output("y");
  int n = 0;
  const Graph g = import(m);  // alive for the loop: nodes() is a reference into it
  for (const Node& node : g.nodes()) n += node.op == OpType::MatMul;
  return n;
}

TEST(OnnxEinsum, F32ContractionsOfTwoAreOneMatMul) {
  EXPECT_EQ(matmuls("bij,bjk->bik", TP::FLOAT, {{3, 2, 5}, {3, 5, 7}}), 1);
  EXPECT_EQ(matmuls("i,i", TP::FLOAT, {{7}, {7}}), 1);
  EXPECT_EQ(matmuls("i,j->ij", TP::FLOAT, {{3}, {5}}), 0);  // nothing summed: a MUL
  EXPECT_EQ(matmuls("bij,bjk->bik", TP::DOUBLE, {{3, 2, 5}, {3, 5, 7}}), 0);
}

TEST(OnnxEinsum, ContractionsByProductAndReduce) {
  check("bij,bjk->bik", {{3, 2, 5}, {3, 5, 7}}, "", TP::DOUBLE);
  check("i,i->", {{7}, {7}}, "", TP::DOUBLE);
  check("bhqd,bhkd->bhqk", {{2, 3, 5, 4}, {2, 3, 3, 4}}, "", TP::DOUBLE);
  check("...ij,...jk", {{1, 2, 3}, {4, 3, 5}}, "bij,bjk->bik", TP::DOUBLE);
  check("abc,cd->ba", {{2, 3, 5}, {5, 3}}, "", TP::DOUBLE);
}

TEST(OnnxEinsum, OneOperandTransposeSumsAndDiagonals) {
  check("ij->ji", {{3, 4}});
  check("ij->i", {{3, 5}});
  check("ijk->", {{2, 3, 5}});
  check("ijk->kj", {{2, 3, 5}});
  check("ii->i", {{4, 4}});
  check("ii->", {{5, 5}});
  check("bii->bi", {{3, 4, 4}});
  check("iji->j", {{3, 2, 3}});
  check("ij,jj->i", {{2, 3}, {3, 3}});
}

TEST(OnnxEinsum, ImplicitOutputsAndEllipsis) {
  check("ij,jk", {{2, 3}, {3, 5}}, "ij,jk->ik");
  check("ba", {{2, 3}}, "ba->ab");
  check("ii", {{4, 4}}, "ii->");
  check("i,i", {{5}, {5}}, "i,i->");
  check("...ij,...jk->...ik", {{4, 2, 3}, {4, 3, 5}}, "bij,bjk->bik");
  check("...ij,jk->...ik", {{2, 4, 2, 3}, {3, 5}}, "abij,jk->abik");
  check("...ii->...i", {{3, 4, 4}}, "bii->bi");
  check("...ij,...jk", {{1, 2, 3}, {4, 3, 5}}, "bij,bjk->bik");  // broadcast, implicit
  check("i...->...", {{3, 2, 4}}, "iab->ab");
}

TEST(OnnxEinsum, ScalarOperand) {
  Model m(12);
  m.input("x", TP::FLOAT, {});
  set_s(m.node("Einsum", {"x"}, {"y"}), "equation", "->");
  m.output("y");
  EXPECT_EQ(run(m, {tensor(DType::F32, {}, {2.5})})[0], std::vector<double>{2.5});
}

TEST(OnnxEinsum, Errors) {
  auto err = [](const std::string& eq, std::vector<std::vector<int64_t>> shapes) {
    Model m(12);
    std::vector<std::string> names;
    for (size_t k = 0; k < shapes.size(); ++k) {
      names.push_back("x" + std::to_string(k));
      m.input(names.back(), TP::FLOAT, shapes[k]);
    }
    set_s(m.node("Einsum", names, {"y"}, "es"), "equation", eq);
    m.output("y");
    return import_error(m);
  };
  auto has = [](const std::string& e, const std::string& part) {
    EXPECT_NE(e.find(part), std::string::npos) << e;
    EXPECT_NE(e.find("'es'"), std::string::npos) << e;
  };
  has(err("ij,jk->ik", {{2, 3}, {4, 5}}), "label 'j' has sizes 3 and 4");
  has(err("ij->ik", {{2, 3}}), "output label 'k' is in no operand");
  has(err("ij,jk->ik", {{2, 3}}), "has 2 operands, the node 1 inputs");
  has(err("ijk->i", {{2, 3}}), "names 3 axes, its rank is 2");
  has(err("i1->i", {{2, 3}}), "not a letter or '...'");
  has(err("ij->ii", {{2, 3}}), "the output repeats a label");
  has(err("...i->i", {{2, 3}}), "the output does not");
  has(err("ij,jk,kl->il", {{256, 256}, {256, 256}, {256, 256}}),
      "more than hotfuse's lowering allows");
}

}  // namespace
}  // namespace hf
