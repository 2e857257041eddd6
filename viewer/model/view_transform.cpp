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

void View2D::show_box(Vec2 min, Vec2 max, float z, Vec2 avail, Vec2 offset) {
  zoom = std::max(z, 1e-4f);
  const float w = std::max(1.0f, max.x - min.x) * zoom, h = std::max(1.0f, max.y - min.y) * zoom;
  pan.x = min.x - (offset.x + std::max(0.0f, (avail.x - w) / 2)) / zoom;
  pan.y = min.y - (offset.y + std::max(0.0f, (avail.y - h) / 2)) / zoom;
}

float box_zoom(Vec2 min, Vec2 max, Vec2 avail) {
  return std::min(avail.x / std::max(1.0f, max.x - min.x), avail.y / std::max(1.0f, max.y - min.y));
}

bool selection_box(const GraphLayout& g, const std::vector<int>& nodes, Vec2* min, Vec2* max,
                   float min_pad) {
  Vec2 mn{1e30f, 1e30f}, mx{-1e30f, -1e30f};
  bool any = false;
  for (int i : nodes) {
    if (i < 0 || i >= static_cast<int>(g.nodes.size())) continue;
    const LayoutNode& n = g.nodes[i];
    mn = {std::min(mn.x, n.center.x - n.size.x / 2), std::min(mn.y, n.center.y - n.size.y / 2)};
    mx = {std::max(mx.x, n.center.x + n.size.x / 2), std::max(mx.y, n.center.y + n.size.y / 2)};
    any = true;
  }
  if (!any) return false;
  const Vec2 pad{std::max(min_pad, (mx.x - mn.x) * 0.3f), std::max(min_pad, (mx.y - mn.y) * 0.3f)};
  *min = {mn.x - pad.x, mn.y - pad.y};
  *max = {mx.x + pad.x, mx.y + pad.y};
  return true;
}

void apply_time_keys(TimeView& v, const TimeKeys& k, double at, double dt, double min_span) {
  if (k.zoom_in) v.zoom_at(at, std::pow(0.15, dt), min_span);
  if (k.zoom_out) v.zoom_at(at, std::pow(1.0 / 0.15, dt), min_span);
  const double pan = v.span() * 1.2 * dt;
  if (k.left) v.start -= pan, v.end -= pan;
  if (k.right) v.start += pan, v.end += pan;
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
