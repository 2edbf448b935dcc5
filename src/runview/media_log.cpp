// The images a run logged (see media_log.hpp): the image-file parser, a history row's images in either of
// W&B's two forms, the per-key series with their cap, and reading a file without leaving the run directory.
#include "runview/media_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::runview {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kMaxLoggedSide = uint64_t{1} << 24;
constexpr size_t kMaxSha256Bytes = 128;
constexpr size_t kMaxSeparatedImages = 1024;  // images/separated files in one item

bool IsImageType(std::string_view type) {
  return type == "image-file" || type == "images/separated";
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower;
}

// W&B's format field is the file's extension as given ("JPG", "jpg") or a file_type ("jpeg", "png").
std::string NormalFormat(std::string_view format) {
  std::string lower = Lower(format.substr(0, 16));
  return lower == "jpg" ? "jpeg" : lower;
}

std::string FormatOfPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  return NormalFormat(path.substr(dot + 1));
}

// The optional fields every image form shares (format, sizes); an Error names the field.
Status ReadCommonFields(const Json& object, ImageFile& image) {
  if (const auto it = object.find("format"); it != object.end()) {
    if (!it->is_string()) return Error{"format is not a string"};
    image.format = NormalFormat(it->get_ref<const std::string&>());
  }
  for (auto [name, field] : {std::pair{"width", &image.width}, std::pair{"height", &image.height}}) {
    const auto it = object.find(name);
    if (it == object.end()) continue;
    if (!it->is_number_unsigned()) return Error{fmt::format("{} is not a whole number", name)};
    const uint64_t value = it->get<uint64_t>();
    if (value > kMaxLoggedSide) return Error{fmt::format("{} {} is out of range", name, value)};
    *field = static_cast<uint32_t>(value);
  }
  if (const auto it = object.find("size"); it != object.end()) {
    if (!it->is_number_unsigned()) return Error{"size is not a whole number"};
    image.size = it->get<uint64_t>();
  }
  return OkStatus();
}

Result<ImageFile> ImageFromJson(const Json& object) {
  ImageFile image;
  const auto path = object.find("path");
  if (path == object.end()) return Error{"no path"};
  if (!path->is_string()) return Error{"path is not a string"};
  auto checked = CheckMediaPath(path->get_ref<const std::string&>());
  if (!checked) return Error{checked.error()};
  image.path = std::move(*checked);
  if (Status common = ReadCommonFields(object, image); !common) return Error{common.error()};
  if (image.format.empty()) image.format = FormatOfPath(image.path);
  if (const auto it = object.find("caption"); it != object.end()) {
    if (!it->is_string()) return Error{"caption is not a string"};
    image.caption = it->get_ref<const std::string&>().substr(0, kMaxCaptionBytes);
  }
  if (const auto it = object.find("sha256"); it != object.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxSha256Bytes) {
      return Error{"sha256 is not a short string"};
    }
    image.sha256 = it->get<std::string>();
  }
  return image;
}

// images/separated: a list of files under one key, each its own "key[i]".
Status AddSeparated(const std::string& key, const Json& object, RowImages& row) {
  const auto files = object.find("filenames");
  if (files == object.end() || !files->is_array()) return Error{"filenames is not a list"};
  ImageFile common;
  if (Status status = ReadCommonFields(object, common); !status) return status;
  const auto captions = object.find("captions");
  const bool has_captions = captions != object.end() && captions->is_array();
  for (size_t i = 0; i < files->size() && i < kMaxSeparatedImages; ++i) {
    const Json& file = (*files)[i];
    if (!file.is_string()) return Error{fmt::format("filenames[{}] is not a string", i)};
    auto path = CheckMediaPath(file.get_ref<const std::string&>());
    if (!path) return Error{fmt::format("filenames[{}]: {}", i, path.error())};
    ImageFile image = common;
    image.path = std::move(*path);
    if (image.format.empty()) image.format = FormatOfPath(image.path);
    if (has_captions && i < captions->size() && (*captions)[i].is_string()) {
      image.caption = (*captions)[i].get_ref<const std::string&>().substr(0, kMaxCaptionBytes);
    }
    row.images.emplace_back(fmt::format("{}[{}]", key, i), std::move(image));
  }
  return OkStatus();
}

// One media object (either form) of a row: its images added, or its error noted. Its _type may not be the
// one that made it media: a row may repeat a flattened field ("_type" twice, the second a number).
void AddObject(const std::string& key, const Json& object, RowImages& row) {
  const auto type = object.find("_type");
  if (type == object.end() || !type->is_string() || !IsImageType(type->get_ref<const std::string&>())) {
    row.errors.push_back(fmt::format("{}: _type is not an image type", key));
    return;
  }
  if (*type == "image-file") {
    auto image = ImageFromJson(object);
    if (image) {
      row.images.emplace_back(key, std::move(*image));
    } else {
      row.errors.push_back(fmt::format("{}: {}", key, image.error()));
    }
  } else if (Status status = AddSeparated(key, object, row); !status) {
    row.errors.push_back(fmt::format("{}: {}", key, status.error()));
  }
}

