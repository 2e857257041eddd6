#include "fusion/detect.h"

#include <algorithm>
#include <limits>
#include <set>

#include "fusion/epilogue_detect.h"
#include "fusion/kernel_abi.h"
#include "runtime/ir/op_table.h"

namespace hf::fusion {

std::string_view fusion_level_name(FusionLevel l) {
  switch (l) {
    case FusionLevel::Off:
      return "off";
    case FusionLevel::Static:
      return "static";
    case FusionLevel::All:
      return "all";
  }
  return "?";
}

std::optional<FusionLevel> parse_fusion_level(std::string_view s) {
  for (FusionLevel l : {FusionLevel::Off, FusionLevel::Static, FusionLevel::All})
    if (fusion_level_name(l) == s) return l;
  return std::nullopt;
}

const Decision* Detection::decision_of(NodeId n) const {
  for (const Decision& d : decisions)
    if (std::find(d.nodes.begin(), d.nodes.end(), n) != d.nodes.end()) return &d;
  return nullptr;
}

int kernel_count(const Graph& g, const Detection& d) {
  std::set<NodeId> fused;
  for (const Region& r : d.regions) fused.insert(r.nodes.begin(), r.nodes.end());
  int count = static_cast<int>(d.regions.size());
  for (NodeId n : g.topo_order())
    if (!fused.count(n) && g.node(n).op != OpType::Constant) ++count;
  return count;
}

namespace {

std::string quoted(const Graph& g, NodeId n) {
  return "'" + g.node(n).name + "'";
}

// A read of a value from outside a region, for counting kernel inputs: by a compute node
// (second = -1; all such reads of one value share one input) or by an absorbed view node.
// Two views of one value may or may not end up as one input, so this count is an upper
// bound of what build_region_kernel makes, and the limit holds for the kernel.
using InputKey = std::pair<ValueId, NodeId>;

struct Grow {
  std::set<NodeId> nodes;
  Shape shape;
  std::optional<NodeId> reduce;
  int row_axis = -1;  // Region::row_axis
  bool alive = true;
  int merged_into = -1;
  std::vector<NodeId> views;  // absorbed Broadcast/Reshape/Dimshuffle nodes
  // The topological positions of its first and last nodes.
  int first = std::numeric_limits<int>::max();
  int last = -1;
  std::set<InputKey> inputs;
  int outputs = 0;
  int exprs = 0;  // compute nodes and literals; inputs are added when checking the limit
  std::vector<std::pair<NodeId, std::string>> notes;  // nodes it stopped at, and why
};

class Detector {
 public:
  Detector(const Graph& g, const DetectOptions& o) : g_(g), o_(o) {
    // The kernel ABI's arrays bound what any option may ask for.
    o_.max_inputs = std::min(o_.max_inputs, kAbiMaxInputs);
    o_.max_outputs = std::min(o_.max_outputs, kAbiMaxOutputs);
    order_ = g.topo_order();
    users_.resize(g.values().size());
    for (NodeId n : order_)
      for (ValueId v : g.node(n).inputs)
        if (users_[v].empty() || users_[v].back() != n) users_[v].push_back(n);
    outs_.insert(g.outputs().begin(), g.outputs().end());
    region_of_.assign(g.nodes().size(), -1);
    why_.resize(g.nodes().size());
    pos_.assign(g.nodes().size(), -1);
    for (size_t i = 0; i < order_.size(); ++i) pos_[order_[i]] = static_cast<int>(i);
  }

  Detection run() {
    if (o_.level != FusionLevel::All) return everything_unfused();
    if (o_.epilogues) claim_epilogues();
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) visit(*it);
    merge_all();
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      OpKind k = kind(*it, nullptr);
      if (region_of_[*it] < 0 && (k == OpKind::View || k == OpKind::Constant)) absorb(*it);
    }
    return finish();
  }

 private:
  const Graph& g_;
  DetectOptions o_;
  std::vector<NodeId> order_;
  std::vector<int> pos_;
  std::vector<std::vector<NodeId>> users_;  // per value, live consumers in topo order
  std::set<ValueId> outs_;
  std::vector<int> region_of_;
  std::vector<std::string> why_;  // per node: the last refusal
  std::vector<Grow> regions_;
  std::vector<EpilogueChain> epilogues_;
  std::vector<int> epilogue_of_;  // per node: the epilogue it is in, or -1

