#include "viewer/model/view_transform.h"

#include <algorithm>
#include <cmath>

namespace hf::viewer {

void View2D::zoom_at(Vec2 screen, Vec2 origin, float factor, float min_zoom, float max_zoom) {
  const Vec2 w = to_world(screen, origin);
  zoom = std::clamp(zoom * factor, min_zoom, max_zoom);
  pan.x = w.x - (screen.x - origin.x) / zoom;
  pan.y = w.y - (screen.y - origin.y) / zoom;
}

void View2D::fit(Vec2 content, Vec2 canvas, float margin, float max_zoom) {
  const float cw = std::max(1.0f, content.x), ch = std::max(1.0f, content.y);
  const float aw = std::max(1.0f, canvas.x - 2 * margin), ah = std::max(1.0f, canvas.y - 2 * margin);
  zoom = std::min({aw / cw, ah / ch, max_zoom});
  zoom = std::max(zoom, 1e-4f);
  center_on({cw / 2, ch / 2}, canvas);
}

void View2D::center_on(Vec2 world, Vec2 canvas) {
  pan.x = world.x - canvas.x / 2 / zoom;
  pan.y = world.y - canvas.y / 2 / zoom;
}

bool View2D::visible(Vec2 min, Vec2 max, Vec2 canvas) const {
  const Vec2 a = to_screen(min, {0, 0}), b = to_screen(max, {0, 0});
  return b.x >= 0 && b.y >= 0 && a.x <= canvas.x && a.y <= canvas.y;
}

void TimeView::zoom_at(double t, double factor, double min_span) {
  const double new_span = std::max(span() * factor, min_span);
  const double f = span() > 0 ? (t - start) / span() : 0.5;
  start = t - f * new_span;
  end = start + new_span;
}

void TimeView::fit(double a, double b, double margin) {
  if (!(b > a)) b = a + 1;
  const double m = (b - a) * margin;
  start = a - m;
  end = b + m;
}

void TimeView::center_on(double t) {
  const double s = span();
  start = t - s / 2;
  end = t + s / 2;
}

double nice_step(double span, int max_ticks) {
  if (!(span > 0) || max_ticks < 1) return 1;
  const double raw = span / max_ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace hf::viewer
