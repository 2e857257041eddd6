// hotfuse-view's Graph panel at model scale (viewer/model/scope_tree.h, name_elide.h,
// scope_graph.h, graph_title.h; with Graphviz, viewer/layout/scope_layout.h): grouping nodes
// by their ONNX name scopes, what a collapsed box sums up, collapsing and expanding, edges
// between boxes merged, names shortened in the middle, the layout direction, the after
// graph's title, and (with libgvc) the committed ~300-node synthetic dump
// (tests/data/viewer/scoped300, viewer/tools/make_scoped_dump.py) laid out readable.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "viewer/model/dump.h"
#include "viewer/model/graph_title.h"
#include "viewer/model/name_elide.h"
#include "viewer/model/scope_graph.h"
#include "viewer/model/scope_tree.h"
#include "viewer/model/view_transform.h"
#ifdef HF_VIEWER_HAVE_LAYOUT
#include "viewer/layout/dot_layout.h"
#include "viewer/layout/scope_layout.h"
#endif

namespace hf::viewer {
namespace {

namespace fs = std::filesystem;
const fs::path kScoped = fs::path(HF_SOURCE_DIR) / "tests/data/viewer/scoped300";

ScopeItem item(std::string name, double share = 0, std::string fused = {}, bool adoptable = false) {
  return {std::move(name), share, std::move(fused), adoptable};
}

// The scope with this path, or -1.
int scope(const ScopeTree& t, const std::string& path) {
  for (size_t i = 0; i < t.scopes().size(); ++i)
    if (t.scopes()[i].path == path) return static_cast<int>(i);
  return -1;
}

std::set<std::string> visible_names(const ScopeTree& t, const std::vector<ScopeItem>& items) {
  std::set<std::string> out;
  for (const Visible& v : t.visible())
    out.insert(v.box ? "box " + t.scopes()[v.index].path : items[v.index].name);
  return out;
}

// ---- scope hierarchy -------------------------------------------------------------------------

TEST(ViewerGraphScopes, ScopeOfName) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ScopeTree::scope_of("/layer4/layer4.1/conv1/Conv"), (V{"layer4", "layer4.1", "conv1"}));
  EXPECT_EQ(ScopeTree::scope_of("fused_/features/features.0/Conv/conv"),
            (V{"features", "features.0", "Conv"}));
  EXPECT_EQ(ScopeTree::scope_of("/Conv"), V{});
  EXPECT_EQ(ScopeTree::scope_of("onnx::Conv_538"), V{});
  EXPECT_EQ(ScopeTree::scope_of("fc.bias"), V{});
  EXPECT_EQ(ScopeTree::scope_of(""), V{});
  EXPECT_EQ(ScopeTree::scope_of("/"), V{});
  EXPECT_EQ(ScopeTree::scope_of("//a//b/"), (V{"a", "b"}));  // empty components skipped
}

TEST(ViewerGraphScopes, HierarchyFromNames) {
  const std::vector<ScopeItem> items = {
      item("/layer4/layer4.1/conv1/Conv"),
      item("/layer4/layer4.1/relu/Relu"),
      item("/layer4/layer4.0/conv1/Conv"),
      item("/fc/Gemm"),
      item("/fc/Add"),
      item("output"),
  };
  const ScopeTree t = ScopeTree::build(items);
  const int l4 = scope(t, "/layer4"), l41 = scope(t, "/layer4/layer4.1"),
            c1 = scope(t, "/layer4/layer4.1/conv1"), l40c = scope(t, "/layer4/layer4.0/conv1");
  ASSERT_GE(l4, 0);
  ASSERT_GE(l41, 0);
  ASSERT_GE(c1, 0);
  ASSERT_GE(l40c, 0);
  EXPECT_EQ(t.scopes()[l41].parent, l4);
  EXPECT_EQ(t.scopes()[c1].parent, l41);
  EXPECT_EQ(t.scopes()[l4].parent, 0);
  EXPECT_EQ(t.scopes()[c1].depth, 3);
  EXPECT_EQ(t.scopes()[l41].name, "layer4.1");
  EXPECT_EQ(t.scopes()[l4].item_count, 3);
  EXPECT_EQ(t.scopes()[l41].item_count, 2);
  EXPECT_EQ(t.scopes()[scope(t, "/fc")].item_count, 2);
  EXPECT_EQ(t.item_scope(0), c1);
  // Two conv1 scopes: the same name under different parents is two scopes.
  EXPECT_NE(c1, l40c);
  // No scope: directly under the root.
  EXPECT_EQ(t.item_scope(5), 0);
  EXPECT_EQ(t.scopes()[0].item_count, 6);
}

