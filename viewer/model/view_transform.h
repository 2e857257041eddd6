// The maths of the zoomable views, kept out of the drawing code so that it can be tested:
// the graph canvas (2-D pan and zoom around the cursor, fit to the window) and the timeline's
// time axis (zoom around the cursor, pan, "nice" tick steps).
#pragma once
#include "viewer/model/graph_layout.h"

namespace hf::viewer {

// Screen = origin + (world - pan) * zoom.
struct View2D {
  float zoom = 1;
  Vec2 pan;  // the world point at the canvas's top-left corner

  Vec2 to_screen(Vec2 world, Vec2 origin) const {
    return {origin.x + (world.x - pan.x) * zoom, origin.y + (world.y - pan.y) * zoom};
  }
  Vec2 to_world(Vec2 screen, Vec2 origin) const {
    return {pan.x + (screen.x - origin.x) / zoom, pan.y + (screen.y - origin.y) / zoom};
  }
  // Multiplies the zoom by `factor` (clamped to [min_zoom, max_zoom]), keeping the world point
  // under `screen` where it is.
  void zoom_at(Vec2 screen, Vec2 origin, float factor, float min_zoom = 0.01f,
               float max_zoom = 16.0f);
  // Moves by a screen-space drag.
  void drag(Vec2 screen_delta) {
    pan.x -= screen_delta.x / zoom;
    pan.y -= screen_delta.y / zoom;
  }
  // The whole of `content` (a size, from 0,0) centred in `canvas` with `margin` pixels around,
  // zoomed in no further than `max_zoom`.
  void fit(Vec2 content, Vec2 canvas, float margin = 16, float max_zoom = 1.5f);
  // Keeps the zoom; puts `world` at the canvas centre.
  void center_on(Vec2 world, Vec2 canvas);
  // Whether a world-space box is (partly) on the canvas.
  bool visible(Vec2 min, Vec2 max, Vec2 canvas) const;
};

// A visible window [start, end] of trace time (microseconds) mapped onto `width` pixels.
struct TimeView {
  double start = 0, end = 1;

  double span() const { return end - start; }
  double to_x(double t, double width) const { return (t - start) / span() * width; }
  double to_t(double x, double width) const { return start + x / width * span(); }
  // Scales the span by `factor` (< 1 zooms in) around time t, no narrower than min_span.
  void zoom_at(double t, double factor, double min_span = 1e-3);
  void pan_px(double dx, double width) {
    const double d = dx / width * span();
    start -= d;
    end -= d;
  }
  // [a, b] with `margin` (fraction of the span) on each side.
  void fit(double a, double b, double margin = 0.02);
  // Keeps the span, centred on t.
  void center_on(double t);
};

// The tick step for `span` over at most `max_ticks` ticks: 1, 2 or 5 times a power of ten.
double nice_step(double span, int max_ticks);

}  // namespace hf::viewer
