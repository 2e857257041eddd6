#include "viewer/model/graph_layout.h"

#include <algorithm>
#include <cctype>

namespace hf::viewer {

namespace {

bool inside(Vec2 p, Vec2 min, Vec2 max, float slack) {
  return p.x >= min.x - slack && p.x <= max.x + slack && p.y >= min.y - slack &&
         p.y <= max.y + slack;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool all_digits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace

NodeKind node_kind_of(const std::string& name, int64_t* node_id) {
  if (node_id) *node_id = -1;
  if (name.size() > 1 && name[0] == 'n' && all_digits(name, 1)) {
    if (node_id) *node_id = std::stoll(name.substr(1));
    return NodeKind::Op;
  }
  if (name.rfind("in", 0) == 0 && all_digits(name, 2)) return NodeKind::Input;
  if (name.rfind("out", 0) == 0 && all_digits(name, 3)) return NodeKind::Output;
  return NodeKind::Other;
}

std::vector<TextLine> split_label(const std::string& label, const std::string& node_name,
                                  const std::string& graph_name) {
  std::vector<TextLine> lines;
  std::string cur;
  for (size_t i = 0; i < label.size(); ++i) {
    char c = label[i];
    if (c == '\\' && i + 1 < label.size()) {
      char e = label[++i];
      switch (e) {
        case 'n':
        case 'l':
        case 'r':
          lines.push_back({cur, e});
          cur.clear();
          continue;
        case 'N':
          cur += node_name;
          continue;
        case 'G':
          cur += graph_name;
          continue;
        default:
          cur += e;
          continue;
      }
    }
    if (c == '\n') {
      lines.push_back({cur, 'n'});
      cur.clear();
      continue;
    }
    cur += c;
  }
  // A trailing line terminator ends the last line; otherwise the rest is a centred line.
  if (!cur.empty() || lines.empty()) lines.push_back({cur, 'n'});
  return lines;
}

void index_layout(GraphLayout& g) {
  g.by_node_id.clear();
  g.by_name.clear();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    LayoutNode& n = g.nodes[i];
    n.kind = node_kind_of(n.name, &n.node_id);
    if (n.node_id >= 0) g.by_node_id.emplace(n.node_id, static_cast<int>(i));
    g.by_name.emplace(n.name, static_cast<int>(i));
    n.in_edges.clear();
    n.out_edges.clear();
  }
  for (size_t e = 0; e < g.edges.size(); ++e) {
    LayoutEdge& edge = g.edges[e];
    if (edge.from >= 0) g.nodes[edge.from].out_edges.push_back(static_cast<int>(e));
    if (edge.to >= 0) g.nodes[edge.to].in_edges.push_back(static_cast<int>(e));
    Vec2 mn{1e30f, 1e30f}, mx{-1e30f, -1e30f};
    auto grow = [&](Vec2 p) {
      mn.x = std::min(mn.x, p.x);
      mn.y = std::min(mn.y, p.y);
      mx.x = std::max(mx.x, p.x);
      mx.y = std::max(mx.y, p.y);
    };
    for (Vec2 p : edge.points) grow(p);
    if (edge.arrow_end) grow(edge.end_tip);
    if (edge.arrow_start) grow(edge.start_tip);
    if (edge.has_label) {
      const float w = edge.font_size * 0.6f * edge.label.size() / 2 + 2, h = edge.font_size;
      grow({edge.label_pos.x - w, edge.label_pos.y - h});
      grow({edge.label_pos.x + w, edge.label_pos.y + h});
    }
    if (mn.x > mx.x) mn = mx = {0, 0};
    edge.min = mn;
    edge.max = mx;
  }
  for (LayoutCluster& c : g.clusters) {
    // "cluster_<kind>_<region>", or "cluster_scope<N>" (scope_graph.h: an expanded scope)
    const std::string& s = c.name;
    if (s.rfind("cluster_scope", 0) == 0 && s.size() > 13 && s.size() < 22 && all_digits(s, 13)) {
      c.kind = "scope";
      c.scope = std::stoi(s.substr(13));
    } else if (s.rfind("cluster_", 0) == 0) {
      std::string rest = s.substr(8);
      auto us = rest.rfind('_');
      if (us != std::string::npos && all_digits(rest, us + 1)) {
        c.kind = rest.substr(0, us);
        c.region = std::stoll(rest.substr(us + 1));
      } else {
        c.kind = rest;
      }
    }
  }
}

int GraphLayout::find_node_id(int64_t node_id) const {
  auto it = by_node_id.find(node_id);
  return it == by_node_id.end() ? -1 : it->second;
}

int GraphLayout::find_name(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? -1 : it->second;
}

int GraphLayout::node_at(Vec2 p, float slack) const {
  for (size_t i = nodes.size(); i-- > 0;) {
    const LayoutNode& n = nodes[i];
    const Vec2 mn{n.center.x - n.size.x / 2, n.center.y - n.size.y / 2};
    const Vec2 mx{n.center.x + n.size.x / 2, n.center.y + n.size.y / 2};
    if (inside(p, mn, mx, slack)) return static_cast<int>(i);
  }
  return -1;
}

int GraphLayout::cluster_at(Vec2 p) const {
  int best = -1;
  float best_area = 0;
  for (size_t i = 0; i < clusters.size(); ++i) {
    const LayoutCluster& c = clusters[i];
    if (!inside(p, c.min, c.max, 0)) continue;
    const float area = (c.max.x - c.min.x) * (c.max.y - c.min.y);
    if (best < 0 || area < best_area) {
      best = static_cast<int>(i);
      best_area = area;
    }
  }
  return best;
}

int GraphLayout::cluster_of_region(int64_t region) const {
  if (region < 0) return -1;  // scope outlines have none
  for (size_t i = 0; i < clusters.size(); ++i)
    if (clusters[i].region == region) return static_cast<int>(i);
  return -1;
}

std::vector<int> GraphLayout::search(const std::string& text) const {
  std::vector<int> out;
  const std::string needle = lower(text);
  if (needle.empty()) return out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const LayoutNode& n = nodes[i];
    bool hit = lower(n.name).find(needle) != std::string::npos;
    for (size_t l = 0; !hit && l < n.lines.size(); ++l)
      hit = lower(n.lines[l].text).find(needle) != std::string::npos;
    if (hit) out.push_back(static_cast<int>(i));
  }
  return out;
}

}  // namespace hf::viewer