TEST(ViewerGraphScopes, AggregatesShareAndFusedMarks) {
  const std::vector<ScopeItem> items = {
      item("/a/b/x", 0.10, "kept"),     item("/a/b/y", 0.05, "kept"),
      item("/a/c/z", 0.20, "reverted"), item("/a/w", 0.01),
      item("/d/v", 0.30, "rejected"),   item("u", 0.04)};
  const ScopeTree t = ScopeTree::build(items);
  const Scope& a = t.scopes()[scope(t, "/a")];
  EXPECT_NEAR(a.share, 0.36, 1e-9);
  EXPECT_EQ(a.item_count, 4);
  EXPECT_EQ(a.fused.at("kept"), 2);
  EXPECT_EQ(a.fused.at("reverted"), 1);
  EXPECT_EQ(a.fused.count("rejected"), 0u);
  EXPECT_EQ(main_fused_kind(a), "kept");
  const Scope& ac = t.scopes()[scope(t, "/a/c")];
  EXPECT_EQ(main_fused_kind(ac), "reverted");
  EXPECT_EQ(main_fused_kind(t.scopes()[scope(t, "/a/b")]), "kept");
  EXPECT_NEAR(t.scopes()[0].share, 0.70, 1e-9);
}

TEST(ViewerGraphScopes, UnscopedConstantsJoinTheirConsumers) {
  const std::vector<ScopeItem> items = {
      item("/f/f.1/conv/Conv"),              // 0
      item("/f/f.1/relu/Relu"),              // 1
      item("/f/f.2/conv/Conv"),              // 2
      item("onnx::Conv_500", 0, {}, true),   // 3: feeds 0 only
      item("onnx::Conv_501", 0, {}, true),   // 4: feeds 0 and 2
      item("onnx::Conv_502", 0, {}, false),  // 5: not adoptable
      item("orphan_constant", 0, {}, true),  // 6: feeds nothing
      item("fc.weight", 0, {}, true),        // 7: feeds an unscoped node
      item("output"),                        // 8
  };
  const ScopeTree t = ScopeTree::build(items, {{3, 0}, {4, 0}, {4, 2}, {5, 0}, {7, 8}, {0, 1}});
  EXPECT_EQ(t.item_scope(3), scope(t, "/f/f.1/conv"));
  EXPECT_EQ(t.item_scope(4), scope(t, "/f"));
  EXPECT_EQ(t.item_scope(5), 0);
  EXPECT_EQ(t.item_scope(6), 0);
  EXPECT_EQ(t.item_scope(7), 0);
  EXPECT_EQ(t.scopes()[scope(t, "/f")].item_count, 5);
}

TEST(ViewerGraphScopes, CollapsedAtFirstAndExpandedOnRequest) {
  const std::vector<ScopeItem> items = {item("/a/b/x"),  item("/a/b/y"), item("/a/c/z"),
                                        item("/a/c/z2"), item("/d/v"),   item("u")};
  ScopeTree t = ScopeTree::build(items);
  // Collapsed: the top-level scopes are boxes; /d holds one node, so it is shown as the node.
  EXPECT_EQ(visible_names(t, items), (std::set<std::string>{"box /a", "/d/v", "u"}));
  EXPECT_EQ(t.visible_of(0), (Visible{true, scope(t, "/a")}));
  EXPECT_EQ(t.visible_of(5), (Visible{false, 5}));
  EXPECT_FALSE(t.all_expanded());

  t.toggle(scope(t, "/a"));
  EXPECT_EQ(visible_names(t, items), (std::set<std::string>{"box /a/b", "box /a/c", "/d/v", "u"}));
  EXPECT_EQ(t.visible_of(0), (Visible{true, scope(t, "/a/b")}));

  // Expanding a deep scope expands its parents; collapsing a parent hides it again.
  t.collapse_all();
  t.set_expanded(scope(t, "/a/c"), true);
  EXPECT_EQ(visible_names(t, items),
            (std::set<std::string>{"box /a/b", "/a/c/z", "/a/c/z2", "/d/v", "u"}));
  t.set_expanded(scope(t, "/a"), false);
  EXPECT_EQ(visible_names(t, items), (std::set<std::string>{"box /a", "/d/v", "u"}));
  EXPECT_FALSE(t.scopes()[scope(t, "/a/c")].expanded);  // the whole subtree collapsed

  t.expand_all();
  EXPECT_TRUE(t.all_expanded());
  EXPECT_EQ(t.visible_count(), 6);
  // Bad indices are ignored.
  t.toggle(-1);
  t.toggle(1000);
  t.set_expanded(0, false);
  EXPECT_TRUE(t.all_expanded());
}

TEST(ViewerGraphScopes, ChainOfSingleScopesExpandsInOneClick) {
  const std::vector<ScopeItem> items = {item("/m/only/deeper/a"), item("/m/only/deeper/b"),
                                        item("/m/only/deeper/c")};
  ScopeTree t = ScopeTree::build(items);
  EXPECT_EQ(visible_names(t, items), (std::set<std::string>{"box /m"}));
  t.toggle(scope(t, "/m"));
  EXPECT_EQ(t.visible_count(), 3);
}

