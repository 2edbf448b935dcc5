// The `image` module's decoders: PNG (libpng's simplified API) and JPEG (libjpeg-turbo) from bytes into
// RGBA8 (image.hpp). A run's media files are written by whatever the user's program logs, so every decode
// is bounded before a pixel is allocated: files over max_file_bytes, sides over max_side and images over
// max_pixel_bytes of RGBA are refused by their headers, and a JPEG with more than max_jpeg_scans
// progressive scans (a cheap way to make a small file decode for minutes) is stopped. Library errors
// (libpng's and libjpeg's longjmp) come back as an Error, never a crash.
#pragma once

#include <string_view>

#include "core/result.hpp"
#include "media/image.hpp"

namespace runmon::media {

// A PNG or JPEG file's bytes decoded; anything else (GIF, BMP, a truncated or corrupt file) is an Error
// saying why ("png: Not a PNG file", "image 10000x10 is over the 8192-pixel limit").
Result<Image> DecodeImage(std::string_view bytes, const DecodeLimits& limits = {});
Result<Image> DecodePng(std::string_view bytes, const DecodeLimits& limits = {});
Result<Image> DecodeJpeg(std::string_view bytes, const DecodeLimits& limits = {});

}  // namespace runmon::media