  void claim_epilogues() {
    epilogues_ = find_epilogues(g_, order_, users_);
    if (o_.epilogue_runs)  // a chain the target cannot run stays free for JIT regions
      std::erase_if(epilogues_,
                    [&](const EpilogueChain& e) { return !o_.epilogue_runs(g_, region_of(e)); });
    epilogue_of_.assign(g_.nodes().size(), -1);
    for (size_t e = 0; e < epilogues_.size(); ++e) {
      epilogue_of_[epilogues_[e].heavy] = static_cast<int>(e);
      for (NodeId n : epilogues_[e].steps) epilogue_of_[n] = static_cast<int>(e);
      for (NodeId n : epilogues_[e].literals) epilogue_of_[n] = static_cast<int>(e);
    }
  }
  Region region_of(const EpilogueChain& e) const {
    Region out;
    out.nodes = e.literals;
    out.nodes.push_back(e.heavy);
    out.nodes.insert(out.nodes.end(), e.steps.begin(), e.steps.end());
    std::sort(out.nodes.begin(), out.nodes.end(),
              [&](NodeId x, NodeId y) { return pos_[x] < pos_[y]; });
    out.shape = g_.value(g_.node(e.heavy).outputs[0]).shape;
    out.heavy = e.heavy;
    return out;
  }
  bool in_epilogue(NodeId n) const { return !epilogue_of_.empty() && epilogue_of_[n] >= 0; }

  Detection everything_unfused() {
    Detection d;
    std::string why = o_.level == FusionLevel::Off
                          ? "fusion is off (level 'off')"
                          : "level 'static' only rewrites fixed patterns (apply_static_patterns)";
    for (NodeId n : order_) d.decisions.push_back({{n}, false, why});
    return d;
  }