std::string JoinKey(std::span<const std::string_view> parts) {
  std::string key;
  for (const std::string_view part : parts) {
    if (!key.empty()) key += '.';
    key += part;
  }
  return key;
}

}  // namespace

Result<std::string> CheckMediaPath(std::string_view path) {
  if (path.empty()) return Error{"path is empty"};
  if (path.size() > kMaxMediaPathBytes) return Error{"path is too long"};
  if (path.front() == '/') return Error{"path is absolute"};
  if (path.find('\0') != std::string_view::npos || path.find('\\') != std::string_view::npos) {
    return Error{"path holds a NUL or backslash"};
  }
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part == "." || part == "..") return Error{"path has a . or .. part"};
    start = end + 1;
  }
  return std::string(path);
}

Result<ImageFile> ParseImageFile(std::string_view json) {
  const Json object = Json::parse(json, nullptr, false);
  if (object.is_discarded()) return Error{"not JSON"};
  if (!object.is_object()) return Error{"not an object"};
  const auto type = object.find("_type");
  if (type == object.end() || !type->is_string() || *type != "image-file") {
    return Error{"_type is not \"image-file\""};
  }
  return ImageFromJson(object);
}

RowImages ParseRowImages(std::span<const HistoryField> items) {
  RowImages row;
  row.media_items.assign(items.size(), false);
  // The flattened form: the key prefixes with a "_type" leaf naming an image type, then their fields.
  std::map<std::string, Json> flattened;
  for (const HistoryField& item : items) {
    if (item.key_parts.size() < 2 || item.key_parts.back() != "_type") continue;
    const Json type = Json::parse(item.value_json, nullptr, false);
    if (type.is_string() && IsImageType(type.get_ref<const std::string&>())) {
      flattened[JoinKey(item.key_parts.first(item.key_parts.size() - 1))] = Json::object();
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const HistoryField& item = items[i];
    if (!flattened.empty() && item.key_parts.size() >= 2) {
      const auto group = flattened.find(JoinKey(item.key_parts.first(item.key_parts.size() - 1)));
      if (group != flattened.end()) {
        row.media_items[i] = true;
        Json value = Json::parse(item.value_json, nullptr, false);
        if (!value.is_discarded()) group->second[item.key_parts.back()] = std::move(value);
        continue;
      }
    }
    // The whole-object form: a value that is an object with a _type.
    const size_t first = item.value_json.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || item.value_json[first] != '{') continue;
    const Json object = Json::parse(item.value_json, nullptr, false);
    if (!object.is_object()) continue;
    const auto type = object.find("_type");
    if (type == object.end() || !type->is_string()) continue;
    row.media_items[i] = true;  // a W&B media value of some kind: not a metric
    const std::string key = JoinKey(item.key_parts);
    if (!key.empty() && IsImageType(type->get_ref<const std::string&>())) AddObject(key, object, row);
  }
  for (const auto& [key, object] : flattened) {
    if (!key.empty()) AddObject(key, object, row);
  }
  return row;
}

int CompareNatural(std::string_view a, std::string_view b) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t a_end = i;
      size_t b_end = j;
      while (a_end < a.size() && digit(a[a_end])) ++a_end;
      while (b_end < b.size() && digit(b[b_end])) ++b_end;
      std::string_view a_number = a.substr(i, a_end - i);
      std::string_view b_number = b.substr(j, b_end - j);
      a_number.remove_prefix(std::min(a_number.find_first_not_of('0'), a_number.size()));
      b_number.remove_prefix(std::min(b_number.find_first_not_of('0'), b_number.size()));
      if (a_number.size() != b_number.size()) return a_number.size() < b_number.size() ? -1 : 1;
      if (const int c = a_number.compare(b_number); c != 0) return c < 0 ? -1 : 1;
      i = a_end;
      j = b_end;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  const size_t a_left = a.size() - i;
  const size_t b_left = b.size() - j;
  return a_left == b_left ? 0 : (a_left < b_left ? -1 : 1);
}

bool MediaLog::NaturalLess::operator()(std::string_view a, std::string_view b) const {
  const int c = CompareNatural(a, b);
  return c != 0 ? c < 0 : a < b;  // "img01" and "img1" compare equal as numbers: still two keys
}

