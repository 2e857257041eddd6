// Static pattern fusion (MegEngine's graph_opt_level 2): fixed chains rewritten into the
// FUSE_* Elemwise modes that the unfused kernels already run, so no compiler is needed.
//
//   ADD(MUL(a, b), MUL(c, d))          -> FUSE_MUL_ADD4(a, b, c, d)
//   ADD(MUL(a, b), c), ADD(c, MUL(a, b)) -> FUSE_MUL_ADD3(a, b, c)
//   RELU/SIGMOID/TANH/H_SWISH(ADD(x, y)) -> FUSE_ADD_RELU/_SIGMOID/_TANH/_H_SWISH(x, y)
//
// A pattern applies only where the inner node's output has no other reader and is not a
// graph output (it disappears), and where the fused node has the root's shape and dtype
// (broadcasting is associative, so it does; checked anyway). Nodes are visited in
// topological order and the first pattern that matches a root wins, in the order above,
// so a*b+c followed by RELU becomes FUSE_MUL_ADD3 then RELU.
//
// Results can differ in the last bit: for f16/bf16 the fused mode rounds once where the
// chain rounded a*b (or x+y) to the storage type; for f32 where the compiler contracts
// a*b+c into an FMA (C++ defaults to -ffp-contract=fast, and -march=native has FMA).
// Integer results are exactly the chain's.
#pragma once
#include "runtime/ir/graph.h"

namespace hf::fusion {

// Rewrites `g` in place through Graph::replace_nodes; returns the number of rewrites.
// The replacement keeps the root's name; the values keep their ids and names.
int apply_static_patterns(Graph& g);

}  // namespace hf::fusion
