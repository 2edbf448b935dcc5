// Fuzzes the media log's readers (src/runview/media_log.hpp): the whole input as one image-file object
// (ParseImageFile), and its lines as a history row ("k1/k2=<value json>" each, the key's parts split on
// '/') for ParseRowImages. Checks that every path let through is one CheckMediaPath accepts (relative, no
// "." or ".." part, no NUL), that captions keep their limit, and that a row marks one flag per item.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "runview/media_log.hpp"

namespace {

void CheckImage(const runmon::runview::ImageFile& image) {
  FUZZ_CHECK(!image.path.empty() && image.path.front() != '/');
  FUZZ_CHECK(runmon::runview::CheckMediaPath(image.path).ok());
  FUZZ_CHECK(image.path.find("/../") == std::string::npos && !image.path.starts_with("../"));
  FUZZ_CHECK(image.caption.size() <= runmon::runview::kMaxCaptionBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  if (auto image = runmon::runview::ParseImageFile(text)) CheckImage(*image);

  std::vector<std::vector<std::string_view>> keys;
  std::vector<std::string_view> values;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    std::vector<std::string_view> parts;
    const std::string_view key = line.substr(0, equals);
    for (size_t from = 0; from <= key.size();) {
      const size_t slash = std::min(key.find('/', from), key.size());
      parts.push_back(key.substr(from, slash - from));
      from = slash + 1;
    }
    keys.push_back(std::move(parts));
    values.push_back(line.substr(equals + 1));
  }
  std::vector<runmon::runview::HistoryField> fields;
  for (size_t i = 0; i < keys.size(); ++i) fields.push_back({keys[i], values[i]});
  const auto row = runmon::runview::ParseRowImages(fields);
  FUZZ_CHECK(row.media_items.size() == fields.size());
  for (const auto& [key, image] : row.images) {
    FUZZ_CHECK(!key.empty());
    CheckImage(image);
  }
  return 0;
}
