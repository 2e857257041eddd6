#include "viewer/model/scope_tree.h"

#include <algorithm>
#include <set>

namespace hf::viewer {

std::vector<std::string> ScopeTree::scope_of(std::string_view name) {
  std::vector<std::string> parts;
  // A fused kernel is named after its first node: "fused_/features/features.0/Conv/conv".
  size_t start = 0;
  if (name.empty() || name[0] != '/') {
    const size_t at = name.find("_/");
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
  std::string_view rest = name.substr(start);
  // Components between slashes; the last one is the node's own name, not a scope.
  size_t pos = 0;
  while (pos < rest.size()) {
    const size_t next = rest.find('/', pos);
    if (next == std::string_view::npos) break;
    if (next > pos) parts.emplace_back(rest.substr(pos, next - pos));
    pos = next + 1;
  }
  return parts;
}

int ScopeTree::child(int parent, const std::string& name) {
  for (int c : scopes_[parent].children)
    if (scopes_[c].name == name) return c;
  Scope s;
  s.name = name;
  s.path = scopes_[parent].path + "/" + name;
  s.parent = parent;
  s.depth = scopes_[parent].depth + 1;
  const int index = static_cast<int>(scopes_.size());
  scopes_.push_back(std::move(s));
  scopes_[parent].children.push_back(index);
  return index;
}

ScopeTree ScopeTree::build(const std::vector<ScopeItem>& items,
                           const std::vector<std::pair<int, int>>& edges) {
  ScopeTree t;
  const int n = static_cast<int>(items.size());
  std::vector<std::vector<std::string>> paths(n);
  for (int i = 0; i < n; ++i) paths[i] = scope_of(items[i].name);

  // Unscoped constants and weights go where all of their consumers are.
  std::vector<std::vector<int>> consumers(n);
  for (auto [from, to] : edges)
    if (from >= 0 && from < n && to >= 0 && to < n && from != to) consumers[from].push_back(to);
  for (int i = 0; i < n; ++i) {
    if (!paths[i].empty() || !items[i].adoptable || consumers[i].empty()) continue;
    std::vector<std::string> common = paths[consumers[i][0]];
    for (int c : consumers[i]) {
      const std::vector<std::string>& p = paths[c];
      size_t k = 0;
      while (k < common.size() && k < p.size() && common[k] == p[k]) ++k;
      common.resize(k);
    }
    paths[i] = std::move(common);  // consumers' own scopes only: adoption does not chain
  }

  t.item_scope_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    int s = 0;
    for (const std::string& part : paths[i]) s = t.child(s, part);
    t.item_scope_[i] = s;
    t.scopes_[s].items.push_back(i);
    for (int a = s; a >= 0; a = t.scopes_[a].parent) {
      Scope& sc = t.scopes_[a];
      ++sc.item_count;
      sc.share += items[i].share;
      if (!items[i].fused_kind.empty()) ++sc.fused[items[i].fused_kind];
    }
  }
  t.collapse_all();
  return t;
}

Visible ScopeTree::visible_of(int item) const {
  Visible v{false, item};
  if (item < 0 || item >= item_count()) return v;
  for (int s = item_scope_[item]; s > 0; s = scopes_[s].parent)
    if (!scopes_[s].expanded) v = {true, s};  // the outermost collapsed one wins
  return v;
}

std::vector<Visible> ScopeTree::visible() const {
  std::vector<Visible> boxes, items;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int s = stack.back();
    stack.pop_back();
    for (int i : scopes_[s].items) items.push_back({false, i});
    for (int c : scopes_[s].children) {
      if (scopes_[c].expanded)
        stack.push_back(c);
      else
        boxes.push_back({true, c});
    }
  }
  std::sort(boxes.begin(), boxes.end());
  std::sort(items.begin(), items.end());
  boxes.insert(boxes.end(), items.begin(), items.end());
  return boxes;
}

bool ScopeTree::all_expanded() const {
  for (const Scope& s : scopes_)
    if (!s.expanded) return false;
  return true;
}

void ScopeTree::set_expanded(int scope, bool expanded) {
  if (scope <= 0 || scope >= static_cast<int>(scopes_.size())) return;
  if (expanded) {
    for (int a = scope; a > 0; a = scopes_[a].parent) scopes_[a].expanded = true;
    // Through a chain of scopes that hold one scope and nothing else.
    for (int s = scope; scopes_[s].items.empty() && scopes_[s].children.size() == 1;) {
      s = scopes_[s].children[0];
      scopes_[s].expanded = true;
    }
    return;
  }
  std::vector<int> stack{scope};
  while (!stack.empty()) {
    Scope& s = scopes_[stack.back()];
    stack.pop_back();
    // A box standing for a single node would only hide its label.
    s.expanded = s.item_count <= 1;
    for (int c : s.children) stack.push_back(c);
  }
}

void ScopeTree::collapse_all() {
  for (int c : std::vector<int>(scopes_[0].children)) set_expanded(c, false);
}

void ScopeTree::expand_all() {
  for (Scope& s : scopes_) s.expanded = true;
}

std::vector<bool> ScopeTree::expansion() const {
  std::vector<bool> out;
  for (const Scope& s : scopes_) out.push_back(s.expanded);
  return out;
}

void ScopeTree::set_expansion(const std::vector<bool>& expanded) {
  if (expanded.size() != scopes_.size()) return;
  for (size_t i = 1; i < scopes_.size(); ++i) scopes_[i].expanded = expanded[i];
}

int ScopeTree::expand_to_fit(int max_visible) {
  collapse_all();
  int count = visible_count();
  std::set<int> tried;
  for (bool changed = true; changed;) {
    changed = false;
    // The shallowest collapsed boxes first, the larger ones first within a depth.
    std::vector<int> boxes;
    for (const Visible& v : visible())
      if (v.box && !tried.count(v.index)) boxes.push_back(v.index);
    std::sort(boxes.begin(), boxes.end(), [&](int a, int b) {
      const Scope &x = scopes_[a], &y = scopes_[b];
      return x.depth != y.depth             ? x.depth < y.depth
             : x.item_count != y.item_count ? x.item_count > y.item_count
                                            : a < b;
    });
    for (int s : boxes) {
      tried.insert(s);
      set_expanded(s, true);
      const int now = visible_count();
      if (now > max_visible) {
        set_expanded(s, false);
        continue;
      }
      count = now;
      changed = true;
      break;  // the set of boxes changed: pick again, shallowest first
    }
  }
  return count;
}

std::vector<MergedEdge> merge_edges(const ScopeTree& tree,
                                    const std::vector<std::pair<int, int>>& edges) {
  std::vector<MergedEdge> out;
  std::map<std::pair<Visible, Visible>, size_t> index;
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto [from, to] = edges[e];
    if (from < 0 || to < 0 || from >= tree.item_count() || to >= tree.item_count()) continue;
    const Visible a = tree.visible_of(from), b = tree.visible_of(to);
    if (a == b) continue;  // inside one box
    auto [it, fresh] = index.emplace(std::make_pair(a, b), out.size());
    if (fresh) out.push_back({a, b, 0, static_cast<int>(e)});
    ++out[it->second].count;
  }
  return out;
}

}  // namespace hf::viewer
