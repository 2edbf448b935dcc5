// runmon_media: PNGs made here byte by byte (zlib's stored blocks need no compressor) and JPEGs made with
// libjpeg decode to the pixels put in; truncated, corrupt and hostile files (a header claiming 100000x100000,
// a file over the size limit, a JPEG of too many scans) are refused with a message; the resize averages
// boxes, weights colour by alpha and keeps the aspect when fitted.
#include "media/image_decode.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <jpeglib.h>

namespace runmon::media {
namespace {

uint32_t Crc32(std::string_view data) {
  uint32_t crc = 0xFFFFFFFF;
  for (const char c : data) {
    crc ^= static_cast<uint8_t>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t Adler32(std::string_view data) {
  uint32_t a = 1;
  uint32_t b = 0;
  for (const char c : data) {
    a = (a + static_cast<uint8_t>(c)) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string BigEndian(uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
          static_cast<char>(value)};
}

std::string Chunk(std::string_view kind, std::string_view data) {
  const std::string body = std::string(kind) + std::string(data);
  return BigEndian(static_cast<uint32_t>(data.size())) + body + BigEndian(Crc32(body));
}

// A zlib stream of stored (uncompressed) blocks.
std::string Stored(std::string_view raw) {
  std::string out = "\x78\x01";
  size_t at = 0;
  do {
    const size_t length = std::min<size_t>(raw.size() - at, 65535);
    const bool last = at + length == raw.size();
    out += static_cast<char>(last ? 1 : 0);
    out += static_cast<char>(length & 0xFF);
    out += static_cast<char>(length >> 8);
    out += static_cast<char>(~length & 0xFF);
    out += static_cast<char>((~length >> 8) & 0xFF);
    out += raw.substr(at, length);
    at += length;
  } while (at < raw.size());
  return out + BigEndian(Adler32(raw));
}

// An 8-bit PNG of `colour_type` (2 RGB, 6 RGBA, 0 grey) whose rows are given without their filter byte.
std::string Png(uint32_t width, uint32_t height, uint8_t colour_type, const std::vector<std::string>& rows) {
  std::string header = BigEndian(width) + BigEndian(height);
  header += static_cast<char>(8);
  header += static_cast<char>(colour_type);
  header += std::string(3, '\0');
  std::string raw;
  for (const auto& row : rows) raw += '\0' + row;
  return "\x89PNG\r\n\x1a\n" + Chunk("IHDR", header) + Chunk("IDAT", Stored(raw)) + Chunk("IEND", "");
}

std::string Rgb(uint8_t r, uint8_t g, uint8_t b) {
  return {static_cast<char>(r), static_cast<char>(g), static_cast<char>(b)};
}

std::string Jpeg(int width, int height, uint8_t level, bool progressive) {
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);
  jpeg_create_compress(&info);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(width);
  info.image_height = static_cast<JDIMENSION>(height);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 90, TRUE);
  if (progressive) jpeg_simple_progression(&info);
  jpeg_start_compress(&info, TRUE);
  std::vector<unsigned char> row(static_cast<size_t>(width) * 3, level);
  while (info.next_scanline < info.image_height) {
    JSAMPROW pointer = row.data();
    jpeg_write_scanlines(&info, &pointer, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::string bytes(reinterpret_cast<char*>(buffer), size);
  std::free(buffer);
  return bytes;
}

const uint8_t* Pixel(const Image& image, int x, int y) {
  return image.rgba.data() +
         4 * (static_cast<size_t>(y) * static_cast<size_t>(image.width) + static_cast<size_t>(x));
}

TEST(ImageDecode, DecodesRgbPngToRgba) {
  const std::string png = Png(2, 2, 2, {Rgb(255, 0, 0) + Rgb(0, 255, 0), Rgb(0, 0, 255) + Rgb(10, 20, 30)});
  EXPECT_EQ(SniffFormat(png), ImageFormat::kPng);
  const auto image = DecodeImage(png);
  ASSERT_TRUE(image.ok()) << image.error();
  EXPECT_EQ(image->width, 2);
  EXPECT_EQ(image->height, 2);
  ASSERT_EQ(image->rgba.size(), 16u);
  EXPECT_EQ(std::vector<uint8_t>(Pixel(*image, 1, 1), Pixel(*image, 1, 1) + 4),
            (std::vector<uint8_t>{10, 20, 30, 255}));
  EXPECT_EQ(Pixel(*image, 0, 1)[2], 255);
}

TEST(ImageDecode, KeepsAlphaAndGrey) {
  const auto rgba = DecodePng(Png(1, 1, 6, {std::string("\x01\x02\x03\x04", 4)}));
  ASSERT_TRUE(rgba.ok()) << rgba.error();
  EXPECT_EQ(std::vector<uint8_t>(rgba->rgba.begin(), rgba->rgba.end()), (std::vector<uint8_t>{1, 2, 3, 4}));
  const auto grey = DecodePng(Png(1, 1, 0, {std::string("\x80", 1)}));
  ASSERT_TRUE(grey.ok()) << grey.error();
  EXPECT_EQ(std::vector<uint8_t>(grey->rgba.begin(), grey->rgba.end()),
            (std::vector<uint8_t>{128, 128, 128, 255}));
}

TEST(ImageDecode, RefusesTruncatedAndCorruptPngs) {
  const std::string png = Png(4, 4, 2, std::vector<std::string>(4, std::string(12, '\x40')));
  // Cut anywhere up to the pixel data's end (a file missing only its IEND chunk still has every pixel).
  for (const size_t cut : {size_t{8}, size_t{20}, size_t{33}, png.size() - 20, png.size() - 16}) {
    const auto image = DecodeImage(png.substr(0, cut));
    EXPECT_FALSE(image.ok()) << "cut at " << cut;
    if (!image.ok()) EXPECT_TRUE(image.error().starts_with("png: ")) << image.error();
  }
  std::string corrupt = png;
  corrupt[45] = static_cast<char>(corrupt[45] ^ 0x55);  // inside IDAT: its CRC no longer matches
  EXPECT_FALSE(DecodeImage(corrupt).ok());
  EXPECT_EQ(DecodeImage("").error(), "empty file");
  EXPECT_EQ(DecodeImage("GIF89a....").error(), "not a PNG or JPEG file");
}

TEST(ImageDecode, RefusesHugeHeadersBeforeAllocating) {
  // A valid header claiming 100000 x 100000 pixels (40 GB of RGBA) and one row of data.
  const auto huge = DecodeImage(Png(100000, 100000, 2, {std::string(3, '\0')}));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error(), "image 100000x100000 is over the 8192-pixel limit");
  // Within the side limit but over the pixel limit: 8192 x 4096 x 4 = 128 MiB.
  const auto wide = DecodeImage(Png(8192, 4096, 2, {std::string(3, '\0')}));
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error(), "image 8192x4096 is over the 64 MiB limit");
  DecodeLimits small;
  small.max_file_bytes = 10;
  EXPECT_EQ(DecodeImage(Png(1, 1, 0, {std::string(1, '\0')}), small).error(),
            "file of 70 bytes is over the 10-byte limit");
}

TEST(ImageDecode, DecodesJpegAndRefusesItsDamage) {
  const std::string jpeg = Jpeg(16, 8, 200, false);
  EXPECT_EQ(SniffFormat(jpeg), ImageFormat::kJpeg);
  const auto image = DecodeImage(jpeg);
  ASSERT_TRUE(image.ok()) << image.error();
  EXPECT_EQ(image->width, 16);
  EXPECT_EQ(image->height, 8);
  EXPECT_NEAR(Pixel(*image, 5, 5)[0], 200, 3);
  EXPECT_EQ(Pixel(*image, 5, 5)[3], 255);
  const auto truncated = DecodeImage(jpeg.substr(0, jpeg.size() / 2));
  ASSERT_FALSE(truncated.ok());
  EXPECT_TRUE(truncated.error().starts_with("jpeg: ")) << truncated.error();
  EXPECT_FALSE(DecodeImage(jpeg.substr(0, 20)).ok());
  DecodeLimits few_scans;
  few_scans.max_jpeg_scans = 2;
  const auto progressive = Jpeg(16, 16, 90, true);
  EXPECT_TRUE(DecodeImage(progressive).ok());
  EXPECT_EQ(DecodeImage(progressive, few_scans).error(), "jpeg: more than 2 scans");
  DecodeLimits narrow;
  narrow.max_side = 8;
  EXPECT_EQ(DecodeImage(jpeg, narrow).error(), "image 16x8 is over the 8-pixel limit");
}

TEST(ImageResize, AveragesBoxesAndWeightsByAlpha) {
  Image source{4, 2, {}};
  // Left half: red and blue; right half: white, and a transparent black pixel.
  source.rgba = {255, 0, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0,
                 255, 0, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0};
  const Image half = Resize(source, 2, 1);
  ASSERT_EQ(half.width, 2);
  ASSERT_EQ(half.height, 1);
  EXPECT_EQ(std::vector<uint8_t>(half.rgba.begin(), half.rgba.begin() + 4),
            (std::vector<uint8_t>{128, 0, 128, 255}));
  // The transparent pixel does not darken the white one; the box is half covered.
  EXPECT_EQ(std::vector<uint8_t>(half.rgba.begin() + 4, half.rgba.end()),
            (std::vector<uint8_t>{255, 255, 255, 128}));
  const Image bigger = Resize(source, 8, 4);  // enlarging: the nearest pixel
  EXPECT_EQ(Pixel(bigger, 2, 3)[2], 255);
  EXPECT_EQ(Pixel(bigger, 7, 0)[3], 0);
  EXPECT_TRUE(Resize(source, 0, 3).rgba.empty());
  EXPECT_TRUE(Resize(Image{}, 3, 3).rgba.empty());
}

TEST(ImageResize, FitsKeepingTheAspect) {
  EXPECT_EQ(FitWithin(100, 50, 40, 40), (Size{40, 20}));
  EXPECT_EQ(FitWithin(50, 100, 40, 40), (Size{20, 40}));
  EXPECT_EQ(FitWithin(8, 8, 30, 12), (Size{12, 12}));
  EXPECT_EQ(FitWithin(8192, 1, 20, 10), (Size{20, 1}));  // never 0 wide or high
  EXPECT_EQ(FitWithin(1, 8192, 20, 10), (Size{1, 10}));
  EXPECT_EQ(FitWithin(0, 5, 20, 10), (Size{}));
  EXPECT_EQ(FitWithin(5, 5, 0, 10), (Size{}));
}

}  // namespace
}  // namespace runmon::media
