#include "viewer/layout/dot_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace hf::viewer {

namespace {

std::mutex g_mutex;     // Graphviz is not thread-safe
std::string* g_errors;  // where agerr's messages go while g_mutex is held

int collect_error(char* msg) {
  if (g_errors && msg) *g_errors += msg;
  return 0;
}

GVC_t* context() {
  static GVC_t* gvc = [] {
    agseterrf(collect_error);
    agseterr(AGERR);  // warnings are not errors; they are dropped
    return gvContext();
  }();
  return gvc;
}

std::string attr(void* obj, const char* name) {
  const char* v = agget(obj, const_cast<char*>(name));
  return v ? std::string(v) : std::string();
}

bool has_word(const std::string& style, const char* word) {
  // style="rounded,filled,bold": comma separated words (possibly with spaces).
  size_t pos = 0;
  const size_t n = std::strlen(word);
  while ((pos = style.find(word, pos)) != std::string::npos) {
    const bool start = pos == 0 || style[pos - 1] == ',' || style[pos - 1] == ' ';
    const bool end = pos + n == style.size() || style[pos + n] == ',' || style[pos + n] == ' ' ||
                     style[pos + n] == '(';
    if (start && end) return true;
    pos += n;
  }
  return false;
}

std::vector<TextLine> label_lines(textlabel_t* l) {
  std::vector<TextLine> out;
  if (!l || l->html) return out;
  for (int i = 0; i < l->u.txt.nspans; ++i) {
    const textspan_t& s = l->u.txt.span[i];
    out.push_back({s.str ? std::string(s.str) : std::string(), s.just ? s.just : 'n'});
  }
  return out;
}

std::string trim_trailing_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

struct Reader {
  boxf bb;
  GraphLayout out;
  std::unordered_map<Agnode_t*, int> index;

  Vec2 P(pointf p) const {
    return {static_cast<float>(p.x - bb.LL.x), static_cast<float>(bb.UR.y - p.y)};
  }

  void node(Agnode_t* n) {
    LayoutNode ln;
    ln.name = agnameof(n);
    ln.center = P(ND_coord(n));
    ln.size = {static_cast<float>(ND_width(n) * 72), static_cast<float>(ND_height(n) * 72)};
    const std::string shape = attr(n, "shape"), style = attr(n, "style");
    if (shape == "ellipse" || shape == "oval" || shape == "circle" || shape == "doublecircle" ||
        shape == "point")
      ln.shape = NodeShape::Ellipse;
    else if (shape == "plaintext" || shape == "plain" || shape == "none" || shape == "underline")
      ln.shape = NodeShape::Plain;
    ln.rounded = has_word(style, "rounded");
    ln.dashed = has_word(style, "dashed") || has_word(style, "dotted");
    ln.filled = has_word(style, "filled") || has_word(style, "rounded");
    textlabel_t* l = ND_label(n);
    ln.html = l && l->html;
    ln.lines = label_lines(l);
    if (l) ln.font_size = static_cast<float>(l->fontsize);
    ln.tooltip = attr(n, "tooltip");
    const std::string fill = attr(n, "fillcolor"), color = attr(n, "color"),
                      font = attr(n, "fontcolor");
    ln.explicit_fill = !fill.empty() && fill != "white";
    if (auto c = parse_color(color)) ln.border = *c;
    if (auto c = parse_color(fill)) {
      ln.fill = *c;
    } else if (ln.filled) {
      ln.fill = parse_color(color).value_or(rgba(211, 211, 211));
    }
    if (!ln.filled) ln.fill = rgba(255, 255, 255, 0);
    if (auto c = parse_color(font)) ln.text = *c;
    const std::string per = attr(n, "peripheries");
    if (!per.empty()) ln.peripheries = std::max(0, std::atoi(per.c_str()));
    if (ln.shape == NodeShape::Plain && per.empty()) ln.peripheries = 0;
    const std::string pw = attr(n, "penwidth");
    if (!pw.empty()) ln.penwidth = static_cast<float>(std::atof(pw.c_str()));
    if (has_word(style, "bold")) ln.penwidth = std::max(ln.penwidth, 2.0f);
    index[n] = static_cast<int>(out.nodes.size());
    out.nodes.push_back(std::move(ln));
  }

