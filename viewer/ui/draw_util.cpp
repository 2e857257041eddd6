#include "viewer/ui/draw_util.h"

#include <algorithm>
#include <cmath>

namespace hf::viewer::ui {

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash,
                 float gap) {
  const ImVec2 d = b - a;
  const float len = std::sqrt(d.x * d.x + d.y * d.y);
  if (len <= 0 || dash <= 0) {
    dl->AddLine(a, b, color, thickness);
    return;
  }
  const ImVec2 u = d * (1.0f / len);
  // Very long dashed lines at tiny scale would be thousands of segments: cap the count.
  float step = dash + gap;
  if (len / step > 2000) step = len / 2000, dash = step * 0.6f;
  for (float t = 0; t < len; t += step) {
    const float e = std::min(t + dash, len);
    dl->AddLine(a + u * t, a + u * e, color, thickness);
  }
}

void rect_outline(ImDrawList* dl, ImVec2 min, ImVec2 max, ImU32 color, float thickness,
                  float rounding, float dash, float gap) {
  if (dash <= 0) {
    dl->AddRect(min, max, color, rounding, 0, thickness);
    return;
  }
  dashed_line(dl, min, {max.x, min.y}, color, thickness, dash, gap);
  dashed_line(dl, {max.x, min.y}, max, color, thickness, dash, gap);
  dashed_line(dl, max, {min.x, max.y}, color, thickness, dash, gap);
  dashed_line(dl, {min.x, max.y}, min, color, thickness, dash, gap);
}

void ellipse(ImDrawList* dl, ImVec2 c, ImVec2 r, ImU32 fill, ImU32 border, float thickness,
             int segments) {
  ImVec2 pts[64];
  segments = std::clamp(segments, 8, 64);
  for (int i = 0; i < segments; ++i) {
    const float a = 6.2831853f * i / segments;
    pts[i] = {c.x + r.x * std::cos(a), c.y + r.y * std::sin(a)};
  }
  if ((fill >> 24) != 0) dl->AddConvexPolyFilled(pts, segments, fill);
  if ((border >> 24) != 0 && thickness > 0) dl->AddPolyline(pts, segments, border, ImDrawFlags_Closed, thickness);
}

void text_centered(ImDrawList* dl, ImFont* font, float size, ImVec2 center, ImU32 color,
                   std::string_view text, float max_width) {
  if (text.empty()) return;
  const char* b = text.data();
  const char* e = b + text.size();
  ImVec2 sz = font->CalcTextSizeA(size, FLT_MAX, 0, b, e);
  if (max_width > 0 && sz.x > max_width) {
    size *= max_width / sz.x;
    sz = sz * (max_width / sz.x);
  }
  if (size < 3) return;
  dl->AddText(font, size, {center.x - sz.x / 2, center.y - sz.y / 2}, color, b, e);
}

void text_clipped(ImDrawList* dl, ImVec2 min, ImVec2 max, ImU32 color, std::string_view text) {
  if (max.x - min.x < 12 || text.empty()) return;
  ImVec4 clip(min.x, min.y, max.x, max.y);
  const float h = ImGui::GetFontSize();
  dl->AddText(ImGui::GetFont(), h, {min.x, min.y + (max.y - min.y - h) / 2}, color, text.data(),
              text.data() + text.size(), 0, &clip);
}

void tooltip_text(const std::string& text, float width) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(width);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void key_value(const char* key, const std::string& value, ImU32 value_color) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  ImGui::TableNextColumn();
  if (value_color) ImGui::PushStyleColor(ImGuiCol_Text, value_color);
  ImGui::TextWrapped("%s", value.c_str());
  if (value_color) ImGui::PopStyleColor();
}

void badge(const std::string& text, ImU32 bg) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 pad{5, 1};
  const ImVec2 sz = ImGui::CalcTextSize(text.c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  dl->AddRectFilled(p, p + sz + pad * 2, bg, 4);
  dl->AddText(p + pad, col(text_on(static_cast<Rgba>(bg))), text.c_str());
  ImGui::Dummy(sz + pad * 2);
}

ImU32 state_color(const std::string& state) {
  if (state == "swapped") return IM_COL32(0x2e, 0x7d, 0x32, 255);
  if (state == "reverted") return IM_COL32(0xc6, 0x28, 0x28, 255);
  if (state == "failed") return IM_COL32(0xef, 0x6c, 0x00, 255);
  if (state == "queued") return IM_COL32(0x15, 0x65, 0xc0, 255);
  if (state == "rejected") return IM_COL32(0x75, 0x75, 0x75, 255);
  return IM_COL32(0x9e, 0x9e, 0x9e, 255);
}

ImU32 speedup_color(double speedup) {
  if (speedup >= 1.005) return state_color("swapped");
  if (speedup < 0.995) return state_color("reverted");
  return state_color("");
}

}  // namespace hf::viewer::ui
