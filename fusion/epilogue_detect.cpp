#include "fusion/epilogue_detect.h"

#include <algorithm>
#include <queue>

#include "runtime/ir/op_table.h"

namespace hf::fusion {

namespace {

bool is_literal(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return val.producer != kNoNode && g.node(val.producer).op == OpType::Constant &&
         numel(val.shape) == 1 && val.dtype == DType::F32;
}

bool float_step(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || g.value(n.outputs[0]).dtype != DType::F32) return false;
  for (ValueId v : n.inputs)
    if (g.value(v).dtype != DType::F32) return false;
  if (n.op == OpType::PowC) return true;
  if (n.op != OpType::Elemwise) return false;
  const ModeKind k = mode_info(n.mode).kind;
  return k == ModeKind::Float || k == ModeKind::Numeric;
}

class ChainGrower {
 public:
  ChainGrower(const Graph& g, const std::vector<std::vector<NodeId>>& users,
              const std::vector<int>& pos, const std::vector<bool>& claimed)
      : g_(g), users_(users), pos_(pos), claimed_(claimed) {
    for (ValueId v : g.outputs()) graph_out_.insert(v);
  }

  EpilogueChain grow(NodeId h) {
    heavy_ = h;
    const ValueId v = g_.node(h).outputs[0];
    shape_ = g_.value(v).shape;
    in_chain_.clear();
    values_ = {v};
    steps_.clear();
    EpilogueChain best;
    // Candidates in topological order: consumers of values in the chain.
    auto later = [&](NodeId a, NodeId b) { return pos_[a] > pos_[b]; };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> next(later);
    for (NodeId c : users_[v]) next.push(c);
    std::set<NodeId> seen;
    while (!next.empty() && static_cast<int>(steps_.size()) < kMaxEpilogueSteps) {
      NodeId c = next.top();
      next.pop();
      if (!seen.insert(c).second || !joins(c)) continue;
      steps_.push_back(c);
      in_chain_.insert(c);
      const ValueId out = g_.node(c).outputs[0];
      values_.push_back(out);
      for (NodeId u : users_[out]) next.push(u);
      if (one_escape()) best.steps = steps_;
    }
    if (best.steps.empty()) return best;
    best.heavy = h;
    std::set<NodeId> kept(best.steps.begin(), best.steps.end());
    std::set<NodeId> lits;
    for (NodeId s : best.steps)
      for (ValueId in : g_.node(s).inputs) {
        if (!is_literal(g_, in)) continue;
        const NodeId p = g_.value(in).producer;
        bool only_chain = !graph_out_.count(in);
        for (NodeId u : users_[in]) only_chain &= kept.count(u) > 0;
        if (only_chain) lits.insert(p);
      }
    best.literals.assign(lits.begin(), lits.end());
    return best;
  }

 private:
  // A value outside the chain that the chain may read: it cannot depend on the heavy op.
  bool safe_operand(ValueId v) const {
    const Value& val = g_.value(v);
    if (val.dtype != DType::F32) return false;
    auto b = broadcast_shapes(val.shape, shape_);
    if (!b || *b != shape_) return false;
    if (val.producer == kNoNode) return true;
    const Node& p = g_.node(val.producer);
    return p.op == OpType::Constant || pos_[val.producer] < pos_[heavy_];
  }

  bool joins(NodeId c) const {
    const Node& n = g_.node(c);
    if (claimed_[c] || !float_step(g_, n) || g_.value(n.outputs[0]).shape != shape_) return false;
    for (ValueId in : n.inputs) {
      if (std::find(values_.begin(), values_.end(), in) != values_.end()) continue;
      if (is_literal(g_, in) || safe_operand(in)) continue;
      return false;
    }
    return true;
  }

  // Exactly one value of the chain is read outside it: the last step's.
  bool one_escape() const {
    for (size_t i = 0; i < values_.size(); ++i) {
      ValueId v = values_[i];
      bool out = graph_out_.count(v) > 0;
      for (NodeId u : users_[v]) out |= !in_chain_.count(u);
      if (out != (i + 1 == values_.size())) return false;
    }
    return true;
  }

  const Graph& g_;
  const std::vector<std::vector<NodeId>>& users_;
  const std::vector<int>& pos_;
  const std::vector<bool>& claimed_;
  std::set<ValueId> graph_out_;
  NodeId heavy_ = kNoNode;
  Shape shape_;
  std::set<NodeId> in_chain_;
  std::vector<ValueId> values_;  // the heavy output, then each step's
  std::vector<NodeId> steps_;
};

}  // namespace

bool is_heavy_op(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.op != OpType::MatMul && n.op != OpType::Conv) return false;
  if (n.outputs.size() != 1 || g.value(n.outputs[0]).dtype != DType::F32) return false;
  for (ValueId v : n.inputs)
    if (g.value(v).dtype != DType::F32) return false;
  return true;
}

std::vector<EpilogueChain> find_epilogues(const Graph& g, const std::vector<NodeId>& order,
                                          const std::vector<std::vector<NodeId>>& users) {
  std::vector<int> pos(g.nodes().size(), -1);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int>(i);
  std::vector<bool> claimed(g.nodes().size(), false);
  ChainGrower grower(g, users, pos, claimed);
  std::vector<EpilogueChain> out;
  for (NodeId h : order) {
    if (!is_heavy_op(g, h)) continue;
    EpilogueChain c = grower.grow(h);
    if (c.steps.empty()) continue;
    claimed[h] = true;
    for (NodeId s : c.steps) claimed[s] = true;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace hf::fusion
