// The viewer's window contents, one frame at a time: the menu bar, the tiled panels (Graph,
// Timeline, Hotspots, Summary, Details), the status bar, and a clear message instead of the
// panels when the dump could not be opened. Knows nothing of GLFW or OpenGL (viewer/ui/
// platform.h runs it).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "viewer/model/dump_watch.h"
#include "viewer/ui/details_view.h"
#include "viewer/ui/file_dialog.h"
#include "viewer/ui/graph_view.h"
#include "viewer/ui/hotspots_view.h"
#include "viewer/ui/shared_state.h"
#include "viewer/ui/summary_view.h"
#include "viewer/ui/tiles.h"
#include "viewer/ui/timeline_view.h"

namespace hf::viewer::ui {

struct AppOptions {
  std::string path;             // what to open
  bool headless = false;        // --screenshot
  bool screenshot = false;      // --screenshot, with or without scripted input: the graph's
                                // layouts are made before the frame that shows them
  Panel only = Panel::Count;    // --panel: show this one alone
  int graph_mode = -1;          // --graph before|after|both (GraphView::Mode), -1: default
  std::string select;           // --select NODE: a node name to select at start
};

class App {
 public:
  // `preloaded`: the dump, when the caller loaded it already (to report its errors before a
  // window exists); else it is loaded from o.path.
  App(const AppOptions& o, Fonts fonts, std::optional<Dump> preloaded = std::nullopt);
  // Saves imgui.ini while the layout section's owner still exists.
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Registers the [HotfuseView][Layout] section of imgui.ini (before the first frame).
  void install_settings();
  // Blocks until both graphs are laid out (headless rendering).
  void wait_for_layouts();
  // Builds one frame's UI (between ImGui::NewFrame and ImGui::Render).
  void frame();
  // Loads options' path again (F5, File > Open, a change in the dump folder); what is wrong
  // with it is printed on stderr, as on launch.
  void reload();

  bool quit_requested() const { return quit_; }
  // Something changes without input (a layout still running): keep drawing.
  bool busy() const {
    return state_.before.laying_out() || state_.after.laying_out() || (graph_ && graph_->busy());
  }
  // What the Graph panel drew in the last frame, as JSON (--screenshot-facts).
  // What the Graph panel drew ("graph" in --screenshot-facts).
  nlohmann::json graph_facts() const { return graph_ ? graph_->facts() : nlohmann::json::object(); }
  // Everything that went wrong loading the dump and laying out its graphs.
  std::vector<std::string> errors() const { return state_.errors(); }
  const Dump& dump() const { return state_.dump; }
  std::string window_title() const;

 private:
  void load(std::optional<Dump> preloaded = std::nullopt);
  void apply_initial_selection();
  void menu_bar();
  void open_dialog();
  void print_new_errors();
  void status_bar(ImVec2 min, ImVec2 max);
  void error_screen(ImVec2 min, ImVec2 max);
  void panel(Panel p);

  AppOptions options_;
  SharedState state_;
  Tiles tiles_;
  bool shown_[static_cast<int>(Panel::Count)];
  std::unique_ptr<GraphView> graph_;
  std::unique_ptr<TimelineView> timeline_;
  std::unique_ptr<HotspotsView> hotspots_;
  std::unique_ptr<SummaryView> summary_;
  std::unique_ptr<DetailsView> details_;
  bool initial_selection_done_ = false;
  bool quit_ = false;
  FileDialog file_dialog_;
  bool help_open_ = false;
  // Reload on change: the folder is watched; a change reloads once the files have been
  // quiet for a moment (hotfuse-run writes several).
  DumpWatch watch_;
  double changed_at_ = -1;
  double rewatch_at_ = 0;  // when the folder could not be watched (gone): when to try again
  // Errors already printed on stderr since the last reload (printed once each).
  std::vector<std::string> printed_errors_;
  bool print_errors_ = false;

  friend struct AppSettings;
};

}  // namespace hf::viewer::ui
