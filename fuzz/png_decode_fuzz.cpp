// Fuzzes the image decoders (src/media): any bytes through DecodeImage (PNG by libpng, JPEG by
// libjpeg-turbo, by signature) with small limits so each input decodes fast. Checks that a decoded image
// keeps the limits and holds exactly width x height RGBA pixels, and that resizing it to a fitted cell-grid
// size gives that size.
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "media/image_decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  runmon::media::DecodeLimits limits;
  limits.max_side = 1024;
  limits.max_pixel_bytes = 1 << 20;
  limits.max_jpeg_scans = 50;
  const auto image = runmon::media::DecodeImage(runmon::fuzz::AsText(data, size), limits);
  if (!image) {
    FUZZ_CHECK(!image.error().empty());
    return 0;
  }
  FUZZ_CHECK(image->width > 0 && image->height > 0);
  FUZZ_CHECK(static_cast<uint32_t>(image->width) <= limits.max_side);
  FUZZ_CHECK(static_cast<uint32_t>(image->height) <= limits.max_side);
  FUZZ_CHECK(image->rgba.size() ==
             static_cast<size_t>(image->width) * static_cast<size_t>(image->height) * 4);
  FUZZ_CHECK(image->rgba.size() <= limits.max_pixel_bytes);
  const auto fit = runmon::media::FitWithin(image->width, image->height, 40, 24);
  FUZZ_CHECK(fit.width >= 1 && fit.width <= 40 && fit.height >= 1 && fit.height <= 24);
  const auto small = runmon::media::Resize(*image, fit.width, fit.height);
  FUZZ_CHECK(small.width == fit.width && small.height == fit.height);
  FUZZ_CHECK(small.rgba.size() == static_cast<size_t>(fit.width) * static_cast<size_t>(fit.height) * 4);
  return 0;
}