TEST(ViewerGraphScopes, ExpandToFitKeepsWithinTheBudget) {
  std::vector<ScopeItem> items;
  for (int b = 0; b < 8; ++b)
    for (int l = 0; l < 3; ++l)
      for (int i = 0; i < 4; ++i)
        items.push_back(item("/net/block" + std::to_string(b) + "/layer" + std::to_string(l) +
                             "/op" + std::to_string(i)));
  ScopeTree t = ScopeTree::build(items);
  int last = 0;
  for (int budget : {1, 5, 8, 12, 30, 60, 200}) {
    const int n = t.expand_to_fit(budget);
    EXPECT_EQ(n, t.visible_count());
    if (budget >= 8) {
      EXPECT_LE(n, budget) << budget;
    }
    EXPECT_GE(n, last) << "a larger budget never shows less";
    last = n;
  }
  EXPECT_EQ(t.expand_to_fit(1000), static_cast<int>(items.size()));
  EXPECT_TRUE(t.all_expanded());
  // 8 blocks (one box each) fit a budget of 9; one more block's 3 layers do not (8 - 1 + 3).
  EXPECT_EQ(t.expand_to_fit(9), 8);
  // With 10, one block is expanded (the shallowest, larger boxes first): within the budget.
  EXPECT_EQ(t.expand_to_fit(10), 10);
  EXPECT_EQ(t.expand_to_fit(9), 8);
  // Expansion state round-trips.
  const std::vector<bool> saved = t.expansion();
  t.expand_all();
  t.set_expansion(saved);
  EXPECT_EQ(t.visible_count(), 8);
}

TEST(ViewerGraphScopes, EdgesBetweenBoxesAreMerged) {
  const std::vector<ScopeItem> items = {item("/a/x"), item("/a/y"), item("/b/x"),
                                        item("/b/y"), item("in"),   item("out")};
  ScopeTree t = ScopeTree::build(items);
  const std::vector<std::pair<int, int>> edges = {{4, 0}, {0, 1}, {0, 2}, {1, 2}, {1, 3},
                                                  {2, 3}, {3, 5}, {4, 1}, {9, 0}, {-1, 2}};
  std::vector<MergedEdge> m = merge_edges(t, edges);
  const Visible A{true, scope(t, "/a")}, B{true, scope(t, "/b")};
  auto find = [&](Visible f, Visible to) -> const MergedEdge* {
    for (const MergedEdge& e : m)
      if (e.from == f && e.to == to) return &e;
    return nullptr;
  };
  ASSERT_EQ(m.size(), 3u);  // in -> /a (2 edges), /a -> /b (3), /b -> out (1)
  ASSERT_TRUE(find(Visible{false, 4}, A));
  EXPECT_EQ(find(Visible{false, 4}, A)->count, 2);
  ASSERT_TRUE(find(A, B));
  EXPECT_EQ(find(A, B)->count, 3);
  EXPECT_EQ(find(A, B)->first, 2);
  EXPECT_EQ(find(B, Visible{false, 5})->count, 1);
  // Expanded: every edge between two items is its own again (out-of-range ones skipped).
  t.expand_all();
  EXPECT_EQ(merge_edges(t, edges).size(), 8u);
}

// ---- names shortened in the middle -------------------------------------------------------------

TEST(ViewerGraphNames, ElideKeepsTheDistinguishingTail) {
  const std::string n = "/features/features.2/conv/conv.1/Conv";
  EXPECT_EQ(elide_middle(n, 100), n);
  EXPECT_EQ(elide_middle(n, utf8_length(n)), n);
  EXPECT_EQ(elide_middle(n, 30), "/features/\xe2\x80\xa6/conv/conv.1/Conv");
  EXPECT_EQ(elide_middle(n, 18), "/features/\xe2\x80\xa6/Conv");
  EXPECT_EQ(elide_middle(n, 8), "\xe2\x80\xa6/Conv");
  EXPECT_EQ(elide_middle(n, 3), "\xe2\x80\xa6nv");
  EXPECT_EQ(elide_middle(n, 1), "\xe2\x80\xa6");
  EXPECT_EQ(elide_middle(n, 0.5f), "");
  // Two names that differ only at the end stay different.
  EXPECT_NE(elide_middle("/features/features.2/conv/conv.1/conv.1.0/Conv", 20),
            elide_middle("/features/features.2/conv/conv.1/conv.1.2/Clip", 20));
  // Not a path: a third from the start, the rest from the end.
  EXPECT_EQ(elide_middle("onnx::Conv_538_long_name", 12), "onn\xe2\x80\xa6ong_name");
}

