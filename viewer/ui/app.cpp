#include "viewer/ui/app.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <cstdio>
#include <cstring>

#include <algorithm>

#include "viewer/model/format.h"
#include "viewer/model/recent_dumps.h"
#include "viewer/ui/draw_util.h"
#include "viewer/ui/frame_facts.h"
#include "viewer/ui/help_overlay.h"

namespace hf::viewer::ui {

// imgui.ini: [HotfuseView][Layout] with the split ratios, the panels shown and the graph mode.
struct AppSettings {
  static void* open(ImGuiContext*, ImGuiSettingsHandler* h, const char* name) {
    return std::strcmp(name, "Layout") == 0 ? h->UserData : nullptr;
  }
  static void line(ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
    App* app = static_cast<App*>(entry);
    char key[64];
    float value = 0;
    if (std::sscanf(line, "%63[^=]=%f", key, &value) != 2) return;
    const std::string k = key;
    if (k.rfind("show_", 0) == 0) {
      const Panel p = panel_from_name(k.substr(5));
      if (p != Panel::Count && app->options_.only == Panel::Count)
        app->shown_[static_cast<int>(p)] = value != 0;
    } else if (k == "graph_mode") {
      if (app->options_.graph_mode < 0 && value >= 0 && value <= 2)
        app->graph_->mode = static_cast<GraphView::Mode>(static_cast<int>(value));
    } else {
      app->tiles_.set_ratio(k, value);
    }
  }
  static void write(ImGuiContext*, ImGuiSettingsHandler* h, ImGuiTextBuffer* out) {
    App* app = static_cast<App*>(h->UserData);
    if (!app) return;
    out->appendf("[%s][Layout]\n", h->TypeName);
    app->tiles_.for_each_ratio([&](const std::string& k, float v) { out->appendf("%s=%.4f\n", k.c_str(), v); });
    for (int i = 0; i < static_cast<int>(Panel::Count); ++i)
      out->appendf("show_%s=%d\n", panel_name(static_cast<Panel>(i)), app->shown_[i] ? 1 : 0);
    out->appendf("graph_mode=%d\n\n", static_cast<int>(app->graph_->mode));
  }
};

App::App(const AppOptions& o, Fonts fonts, std::optional<Dump> preloaded) : options_(o) {
  state_.fonts = fonts;
  state_.headless = o.headless;
  for (int i = 0; i < static_cast<int>(Panel::Count); ++i)
    shown_[i] = o.only == Panel::Count || static_cast<int>(o.only) == i;
  load(std::move(preloaded));
}

App::~App() {
  if (!ImGui::GetCurrentContext()) return;
  ImGuiIO& io = ImGui::GetIO();
  if (io.IniFilename) {
    ImGui::SaveIniSettingsToDisk(io.IniFilename);
    io.IniFilename = nullptr;  // not again, without this section, when the context goes
  }
  if (ImGuiSettingsHandler* h = ImGui::FindSettingsHandler("HotfuseView")) h->UserData = nullptr;
}

void App::load(std::optional<Dump> preloaded) {
  state_.dump = preloaded ? std::move(*preloaded) : load_dump(options_.path);
  state_.before = GraphSlot{};
  state_.after = GraphSlot{};
  state_.before.file = "before.dot";
  state_.before.dot = state_.dump.before_dot;
  state_.after.file = "after.dot";
  state_.after.dot = state_.dump.after_dot;
  state_.before.start();
  state_.after.start();
  state_.session = session_timeline(state_.report(), state_.trace());
  state_.selection = Selection{};
  state_.hover = state_.hover_next = Selection{};
  state_.step_cache.clear();
  ++state_.selection_serial;
  const GraphView::Mode mode = graph_ ? graph_->mode : GraphView::Mode::SideBySide;
  graph_ = std::make_unique<GraphView>();
  graph_->mode = options_.graph_mode >= 0 ? static_cast<GraphView::Mode>(options_.graph_mode) : mode;
  graph_->sync_layouts = options_.screenshot;
  timeline_ = std::make_unique<TimelineView>();
  hotspots_ = std::make_unique<HotspotsView>();
  summary_ = std::make_unique<SummaryView>();
  details_ = std::make_unique<DetailsView>();
  initial_selection_done_ = false;
  changed_at_ = -1;
  // Not for screenshots: they neither watch nor touch the user's recent list.
  if (options_.headless) return;
  if (!state_.dump.dir.empty()) watch_.watch(state_.dump.dir);
  if (!state_.dump.nothing_loaded()) {
    const std::filesystem::path file = recent_dumps_file();
    save_recent_dumps(file, add_recent_dump(load_recent_dumps(file), state_.dump.path.string()));
  }
}

void App::reload() {
  load();
  printed_errors_.clear();
  print_errors_ = true;
}

void App::print_new_errors() {
  if (!print_errors_) return;
  for (const std::string& e : state_.errors())
    if (std::find(printed_errors_.begin(), printed_errors_.end(), e) == printed_errors_.end()) {
      std::fprintf(stderr, "hotfuse-view: %s\n", e.c_str());
      printed_errors_.push_back(e);
    }
}

void App::install_settings() {
  ImGuiSettingsHandler h;
  h.TypeName = "HotfuseView";
  h.TypeHash = ImHashStr("HotfuseView");
  h.ReadOpenFn = AppSettings::open;
  h.ReadLineFn = AppSettings::line;
  h.WriteAllFn = AppSettings::write;
  h.UserData = this;
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(h);
}

void App::wait_for_layouts() {
  state_.before.poll(true);
  state_.after.poll(true);
}

std::string App::window_title() const {
  return "hotfuse-view - " + state_.dump.title();
}

void App::apply_initial_selection() {
  if (initial_selection_done_ || options_.select.empty()) return;
  if (state_.before.laying_out() || state_.after.laying_out()) return;
  initial_selection_done_ = true;
  const Report* r = state_.report();
  if (r) {
    for (const std::vector<OpRow>* rows : {&r->ops, &r->ops_after})
      for (const OpRow& o : *rows)
        if (o.node == options_.select && o.node_id >= 0) {
          state_.select(select_node(o.node_id, r), Panel::Count);
          return;
        }
  }
  for (GraphSlot* g : {&state_.after, &state_.before}) {
    if (!g->layout) continue;
    std::vector<int> hits = g->layout->search(options_.select);
    for (int i : hits)
      if (g->layout->nodes[i].node_id >= 0) {
        state_.select(select_node(g->layout->nodes[i].node_id, r, &*g->layout), Panel::Count);
        return;
      }
  }
  std::fprintf(stderr, "hotfuse-view: --select %s: no such node\n", options_.select.c_str());
}

void App::menu_bar() {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) open_dialog();
    if (ImGui::MenuItem("Reload", "F5")) reload();
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (int i = 0; i < static_cast<int>(Panel::Count); ++i)
      if (ImGui::MenuItem(panel_name(static_cast<Panel>(i)), nullptr, &shown_[i])) ImGui::MarkIniSettingsDirty();
    ImGui::Separator();
    for (int m = 0; m < 3; ++m) {
      const auto mode = static_cast<GraphView::Mode>(m);
      if (ImGui::MenuItem((std::string("Graph: ") + graph_mode_name(mode)).c_str(), nullptr, graph_->mode == mode)) {
        graph_->mode = mode;
        ImGui::MarkIniSettingsDirty();
      }
    }
    if (ImGui::MenuItem("Graph: zoom to selection", "F")) graph_->zoom_to_selection();
    ImGui::Separator();
    if (ImGui::MenuItem("Reset layout")) {
      tiles_.reset();
      for (bool& s : shown_) s = true;
      ImGui::MarkIniSettingsDirty();
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::TextUnformatted(
        "hotfuse-view: a dump of hotfuse-run GRAPH --dump DIR (docs/viewer.md)\n\n"
        "Graph: wheel zooms, drag pans, double-click or Home fits, F zooms to the\n"
        "selection; click selects; click a scope box to expand it.\n"
        "Timeline: wheel zooms in time, drag pans, double-click fits; click selects.\n"
        "Hotspots: click a header to sort, a row to select.\n"
        "Selecting anything selects it everywhere; Details shows it, with the fused\n"
        "kernel's generated source. F5 reloads the dump.");
    if (ImGui::MenuItem("Shortcuts", "?")) help_open_ = true;
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

void App::status_bar(ImVec2 min, ImVec2 max) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(min, max, ImGui::GetColorU32(ImGuiCol_MenuBarBg));
  std::string text = state_.dump.title();
  const Dump& d = state_.dump;
  if (d.trace) text += "   |   " + std::to_string(d.trace->events.size()) + " trace events";
  for (GraphSlot* g : {&state_.before, &state_.after})
    if (g->layout)
      text += "   |   " + g->file + ": " + std::to_string(g->layout->nodes.size()) + " nodes (" +
              format_ms(g->layout->layout_seconds * 1e3) + " layout)";
    else if (g->laying_out())
      text += "   |   " + g->file + ": laying out...";
  const float y = min.y + (max.y - min.y - ImGui::GetFontSize()) / 2;
  float x = min.x + 8;
  const auto errors = state_.errors();
  if (!errors.empty()) {
    // Point to where the errors are listed: the error screen, else Details when it is shown.
    const char* where = state_.dump.nothing_loaded() ? " (listed above)"
                        : shown_[static_cast<int>(Panel::Details)] ? " (listed in Details)"
                                                                     : " (View > Details lists them)";
    const std::string e = std::to_string(errors.size()) + (errors.size() == 1 ? " error" : " errors") +
                          where + "   |   ";
    dl->AddText({x, y}, IM_COL32(0xc6, 0x28, 0x28, 255), e.c_str());
    x += ImGui::CalcTextSize(e.c_str()).x;
  }
  ImVec4 clip(x, min.y, max.x - 4, max.y);
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), {x, y}, IM_COL32(0x42, 0x42, 0x42, 255),
              text.c_str(), nullptr, 0, &clip);
}

