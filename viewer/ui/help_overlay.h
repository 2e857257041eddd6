// The `?` overlay: every keyboard and mouse shortcut of the viewer in one place, over the
// panels, until `?` or Esc is pressed again.
#pragma once

namespace hf::viewer::ui {

// Draws the overlay while *open; `?` toggles it (App calls this every frame).
void help_overlay(bool* open);

}  // namespace hf::viewer::ui