void MediaLog::Add(std::string_view key, double step, ImageFile image) {
  if (!std::isfinite(step)) {
    NoteRejected(fmt::format("{}: the step is not a finite number", key));
    return;
  }
  auto it = series_.find(key);
  if (it == series_.end()) {
    it = series_.emplace(std::string(key), std::deque<Entry>()).first;
    keys_.insert(std::upper_bound(keys_.begin(), keys_.end(), it->first, NaturalLess()), it->first);
  }
  std::deque<Entry>& series = it->second;
  auto position = std::upper_bound(series.begin(), series.end(), step,
                                   [](double value, const Entry& entry) { return value < entry.step; });
  ++version_;
  if (position != series.begin() && std::prev(position)->step == step) {
    std::prev(position)->image = std::move(image);  // logged again at this step: the newest wins
    return;
  }
  series.insert(position, Entry{step, std::move(image)});
  order_.emplace_back(&it->first, step);
  while (order_.size() > max_images_) {
    const auto [dropped_key, dropped_step] = order_.front();
    order_.pop_front();
    ++dropped_;
    const auto dropped_series = series_.find(*dropped_key);
    std::deque<Entry>& entries = dropped_series->second;
    const auto entry = std::lower_bound(entries.begin(), entries.end(), dropped_step,
                                        [](const Entry& e, double value) { return e.step < value; });
    entries.erase(entry);
    if (entries.empty()) {
      std::erase(keys_, dropped_series->first);
      series_.erase(dropped_series);
    }
  }
}

void MediaLog::NoteRejected(std::string error) {
  ++rejected_;
  last_rejection_ = std::move(error);
  ++version_;
}

const std::deque<MediaLog::Entry>* MediaLog::Series(std::string_view key) const {
  const auto it = series_.find(key);
  return it == series_.end() ? nullptr : &it->second;
}

const MediaLog::Entry* MediaLog::At(std::string_view key, double step) const {
  const std::deque<Entry>* series = Series(key);
  if (series == nullptr) return nullptr;
  const auto after = std::upper_bound(series->begin(), series->end(), step,
                                      [](double value, const Entry& entry) { return value < entry.step; });
  return after == series->begin() ? nullptr : &*std::prev(after);
}

std::vector<double> MediaLog::Steps() const {
  std::vector<double> steps;
  steps.reserve(order_.size());
  for (const auto& [key, series] : series_) {
    for (const Entry& entry : series) steps.push_back(entry.step);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

size_t MediaLog::MemoryBytes() const {
  size_t bytes = sizeof(*this) + last_rejection_.capacity() + order_.size() * sizeof(order_.front());
  for (const auto& [key, series] : series_) {
    bytes += 2 * key.capacity() + 96;  // the key in series_ and keys_, the map node
    for (const Entry& entry : series) {
      bytes += sizeof(Entry) + entry.image.path.capacity() + entry.image.caption.capacity() +
               entry.image.format.capacity() + entry.image.sha256.capacity();
    }
  }
  return bytes;
}

Result<std::string> MediaLog::ReadFile(const ImageFile& image, size_t max_bytes) const {
  if (run_directory_.empty()) return Error{"the run directory is not known"};
  const auto real = [](const std::filesystem::path& path) -> std::string {
    std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr), &std::free);
    return resolved ? std::string(resolved.get()) : std::string();
  };
  const std::string root = real(run_directory_);
  if (root.empty()) return Error{fmt::format("{}: {}", run_directory_.string(), std::strerror(errno))};
  const std::filesystem::path wanted = run_directory_ / "files" / image.path;
  const std::string file = real(wanted);
  if (file.empty()) return Error{fmt::format("{}: {}", image.path, std::strerror(errno))};
  if (!file.starts_with(root + "/"))
    return Error{fmt::format("{}: leads out of the run directory", image.path)};
  // O_NONBLOCK: a FIFO planted under files/ must not block the reader.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Error{fmt::format("{}: {}", image.path, std::strerror(errno))};
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Error{fmt::format("{}: {}", image.path, std::strerror(errno))};
  if (!S_ISREG(info.st_mode)) return Error{fmt::format("{}: not a regular file", image.path)};
  if (static_cast<uint64_t>(info.st_size) > max_bytes) {
    const std::string limit = max_bytes % (1 << 20) == 0 ? fmt::format("{} MiB", max_bytes >> 20)
                                                         : fmt::format("{}-byte", max_bytes);
    return Error{fmt::format("{}: {} bytes is over the {} limit", image.path, info.st_size, limit)};
  }
  std::string bytes(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{fmt::format("{}: {}", image.path, std::strerror(errno))};
    if (got == 0) break;  // the file shrank while read
    done += static_cast<size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace runmon::runview
