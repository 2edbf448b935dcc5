// Images for the terminal: RGBA8 pixels, the limits a decoder keeps, a format sniffed from a file's first
// bytes, and a box-filter resize to the few pixels a cell grid shows. Pure code, linked into runmon; the
// decoders themselves (libpng, libjpeg-turbo: image_decode.hpp) are the `image` module's, loaded only by
// what shows images (leet's media pane), so `runmon run` and `runmon sample` never map those libraries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "modules/module_loader.hpp"

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

// A decoder: a file's bytes to pixels, or an Error saying why not (image_decode.hpp's DecodeImage).
using ImageDecoder = Result<Image> (*)(std::string_view bytes, const DecodeLimits& limits);

// The `image` module (runmon-modules/image.so, modules/module_loader.hpp): the decoders and their libraries.
struct ImageModule {
  static constexpr std::string_view kModuleName = "image";
  static constexpr const char* kModuleEntry = "runmon_image_module";
  static constexpr std::uint32_t kModuleAbi = 1;
  ModuleHeader header;
  ImageDecoder decode;
};

}  // namespace runmon::media
