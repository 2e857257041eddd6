// Name scopes of a graph's nodes, as TensorBoard's graph view groups them: ONNX exporters name
// nodes by the module that made them ("/layer4/layer4.1/conv1/Conv"), so the names form a
// hierarchy. A scope can be collapsed into one box that stands for everything under it, with
// the box's time share and fused-region marks summed from its nodes; the Graph panel lays out
// and draws what is visible (viewer/model/scope_graph.h turns it into DOT).
//
// The items are the graph's nodes in the drawn layout's order. An item's scope is its name
// without the last component ("/layer4/layer4.1/conv1/Conv" is in /layer4/layer4.1/conv1);
// a fused kernel's "fused_/features/..." is scoped like "/features/..."; names without a '/'
// ("onnx::Conv_538", "fc.bias") have none. Those that are adoptable (constants, weights: op
// nodes without inputs) move into the deepest scope that holds all their consumers, so that
// a model's hundreds of weights do not stand beside its boxes.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hf::viewer {

struct ScopeItem {
  std::string name;
  double share = 0;        // of the iteration, 0..1
  std::string fused_kind;  // the item's fused-region cluster kind ("kept", "reverted", ...), or ""
  bool adoptable = false;  // may move into its consumers' scope when it has none
};

struct Scope {
  std::string name;                  // the last component: "layer4.1"; "" for the root
  std::string path;                  // "/layer4/layer4.1"; "" for the root
  int parent = -1;                   // -1 for the root (scope 0)
  int depth = 0;                     // the root 0, top-level scopes 1
  std::vector<int> children;         // scope indices, in the order first seen
  std::vector<int> items;            // items directly in this scope
  int item_count = 0;                // items in this scope and every scope below
  double share = 0;                  // their summed share
  std::map<std::string, int> fused;  // cluster kind -> items below with it
  bool expanded = false;
};

// What stands for an item on screen: the item itself, or the collapsed scope box hiding it.
struct Visible {
  bool box = false;
  int index = -1;  // a scope index (box) or an item index
  bool operator==(const Visible&) const = default;
  bool operator<(const Visible& o) const { return box != o.box ? box < o.box : index < o.index; }
};

class ScopeTree {
 public:
  ScopeTree() : scopes_(1) { scopes_[0].expanded = true; }
  // `edges`: item index pairs (producer, consumer), used to adopt unscoped constants.
  static ScopeTree build(const std::vector<ScopeItem>& items,
                         const std::vector<std::pair<int, int>>& edges = {});
  // The scope components of a name: "/a/b/Conv" -> {"a", "b"}; "fused_/a/Add" -> {"a"};
  // "fc.bias" -> {}.
  static std::vector<std::string> scope_of(std::string_view name);

  const std::vector<Scope>& scopes() const { return scopes_; }
  int item_count() const { return static_cast<int>(item_scope_.size()); }
  // The innermost scope of an item (0: none).
  int item_scope(int item) const { return item_scope_.at(item); }
  // Whether the tree groups anything (some scope below the root).
  bool has_scopes() const { return scopes_.size() > 1; }

  Visible visible_of(int item) const;
  // Boxes and items on screen, scopes before items, each in index order.
  std::vector<Visible> visible() const;
  int visible_count() const { return static_cast<int>(visible().size()); }
  // Whether every scope is expanded (the graph as it is, no boxes).
  bool all_expanded() const;

  // Expanding a scope that holds nothing but one scope expands that one too (a chain of
  // single-child scopes is one click). Collapsing collapses the whole subtree. The root
  // stays expanded; out-of-range indices are ignored.
  void set_expanded(int scope, bool expanded);
  void toggle(int scope) {
    if (scope > 0 && scope < static_cast<int>(scopes_.size()))
      set_expanded(scope, !scopes_[scope].expanded);
  }
  void collapse_all();
  void expand_all();
  // Every scope's expanded flag, to put back later with set_expansion (same tree only).
  std::vector<bool> expansion() const;
  void set_expansion(const std::vector<bool>& expanded);
  // Collapses everything, then expands level by level (larger scopes first within a level)
  // while the visible count stays within `max_visible`. Returns the visible count.
  int expand_to_fit(int max_visible);

 private:
  int child(int parent, const std::string& name);
  std::vector<Scope> scopes_;
  std::vector<int> item_scope_;
};

// An edge between two visible things, standing for `count` item edges.
struct MergedEdge {
  Visible from, to;
  int count = 0;
  int first = -1;  // the index (into the edges given) of the first edge it stands for
};
// Item edges mapped to what is visible; edges inside one box dropped, parallel ones merged.
// Out-of-range item indices are skipped.
std::vector<MergedEdge> merge_edges(const ScopeTree& tree,
                                    const std::vector<std::pair<int, int>>& edges);

}  // namespace hf::viewer
