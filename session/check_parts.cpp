#include "session/check_parts.h"

#include <set>

#include "runtime/ir/constant.h"

namespace hf {

CheckParts check_parts(const Graph& g, const fusion::RegionKernel& k, int wanted) {
  const CheckParts whole;
  if (wanted < 2 || !k.epilogue) return whole;
  bool matmul = false;
  std::set<ValueId> right_operands, other_reads;
  for (NodeId id : k.nodes) {
    const Node& n = g.node(id);
    switch (n.op) {
      case OpType::Elemwise:
      case OpType::PowC:
      case OpType::TypeCvt:
      case OpType::Constant:
        break;
      case OpType::MatMul:
        matmul = true;
        break;
      default:
        return whole;
    }
    for (size_t i = 0; i < n.inputs.size(); ++i)
      (n.op == OpType::MatMul && i == 1 ? right_operands : other_reads).insert(n.inputs[i]);
  }
  if (k.outputs.empty()) return whole;
  const Shape& out = g.value(k.outputs[0]).shape;
  for (ValueId o : k.outputs)
    if (g.value(o).shape != out) return whole;
  const int rank = static_cast<int>(out.size());
  int axis = 0;
  while (axis < rank && out[axis] == 1) ++axis;
  // A MatMul's last axis is its columns: cutting it would cut its right operand's.
  if (axis == rank || (matmul && axis > rank - 2)) return whole;
  const int64_t rows = out[axis];
  int64_t parts = wanted;
  while (parts < rows && rows % parts != 0) ++parts;
  parts = std::min(parts, rows);
  if (parts < 2) return whole;

  CheckParts split;
  split.parts = static_cast<int>(parts);
  for (ValueId v : k.live_ins) {
    if (is_constant(g, v) || split.cut_shapes.count(v)) continue;
    const Shape& shape = g.value(v).shape;
    const int own_axis = axis - (rank - static_cast<int>(shape.size()));  // right-aligned
    if (right_operands.count(v)) {
      if (other_reads.count(v)) return whole;  // read two ways
      if (axis == rank - 2) continue;          // its rows are the MatMul's inner axis: whole
    }
    const int64_t extent = own_axis >= 0 ? shape[own_axis] : 1;
    if (extent == 1) continue;  // broadcast along the cut: read whole
    if (extent != rows) return whole;
    for (int i = 0; i < own_axis; ++i)
      if (shape[i] != 1) return whole;  // a block would not be contiguous
    Shape block = shape;
    block[own_axis] = rows / parts;
    split.cut_shapes[v] = block;
  }
  return split;
}

}  // namespace hf