TEST(ViewerGraphNames, ElideRespectsTheWidthAndUtf8) {
  const std::vector<std::string> names = {
      "/features/features.2/conv/conv.1/Conv",
      "/a/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9/\xc3\x9f",
      "/\xe6\x97\xa5\xe6\x9c\xac/\xe8\xaa\x9e\xe8\xaa\x9e\xe8\xaa\x9e/\xe5\xb1\xa4/x",
      "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
      "abc\xf0\x9f\x98\x80",
      "plain_name_without_slashes",
      "/",
      "",
      "//x//"};
  // A measure in "pixels": wide for non-ASCII, narrow for ASCII.
  const TextWidth px = [](std::string_view s) {
    float w = 0;
    for (char c : s) {
      const unsigned char u = static_cast<unsigned char>(c);
      if ((u & 0xc0) != 0x80) w += u < 0x80 ? 6.5f : 12.0f;
    }
    return w;
  };
  auto valid_utf8 = [](const std::string& s) {
    for (size_t i = 0; i < s.size();) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      const size_t len = c < 0x80         ? 1
                         : (c >> 5) == 6  ? 2
                         : (c >> 4) == 14 ? 3
                         : (c >> 3) == 30 ? 4
                                          : 0;
      if (len == 0 || i + len > s.size()) return false;
      for (size_t k = 1; k < len; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
      i += len;
    }
    return true;
  };
  for (const std::string& n : names) {
    for (float w = 0; w <= 260; w += 3.5f) {
      const std::string e = elide_middle(n, w, px);
      EXPECT_LE(px(e), w) << n << " in " << w;
      EXPECT_TRUE(valid_utf8(e)) << n << " in " << w << ": " << e;
      const std::string c = elide_middle(n, w / 6.5f);
      EXPECT_LE(utf8_length(c), w / 6.5f);
      EXPECT_TRUE(valid_utf8(c));
    }
  }
  EXPECT_EQ(utf8_length("a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80"), 4);
}

// ---- layout direction, box names -------------------------------------------------------------

TEST(ViewerGraphLayoutDirection, ChoosesWhatFitsThePanel) {
  const Vec2 wide_panel{1200, 400}, tall_panel{400, 900};
  const Vec2 tall_chain{120, 3000};  // a chain laid out top-to-bottom
  EXPECT_EQ(choose_rank_dir(tall_chain, {}, wide_panel), RankDir::LeftRight);
  EXPECT_EQ(choose_rank_dir(tall_chain, {}, tall_panel), RankDir::TopBottom);
  EXPECT_EQ(choose_rank_dir({1500, 300}, {}, wide_panel), RankDir::TopBottom);
  // The real left-to-right layout, when known, decides: here it is no better.
  EXPECT_EQ(choose_rank_dir(tall_chain, {12000, 80}, wide_panel), RankDir::TopBottom);
  EXPECT_EQ(choose_rank_dir(tall_chain, {3000, 120}, wide_panel), RankDir::LeftRight);
  // Nearly equal: top-to-bottom, the dump's own direction.
  EXPECT_EQ(choose_rank_dir({1000, 1000}, {1000, 980}, {800, 800}), RankDir::TopBottom);
  // Degenerate sizes do not crash and keep the dump's direction.
  EXPECT_EQ(choose_rank_dir({0, 0}, {}, wide_panel), RankDir::TopBottom);
  EXPECT_EQ(choose_rank_dir(tall_chain, {}, {0, 0}), RankDir::TopBottom);
  EXPECT_FLOAT_EQ(fit_zoom({200, 100}, {400, 400}), 2.0f);
  EXPECT_EQ(fit_zoom({0, 100}, {400, 400}), 0.0f);
}

TEST(ViewerGraphLayoutDirection, BoxNames) {
  EXPECT_EQ(scope_of_dot_name("scope12"), 12);
  EXPECT_EQ(scope_of_dot_name("scope0"), 0);
  EXPECT_EQ(scope_of_dot_name("scope"), -1);
  EXPECT_EQ(scope_of_dot_name("scope1x"), -1);
  EXPECT_EQ(scope_of_dot_name("n12"), -1);
  EXPECT_EQ(scope_of_dot_name("scope99999999999999"), -1);
}

// ---- the collapsed graph's DOT ---------------------------------------------------------------

// A hand-made laid-out graph: one op node per name, a chain of edges.
GraphLayout chain_of(const std::vector<std::string>& names) {
  GraphLayout g;
  for (size_t i = 0; i < names.size(); ++i) {
    LayoutNode n;
    n.name = "n" + std::to_string(i);
    n.lines = {{names[i], 'n'}, {"Elemwise ADD", 'n'}, {"f32[4]", 'n'}};
    g.nodes.push_back(n);
    if (i > 0) {
      LayoutEdge e;
      e.from = static_cast<int>(i - 1);
      e.to = static_cast<int>(i);
      e.label = "f32[4]";
      e.has_label = true;
      g.edges.push_back(e);
    }
  }
  index_layout(g);
  return g;
}

TEST(ViewerGraphDot, BoxesSayWhoseWhenNamesRepeat) {
  // /q and /k hold an op of their own besides MatMul: expanding them shows MatMul as a box.
  const GraphLayout g =
      chain_of({"/q/MatMul/a", "/q/MatMul/b", "/q/Add", "/k/MatMul/a", "/k/MatMul/b", "/k/Add",
                "/features/features.3/x", "/features/features.3/y"});
  ScopeGraph sg = ScopeGraph::of(g, {});
  sg.tree.collapse_all();
  sg.tree.set_expanded(scope(sg.tree, "/q"), true);
  sg.tree.set_expanded(scope(sg.tree, "/k"), true);
  const std::string dot = sg.to_dot(g, RankDir::TopBottom);
  EXPECT_NE(dot.find("label=\"/q/MatMul\\n2 ops"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"/k/MatMul\\n2 ops"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"features\\n2 ops"), std::string::npos) << dot;
  EXPECT_NE(dot.find("rankdir=TB"), std::string::npos);
  // Merged: MatMul -> Add -> MatMul -> Add -> features, one edge each.
  EXPECT_EQ(merge_edges(sg.tree, sg.edges).size(), 4u);
  EXPECT_EQ(sg.tree.visible_count(), 5);
}