  void edge(Agedge_t* e) {
    splines* spl = ED_spl(e);
    LayoutEdge base;
    base.from = index.at(agtail(e));
    base.to = index.at(aghead(e));
    base.tooltip = attr(e, "tooltip");
    if (auto c = parse_color(attr(e, "color"))) base.color = *c;
    if (auto c = parse_color(attr(e, "fontcolor"))) base.text = *c;
    if (textlabel_t* l = ED_label(e); l && !l->html) {
      base.has_label = true;
      base.label = trim_trailing_newlines(l->text ? l->text : "");
      auto lines = label_lines(l);
      if (!lines.empty()) {
        base.label.clear();
        for (size_t i = 0; i < lines.size(); ++i) base.label += (i ? "\n" : "") + lines[i].text;
      }
      base.label_pos = P(l->pos);
      base.font_size = static_cast<float>(l->fontsize);
    }
    if (!spl || spl->size == 0) {
      out.edges.push_back(std::move(base));
      return;
    }
    for (int b = 0; b < spl->size; ++b) {
      const bezier& bz = spl->list[b];
      LayoutEdge le = base;
      if (b > 0) le.has_label = false;
      for (int i = 0; i < bz.size; ++i) le.points.push_back(P(bz.list[i]));
      le.arrow_start = bz.sflag != 0;
      le.arrow_end = bz.eflag != 0;
      le.start_tip = P(bz.sp);
      le.end_tip = P(bz.ep);
      out.edges.push_back(std::move(le));
    }
  }

  void cluster(Agraph_t* sg) {
    LayoutCluster c;
    c.name = agnameof(sg);
    const boxf b = GD_bb(sg);
    c.min = P({b.LL.x, b.UR.y});
    c.max = P({b.UR.x, b.LL.y});
    if (textlabel_t* l = GD_label(sg)) {
      c.label = label_lines(l);
      c.label_pos = P(l->pos);
      c.label_size = {static_cast<float>(l->dimen.x), static_cast<float>(l->dimen.y)};
      c.font_size = static_cast<float>(l->fontsize);
    }
    c.tooltip = attr(sg, "tooltip");
    const std::string style = attr(sg, "style");
    c.filled = has_word(style, "filled");
    c.dashed = has_word(style, "dashed");
    c.dotted = has_word(style, "dotted");
    c.bold = has_word(style, "bold");
    c.rounded = has_word(style, "rounded");
    if (auto col = parse_color(attr(sg, "color"))) c.border = *col;
    if (auto col = parse_color(attr(sg, "pencolor"))) c.border = *col;
    if (auto col = parse_color(attr(sg, "fontcolor"))) c.text = *col;
    if (c.filled) {
      const std::string fill = attr(sg, "fillcolor");
      c.fill = parse_color(fill.empty() ? attr(sg, "color") : fill).value_or(rgba(211, 211, 211));
    }
    const int ci = static_cast<int>(out.clusters.size());
    for (Agnode_t* n = agfstnode(sg); n; n = agnxtnode(sg, n)) {
      auto it = index.find(n);
      if (it == index.end()) continue;
      c.nodes.push_back(it->second);
      out.nodes[it->second].cluster = ci;  // children, visited later, overwrite: innermost wins
    }
    out.clusters.push_back(std::move(c));
    for (int i = 1; i <= GD_n_cluster(sg); ++i) cluster(GD_clust(sg)[i]);
  }
};

}  // namespace

GraphLayout layout_dot(const std::string& dot_text) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto t0 = std::chrono::steady_clock::now();
  std::string errors;
  g_errors = &errors;
  struct Reset {
    ~Reset() { g_errors = nullptr; }
  } reset;
  GVC_t* gvc = context();
  if (!gvc) throw LayoutError("Graphviz: no context (is the graphviz package installed?)");
  agreseterrors();

  if (dot_text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw LayoutError("the file is empty");
  Agraph_t* g = agmemread(dot_text.c_str());
  if (!g) {
    throw LayoutError("not a valid DOT graph" +
                      (errors.empty() ? std::string() : ": " + trim_trailing_newlines(errors)));
  }
  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    throw LayoutError("Graphviz could not lay it out" +
                      (errors.empty() ? std::string() : ": " + trim_trailing_newlines(errors)));
  }

  Reader r;
  r.bb = GD_bb(g);
  r.out.size = {static_cast<float>(r.bb.UR.x - r.bb.LL.x),
                static_cast<float>(r.bb.UR.y - r.bb.LL.y)};
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) r.node(n);
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n))
    for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) r.edge(e);
  for (int i = 1; i <= GD_n_cluster(g); ++i) r.cluster(GD_clust(g)[i]);
  if (textlabel_t* l = GD_label(g)) {
    r.out.title = label_lines(l);
    r.out.title_pos = r.P(l->pos);
    r.out.title_size = {static_cast<float>(l->dimen.x), static_cast<float>(l->dimen.y)};
    r.out.title_font_size = static_cast<float>(l->fontsize);
  }
  // Not gvFreeLayout: Graphviz 2.42's dot_cleanup double-frees the virtual nodes of edge
  // labels in graphs with clusters (exactly what after.dot has), aborting the process on
  // graphs of a few thousand nodes. agclose frees the graph and its records; dot's own
  // rank and virtual-node data (a few MB for thousands of nodes) is left, once per layout.
  agclose(g);

  index_layout(r.out);
  r.out.layout_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::move(r.out);
}

}  // namespace hf::viewer
