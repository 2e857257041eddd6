// The maths of the zoomable views, kept out of the drawing code so that it can be tested:
// the graph canvas (2-D pan and zoom around the cursor, fit to the window) and the timeline's
// time axis (zoom around the cursor, pan, "nice" tick steps).
#pragma once
#include <vector>

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
  // Shows the world box [min, max] at `zoom` in the area of `avail` pixels whose top-left
  // corner is `offset` on the canvas: centred where it is smaller than the area, else from
  // its top-left corner.
  void show_box(Vec2 min, Vec2 max, float zoom, Vec2 avail, Vec2 offset);
};

// The zoom at which the box [min, max] fills `avail` pixels (the smaller of its two ratios).
float box_zoom(Vec2 min, Vec2 max, Vec2 avail);

// Zoom to selection (the Graph panel's F): the box around nodes `nodes` of `g` (indices;
// bad ones ignored), padded on each side by 30% of its size and at least `min_pad` points
// so that the neighbours say where it is. false when no node is given.
bool selection_box(const GraphLayout& g, const std::vector<int>& nodes, Vec2* min, Vec2* max,
                   float min_pad = 40);

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

// The Timeline's held keys (as in Perfetto): W / Up zooms in and S / Down out around time
// `at`, by a factor 0.15 per second held; A / Left and D / Right pan by 1.2 spans per
// second. One frame of `dt` seconds; frames compose (two of dt/2 = one of dt).
struct TimeKeys {
  bool zoom_in = false, zoom_out = false, left = false, right = false;
};
void apply_time_keys(TimeView& v, const TimeKeys& k, double at, double dt, double min_span = 0.05);

// The tick step for `span` over at most `max_ticks` ticks: 1, 2 or 5 times a power of ten.
double nice_step(double span, int max_ticks);

}  // namespace hf::viewer