TEST(ViewerGraphDot, ExpandedScopesAreOutlinedOnceEach) {
  // /a holds only /a/b: one outline (/a/b's), not two around the same nodes. /c holds two
  // boxes and a node: outlined once expanded, and nothing is outlined while collapsed.
  const GraphLayout g = chain_of(
      {"/a/b/x", "/a/b/y", "/c/d/p", "/c/d/q", "/c/e/r", "/c/e/s", "/c/t", "/u/v", "top"});
  ScopeGraph sg = ScopeGraph::of(g, {});
  sg.tree.collapse_all();
  auto outlined = [&](const std::string& dot, const std::string& path) {
    return dot.find("subgraph cluster_scope" + std::to_string(scope(sg.tree, path)) + " {") !=
           std::string::npos;
  };
  std::string dot = sg.to_dot(g, RankDir::TopBottom);
  EXPECT_EQ(dot.find("cluster_scope"), std::string::npos) << dot;
  sg.tree.set_expanded(scope(sg.tree, "/a"), true);  // expands /a/b with it
  sg.tree.set_expanded(scope(sg.tree, "/c"), true);
  dot = sg.to_dot(g, RankDir::TopBottom);
  EXPECT_FALSE(outlined(dot, "/a")) << dot;
  EXPECT_TRUE(outlined(dot, "/a/b")) << dot;
  EXPECT_TRUE(outlined(dot, "/c")) << dot;
  EXPECT_FALSE(outlined(dot, "/c/d")) << "collapsed: a box, not an outline";
  EXPECT_FALSE(outlined(dot, "/u")) << "collapsed";
  // The outline is labelled with the scope's name; its nodes are declared inside it.
  const size_t c = dot.find("subgraph cluster_scope" + std::to_string(scope(sg.tree, "/c")));
  const size_t end = dot.find("  }\n", c);
  const std::string body = dot.substr(c, end - c);
  EXPECT_NE(body.find("label=\"c\""), std::string::npos) << body;
  EXPECT_NE(dot.find("label=\"a/b\""), std::string::npos) << "the chain's outline says its path";
  EXPECT_NE(body.find("scope" + std::to_string(scope(sg.tree, "/c/d")) + " ["), std::string::npos);
  EXPECT_NE(body.find("\"n6\""), std::string::npos) << "/c/t inside /c's outline: " << body;
  EXPECT_EQ(body.find("\"n8\""), std::string::npos) << "top is outside it";
#ifdef HF_VIEWER_HAVE_LAYOUT
  // Laid out: the outline encloses exactly its things.
  sg.tree.expand_all();
  const GraphLayout laid = layout_dot(sg.to_dot(g, RankDir::TopBottom));
  ASSERT_EQ(laid.nodes.size(), g.nodes.size());
  int outlines = 0;
  for (const LayoutCluster& cl : laid.clusters) {
    if (cl.scope < 0) continue;
    ++outlines;
    EXPECT_EQ(cl.kind, "scope");
    EXPECT_EQ(cl.region, -1);
    const std::string path = sg.tree.scopes()[cl.scope].path;
    for (size_t i = 0; i < laid.nodes.size(); ++i) {
      const LayoutNode& n = laid.nodes[i];
      const bool inside_box = n.center.x >= cl.min.x && n.center.x <= cl.max.x &&
                              n.center.y >= cl.min.y && n.center.y <= cl.max.y;
      const bool member = n.lines[0].text.rfind(path + "/", 0) == 0;
      EXPECT_EQ(inside_box, member) << n.lines[0].text << " and the outline of " << path;
    }
  }
  // /a/b, /c, /c/d, /c/e (/u holds one node: no outline; /a only /a/b).
  EXPECT_EQ(outlines, 4);
  EXPECT_EQ(laid.cluster_of_region(-1), -1) << "an outline is no region";
#endif
}

TEST(ViewerGraphDot, NamesThatNeedQuotingStayOneNode) {
  const GraphLayout g =
      chain_of({"/a \"quoted\"/x", "/a \"quoted\"/y\\", "/b\\/z", "/\xc3\xa9t\xc3\xa9/w", "plain"});
  ScopeGraph sg = ScopeGraph::of(g, {});
  const std::string dot = sg.to_dot(g, RankDir::LeftRight);
  EXPECT_NE(dot.find("\\\"quoted\\\""), std::string::npos) << dot;
#ifdef HF_VIEWER_HAVE_LAYOUT
  const GraphLayout laid = layout_dot(dot);
  EXPECT_EQ(static_cast<int>(laid.nodes.size()), sg.tree.visible_count());
  sg.tree.expand_all();
  const GraphLayout all = layout_dot(sg.to_dot(g, RankDir::TopBottom));
  ASSERT_EQ(all.nodes.size(), g.nodes.size());
  EXPECT_EQ(all.nodes[all.find_name("n0")].lines[0].text, "/a \"quoted\"/x");
#endif
}

