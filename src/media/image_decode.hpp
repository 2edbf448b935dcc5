// Images decoded for the terminal: PNG (libpng's simplified API) and JPEG (libjpeg-turbo) from bytes into
// RGBA8, and a box-filter resize to the few pixels a cell grid shows. A run's media files are written by
// whatever the user's program logs, so every decode is bounded before a pixel is allocated: files over
// max_file_bytes, sides over max_side and images over max_pixel_bytes of RGBA are refused by their headers,
// and a JPEG with more than max_jpeg_scans progressive scans (a cheap way to make a small file decode for
// minutes) is stopped. Library errors (libpng's and libjpeg's longjmp) come back as an Error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::media {

struct DecodeLimits {
  size_t max_file_bytes = size_t{32} << 20;
  uint32_t max_side = 8192;
  uint64_t max_pixel_bytes = uint64_t{64} << 20;  // width * height * 4
  int max_jpeg_scans = 1000;
};

// Row-major RGBA8, 4 bytes a pixel, no padding.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;
  size_t MemoryBytes() const { return rgba.capacity() + sizeof(*this); }
};

enum class ImageFormat { kUnknown, kPng, kJpeg };

// By the file's first bytes (its signature), not its name.
ImageFormat SniffFormat(std::string_view bytes);

// A PNG or JPEG file's bytes decoded; anything else (GIF, BMP, a truncated or corrupt file) is an Error
// saying why ("png: Not a PNG file", "image 10000x10 is over the 8192-pixel limit").
Result<Image> DecodeImage(std::string_view bytes, const DecodeLimits& limits = {});
Result<Image> DecodePng(std::string_view bytes, const DecodeLimits& limits = {});
Result<Image> DecodeJpeg(std::string_view bytes, const DecodeLimits& limits = {});

// The largest size within max_width x max_height with the aspect of width x height (each at least 1 when
// the image and the box are not empty; 0x0 otherwise).
struct Size {
  int width = 0;
  int height = 0;
  friend bool operator==(const Size&, const Size&) = default;
};
Size FitWithin(int width, int height, int max_width, int max_height);

// `source` resized to width x height: each output pixel is the mean of the source pixels its box covers
// (colour weighted by alpha, so transparent pixels do not darken their neighbours); when enlarging, the
// nearest pixel. An empty source or size gives an empty image.
Image Resize(const Image& source, int width, int height);

}  // namespace runmon::media
