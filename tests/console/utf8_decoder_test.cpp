// Utf8Decoder: Go's decoding (one U+FFFD per byte that starts no valid sequence), the same whatever the
// chunking, a cut sequence held for the next chunk, Finish() turning a cut tail into U+FFFD.
#include "console/utf8_decoder.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace runmon::console {
namespace {

std::u32string DecodeInChunks(std::string_view bytes, const std::vector<size_t>& cuts) {
  std::u32string out;
  Utf8Decoder decoder;
  size_t start = 0;
  for (size_t cut : cuts) {
    decoder.Decode(bytes.substr(start, cut - start), [&](char32_t rune) { out += rune; });
    start = cut;
  }
  decoder.Decode(bytes.substr(start), [&](char32_t rune) { out += rune; });
  decoder.Finish([&](char32_t rune) { out += rune; });
  return out;
}

std::u32string Decode(std::string_view bytes) {
  return DecodeInChunks(bytes, {});
}

TEST(Utf8Decoder, DecodesValidText) {
  EXPECT_EQ(Decode("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), U"a\u00E9\u20AC\U0001F600");
}

TEST(Utf8Decoder, EachInvalidByteIsAReplacementCharacter) {
  EXPECT_EQ(Decode("\xFF"), U"\uFFFD");
  EXPECT_EQ(Decode("\xC0\xAF"), U"\uFFFD\uFFFD");                      // overlong
  EXPECT_EQ(Decode("\xED\xA0\x80"), U"\uFFFD\uFFFD\uFFFD");            // a surrogate
  EXPECT_EQ(Decode("\xF4\x90\x80\x80"), U"\uFFFD\uFFFD\uFFFD\uFFFD");  // above U+10FFFF
  EXPECT_EQ(Decode("\xE2\x82"
                   "A"),
            U"\uFFFD\uFFFDA");  // cut by a letter
  EXPECT_EQ(Decode("\x80x"), U"\uFFFDx");
}

TEST(Utf8Decoder, ACutSequenceWaitsForTheNextChunk) {
  EXPECT_EQ(DecodeInChunks("\xE2\x82\xAC", {1}), U"\u20AC");
  EXPECT_EQ(DecodeInChunks("\xE2\x82\xAC", {2}), U"\u20AC");
  EXPECT_EQ(DecodeInChunks("\xF0\x9F\x98\x80", {1, 2, 3}), U"\U0001F600");
  // The next chunk shows the sequence was invalid: each carried byte is U+FFFD, the new byte starts over.
  EXPECT_EQ(DecodeInChunks("\xE2\x82"
                           "A",
                           {2}),
            U"\uFFFD\uFFFDA");
  EXPECT_EQ(DecodeInChunks("\xE2\x82\xE2\x82\xAC", {1, 3}), U"\uFFFD\uFFFD\u20AC");
}

TEST(Utf8Decoder, FinishEndsACutTail) {
  EXPECT_EQ(Decode("ok\xF0\x9F"), U"ok\uFFFD\uFFFD");
}

TEST(Utf8Decoder, ChunkingNeverChangesTheResult) {
  std::mt19937 random(7);
  const std::string alphabet[] = {"a",    "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF",
                                  "\x80", "\xE2",     "\xF0\x9F",     "\xED\xA0\x80",     "\n"};
  for (int round = 0; round < 2000; ++round) {
    std::string bytes;
    const int parts = static_cast<int>(random() % 12);
    for (int i = 0; i < parts; ++i) bytes += alphabet[random() % std::size(alphabet)];
    std::vector<size_t> cuts;
    for (size_t at = 1; at < bytes.size(); ++at) {
      if (random() % 3 == 0) cuts.push_back(at);
    }
    ASSERT_EQ(DecodeInChunks(bytes, cuts), Decode(bytes)) << "round " << round;
  }
}

TEST(Utf8Decoder, EncodesBack) {
  EXPECT_EQ(EncodeUtf8(U"a\u00E9\u20AC\U0001F600\uFFFD"),
            "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD");
}

TEST(Utf8Decoder, AppendingRunsOfRunesEqualsAppendingEachOne) {
  // Runs of ASCII (taken at once) between, before and after multi-byte characters.
  for (const std::u32string_view runes :
       {U"", U"plain ascii line", U"\u00E9", U"ab\u00E9cd\u20ACef\U0001F600", U"\U0001F600tail",
        U"head\uFFFD", U"\x7F\x80\x7F"}) {
    std::string each = "before:";
    for (const char32_t rune : runes) AppendUtf8(each, rune);
    std::string runs = "before:";
    AppendRunes(runs, runes);
    EXPECT_EQ(runs, each);
  }
}

}  // namespace
}  // namespace runmon::console