// ---- zoom to selection -----------------------------------------------------------------------

// F / "Zoom to selection" (GraphCanvas::fit with selection_box): the selected nodes, with
// room around them, fill the free area and are centred in it.
TEST(ViewerGraphZoom, ZoomToSelectionCentresTheSelectedNodesWithRoom) {
  GraphLayout g = chain_of({"/a/x", "/a/y", "/b/z", "/b/w"});
  for (size_t i = 0; i < g.nodes.size(); ++i) {  // a vertical chain, 100 points apart
    g.nodes[i].center = {200, 50 + 100.0f * i};
    g.nodes[i].size = {120, 30};
  }
  Vec2 mn, mx;
  EXPECT_FALSE(selection_box(g, {}, &mn, &mx));
  EXPECT_FALSE(selection_box(g, {-1, 99}, &mn, &mx)) << "bad indices are ignored";
  ASSERT_TRUE(selection_box(g, {2}, &mn, &mx));
  // One node: 40 points of room (30% of 120 is 36, less than 40).
  EXPECT_FLOAT_EQ(mn.x, 140 - 40);
  EXPECT_FLOAT_EQ(mx.x, 260 + 40);
  EXPECT_FLOAT_EQ(mn.y, 235 - 40);
  EXPECT_FLOAT_EQ(mx.y, 265 + 40);
  // Two nodes: the box around both, 30% of it on each side when that is more.
  ASSERT_TRUE(selection_box(g, {0, 3}, &mn, &mx));
  EXPECT_FLOAT_EQ(mn.y, 35 - 0.3f * 330);
  EXPECT_FLOAT_EQ(mx.y, 365 + 0.3f * 330);

  // Shown in an area 600x300 below a 50-pixel title band, 12 pixels in.
  const Vec2 avail{600, 300}, offset{12, 50};
  ASSERT_TRUE(selection_box(g, {2}, &mn, &mx));
  View2D v;
  const float z = std::min(box_zoom(mn, mx, avail), 1.5f);
  EXPECT_FLOAT_EQ(box_zoom(mn, mx, avail), std::min(600.0f / 200, 300.0f / 110));
  v.show_box(mn, mx, z, avail, offset);
  EXPECT_FLOAT_EQ(v.zoom, 1.5f);
  const Vec2 c = v.to_screen(g.nodes[2].center, {0, 0});
  EXPECT_NEAR(c.x, offset.x + avail.x / 2, 1e-3);
  EXPECT_NEAR(c.y, offset.y + avail.y / 2, 1e-3);
  // The whole node is on screen, inside the area.
  const Vec2 a = v.to_screen({140, 235}, {0, 0}), b = v.to_screen({260, 265}, {0, 0});
  EXPECT_GE(a.x, offset.x);
  EXPECT_GE(a.y, offset.y);
  EXPECT_LE(b.x, offset.x + avail.x);
  EXPECT_LE(b.y, offset.y + avail.y);
  // A selection larger than the area at the chosen zoom starts at the area's corner.
  v.show_box({0, 0}, {1000, 1000}, 1.0f, avail, offset);
  EXPECT_NEAR(v.to_screen({0, 0}, {0, 0}).x, offset.x, 1e-3);
  EXPECT_NEAR(v.to_screen({0, 0}, {0, 0}).y, offset.y, 1e-3);
}

// ---- the after graph's title -----------------------------------------------------------------

TEST(ViewerGraphTitle, SaysWhatTheSummarySays) {
  const std::string line =
      "'m' as executed: 103 -> 72 kernels, 8.043 ms -> 5.39 ms per iteration (1.49x)";
  Report r;
  // Nothing fused: no speedup in the summary.
  TitleLine t = after_title(line, &r);
  EXPECT_EQ(t.badge, "nothing fused");
  EXPECT_FALSE(t.speedup);
  EXPECT_EQ(t.text.find("1.49x"), std::string::npos);
  EXPECT_NE(t.text.find("per iteration"), std::string::npos);
  // A speedup but no region kept: still nothing fused.
  r.summary.speedup = 1.49;
  r.summary.regions_kept = 0;
  EXPECT_EQ(after_title(line, &r).badge, "nothing fused");
  // Kept regions: the summary's number, whatever the DOT said.
  r.summary.regions_kept = 3;
  r.summary.speedup = 0.987;
  t = after_title(line, &r);
  EXPECT_EQ(t.badge, "0.99x");
  ASSERT_TRUE(t.speedup);
  EXPECT_LT(*t.speedup, 1.0);
  EXPECT_EQ(t.text, "'m' as executed: 103 -> 72 kernels, 8.043 ms -> 5.39 ms per iteration");
  // Without a report the title is the DOT's.
  EXPECT_EQ(after_title(line, nullptr).text, line);
  EXPECT_EQ(after_title(line, nullptr).badge, "");
}

