// Decodes PNG and JPEG bytes into RGBA8 (see image_decode.hpp). Both libraries report errors
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

}  // namespace runmon::media
