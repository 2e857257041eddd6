#include "viewer/ui/help_overlay.h"

#include <imgui.h>

#include <iterator>

#include "viewer/ui/frame_facts.h"

namespace hf::viewer::ui {

namespace {

struct Shortcut {
  const char* keys;
  const char* what;
};

constexpr Shortcut kShortcuts[] = {
    {"?", "show / hide this list"},
    {"F5", "reload the dump (it also reloads by itself when its files change)"},
    {"Ctrl+O", "open another dump (File > Open...)"},
    {"Ctrl+Q", "quit"},
    {"Esc", "clear the selection (and the Timeline's range)"},
    {"", ""},
    {"Timeline", ""},
    {"W / S, Up / Down", "zoom in / out (at the cursor when it is over the tracks)"},
    {"A / D, Left / Right", "pan left / right"},
    {"wheel", "zoom at the cursor"},
    {"right- or middle-drag", "pan"},
    {"left-drag", "select a time range: count, total, mean per name"},
    {"Ctrl+F", "search event names"},
    {"Enter / Shift+Enter", "next / previous match"},
    {"double-click", "fit the whole trace"},
    {"click", "select an event, its node and its flows"},
    {"", ""},
    {"Graph", ""},
    {"wheel, drag", "zoom, pan"},
    {"F", "zoom both graphs to the selection (fit when nothing is selected)"},
    {"Home, double-click the background", "fit"},
    {"click", "select a node; on a scope box: expand it"},
    {"double-click a node", "collapse its scope"},
    {"", ""},
    {"Hotspots", ""},
    {"click a header / a row", "sort / select"},
};

}  // namespace

void help_overlay(bool* open) {
  ImGuiIO& io = ImGui::GetIO();
  if (!io.WantTextInput)
    for (ImWchar c : io.InputQueueCharacters)
      if (c == '?') *open = !*open;
  if (*open && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) *open = false;
  if (!*open) return;
  frame_facts().set("help.shortcuts", static_cast<int>(std::size(kShortcuts)));
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x / 2, vp->Pos.y + vp->Size.y / 2},
                          ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.96f);
  ImGui::SetNextWindowFocus();
  if (ImGui::Begin("Shortcuts (? to close)", open,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                       ImGuiWindowFlags_NoCollapse)) {
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_SizingFixedFit)) {
      for (const Shortcut& s : kShortcuts) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        if (*s.keys && !*s.what)
          ImGui::TextColored(ImVec4(0.05f, 0.28f, 0.63f, 1), "%s", s.keys);
        else
          ImGui::TextUnformatted(s.keys);
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", s.what);
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

}  // namespace hf::viewer::ui
