// The viewer's fonts: DejaVu Sans for the UI, DejaVu Sans Mono for kernel sources, and a
// large DejaVu Sans for graph labels (drawn scaled down, so zoomed-in text stays sharp).
// Falls back to ImGui's built-in font when the TTF files are not installed
// (fonts-dejavu-core).
#pragma once
#include <imgui.h>

namespace hf::viewer::ui {

struct Fonts {
  ImFont* ui = nullptr;
  ImFont* mono = nullptr;
  ImFont* graph = nullptr;  // rasterised at graph_px
  float graph_px = 13;
  bool dejavu = false;
};

// Adds the fonts to the current ImGui context's atlas (before the first frame). `scale`
// multiplies the pixel sizes (HiDPI).
Fonts load_fonts(float scale);

}  // namespace hf::viewer::ui
