// Decodes PNG and JPEG bytes into RGBA8 and resizes them (see image_decode.hpp). Both libraries report errors
// by longjmp: libpng's simplified API (png_image_*) does its setjmp inside and returns 0 with a message, and
// frees what it allocated (png_image_free); for libjpeg the setjmp is in ReadJpeg, whose locals have no
// destructors for a longjmp to skip, and every exit destroys the decompressor.
#include "media/image_decode.hpp"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <png.h>
// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

namespace runmon::media {
namespace {

constexpr std::string_view kPngSignature = "\x89PNG\r\n\x1a\n";

std::string FormatLimit(uint64_t bytes) {
  return bytes % (1 << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{}-byte", bytes);
}

// The size check every decoder makes before allocating: sides within max_side, RGBA within max_pixel_bytes.
std::string CheckSize(uint64_t width, uint64_t height, const DecodeLimits& limits) {
  if (width == 0 || height == 0) return fmt::format("image {}x{} has no pixels", width, height);
  if (width > limits.max_side || height > limits.max_side) {
    return fmt::format("image {}x{} is over the {}-pixel limit", width, height, limits.max_side);
  }
  if (width * height * 4 > limits.max_pixel_bytes) {
    return fmt::format("image {}x{} is over the {} limit", width, height,
                       FormatLimit(limits.max_pixel_bytes));
  }
  return {};
}

std::string CheckFileSize(size_t size, const DecodeLimits& limits) {
  if (size > limits.max_file_bytes) {
    return fmt::format("file of {} bytes is over the {} limit", size, FormatLimit(limits.max_file_bytes));
  }
  return {};
}

struct JpegErrors {
  jpeg_error_mgr manager;  // first: libjpeg's callbacks get it as a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  int max_scans;
};

[[noreturn]] void JpegErrorExit(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings are not printed; a file cut short (libjpeg would fill the rest with grey) is an error.
void JpegEmitMessage(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) JpegErrorExit(info);
}

void JpegOutputMessage(j_common_ptr) {}

// A progressive file may hold any number of scans, each a pass over the whole image.
void JpegProgress(j_common_ptr info) {
  if (!info->is_decompressor) return;
  auto* decompress = reinterpret_cast<j_decompress_ptr>(info);
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  if (decompress->input_scan_number > errors->max_scans) {
    std::snprintf(errors->message, sizeof(errors->message), "more than %d scans", errors->max_scans);
    std::longjmp(errors->jump, 1);
  }
}

// libjpeg's state, owned by the caller of ReadJpeg: objects that change between setjmp and longjmp must not
// be locals of the function that called setjmp (their values would be indeterminate after the jump).
struct JpegState {
  jpeg_decompress_struct info;
  JpegErrors errors;
  jpeg_progress_mgr progress;
};

// Returns an empty string on success (`out` filled), else the error. No object with a destructor is alive
// across a libjpeg call, so a longjmp back to the setjmp skips none.
std::string ReadJpeg(JpegState* state, const unsigned char* data, size_t size, const DecodeLimits& limits,
                     Image* out) {
  jpeg_decompress_struct* info = &state->info;
  info->err = jpeg_std_error(&state->errors.manager);
  state->errors.manager.error_exit = JpegErrorExit;
  state->errors.manager.emit_message = JpegEmitMessage;
  state->errors.manager.output_message = JpegOutputMessage;
  state->errors.max_scans = limits.max_jpeg_scans;
  if (setjmp(state->errors.jump) != 0) {
    jpeg_destroy_decompress(&state->info);
    return std::string("jpeg: ") + state->errors.message;
  }
  jpeg_create_decompress(info);
  state->progress.progress_monitor = JpegProgress;
  info->progress = &state->progress;
  jpeg_mem_src(info, data, static_cast<unsigned long>(size));
  jpeg_read_header(info, TRUE);
  if (!CheckSize(info->image_width, info->image_height, limits).empty()) {
    const uint32_t width = info->image_width;
    const uint32_t height = info->image_height;
    jpeg_destroy_decompress(info);
    return CheckSize(width, height, limits);
  }
  info->out_color_space = JCS_EXT_RGBA;
  jpeg_start_decompress(info);
  out->width = static_cast<int>(info->output_width);
  out->height = static_cast<int>(info->output_height);
  const size_t stride = size_t{info->output_width} * 4;
  out->rgba.assign(stride * info->output_height, 0);
  while (info->output_scanline < info->output_height) {
    JSAMPROW row = out->rgba.data() + stride * info->output_scanline;
    jpeg_read_scanlines(info, &row, 1);
  }
  jpeg_finish_decompress(info);
  jpeg_destroy_decompress(info);
  return {};
}

}  // namespace

ImageFormat SniffFormat(std::string_view bytes) {
  if (bytes.starts_with(kPngSignature)) return ImageFormat::kPng;
  if (bytes.starts_with("\xff\xd8\xff")) return ImageFormat::kJpeg;
  return ImageFormat::kUnknown;
}

Result<Image> DecodeImage(std::string_view bytes, const DecodeLimits& limits) {
  switch (SniffFormat(bytes)) {
    case ImageFormat::kPng:
      return DecodePng(bytes, limits);
    case ImageFormat::kJpeg:
      return DecodeJpeg(bytes, limits);
    case ImageFormat::kUnknown:
      break;
  }
  return Error{bytes.empty() ? "empty file" : "not a PNG or JPEG file"};
}

Result<Image> DecodePng(std::string_view bytes, const DecodeLimits& limits) {
  if (std::string error = CheckFileSize(bytes.size(), limits); !error.empty()) return Error{error};
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()) == 0) {
    std::string error = std::string("png: ") + png.message;
    png_image_free(&png);
    return Error{error};
  }
  if (std::string error = CheckSize(png.width, png.height, limits); !error.empty()) {
    png_image_free(&png);
    return Error{error};
  }
  png.format = PNG_FORMAT_RGBA;
  Image image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  image.rgba.assign(PNG_IMAGE_SIZE(png), 0);
  // finish_read frees libpng's state whether or not it succeeds.
  if (png_image_finish_read(&png, nullptr, image.rgba.data(), 0, nullptr) == 0) {
    std::string error = std::string("png: ") + png.message;
    png_image_free(&png);
    return Error{error};
  }
  return image;
}

Result<Image> DecodeJpeg(std::string_view bytes, const DecodeLimits& limits) {
  if (std::string error = CheckFileSize(bytes.size(), limits); !error.empty()) return Error{error};
  Image image;
  JpegState state{};
  std::string error =
      ReadJpeg(&state, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), limits, &image);
  if (!error.empty()) return Error{error};
  return image;
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
