#include "viewer/model/color.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace hf::viewer {

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct Named {
  const char* name;
  Rgba color;
};
constexpr Named kNames[] = {
    {"white", rgba(255, 255, 255)},      {"black", rgba(0, 0, 0)},
    {"red", rgba(255, 0, 0)},            {"green", rgba(0, 255, 0)},
    {"blue", rgba(0, 0, 255)},           {"yellow", rgba(255, 255, 0)},
    {"orange", rgba(255, 165, 0)},       {"purple", rgba(160, 32, 240)},
    {"gray", rgba(190, 190, 190)},       {"grey", rgba(190, 190, 190)},
    {"lightgray", rgba(211, 211, 211)},  {"lightgrey", rgba(211, 211, 211)},
    {"darkgray", rgba(169, 169, 169)},   {"darkgrey", rgba(169, 169, 169)},
    {"lightblue", rgba(173, 216, 230)},  {"lightyellow", rgba(255, 255, 224)},
    {"darkgreen", rgba(0, 100, 0)},      {"darkred", rgba(139, 0, 0)},
    {"navy", rgba(0, 0, 128)},           {"cyan", rgba(0, 255, 255)},
    {"magenta", rgba(255, 0, 255)},      {"pink", rgba(255, 192, 203)},
    {"brown", rgba(165, 42, 42)},        {"gold", rgba(255, 215, 0)},
    {"none", rgba(0, 0, 0, 0)},          {"transparent", rgba(0, 0, 0, 0)},
};

constexpr Rgba kHeat[9] = {rgba(0xff, 0xff, 0xcc), rgba(0xff, 0xed, 0xa0), rgba(0xfe, 0xd9, 0x76),
                           rgba(0xfe, 0xb2, 0x4c), rgba(0xfd, 0x8d, 0x3c), rgba(0xfc, 0x4e, 0x2a),
                           rgba(0xe3, 0x1a, 0x1c), rgba(0xbd, 0x00, 0x26), rgba(0x80, 0x00, 0x26)};
constexpr double kHeatUpperPct[9] = {1, 2.5, 5, 10, 20, 35, 50, 75, 1e300};

}  // namespace

std::optional<Rgba> parse_color(std::string_view s) {
  if (auto colon = s.find(':'); colon != std::string_view::npos) s = s.substr(0, colon);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  if (s[0] == '#') {
    s.remove_prefix(1);
    for (char c : s)
      if (hex(c) < 0) return std::nullopt;
    auto byte = [&](size_t i) { return static_cast<unsigned>(hex(s[i]) * 16 + hex(s[i + 1])); };
    if (s.size() == 3)
      return rgba(hex(s[0]) * 17, hex(s[1]) * 17, hex(s[2]) * 17);
    if (s.size() == 6) return rgba(byte(0), byte(2), byte(4));
    if (s.size() == 8) return rgba(byte(0), byte(2), byte(4), byte(6));
    return std::nullopt;
  }
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const Named& n : kNames)
    if (lower == n.name) return n.color;
  return std::nullopt;
}

int heat_step(double share) {
  const double pct = share * 100;
  for (int i = 0; i < 9; ++i)
    if (pct < kHeatUpperPct[i]) return i;
  return 8;
}

Rgba heat_color(int step) {
  return kHeat[std::clamp(step, 0, 8)];
}

Rgba text_on(Rgba fill) {
  const double lum = 0.299 * red(fill) + 0.587 * green(fill) + 0.114 * blue(fill);
  return lum < 140 && alpha(fill) > 100 ? rgba(255, 255, 255) : rgba(0x21, 0x21, 0x21);
}

Rgba color_for_name(std::string_view name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  // Hue from the hash, soft saturation and high value (readable dark text on top).
  const double hue = (h % 360) / 60.0, s = 0.45, v = 0.92;
  const double c = v * s, x = c * (1 - std::fabs(std::fmod(hue, 2.0) - 1)), m = v - c;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hue)) {
    case 0: r = c; g = x; break;
    case 1: r = x; g = c; break;
    case 2: g = c; b = x; break;
    case 3: g = x; b = c; break;
    case 4: r = x; b = c; break;
    default: r = c; b = x; break;
  }
  auto u = [&](double f) { return static_cast<unsigned>(std::lround((f + m) * 255)); };
  return rgba(u(r), u(g), u(b));
}

Rgba mix(Rgba a, Rgba b, float t) {
  auto ch = [&](unsigned x, unsigned y) {
    return static_cast<unsigned>(std::lround(x * (1 - t) + y * t));
  };
  return rgba(ch(red(a), red(b)), ch(green(a), green(b)), ch(blue(a), blue(b)),
              ch(alpha(a), alpha(b)));
}

}  // namespace hf::viewer
