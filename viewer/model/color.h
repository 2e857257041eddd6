// Colours for the viewer: Graphviz colour strings parsed to RGBA, and the heat scale the
// dump's DOT files use for a node's share of the iteration (dump/dot_graph.cpp:
// ColorBrewer YlOrRd, 9 steps), so that nodes the DOT left white can be coloured the same way
// from report.json.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace hf::viewer {

// Packed like ImGui's IM_COL32: 0xAABBGGRR.
using Rgba = uint32_t;
constexpr Rgba rgba(unsigned r, unsigned g, unsigned b, unsigned a = 255) {
  return (Rgba{a} << 24) | (Rgba{b} << 16) | (Rgba{g} << 8) | Rgba{r};
}
constexpr unsigned red(Rgba c) { return c & 0xff; }
constexpr unsigned green(Rgba c) { return (c >> 8) & 0xff; }
constexpr unsigned blue(Rgba c) { return (c >> 16) & 0xff; }
constexpr unsigned alpha(Rgba c) { return c >> 24; }

// "#rgb", "#rrggbb", "#rrggbbaa" and common X11/SVG names ("white", "lightgrey", "none"
// and "transparent" are alpha 0). Lists ("red:blue") take the first colour. nullopt when
// the string is not understood.
std::optional<Rgba> parse_color(std::string_view s);

// Heat step 0..8 of a share of the iteration (0..1), and its colour; same bounds as the dump.
int heat_step(double share);
Rgba heat_color(int step);
// Readable text colour on a fill: white on dark fills, else near-black.
Rgba text_on(Rgba fill);
// A pleasant colour for a name (stable hash), for timeline events.
Rgba color_for_name(std::string_view name);
// A speedup's colour, the same in every panel: red below 1x (a slowdown), green above.
constexpr Rgba kSlowdownRed = rgba(0xc6, 0x28, 0x28);
constexpr Rgba kSpeedupGreen = rgba(0x00, 0x8a, 0x3e);
constexpr Rgba speedup_color(double speedup) {
  return speedup < 1.0 ? kSlowdownRed : kSpeedupGreen;
}
// a*(1-t) + b*t per channel.
Rgba mix(Rgba a, Rgba b, float t);

}  // namespace hf::viewer
