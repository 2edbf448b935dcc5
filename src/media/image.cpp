// Images for the terminal (see image.hpp): the format sniff and the resize; no image library here.
#include "media/image.hpp"

#include <algorithm>

namespace runmon::media {
namespace {

constexpr std::string_view kPngSignature = "\x89PNG\r\n\x1a\n";

}  // namespace

ImageFormat SniffFormat(std::string_view bytes) {
  if (bytes.starts_with(kPngSignature)) return ImageFormat::kPng;
  if (bytes.starts_with("\xff\xd8\xff")) return ImageFormat::kJpeg;
  return ImageFormat::kUnknown;
}

Size FitWithin(int width, int height, int max_width, int max_height) {
  if (width <= 0 || height <= 0 || max_width <= 0 || max_height <= 0) return {};
  // The box's aspect against the image's, in 64 bits (sides up to 2^31).
  const int64_t w = width;
  const int64_t h = height;
  if (w * max_height <= h * max_width) {  // height-bound
    const int64_t fitted = (w * max_height + h / 2) / h;
    return {static_cast<int>(std::clamp<int64_t>(fitted, 1, max_width)), max_height};
  }
  const int64_t fitted = (h * max_width + w / 2) / w;
  return {max_width, static_cast<int>(std::clamp<int64_t>(fitted, 1, max_height))};
}

Image Resize(const Image& source, int width, int height) {
  Image out;
  if (source.width <= 0 || source.height <= 0 || width <= 0 || height <= 0 ||
      source.rgba.size() <
          size_t{4} * static_cast<size_t>(source.width) * static_cast<size_t>(source.height)) {
    return out;
  }
  out.width = width;
  out.height = height;
  out.rgba.resize(size_t{4} * static_cast<size_t>(width) * static_cast<size_t>(height));
  const int64_t sw = source.width;
  const int64_t sh = source.height;
  for (int64_t y = 0; y < height; ++y) {
    const int64_t y0 = y * sh / height;
    const int64_t y1 = std::max(y0 + 1, (y + 1) * sh / height);
    for (int64_t x = 0; x < width; ++x) {
      const int64_t x0 = x * sw / width;
      const int64_t x1 = std::max(x0 + 1, (x + 1) * sw / width);
      uint64_t red = 0;
      uint64_t green = 0;
      uint64_t blue = 0;
      uint64_t alpha = 0;
      for (int64_t sy = y0; sy < y1; ++sy) {
        const uint8_t* pixel = source.rgba.data() + 4 * (sy * sw + x0);
        for (int64_t sx = x0; sx < x1; ++sx, pixel += 4) {
          red += uint64_t{pixel[0]} * pixel[3];
          green += uint64_t{pixel[1]} * pixel[3];
          blue += uint64_t{pixel[2]} * pixel[3];
          alpha += pixel[3];
        }
      }
      const uint64_t count = static_cast<uint64_t>((y1 - y0) * (x1 - x0));
      uint8_t* target = out.rgba.data() + 4 * (y * width + x);
      if (alpha > 0) {
        target[0] = static_cast<uint8_t>((red + alpha / 2) / alpha);
        target[1] = static_cast<uint8_t>((green + alpha / 2) / alpha);
        target[2] = static_cast<uint8_t>((blue + alpha / 2) / alpha);
      }
      target[3] = static_cast<uint8_t>((alpha + count / 2) / count);
    }
  }
  return out;
}

}  // namespace runmon::media