// ---- the synthetic model dump ------------------------------------------------------------------

TEST(ViewerGraphDump, ScopedDumpLoadsAndGroups) {
  const Dump d = load_dump(kScoped.string());
  ASSERT_TRUE(d.errors.empty()) << d.errors.front();
  ASSERT_TRUE(d.report);
  const std::unordered_map<int64_t, double> shares = node_shares(&*d.report, false);
  EXPECT_GT(shares.size(), 100u);
  double total = 0;
  for (const auto& [id, s] : shares) total += s;
  EXPECT_NEAR(total, 1.0, 1e-6);
  const auto after = node_shares(&*d.report, true);
  EXPECT_NE(after.size(), shares.size());  // the fused plan's rows
  EXPECT_TRUE(node_shares(nullptr, false).empty());
}

#ifdef HF_VIEWER_HAVE_LAYOUT

GraphLayout layout_of(const std::string& file) {
  const Dump d = load_dump((kScoped / file).string());
  return layout_dot(file == "after.dot" ? d.after_dot : d.before_dot);
}

TEST(ViewerGraphDump, CollapsedGraphIsValidDot) {
  const GraphLayout full = layout_of("before.dot");
  ASSERT_GE(full.nodes.size(), 280u);
  ScopeGraph sg = ScopeGraph::of(full, {});
  ASSERT_TRUE(sg.tree.has_scopes());
  EXPECT_GE(sg.tree.scopes()[scope(sg.tree, "/features")].item_count, 250);
  // Weights ("onnx::Conv_5xx") went into the blocks that use them.
  int unscoped_constants = 0;
  for (int i : sg.tree.scopes()[0].items)
    unscoped_constants +=
        full.nodes[i].lines.size() > 1 && full.nodes[i].lines[1].text == "Constant";
  EXPECT_LE(unscoped_constants, 2);

  for (int budget : {5, 20, 60}) {
    sg.tree.expand_to_fit(budget);
    const GraphLayout g = layout_dot(sg.to_dot(full, RankDir::TopBottom));
    EXPECT_EQ(g.nodes.size(), static_cast<size_t>(sg.tree.visible_count())) << budget;
    int boxes = 0;
    for (const LayoutNode& n : g.nodes) boxes += scope_of_dot_name(n.name) >= 0;
    int want = 0;
    for (const Visible& v : sg.tree.visible()) want += v.box;
    EXPECT_EQ(boxes, want);
    EXPECT_GT(boxes, 0);
    EXPECT_EQ(g.edges.size(), merge_edges(sg.tree, sg.edges).size());
  }
  sg.tree.expand_all();
  const GraphLayout all = layout_dot(sg.to_dot(full, RankDir::LeftRight));
  EXPECT_EQ(all.nodes.size(), full.nodes.size());
  EXPECT_GT(all.size.x, all.size.y);  // left to right: a long chain is wide
}

TEST(ViewerGraphDump, AfterGraphKeepsItsRegions) {
  const GraphLayout full = layout_of("after.dot");
  ASSERT_FALSE(full.clusters.empty());
  ScopeGraph sg = ScopeGraph::of(full, {});
  sg.tree.expand_all();
  const GraphLayout g = layout_dot(sg.to_dot(full, RankDir::TopBottom));
  size_t regions = 0;  // the expanded scopes' outlines are clusters too
  for (const LayoutCluster& c : g.clusters) regions += c.scope < 0;
  EXPECT_EQ(regions, full.clusters.size());
  // Every region cluster holds all of its nodes, though they sit in different scopes.
  for (const LayoutCluster& c : g.clusters)
    if (c.scope < 0) {
      for (int n : c.nodes) {
        const LayoutNode& node = g.nodes[n];
        EXPECT_TRUE(node.center.x >= c.min.x && node.center.x <= c.max.x &&
                    node.center.y >= c.min.y && node.center.y <= c.max.y)
            << node.name << " outside " << c.name;
      }
      EXPECT_FALSE(c.nodes.empty()) << c.name;
    }
  std::set<std::string> kinds;
  for (const LayoutCluster& c : g.clusters) kinds.insert(c.kind);
  EXPECT_TRUE(kinds.count("kept") && kinds.count("reverted"));
  // Collapsed, a box carries its fused mark.
  sg.tree.collapse_all();
  const Scope& f = sg.tree.scopes()[scope(sg.tree, "/features")];
  EXPECT_GT(f.fused.at("kept"), 0);
  EXPECT_GT(f.fused.at("reverted"), 0);
}

