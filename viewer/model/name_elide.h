// Long node names shortened in the middle: ONNX names share their beginning
// ("/features/features.2/conv/...") and differ at the end, so the end is what must stay
// readable. "/features/features.2/conv/conv.1/Conv" in 20 characters is "/features/…/Conv"
// (whole path components where they fit, else characters), with the full name in a tooltip.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace hf::viewer {

// The width of a text, in whatever unit max_width is in (pixels of a font, characters).
using TextWidth = std::function<float(std::string_view)>;

// UTF-8 code points (bytes that are not continuation bytes): the default width.
float utf8_length(std::string_view s);

// `name` when it fits `max_width`; else its first path component, "…" and as much of its tail
// as fits, cut at a '/' when a whole component fits, else at a character (never inside a
// UTF-8 sequence); "…" plus the last characters when not even the first component fits.
// Empty when not even "…" fits.
std::string elide_middle(std::string_view name, float max_width,
                         const TextWidth& width = utf8_length);

}  // namespace hf::viewer
