#include "viewer/ui/fonts.h"

#include <filesystem>

namespace hf::viewer::ui {

namespace {

const char* find_font(const char* const* candidates) {
  for (const char* const* p = candidates; *p; ++p) {
    std::error_code ec;
    if (std::filesystem::exists(*p, ec)) return *p;
  }
  return nullptr;
}

}  // namespace

Fonts load_fonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  Fonts f;
  static const char* const kSans[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                      "/usr/share/fonts/TTF/DejaVuSans.ttf",
                                      "/usr/share/fonts/dejavu/DejaVuSans.ttf", nullptr};
  static const char* const kMono[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                                      "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
                                      "/usr/share/fonts/dejavu/DejaVuSansMono.ttf", nullptr};
  const char* sans = find_font(kSans);
  const char* mono = find_font(kMono);
  ImFontConfig cfg;
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  // Latin-1 and the ellipsis that names shortened in the middle carry ("/features/…/Conv").
  static const ImWchar kRanges[] = {0x0020, 0x00ff, 0x2026, 0x2026, 0};
  cfg.GlyphRanges = kRanges;
  if (sans) {
    f.ui = io.Fonts->AddFontFromFileTTF(sans, 14.0f * scale, &cfg);
    f.graph_px = 28.0f * scale;
    f.graph = io.Fonts->AddFontFromFileTTF(sans, f.graph_px, &cfg);
    f.dejavu = f.ui && f.graph;
  }
  if (!f.ui) {
    ImFontConfig d;
    d.SizePixels = 13.0f * scale;
    f.ui = io.Fonts->AddFontDefault(&d);
  }
  if (!f.graph) {
    f.graph = f.ui;
    f.graph_px = 13.0f * scale;
  }
  if (mono) f.mono = io.Fonts->AddFontFromFileTTF(mono, 13.0f * scale, &cfg);
  if (!f.mono) f.mono = f.ui;
  io.FontDefault = f.ui;
  return f;
}

}  // namespace hf::viewer::ui