TEST(ViewerGraphDump, ReadableAtFit) {
  const GraphLayout full = layout_of("before.dot");
  const Dump d = load_dump(kScoped.string());
  for (Vec2 panel : {Vec2{560, 380}, Vec2{1150, 420}, Vec2{1500, 850}}) {
    ScopeLayoutRequest req;
    req.graph = ScopeGraph::of(full, node_shares(&*d.report, false));
    req.panel = panel;
    const ScopeLayout s = layout_scopes(full, req);
    ASSERT_TRUE(s.error.empty()) << s.error;
    EXPECT_FALSE(s.whole);
    const int visible = s.graph.tree.visible_count();
    EXPECT_EQ(static_cast<int>(s.layout.nodes.size()), visible);
    EXPECT_LE(visible, 80);
    EXPECT_GE(fit_zoom(s.layout.size, panel), req.readable_zoom)
        << panel.x << "x" << panel.y << ": " << visible << " visible";
    // The labels drawn are the dump's (name, op, shape, time), not the short layout ones.
    for (const LayoutNode& n : s.layout.nodes) {
      const int i = full.find_name(n.name);
      if (i >= 0) {
        EXPECT_EQ(n.lines.size(), full.nodes[i].lines.size());
      }
    }
  }
  // The side-by-side canvas of a 1600x1000 window: /features opens into its blocks (with
  // its outline's room), not left as one box.
  {
    ScopeLayoutRequest req;
    req.graph = ScopeGraph::of(full, node_shares(&*d.report, false));
    req.panel = {764, 768};
    const ScopeLayout s = layout_scopes(full, req);
    EXPECT_GE(s.graph.tree.visible_count(), 20);
    EXPECT_TRUE(s.graph.tree.scopes()[scope(s.graph.tree, "/features")].expanded);
    EXPECT_GE(fit_zoom(s.layout.size, req.panel), req.readable_zoom);
  }
  // A larger panel shows at least as much.
  ScopeLayoutRequest small, large;
  small.graph = large.graph = ScopeGraph::of(full, {});
  small.panel = {400, 300};
  large.panel = {1800, 1200};
  EXPECT_LE(layout_scopes(full, small).graph.tree.visible_count(),
            layout_scopes(full, large).graph.tree.visible_count());
}

TEST(ViewerGraphDump, DirectionAndManualExpansion) {
  const GraphLayout full = layout_of("before.dot");
  ScopeLayoutRequest req;
  req.graph = ScopeGraph::of(full, {});
  req.graph.tree.expand_all();
  req.auto_expand = false;
  req.panel = {1600, 300};  // wide and low: the chain goes left to right
  const ScopeLayout lr = layout_scopes(full, req);
  EXPECT_EQ(lr.dir, RankDir::LeftRight);
  EXPECT_TRUE(lr.whole);
  req.direction = DirectionChoice::TopBottom;
  const ScopeLayout tb = layout_scopes(full, req);
  EXPECT_EQ(tb.dir, RankDir::TopBottom);
  EXPECT_EQ(tb.layout.nodes.size(), full.nodes.size());
  // A click's tree: kept as it is (no auto expansion).
  req.graph.tree.collapse_all();
  req.graph.tree.toggle(scope(req.graph.tree, "/features"));
  const int want = req.graph.tree.visible_count();
  EXPECT_EQ(static_cast<int>(layout_scopes(full, req).layout.nodes.size()), want);
}

TEST(ViewerGraphDump, ExpandedFeaturesScopeIsOutlinedAroundItsBlocks) {
  const GraphLayout full = layout_of("before.dot");
  ScopeGraph sg = ScopeGraph::of(full, {});
  sg.tree.collapse_all();
  const int features = scope(sg.tree, "/features");
  sg.tree.toggle(features);
  const GraphLayout g = layout_dot(sg.to_dot(full, RankDir::TopBottom));
  const LayoutCluster* outline = nullptr;
  for (const LayoutCluster& c : g.clusters)
    if (c.scope == features) outline = &c;
  ASSERT_NE(outline, nullptr);
  int inside = 0;
  for (const LayoutNode& n : g.nodes) {
    const int s = scope_of_dot_name(n.name);
    const bool member = s >= 0 ? sg.tree.scopes()[s].path.rfind("/features/", 0) == 0
                               : n.lines[0].text.rfind("/features/", 0) == 0;
    const bool in_box = n.center.x > outline->min.x && n.center.x < outline->max.x &&
                        n.center.y > outline->min.y && n.center.y < outline->max.y;
    EXPECT_EQ(in_box, member) << n.name;
    inside += member;
  }
  EXPECT_GE(inside, 10);  // its blocks
}

TEST(ViewerGraphDump, UnscopedGraphIsLeftAlone) {
  const GraphLayout full = layout_dot(
      load_dump((fs::path(HF_SOURCE_DIR) / "tests/data/viewer/adam").string()).before_dot);
  ScopeLayoutRequest req;
  req.graph = ScopeGraph::of(full, {});
  EXPECT_FALSE(req.graph.tree.has_scopes());
  req.panel = {800, 800};
  const ScopeLayout s = layout_scopes(full, req);
  EXPECT_TRUE(s.whole);
  EXPECT_EQ(s.layout.nodes.size(), full.nodes.size());
}

#endif  // HF_VIEWER_HAVE_LAYOUT

}  // namespace
}  // namespace hf::viewer