  // How the node can take part in a region: its op's kind (op_types.def), unless what
  // depends on the node rules it out (then Opaque, and `why` says why).
  OpKind kind(NodeId id, std::string* why) const {
    const Node& n = g_.node(id);
    auto refuse = [&](std::string s) {
      if (why) *why = std::move(s);
      return OpKind::Opaque;
    };
    const OpInfo& op = op_info(n.op);
    if (in_epilogue(id))
      return refuse("in the epilogue of " + quoted(g_, epilogues_[epilogue_of_[id]].heavy));
    if (op.kind == OpKind::Opaque) return refuse(std::string(op.why_opaque));
    for (const std::vector<ValueId>* vs : {&n.inputs, &n.outputs})
      for (ValueId v : *vs)
        if (!is_core_dtype(g_.value(v).dtype))
          return refuse(std::string(dtype_name(g_.value(v).dtype)) +
                        " is not fused: the generated kernels handle f32, f16, bf16, i32, i64, "
                        "u8 and bool only (is_core_dtype)");
    if (n.op == OpType::TypeCvt) {
      DType from = g_.value(n.inputs[0]).dtype, to = g_.value(n.outputs[0]).dtype;
      if (!is_float(from) || !is_float(to))
        return refuse("TypeCvt " + std::string(dtype_name(from)) + " -> " +
                      std::string(dtype_name(to)) + " is not fusible (only between float types)");
    }
    if (op.kind != OpKind::Reduce) return op.kind;
    if (!o_.fuse_reduce) return refuse("Reduce is not fused at this level (fuse_reduce is off)");
    const Value& in = g_.value(n.inputs[0]);
    if (!is_float(in.dtype))
      return refuse("Reduce of " + std::string(dtype_name(in.dtype)) +
                    " is not fused (float types only)");
    int rank = static_cast<int>(in.shape.size());
    std::vector<int> axes = reduce_axes(n, rank);
    if (axes.empty()) return refuse("Reduce over no axis is a copy");
    if (static_cast<int>(axes.size()) == rank)
      return refuse(
          "Reduce over every axis leaves one row: a fused kernel would run it on one thread");
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != rank - static_cast<int>(axes.size() - i))
        return refuse("Reduce is fused only over the innermost axes (a trailing reduce)");
    return OpKind::Reduce;
  }

  // A view that leaves every index where it is, so a value computed in the region can flow
  // through it (everything else reorders or repeats elements, which a kernel does only to
  // what it loads).
  bool is_identity_view(NodeId id) const {
    const Node& n = g_.node(id);
    const Shape& in = g_.value(n.inputs[0]).shape;
    if (in != g_.value(n.outputs[0]).shape) return false;
    if (n.op != OpType::Dimshuffle) return true;
    std::vector<int> perm = dimshuffle_perm(n, static_cast<int>(in.size()));
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int>(i)) return false;
    return true;
  }

  // The region every consumer of `id`'s outputs is in, or -1 with the reason.
  int consumer_region(NodeId id, std::string& why) const {
    int r = -1;
    NodeId first = kNoNode;
    for (ValueId v : g_.node(id).outputs)
      for (NodeId c : users_[v]) {
        if (region_of_[c] < 0) {
          why = "consumer " + quoted(g_, c) + " is not fused";
          return -1;
        }
        if (r >= 0 && region_of_[c] != r) {
          why = "consumers " + quoted(g_, first) + " and " + quoted(g_, c) +
                " are in different regions";
          return -2;
        }
        r = region_of_[c];
        first = c;
      }
    return r;
  }

  bool is_view(NodeId id) const {
    OpType t = g_.node(id).op;
    return t == OpType::Broadcast || t == OpType::Reshape || t == OpType::Dimshuffle;
  }

  // A kernel applies views only to what it loads: walking up from view `w` through the
  // views of a node set (`inside`), the chain must reach a value from outside (or a
  // literal), and a Reshape may only follow Reshapes, because it reinterprets contiguous
  // memory. Only identity views may sit on a value computed inside. "" if `w` is fine.
  template <class Inside>
  std::string view_refusal(NodeId w, Inside inside) const {
    bool all_identity = true;
    NodeId reshape_below = kNoNode;
    for (NodeId cur = w;;) {
      bool ident = is_identity_view(cur);
      all_identity &= ident;
      if (!ident && reshape_below != kNoNode && g_.node(cur).op != OpType::Reshape)
        return "Reshape " + quoted(g_, reshape_below) + " would read " +
               std::string(op_type_name(g_.node(cur).op)) + " " + quoted(g_, cur) +
               ": a Reshape is fused only directly on an input";
      if (!ident && g_.node(cur).op == OpType::Reshape) reshape_below = cur;
      NodeId p = g_.value(g_.node(cur).inputs[0]).producer;
      if (p == kNoNode || !inside(p) || g_.node(p).op == OpType::Constant) return "";
      if (is_view(p)) {
        cur = p;
        continue;
      }
      if (all_identity) return "";
      return "read through " + std::string(op_type_name(g_.node(w).op)) + " " + quoted(g_, w) +
             ", which a kernel applies only to what it loads";
    }
  }

  template <class Inside>
  std::string views_refusal(const std::vector<NodeId>& views, Inside inside) const {
    for (NodeId w : views)
      if (std::string why = view_refusal(w, inside); !why.empty()) return why;
    return "";
  }

  bool is_output(NodeId id) const {
    for (ValueId v : g_.node(id).outputs)
      if (outs_.count(v)) return true;
    return false;
  }

  // The inputs of `r` once `id` is inside it.
  std::set<InputKey> inputs_with(const Grow& r, NodeId id, bool literal) const {
    std::set<InputKey> keys = r.inputs;
    const Node& n = g_.node(id);
    for (ValueId v : n.outputs)
      for (auto it = keys.lower_bound({v, kNoNode - 1}); it != keys.end() && it->first == v;)
        it = keys.erase(it);
    if (!literal) {
      NodeId tag = kind(id, nullptr) == OpKind::View ? id : kNoNode;
      for (ValueId v : n.inputs) keys.insert({v, tag});
    }
    return keys;
  }

  std::string over_limit(size_t inputs, int outputs, int exprs) const {
    if (static_cast<int>(inputs) > o_.max_inputs)
      return "input limit " + std::to_string(o_.max_inputs) + " reached";
    if (outputs > o_.max_outputs)
      return "output limit " + std::to_string(o_.max_outputs) + " reached";
    if (exprs + static_cast<int>(inputs) > o_.max_exprs)
      return "expression limit " + std::to_string(o_.max_exprs) + " reached";
    return "";
  }

  void add(int r, NodeId id, std::set<InputKey> inputs, bool literal) {
    Grow& R = regions_[r];
    R.nodes.insert(id);
    R.first = std::min(R.first, pos_[id]);
    R.last = std::max(R.last, pos_[id]);
    R.inputs = std::move(inputs);
    OpKind k = kind(id, nullptr);
    if (k == OpKind::View) R.views.push_back(id);
    if (k == OpKind::Compute || k == OpKind::Reduce || literal) ++R.exprs;
    region_of_[id] = r;
  }

  void note(int r, NodeId id, const std::string& why) {
    if (r >= 0) regions_[r].notes.push_back({id, why});
  }

  void note_consumer_regions(NodeId id, const std::string& why) {
    std::set<int> seen;
    for (ValueId v : g_.node(id).outputs)
      for (NodeId c : users_[v])
        if (region_of_[c] >= 0 && seen.insert(region_of_[c]).second) note(region_of_[c], id, why);
  }

  // The first axis k such that `s` is `full` with axes [k, rank) set to 1 (a row shape), or -1.
  static int row_axis_of(const Shape& s, const Shape& full) {
    if (s.size() != full.size() || s == full) return -1;
    for (size_t k = full.size(); k-- > 1;) {
      if (s[k] != 1) return -1;
      if (std::equal(s.begin(), s.begin() + static_cast<long>(k), full.begin()) &&
          !std::all_of(full.begin() + static_cast<long>(k), full.end(),
                       [](int64_t d) { return d == 1; }))
        return static_cast<int>(k);
    }
    return -1;
  }

  // A Reduce, or a node whose shape is not the region's, may still join a region as part
  // of a multi-stage row kernel (Region::row_axis): a Reduce over the innermost axes of the
  // iteration shape (keepdims) whose result the region reads, or per-row math of the row
  // shape. Sets `row_axis` and returns "" if `id` can; else why not.
  std::string row_refusal(const Grow& R, NodeId id, int& row_axis) const {
    const Node& n = g_.node(id);
    const Shape& out = g_.value(n.outputs[0]).shape;
    const std::string shape_why =
        "output shape " + to_string(out) + " differs from the region's " + to_string(R.shape);
    const bool reduce = n.op == OpType::Reduce;
    std::string reduce_why;
    if (reduce) {
      NodeId c = users_[n.outputs[0]].front();
      reduce_why = "a Reduce only ends a region (" + quoted(g_, c) +
                   " would need its result before the row is done)";
    }
    if (!o_.fuse_reduce) return reduce ? reduce_why : shape_why;
    if (R.reduce) return reduce ? reduce_why + "; its region already ends in a Reduce" : shape_why;
    int k = row_axis_of(out, R.shape);
    if (k < 0) return reduce ? reduce_why + "; its result is not a row of the region" : shape_why;
    if (reduce) {
      int rank = static_cast<int>(R.shape.size());
      std::vector<int> axes = reduce_axes(n, rank);
      if (g_.value(n.inputs[0]).shape != R.shape || axes.empty() || axes.front() != k ||
          static_cast<int>(axes.size()) != rank - k)
        return reduce_why + "; it does not reduce the region's rows";
    }
    if (R.row_axis >= 0 && k != R.row_axis)
      return shape_why + " (rows from axis " + std::to_string(R.row_axis) + ")";
    if (is_output(id)) return shape_why + " and it is a graph output";
    row_axis = k;
    return "";
  }

  // Step 1: join the consumers' region or start one.
  void visit(NodeId id) {
    std::string why;
    OpKind k = kind(id, &why);
    if (k == OpKind::Opaque) {
      why_[id] = why;
      note_consumer_regions(id, why);
      return;
    }
    if (k == OpKind::View || k == OpKind::Constant) {
      absorb(id);
      return;
    }
    const Node& n = g_.node(id);
    const Value& out = g_.value(n.outputs[0]);
    if (users_[n.outputs[0]].empty() && !outs_.count(n.outputs[0])) {
      why_[id] = "its result is never used";  // a kernel without outputs does nothing
      return;
    }
    int r = consumer_region(id, why);
    if (r >= 0) {
      Grow& R = regions_[r];
      std::set<InputKey> ins;
      int row_axis = -1;
      if (k == OpKind::Reduce || out.shape != R.shape) why = row_refusal(R, id, row_axis);
      if (why.empty())
        why = views_refusal(R.views, [&](NodeId x) { return x == id || region_of_[x] == r; });
      if (why.empty()) {
        ins = inputs_with(R, id, false);
        why = over_limit(ins.size(), R.outputs + is_output(id), R.exprs + 1);
      }
      if (why.empty()) {
        if (row_axis >= 0) R.row_axis = row_axis;
        R.outputs += is_output(id);
        add(r, id, std::move(ins), false);
        return;
      }
      note(r, id, why);
    } else if (r == -2) {
      note_consumer_regions(id, why);
    }
    why_[id] = why;
    Grow R;
    R.shape = k == OpKind::Reduce ? g_.value(n.inputs[0]).shape : out.shape;
    if (k == OpKind::Reduce) R.reduce = id;
    R.outputs = 1;
    regions_.push_back(std::move(R));
    int nr = static_cast<int>(regions_.size()) - 1;
    add(nr, id, inputs_with(regions_[nr], id, false), false);
  }

  // Step 3 (also tried during step 1): a Constant or view whose consumers are all in one
  // region moves into it.
  void absorb(NodeId id) {
    const Node& n = g_.node(id);
    std::string why;
    int r = consumer_region(id, why);
    if (r < 0) {
      if (r == -1 && users_[n.outputs[0]].empty()) why = "no fused consumer";
      why_[id] = why;
      return;
    }
    if (is_output(id)) {
      why_[id] = "its output is a graph output";
      return;
    }
    bool literal = n.op == OpType::Constant;
    if (literal && numel(g_.value(n.outputs[0]).shape) != 1) {
      why_[id] = "Constant with " + std::to_string(numel(g_.value(n.outputs[0]).shape)) +
                 " elements is read as an input (only single-element constants are literals)";
      return;
    }
    Grow& R = regions_[r];
    if (!literal) {
      std::vector<NodeId> views = R.views;
      views.push_back(id);
      why = views_refusal(views, [&](NodeId x) { return x == id || region_of_[x] == r; });
    }
    std::set<InputKey> ins = inputs_with(R, id, literal);
    if (why.empty()) why = over_limit(ins.size(), R.outputs, R.exprs + literal);
    if (!why.empty()) {
      why_[id] = why;
      return;
    }
    add(r, id, std::move(ins), literal);
  }

  // ---- step 2: merging ----------------------------------------------------------------

  std::set<InputKey> inputs_of(const std::set<NodeId>& nodes) const {
    std::set<ValueId> produced;
    for (NodeId n : nodes)
      for (ValueId v : g_.node(n).outputs) produced.insert(v);
    std::set<InputKey> keys;
    for (NodeId n : nodes) {
      NodeId tag = kind(n, nullptr) == OpKind::View ? n : kNoNode;
      bool literal = g_.node(n).op == OpType::Constant;
      if (!literal)
        for (ValueId v : g_.node(n).inputs)
          if (!produced.count(v)) keys.insert({v, tag});
    }
    return keys;
  }

  int outputs_of(const std::set<NodeId>& nodes) const {
    int count = 0;
    for (NodeId n : nodes)
      for (ValueId v : g_.node(n).outputs) {
        bool escapes = outs_.count(v) > 0;
        for (NodeId c : users_[v]) escapes |= !nodes.count(c);
        count += escapes;
      }
    return count;
  }

  // A topological position beyond which nothing leads into region b, regions counted as
  // single nodes: b's last node, extended to the last node of every region that starts
  // before it (a region's early member may feed b while its late member is a consumer of
  // something after b's last node). Without this bound the walk below visits everything
  // downstream of `a`, per candidate pair: quadratic on a long chain.
  int reach_into(int b) const {
    int reach = regions_[b].last;
    for (bool grew = true; grew;) {
      grew = false;
      for (const Grow& R : regions_)
        if (R.alive && R.first <= reach && R.last > reach) reach = R.last, grew = true;
    }
    return reach;
  }

  // A node outside both regions on a path from `a` to `b`, if there is one: merging them
  // would then create a cycle. Regions other than a and b count as single nodes, because
  // they will be fused too.
  std::optional<NodeId> path_around(int a, int b) const {
    const int reach = reach_into(b);
    std::vector<std::pair<NodeId, NodeId>> stack;  // (node, first node outside a and b)
    for (NodeId n : regions_[a].nodes)
      for (ValueId v : g_.node(n).outputs)
        for (NodeId c : users_[v])
          if (region_of_[c] != a && region_of_[c] != b) stack.push_back({c, c});
    std::vector<bool> seen(g_.nodes().size(), false);
    std::vector<bool> seen_region(regions_.size(), false);
    while (!stack.empty()) {
      auto [n, via] = stack.back();
      stack.pop_back();
      if (region_of_[n] == b) return via;
      if (region_of_[n] == a || seen[n]) continue;
      seen[n] = true;
      std::vector<NodeId> members{n};
      int first = pos_[n];
      if (int x = region_of_[n]; x >= 0) {
        if (seen_region[x]) continue;
        seen_region[x] = true;
        members.assign(regions_[x].nodes.begin(), regions_[x].nodes.end());
        first = regions_[x].first;
      }
      if (first > reach) continue;  // nothing it feeds leads into b
      for (NodeId m : members)
        for (ValueId v : g_.node(m).outputs)
          for (NodeId c : users_[v]) stack.push_back({c, via});
    }
    return std::nullopt;
  }

  // Why a and b cannot merge ("" if they can).
  std::string merge_refusal(int a, int b) const {
    const Grow &A = regions_[a], &B = regions_[b];
    if (A.shape != B.shape)
      return "iteration shapes " + to_string(A.shape) + " and " + to_string(B.shape) + " differ";
    if (A.reduce && B.reduce) return "both end in a Reduce";
    if ((A.reduce && B.row_axis >= 0) || (B.reduce && A.row_axis >= 0))
      return "a row-stage region cannot end in a Reduce";
    if (A.row_axis >= 0 && B.row_axis >= 0 && A.row_axis != B.row_axis)
      return "their rows start at different axes";
    for (auto [r, other] : {std::pair{&A, &B}, std::pair{&B, &A}}) {
      if (!r->reduce) continue;
      for (NodeId c : users_[g_.node(*r->reduce).outputs[0]])
        if (other->nodes.count(c))
          return quoted(g_, c) + " reads Reduce " + quoted(g_, *r->reduce) +
                 ", whose result a kernel has only after the whole row";
    }
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
      if (auto via = path_around(x, y)) return "would create a cycle through " + quoted(g_, *via);
    std::vector<NodeId> views = A.views;
    views.insert(views.end(), B.views.begin(), B.views.end());
    std::string why =
        views_refusal(views, [&](NodeId x) { return region_of_[x] == a || region_of_[x] == b; });
    if (!why.empty()) return why;
    std::set<NodeId> all = A.nodes;
    all.insert(B.nodes.begin(), B.nodes.end());
    return over_limit(inputs_of(all).size(), outputs_of(all), A.exprs + B.exprs);
  }

  void merge(int a, int b) {
    Grow& A = regions_[a];
    Grow& B = regions_[b];
    A.nodes.insert(B.nodes.begin(), B.nodes.end());
    A.first = std::min(A.first, B.first);
    A.last = std::max(A.last, B.last);
    if (B.reduce) A.reduce = B.reduce;
    A.row_axis = std::max(A.row_axis, B.row_axis);
    A.exprs += B.exprs;
    A.views.insert(A.views.end(), B.views.begin(), B.views.end());
    A.inputs = inputs_of(A.nodes);
    A.outputs = outputs_of(A.nodes);
    A.notes.insert(A.notes.end(), B.notes.begin(), B.notes.end());
    for (NodeId n : B.nodes) region_of_[n] = a;
    B = Grow{};
    B.alive = false;
    B.merged_into = a;
  }

  int current(int r) const {
    while (!regions_[r].alive) r = regions_[r].merged_into;
    return r;
  }

  // Producer/consumer pairs (the intermediate may stop being written at all), or regions
  // reading a common value (read once instead of twice; a chain of pairs per value, so a
  // value with k readers gives k-1 pairs, not k^2). Sorted, so detection is deterministic.
  std::vector<std::pair<int, int>> candidates(bool siblings) const {
    std::set<std::pair<int, int>> pairs;
    for (NodeId n : order_) {
      for (ValueId v : g_.node(n).outputs) {
        int prev = siblings ? -1 : region_of_[n];
        // A shared literal is no shared memory traffic.
        if (prev < 0 && siblings && g_.node(n).op == OpType::Constant) continue;
        for (NodeId c : users_[v]) {
          int rc = region_of_[c];
          if (rc < 0 || rc == prev) continue;
          if (prev >= 0) pairs.insert(std::minmax(prev, rc));
          if (siblings) prev = rc;
        }
      }
    }
    if (siblings)  // graph inputs have no producer node
      for (ValueId v : g_.inputs()) {
        int prev = -1;
        for (NodeId c : users_[v]) {
          int rc = region_of_[c];
          if (rc < 0 || rc == prev) continue;
          if (prev >= 0) pairs.insert(std::minmax(prev, rc));
          prev = rc;
        }
      }
    return {pairs.begin(), pairs.end()};
  }

  // Passes over the candidate pairs until one merges nothing; producer/consumer first.
  void merge_all() {
    for (bool siblings : {false, true}) {
      for (bool merged = true; merged;) {
        merged = false;
        for (auto [a0, b0] : candidates(siblings)) {
          int a = std::min(current(a0), current(b0)), b = std::max(current(a0), current(b0));
          if (a != b && merge_refusal(a, b).empty()) {
            merge(a, b);
            merged = true;
          }
        }
      }
    }
    // Why producer/consumer neighbours stayed apart, for the viewer.
    for (auto [a, b] : candidates(false)) {
      std::string why = merge_refusal(a, b);
      NodeId rep_a = root_of(a), rep_b = root_of(b);
      regions_[a].notes.push_back({rep_b, "its region was not merged: " + why});
      regions_[b].notes.push_back({rep_a, "its region was not merged: " + why});
    }
  }

  NodeId root_of(int r) const {
    const Grow& R = regions_[r];
    if (R.reduce) return *R.reduce;
    NodeId last = *R.nodes.begin();
    for (NodeId n : R.nodes)
      if (pos_[n] > pos_[last]) last = n;
    return last;
  }

  // ---- step 4 ---------------------------------------------------------------------------

  // Where a region stopped growing and why: "; not with 'x': reason" for each neighbour.
  std::string stops(const Grow& R) const {
    std::string s;
    std::set<std::pair<NodeId, std::string>> said;
    for (auto& [n, reason] : R.notes)
      if (!R.nodes.count(n) && said.insert({n, reason}).second)
        s += "; not with " + quoted(g_, n) + ": " + reason;
    return s;
  }

  Detection finish() {
    Detection d;
    for (size_t r = 0; r < regions_.size(); ++r) {
      Grow& R = regions_[r];
      if (!R.alive) continue;
      int real = 0;
      for (NodeId n : R.nodes) real += g_.node(n).op != OpType::Constant;
      if (real < 2 && !o_.single_nodes) {
        NodeId root = root_of(static_cast<int>(r));
        for (NodeId n : R.nodes) {
          region_of_[n] = -1;
          if (n == root) {
            why_[n] =
                "single node: nothing to fuse" + (why_[n].empty() ? "" : "; " + why_[n]) + stops(R);
          } else {
            why_[n] = "its consumer " + quoted(g_, root) + " is not fused";
          }
        }
        continue;
      }
      Region out;
      out.nodes.assign(R.nodes.begin(), R.nodes.end());
      std::sort(out.nodes.begin(), out.nodes.end(),
                [&](NodeId x, NodeId y) { return pos_[x] < pos_[y]; });
      out.shape = R.shape;
      out.reduce = R.reduce;
      out.row_axis = R.row_axis;
      d.decisions.push_back(
          {out.nodes, true,
           "fused " + std::to_string(out.nodes.size()) + " nodes into one kernel" + stops(R)});
      d.regions.push_back(std::move(out));
    }
    for (const EpilogueChain& e : epilogues_) {
      Region out = region_of(e);
      std::string stop;
      for (ValueId v : g_.node(e.steps.back()).outputs)
        for (NodeId c : users_[v]) {
          stop = "; it ends where " + quoted(g_, c) + " reads its result";
          break;
        }
      d.decisions.push_back({out.nodes, true,
                             "epilogue: " + std::to_string(e.steps.size()) +
                                 " elementwise ops applied inside " + quoted(g_, e.heavy) +
                                 "'s library call" + stop});
      d.regions.push_back(std::move(out));
    }
    for (NodeId n : order_)
      if (region_of_[n] < 0 && !in_epilogue(n))
        d.decisions.push_back({{n}, false, why_[n].empty() ? "not fusible" : why_[n]});
    return d;
  }
};

}  // namespace

Detection detect_regions(const Graph& g, const DetectOptions& opts) {
  return Detector(g, opts).run();
}

}  // namespace hf::fusion