void App::error_screen(ImVec2 min, ImVec2 max) {
  const float w = std::min(760.0f, max.x - min.x - 40);
  ImGui::SetCursorScreenPos({min.x + (max.x - min.x - w) / 2, min.y + (max.y - min.y) * 0.25f});
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(0xc6, 0x28, 0x28, 255));
  ImGui::TextUnformatted("Cannot show this dump");
  ImGui::PopStyleColor();
  ImGui::Spacing();
  for (const std::string& e : state_.errors()) {
    ImGui::Bullet();
    ImGui::TextWrapped("%s", e.c_str());
  }
  ImGui::Spacing();
  ImGui::TextDisabled(
      "hotfuse-view opens a folder written by `hotfuse-run GRAPH --dump DIR` (report.json, "
      "trace.json, before.dot, after.dot, kernels/), or one report.json, trace.json or .dot "
      "file. File > Open... opens another; F5 reloads.");
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

void App::panel(Panel p) {
  const int i = static_cast<int>(p);
  if (!tiles_.visible(p)) return;
  ImGui::SetNextWindowPos(tiles_.pos(p));
  ImGui::SetNextWindowSize(tiles_.size(p));
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                           ImGuiWindowFlags_NoSavedSettings;  // not NoBringToFrontOnFocus: such
                                                              // windows are created behind the host
  if (p == Panel::Graph || p == Panel::Timeline)
    flags |= ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  std::string title = panel_name(p);
  if (p == Panel::Graph && state_.selection.node >= 0) title += "  (selected: node " + std::to_string(state_.selection.node) + ")";
  title += std::string("###") + panel_name(p);
  bool open = true;
  if (ImGui::Begin(title.c_str(), options_.headless ? nullptr : &open, flags)) {
    switch (p) {
      case Panel::Graph: graph_->draw(state_); break;
      case Panel::Timeline: timeline_->draw(state_); break;
      case Panel::Hotspots: hotspots_->draw(state_); break;
      case Panel::Summary: summary_->draw(state_); break;
      case Panel::Details: details_->draw(state_); break;
      default: break;
    }
  }
  ImGui::End();
  if (!open) {
    shown_[i] = false;
    ImGui::MarkIniSettingsDirty();
  }
}

