// PNG copies of the SVG pictures, for viewers and documents that take no SVG.
#pragma once
#include <string>

namespace yoke {

// Converts with the first of rsvg-convert, inkscape, convert (ImageMagick) found on PATH that
// succeeds (each run directly, without a shell, killed after 60 s); a converter that failed once
// is not tried again by this process. Returns false, leaving png_path untouched, when none is
// available or all fail.
bool svg_to_png(const std::string& svg_path, const std::string& png_path);

}  // namespace yoke
