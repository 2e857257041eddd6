#include "viewer/ui/theme.h"

#include <imgui.h>

namespace hf::viewer::ui {

void apply_theme(float scale) {
  ImGui::StyleColorsLight();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.ChildRounding = 0;
  s.FrameRounding = 3;
  s.GrabRounding = 3;
  s.TabRounding = 3;
  s.WindowBorderSize = 1;
  s.FramePadding = {6, 3};
  s.ItemSpacing = {8, 4};
  s.CellPadding = {5, 2};
  s.WindowPadding = {6, 6};
  s.ScrollbarSize = 12;
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.98f, 0.98f, 0.98f, 1);
  c[ImGuiCol_TitleBg] = ImVec4(0.86f, 0.88f, 0.91f, 1);
  c[ImGuiCol_TitleBgActive] = ImVec4(0.78f, 0.84f, 0.92f, 1);
  c[ImGuiCol_MenuBarBg] = ImVec4(0.92f, 0.93f, 0.95f, 1);
  c[ImGuiCol_Header] = ImVec4(0.26f, 0.59f, 0.98f, 0.22f);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.88f, 0.90f, 0.93f, 1);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(0.0f, 0.0f, 0.0f, 0.03f);
  // Radio buttons, checkboxes and fields on the near-white panels: a grey frame and a border,
  // else an unselected radio button is white on white.
  c[ImGuiCol_FrameBg] = ImVec4(0.89f, 0.90f, 0.92f, 1);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.80f, 0.86f, 0.95f, 1);
  c[ImGuiCol_Border] = ImVec4(0.0f, 0.0f, 0.0f, 0.22f);
  s.FrameBorderSize = 1;
  s.ScaleAllSizes(scale);
}

}  // namespace hf::viewer::ui
