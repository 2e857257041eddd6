#include "tests/support/random_dag.h"

#include <iterator>

namespace hf {

Graph random_dag(std::mt19937& rng, DType dtype) {
  static const Mode unary[] = {Mode::RELU, Mode::EXP,    Mode::TANH, Mode::SIGMOID, Mode::NEGATE,
                               Mode::ABS,  Mode::SQUARE, Mode::GELU, Mode::SIN,     Mode::H_SWISH};
  static const Mode binary[] = {Mode::ADD, Mode::SUB, Mode::MUL,
                                Mode::MAX, Mode::MIN, Mode::FUSE_ADD_RELU};
  Graph g;
  int rank = 1 + rng() % 3;
  Shape full;
  for (int d = 0; d < rank; ++d) full.push_back(1 + rng() % 40);
  std::vector<ValueId> pool;
  int inputs = 1 + rng() % 4;
  for (int i = 0; i < inputs; ++i) {
    Shape s = full;
    for (auto& d : s)
      if (rng() % 3 == 0) d = 1;             // broadcast along this axis
    if (rng() % 4 == 0) s.erase(s.begin());  // a lower-rank input
    pool.push_back(g.add_input("in" + std::to_string(i), dtype, s));
  }
  int nodes = 2 + rng() % 10;
  for (int i = 0; i < nodes; ++i) {
    Node n;
    n.op = OpType::Elemwise;
    n.name = "n" + std::to_string(i);
    if (rng() % 2) {
      n.mode = unary[rng() % std::size(unary)];
      n.inputs = {pool[rng() % pool.size()]};
    } else {
      n.mode = binary[rng() % std::size(binary)];
      n.inputs = {pool[rng() % pool.size()], pool[rng() % pool.size()]};
    }
    pool.push_back(g.add_node(n)[0]);
  }
  // The last value, plus sometimes an intermediate one, are outputs.
  g.mark_output(pool.back());
  if (pool.size() > static_cast<size_t>(inputs + 1) && rng() % 2)
    g.mark_output(pool[inputs + rng() % (pool.size() - inputs - 1)]);
  return g;
}

}  // namespace hf
