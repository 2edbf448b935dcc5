// Owners, command lines and the `runmon run` rule (see process_identity_parse.hpp). A command line is
// whatever the process wrote into its own memory: any bytes, megabytes of them (the kernel allows up to a
// quarter of the stack limit), terminal escape sequences meant to repaint the screen. So it is escaped
// byte by byte and cut before it reaches a table.
#include "collectors/linux/parse/process_identity_parse.hpp"

#include <fmt/format.h>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"
#include "core/utf8.hpp"

namespace runmon {
namespace {

constexpr size_t kMaxUserNameBytes = 64;

// The code point of the valid UTF-8 sequence of `length` bytes at `text`.
char32_t DecodeSequence(std::string_view text, size_t length) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  if (length == 1) return byte(0);
  char32_t code_point = byte(0) & (0x7Fu >> length);
  for (size_t i = 1; i < length; ++i) code_point = (code_point << 6) | (byte(i) & 0x3Fu);
  return code_point;
}

bool ReordersText(char32_t code_point) {
  return (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2066 && code_point <= 0x2069) ||
         code_point == 0x200E || code_point == 0x200F || code_point == 0x061C;
}

}  // namespace

Result<unsigned> ParsePidStatusRealUid(std::string_view status) {
  const auto field = FindColonField(status, "Uid");
  if (!field) return Error{"/proc/PID/status: no Uid line"};
  text::Fields fields(*field);
  std::string_view real;
  if (!fields.Next(real)) return Error{"/proc/PID/status: empty Uid line"};
  const auto uid = text::ParseU64(real);
  if (!uid || *uid > UINT32_MAX) return Error{fmt::format("/proc/PID/status: bad uid '{}'", real)};
  return static_cast<unsigned>(*uid);
}

std::unordered_map<unsigned, std::string> ParsePasswdNames(std::string_view passwd) {
  std::unordered_map<unsigned, std::string> names;
  text::Lines lines(passwd);
  std::string_view line;
  while (lines.Next(line)) {
    if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
    const size_t name_end = line.find(':');
    if (name_end == 0 || name_end == std::string_view::npos || name_end > kMaxUserNameBytes) continue;
    const std::string_view name = line.substr(0, name_end);
    bool printable = true;
    for (char c : name) printable = printable && static_cast<unsigned char>(c) >= 0x20 && c != 0x7F;
    if (!printable || !IsValidUtf8(name)) continue;
    const size_t password_end = line.find(':', name_end + 1);
    if (password_end == std::string_view::npos) continue;
    const size_t uid_end = line.find(':', password_end + 1);
    if (uid_end == std::string_view::npos) continue;
    const auto uid = text::ParseU64(line.substr(password_end + 1, uid_end - password_end - 1));
    if (!uid || *uid > UINT32_MAX) continue;
    names.emplace(static_cast<unsigned>(*uid), std::string(name));
  }
  return names;
}

std::vector<std::string_view> SplitCmdline(std::string_view cmdline, size_t max_args) {
  std::vector<std::string_view> args;
  while (!cmdline.empty() && args.size() < max_args) {
    const size_t end = cmdline.find('\0');
    args.push_back(cmdline.substr(0, end));
    if (end == std::string_view::npos) break;
    cmdline.remove_prefix(end + 1);
  }
  return args;
}

std::string FormatCommandLine(std::string_view cmdline, size_t max_bytes) {
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.remove_suffix(1);
  std::string out;
  out.reserve(std::min(cmdline.size(), max_bytes) + 8);
  size_t i = 0;
  while (i < cmdline.size()) {
    std::string piece;
    size_t length = Utf8SequenceLength(cmdline, i);
    const unsigned char byte = static_cast<unsigned char>(cmdline[i]);
    if (length == 0) {
      piece = fmt::format("\\x{:02X}", byte);
      length = 1;
    } else if (length == 1) {
      switch (byte) {
        case '\0':
          piece = " ";
          break;
        case '\\':
          piece = "\\\\";
          break;
        case '\t':
          piece = "\\t";
          break;
        case '\n':
          piece = "\\n";
          break;
        case '\r':
          piece = "\\r";
          break;
        default:
          piece = byte < 0x20 || byte == 0x7F ? fmt::format("\\x{:02X}", byte) : std::string(1, cmdline[i]);
      }
    } else {
      const char32_t code_point = DecodeSequence(cmdline.substr(i, length), length);
      if ((code_point >= 0x80 && code_point <= 0x9F) || ReordersText(code_point)) {
        piece = fmt::format("\\u{{{:04X}}}", static_cast<unsigned>(code_point));
      } else {
        piece = std::string(cmdline.substr(i, length));
      }
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "…";
      return out;
    }
    out += piece;
    i += length;
  }
  return out;
}

Result<std::string_view> ParsePidStatComm(std::string_view stat) {
  const size_t open = stat.find('(');
  const size_t close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Error{"/proc/PID/stat: no command name in parentheses"};
  }
  return stat.substr(open + 1, close - open - 1);
}

bool IsRunmonRunCommand(const std::vector<std::string_view>& argv) {
  if (argv.size() < 2 || argv[1] != "run") return false;
  std::string_view program = argv[0];
  const size_t slash = program.rfind('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  return program == "runmon";
}

}  // namespace runmon
