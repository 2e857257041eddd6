// hotfuse-view: a desktop viewer for hotfuse dumps (docs/viewer.md).
//
//   hotfuse-view DIR                       a folder written by hotfuse-run GRAPH --dump DIR
//   hotfuse-view DIR/report.json           one file of it (report.json, trace.json, *.dot)
//   hotfuse-view DIR --screenshot out.png  render headless (offscreen) and write a PNG
//     --screenshot-facts facts.json         and what the last frame drew, as JSON
//                                           (viewer/ui/frame_facts.h), for tests
//
// Exit codes: 0 success; 2 bad input (bad options; in --screenshot mode also a missing,
// empty or malformed dump, after the PNG showing the message is written); 1 the window,
// OpenGL or the PNG could not be made.
#include <CLI/CLI.hpp>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>

#include "viewer/ui/app.h"
#include "viewer/ui/fonts.h"
#include "viewer/ui/frame_facts.h"
#include "viewer/ui/platform.h"
#include "viewer/ui/png_writer.h"
#include "viewer/ui/theme.h"

namespace {

namespace fs = std::filesystem;

// SIGINT / SIGTERM end the loop normally (imgui.ini is saved on the way out).
volatile std::sig_atomic_t g_quit = 0;
void on_signal(int) { g_quit = 1; }
using namespace hf::viewer;

// imgui.ini lives in $XDG_CONFIG_HOME/hotfuse (else ~/.config/hotfuse); none if neither.
std::string ini_path() {
  fs::path dir;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    dir = fs::path(x) / "hotfuse";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = fs::path(h) / ".config" / "hotfuse";
  else
    return {};
  std::error_code ec;
  fs::create_directories(dir, ec);
  return ec ? std::string() : (dir / "imgui.ini").string();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"hotfuse-view: look at a hotfuse dump (hotfuse-run GRAPH --dump DIR): the graph "
               "before and after fusion, the timeline, the hotspots and the summary"};
  std::string path, screenshot, facts_file, panel, size = "1600x1000", graph, select, hover, click, key;
  int frames = 4;
  cli.add_option("DUMP", path, "a dump folder, or its report.json, trace.json or a .dot file")->required();
  cli.add_option("--screenshot", screenshot, "render without a visible window and write this PNG");
  cli.add_option("--screenshot-facts", facts_file,
                 "--screenshot: also write what the last frame showed (panel messages, colours) "
                 "to this JSON file");
  cli.add_option("--frames", frames, "--screenshot: frames to render first")->check(CLI::Range(1, 1000));
  cli.add_option("--panel", panel, "show only this panel: graph, timeline, hotspots, summary, details");
  cli.add_option("--size", size, "window / image size, WxH")->default_str("1600x1000");
  cli.add_option("--graph", graph, "graph panel: before, after or both (side by side)");
  cli.add_option("--select", select, "select this node (by name) at start");
  cli.add_option("--hover", hover, "--screenshot: rest the mouse at X,Y (pixels)");
  cli.add_option("--click", click, "--screenshot: click at X,Y, then rest there");
  cli.add_option("--key", key,
                 "--screenshot: hold this key from frame 2 on: W, A, S, D, F, Up, Down, Left, "
                 "Right, Home, Escape, F5 (with --hover over the panel it is for); or type ?");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = cli.exit(e);
    return rc == 0 ? 0 : 2;
  }

  std::smatch m;
  const std::regex size_re("([0-9]{2,5})x([0-9]{2,5})");
  if (!std::regex_match(size, m, size_re)) {
    std::cerr << "hotfuse-view: --size " << size << ": expected WxH, e.g. 1600x1000\n";
    return 2;
  }
  const int width = std::stoi(m[1]), height = std::stoi(m[2]);
  if (width < 200 || height < 150 || width > 16384 || height > 16384) {
    std::cerr << "hotfuse-view: --size " << size << ": between 200x150 and 16384x16384\n";
    return 2;
  }
  if (!facts_file.empty() && screenshot.empty()) {
    std::cerr << "hotfuse-view: --screenshot-facts needs --screenshot\n";
    return 2;
  }
  int key_code = -1;
  if (!key.empty()) {
    const std::pair<const char*, int> keys[] = {
        {"W", 'W'},          {"A", 'A'},           {"S", 'S'},
        {"D", 'D'},          {"F", 'F'},           {"Up", GLFW_KEY_UP},
        {"Down", GLFW_KEY_DOWN}, {"Left", GLFW_KEY_LEFT}, {"Right", GLFW_KEY_RIGHT},
        {"Home", GLFW_KEY_HOME}, {"Escape", GLFW_KEY_ESCAPE}, {"F5", GLFW_KEY_F5}, {"?", '?'}};
    for (const auto& [name, code] : keys)
      if (key == name) key_code = code;
    if (key_code < 0 || screenshot.empty()) {
      std::cerr << "hotfuse-view: --key " << key
                << ": expected W, A, S, D, F, Up, Down, Left, Right, Home, Escape, F5 or ?, with "
                   "--screenshot\n";
      return 2;
    }
  }
  float mouse_x = 0, mouse_y = 0;
  const bool scripted = !hover.empty() || !click.empty() || key_code >= 0;
  if (scripted) {
    const std::string& at = click.empty() ? hover : click;
    if ((!at.empty() && std::sscanf(at.c_str(), "%f,%f", &mouse_x, &mouse_y) != 2) ||
        screenshot.empty()) {
      std::cerr << "hotfuse-view: --hover / --click X,Y need --screenshot\n";
      return 2;
    }
    frames = std::max(frames, 4);
  }
  ui::AppOptions opts;
  opts.path = path;
  opts.headless = !screenshot.empty() && !scripted;  // headless: no input at all
  opts.screenshot = !screenshot.empty();
  opts.select = select;
  if (!panel.empty()) {
    opts.only = ui::panel_from_name(panel);
    if (opts.only == ui::Panel::Count) {
      std::cerr << "hotfuse-view: --panel " << panel
                << ": expected graph, timeline, hotspots, summary or details\n";
      return 2;
    }
  }
  if (!graph.empty()) {
    if (graph == "before") opts.graph_mode = 0;
    else if (graph == "after") opts.graph_mode = 1;
    else if (graph == "both") opts.graph_mode = 2;
    else {
      std::cerr << "hotfuse-view: --graph " << graph << ": expected before, after or both\n";
      return 2;
    }
  }

  // Load first: what is wrong with the dump is said on stderr even when no window opens.
  Dump dump = load_dump(path);
  for (const std::string& e : dump.errors) std::cerr << "hotfuse-view: " << e << "\n";
  const bool dump_errors = !dump.errors.empty();

  const std::string ini = screenshot.empty() ? ini_path() : std::string();
  ui::PlatformOptions po;
  po.width = width;
  po.height = height;
  po.visible = screenshot.empty();
  po.ini_file = ini.empty() ? nullptr : ini.c_str();
  ui::Platform platform;
  std::string error;
  if (!platform.init(po, &error)) {
    std::cerr << "hotfuse-view: " << error << "\n";
    return dump_errors ? 2 : 1;
  }
  if (scripted) platform.script_mouse(mouse_x, mouse_y, !click.empty());
  if (key_code >= 0) platform.script_key(key_code);
  const float scale = platform.content_scale();
  ui::Fonts fonts = ui::load_fonts(scale);
  ui::apply_theme(scale);

  ui::App app(opts, fonts, std::move(dump));
  app.install_settings();
  platform.set_title(app.window_title());

  if (!screenshot.empty()) {
    app.wait_for_layouts();
    for (const std::string& e : app.errors())
      if (std::find(app.dump().errors.begin(), app.dump().errors.end(), e) == app.dump().errors.end())
        std::cerr << "hotfuse-view: " << e << "\n";
    // HOTFUSE_VIEW_TIMING=1: the mean time to build a frame (ImGui) and to render it (GL).
    const bool timing = std::getenv("HOTFUSE_VIEW_TIMING") != nullptr;
    double build_s = 0, render_s = 0;
    using clock = std::chrono::steady_clock;
    for (int i = 0; i < frames; ++i) {
      const auto t0 = clock::now();
      platform.begin_frame();
      app.frame();
      const auto t1 = clock::now();
      platform.end_frame();
      const auto t2 = clock::now();
      if (i > 0) {  // the first frame builds the font texture
        build_s += std::chrono::duration<double>(t1 - t0).count();
        render_s += std::chrono::duration<double>(t2 - t1).count();
      }
    }
    if (timing && frames > 1)
      std::fprintf(stderr, "hotfuse-view: %d frames: build %.2f ms, render %.2f ms per frame\n",
                   frames - 1, build_s * 1e3 / (frames - 1), render_s * 1e3 / (frames - 1));
    std::vector<uint8_t> pixels;
    if (!platform.read_pixels(&pixels, &error) || !ui::write_png(screenshot, width, height, pixels, &error)) {
      std::cerr << "hotfuse-view: --screenshot: " << error << "\n";
      return 1;
    }
    if (!facts_file.empty()) ui::frame_facts().set("graph", app.graph_facts());
    if (!facts_file.empty() && !ui::frame_facts().write(facts_file, &error)) {
      std::cerr << "hotfuse-view: --screenshot-facts: " << error << "\n";
      return 1;
    }
    if (!app.errors().empty()) {
      std::cerr << "hotfuse-view: wrote " << screenshot << " (showing the errors above)\n";
      return 2;
    }
    return 0;
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::string title = app.window_title();
  int lively = 4;  // frames to draw before sleeping until the next input
  while (!platform.should_close() && !app.quit_requested() && !g_quit) {
    if (lively <= 0 && !app.busy()) platform.wait_events(0.5);
    platform.begin_frame();
    app.frame();
    platform.end_frame();
    lively = platform.had_input() || app.busy() ? 4 : lively - 1;
    if (app.window_title() != title) {
      title = app.window_title();
      platform.set_title(title);
    }
  }
  return 0;
}
