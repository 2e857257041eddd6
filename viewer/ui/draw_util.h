// Small drawing helpers shared by the panels: vector maths on ImVec2, conversions from the
// model's types, dashed outlines, text that fits a width, wrapped tooltips.
#pragma once
#include <imgui.h>

#include <string>
#include <string_view>

#include "viewer/model/color.h"
#include "viewer/model/graph_layout.h"

namespace hf::viewer::ui {

inline ImVec2 operator+(ImVec2 a, ImVec2 b) { return {a.x + b.x, a.y + b.y}; }
inline ImVec2 operator-(ImVec2 a, ImVec2 b) { return {a.x - b.x, a.y - b.y}; }
inline ImVec2 operator*(ImVec2 a, float s) { return {a.x * s, a.y * s}; }
inline ImVec2 to_im(Vec2 v) { return {v.x, v.y}; }
inline Vec2 from_im(ImVec2 v) { return {v.x, v.y}; }
// Model colours are packed like IM_COL32 already.
inline ImU32 col(Rgba c) { return static_cast<ImU32>(c); }
inline ImU32 with_alpha(ImU32 c, float a) {
  return (c & 0x00ffffffu) | (static_cast<ImU32>(a * 255.0f + 0.5f) << 24);
}

// A straight dashed (dash, gap in pixels) line.
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float dash,
                 float gap);
// A rectangle's outline, solid or dashed.
void rect_outline(ImDrawList* dl, ImVec2 min, ImVec2 max, ImU32 color, float thickness,
                  float rounding, float dash = 0, float gap = 0);
// An ellipse, filled and / or outlined.
void ellipse(ImDrawList* dl, ImVec2 center, ImVec2 radius, ImU32 fill, ImU32 border,
             float thickness, int segments = 32);

// Text centred on `center` at `size` pixels, shrunk to fit `max_width` when wider.
void text_centered(ImDrawList* dl, ImFont* font, float size, ImVec2 center, ImU32 color,
                   std::string_view text, float max_width = 0);
// Text clipped to [min, max] (no output when there is no room for a few characters).
void text_clipped(ImDrawList* dl, ImVec2 min, ImVec2 max, ImU32 color, std::string_view text);

// A tooltip with wrapped text (at most `width` pixels wide).
void tooltip_text(const std::string& text, float width = 520);
// One "label: value" line in a two-column table (for details and summary).
void key_value(const char* key, const std::string& value, ImU32 value_color = 0);
// A coloured rounded badge ("swapped", "reverted", ...) inline.
void badge(const std::string& text, ImU32 bg);
// The colour of a region state: swapped green, reverted red, failed orange, ...
ImU32 state_color(const std::string& state);
// The colour of a speedup: green when fusion made the iteration faster, red when slower
// (below 1x), grey when it changed nothing measurable.
ImU32 speedup_color(double speedup);

}  // namespace hf::viewer::ui
