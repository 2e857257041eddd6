// The viewer's look: ImGui's light style, tightened (the graph's colours were chosen for a
// white page, as in the dump's SVGs).
#pragma once

namespace hf::viewer::ui {

void apply_theme(float scale);

}  // namespace hf::viewer::ui
