// The constant labels' file. See constant_labels.hpp.
#include "remote_write/constant_labels.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::remote_write {
namespace {

constexpr int kFormat = 1;

struct Member {
  std::string_view name;
  std::string ConstantLabels::*field;
};
constexpr Member kMembers[] = {{"host", &ConstantLabels::host},
                               {"run_id", &ConstantLabels::run_id},
                               {"job_id", &ConstantLabels::job_id},
                               {"node_rank", &ConstantLabels::node_rank}};

std::string ErrnoText() {
  return std::strerror(errno);
}

Status WriteAtomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", temporary.string(), ErrnoText())};
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string error = ErrnoText();
      ::close(fd);
      return Error{fmt::format("cannot write {}: {}", temporary.string(), error)};
    }
    written += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return Error{fmt::format("cannot rename {} to {}: {}", temporary.string(), path.string(), ErrnoText())};
  }
  return OkStatus();
}

// The file's text, at most kMaxLabelsFileBytes + 1 bytes of it (enough for the parser to refuse a longer
// one); nullopt when there is no file.
Result<std::optional<std::string>> ReadLabelsFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Error{fmt::format("cannot open {}: {}", path.string(), ErrnoText())};
  }
  std::string text(kMaxLabelsFileBytes + 1, '\0');
  size_t size = 0;
  while (size < text.size()) {
    const ssize_t n = ::read(fd, text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string error = ErrnoText();
      ::close(fd);
      return Error{fmt::format("cannot read {}: {}", path.string(), error)};
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(size);
  return std::optional<std::string>(std::move(text));
}

}  // namespace

std::string RenderConstantLabels(const ConstantLabels& labels) {
  nlohmann::ordered_json json;
  json["format"] = kFormat;
  for (const Member& member : kMembers) json[std::string(member.name)] = labels.*member.field;
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<ConstantLabels> ParseConstantLabels(std::string_view text) {
  if (text.size() > kMaxLabelsFileBytes) {
    return Error{
        fmt::format("{} bytes, more than a labels file holds ({})", text.size(), kMaxLabelsFileBytes)};
  }
  // Without exceptions: a parse error is a discarded value. The depth stays that of the text, which is
  // bounded by its size above.
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) return Error{"not JSON"};
  if (!json.is_object()) return Error{"not a JSON object"};
  const auto format = json.find("format");
  if (format == json.end() || !format->is_number_integer() || format->get<int64_t>() != kFormat) {
    return Error{fmt::format("not format {}", kFormat)};
  }
  ConstantLabels labels;
  for (const Member& member : kMembers) {
    const auto found = json.find(std::string(member.name));
    if (found == json.end()) continue;
    if (!found->is_string()) return Error{fmt::format("\"{}\" is not a string", member.name)};
    const auto& value = found->get_ref<const std::string&>();
    if (value.size() > kMaxConstantLabelBytes) {
      return Error{fmt::format("\"{}\" is {} bytes long (at most {})", member.name, value.size(),
                               kMaxConstantLabelBytes)};
    }
    labels.*member.field = value;
  }
  return labels;
}

Result<ConstantLabels> LoadOrStoreConstantLabels(const std::filesystem::path& directory,
                                                 const ConstantLabels& labels,
                                                 std::string* replaced_damaged) {
  replaced_damaged->clear();
  const std::filesystem::path path = directory / kLabelsFileName;
  Result<std::optional<std::string>> text = ReadLabelsFile(path);
  if (!text.ok()) return Error{text.error()};
  if (text->has_value()) {
    Result<ConstantLabels> stored = ParseConstantLabels(**text);
    if (stored.ok()) return stored;
    *replaced_damaged = fmt::format("{}: {}", path.string(), stored.error());
  }
  if (Status written = WriteAtomically(path, RenderConstantLabels(labels)); !written.ok()) {
    return Error{written.error()};
  }
  return labels;
}

}  // namespace runmon::remote_write
