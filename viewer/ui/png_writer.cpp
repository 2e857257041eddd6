#include "viewer/ui/png_writer.h"

#include <cerrno>
#include <cstring>

// The implementation, static to this file (libstb may carry its own copy).
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>
#pragma GCC diagnostic pop

namespace hf::viewer::ui {

bool write_png(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
               std::string* error) {
  if (width <= 0 || height <= 0 || rgba.size() < static_cast<size_t>(width) * height * 4) {
    *error = "no pixels";
    return false;
  }
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0, n = static_cast<size_t>(width) * height; i < n; ++i) {
    rgb[i * 3 + 0] = rgba[i * 4 + 0];
    rgb[i * 3 + 1] = rgba[i * 4 + 1];
    rgb[i * 3 + 2] = rgba[i * 4 + 2];
  }
  stbi_write_png_compression_level = 9;
  errno = 0;
  if (!stbi_write_png(path.c_str(), width, height, 3, rgb.data(), width * 3)) {
    *error = std::string("cannot write ") + path + (errno ? std::string(": ") + std::strerror(errno) : "");
    return false;
  }
  return true;
}

}  // namespace hf::viewer::ui