void App::open_dialog() {
  const std::string start =
      state_.dump.dir.empty() ? std::string() : std::filesystem::absolute(state_.dump.dir).string();
  file_dialog_.open(start, load_recent_dumps(recent_dumps_file()));
}

void App::frame() {
  frame_facts().clear();
  state_.before.poll();
  state_.after.poll();
  print_new_errors();
  if (watch_.changed()) changed_at_ = ImGui::GetTime();
  // A dump folder that went away (rm -rf before a new dump): look for it again every second
  // and reload when it is back.
  if (!options_.headless && !watch_.active() && !state_.dump.dir.empty() && ImGui::GetTime() >= rewatch_at_) {
    rewatch_at_ = ImGui::GetTime() + 1;
    if (watch_.watch(state_.dump.dir)) changed_at_ = ImGui::GetTime();
  }
  if (changed_at_ >= 0 && ImGui::GetTime() - changed_at_ > 0.3) {
    std::fprintf(stderr, "hotfuse-view: %s changed: reloading\n", state_.dump.path.string().c_str());
    reload();
  }
  apply_initial_selection();
  ImGuiIO& io = ImGui::GetIO();
  if (!options_.headless) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) && !io.WantTextInput)
      state_.select(Selection{}, Panel::Count);
    if (ImGui::IsKeyPressed(294 /* GLFW_KEY_F5 */)) reload();
    if (io.KeyCtrl && ImGui::IsKeyPressed('Q')) quit_ = true;
    if (io.KeyCtrl && ImGui::IsKeyPressed('O')) open_dialog();
  }

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->Pos);
  ImGui::SetNextWindowSize(vp->Size);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0);
  ImGui::Begin("hotfuse-view", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PopStyleVar(2);
  menu_bar();
  const float bar = ImGui::GetFrameHeight();
  const ImVec2 min{vp->Pos.x, vp->Pos.y + bar};
  const ImVec2 max{vp->Pos.x + vp->Size.x, vp->Pos.y + vp->Size.y - bar};
  const bool nothing = state_.dump.nothing_loaded() ||
                       (!state_.report() && !state_.trace() && !state_.before.layout && !state_.after.layout &&
                        !state_.before.laying_out() && !state_.after.laying_out());
  if (nothing) {
    error_screen(min, max);
  } else if (tiles_.layout({min.x + 2, min.y + 2}, {max.x - 2, max.y - 2}, shown_, !options_.headless)) {
    ImGui::MarkIniSettingsDirty();
  }
  status_bar({vp->Pos.x, max.y}, {vp->Pos.x + vp->Size.x, vp->Pos.y + vp->Size.y});

  std::string chosen;
  if (file_dialog_.draw(&chosen)) {
    options_.path = chosen;
    reload();
  }
  ImGui::End();

  if (!nothing)
    for (int i = 0; i < static_cast<int>(Panel::Count); ++i) panel(static_cast<Panel>(i));
  if (!options_.headless) help_overlay(&help_open_);
  frame_facts().set("app.error_screen", nothing);
  frame_facts().set("app.errors", state_.errors());
  state_.end_frame();
}

}  // namespace hf::viewer::ui
