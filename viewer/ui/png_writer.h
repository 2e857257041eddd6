// PNG files from RGBA pixels (stb_image_write, libstb-dev), for --screenshot.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hf::viewer::ui {

// Rows top first; alpha is dropped (the window is opaque). False with *error on failure.
bool write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
               std::string* error);

}  // namespace hf::viewer::ui
