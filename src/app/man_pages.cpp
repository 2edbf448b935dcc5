// runmon's man pages from the command-line tree (see man_pages.hpp). Every command's page is built from its
// CLI::App: the name and description, the synopsis from its options, arguments and commands, each option
// as help shows it (the value name with its check, `PORT (0-65535)`; whether it is required, repeatable,
// what it cannot be combined with), the footer. Options help leaves out (the Unlisted group: --root) are
// left out here too. The few words that are not in the tree (settings' environment variables, usage
// errors' exit status 2) say what docs/cli.md says. Text becomes roff with every hyphen a minus sign
// (option names are searched for and copied), `code` in bold and every character past ASCII as \[uXXXX],
// so groff needs no input encoding and formats the pages without a warning (the ctest test man_pages checks).
#include "app/man_pages.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "app/usage.hpp"

namespace runmon {
namespace {

bool IsListed(const CLI::Option& option) {
  return !option.get_group().empty() && option.get_group() != kUnlistedOptions;
}

// One character from the UTF-8 at `text[at]` (U+FFFD for a byte that starts none); `length` is its bytes.
uint32_t DecodeUtf8(std::string_view text, size_t at, size_t& length) {
  const auto lead = static_cast<unsigned char>(text[at]);
  length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (length == 1 || at + length > text.size()) {
    length = 1;
    return 0xFFFD;
  }
  uint32_t code = lead & (0x7Fu >> length);
  for (size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[at + k]);
    if ((next & 0xC0) != 0x80) {
      length = 1;
      return 0xFFFD;
    }
    code = (code << 6) | (next & 0x3Fu);
  }
  return code;
}

// Text as roff (see the top of the file). A line that would start with '.' or '\'' (a request) is guarded.
std::string Roff(std::string_view text) {
  const bool code_spans = std::count(text.begin(), text.end(), '`') % 2 == 0;
  bool in_code = false;
  bool line_start = true;
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = false;
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '`' && code_spans) {
      out += in_code ? "\\fR" : "\\fB";
      in_code = !in_code;
    } else if (c == '\n') {
      out += '\n';
      line_start = true;
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      size_t length = 1;
      out += fmt::format("\\[u{:04X}]", DecodeUtf8(text, at, length));
      at += length - 1;
    } else {
      out += c;
    }
  }
  return out;
}

// A sentence that more may follow: its own full stop added when it has none.
std::string Sentence(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

struct Command {
  const CLI::App* app;
  std::vector<std::string> path;  // {"runmon", "leet", "config"}
  std::string PageName() const { return fmt::format("{}", fmt::join(path, "-")); }
  std::string Invocation() const { return fmt::format("{}", fmt::join(path, " ")); }
};

void Collect(const CLI::App& app, std::vector<std::string> path, std::vector<Command>& out) {
  out.push_back({&app, path});
  for (const CLI::App* child : app.get_subcommands({})) {
    std::vector<std::string> child_path = path;
    child_path.push_back(child->get_name());
    Collect(*child, std::move(child_path), out);
  }
}

std::string Uppercase(std::string text) {
  for (char& c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return text;
}

// The page's one-line summary: the description without runmon's "runmon: " and a final full stop.
std::string Summary(const CLI::App& app) {
  std::string text = app.get_description();
  if (text.starts_with("runmon: ")) text.erase(0, 8);
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && (text.back() == '.' || text.back() == ' ')) text.pop_back();
  return text;
}

std::vector<const CLI::Option*> Listed(const CLI::App& app, bool positional) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* option : app.get_options()) {
    if (IsListed(*option) && option->get_positional() == positional) out.push_back(option);
  }
  return out;
}

// "-f, --follow" in bold, then the value's name in italics, as help's "-f,--follow" and " PORT (0-65535)".
std::string OptionTag(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) names.push_back("\\fB" + Roff("-" + name) + "\\fR");
  for (const std::string& name : option.get_lnames()) names.push_back("\\fB" + Roff("--" + name) + "\\fR");
  std::string tag = fmt::format("{}", fmt::join(names, ", "));
  if (option.get_items_expected_max() != 0) {
    tag += " \\fI" + Roff(OptionValueText(option)) + "\\fR";
    if (option.get_expected_max() > 1) tag += " ...";
  }
  return tag;
}

std::string OptionNames(const std::set<CLI::Option*>& options) {
  std::vector<std::string> names;
  for (const CLI::Option* option : options) {
    names.push_back(option->get_lnames().empty() ? option->get_name() : "--" + option->get_lnames().front());
  }
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

// The option's description with what help shows beside it: required, its default, its environment
// variable, the options it needs or cannot be combined with, whether it may be given again.
std::string OptionText(const CLI::Option& option) {
  std::vector<std::string> extras;
  if (option.get_required()) extras.push_back("Required.");
  if (!option.get_default_str().empty())
    extras.push_back(fmt::format("Default: {}.", option.get_default_str()));
  if (!option.get_envname().empty()) extras.push_back(fmt::format("Environment: {}.", option.get_envname()));
  if (!option.get_needs().empty())
    extras.push_back(fmt::format("Needs {}.", OptionNames(option.get_needs())));
  if (!option.get_excludes().empty()) {
    extras.push_back(fmt::format("Not with {}.", OptionNames(option.get_excludes())));
  }
  std::string text = option.get_description();
  if (extras.empty()) return Roff(text);
  return Roff(fmt::format("{} {}", Sentence(text), fmt::join(extras, " ")));
}

// A footer that says how the command exits goes under EXIT STATUS, any other into the description.
bool IsExitFooter(const std::string& footer) {
  return footer.starts_with("Exit");
}

// The sampler's commands take W&B's settings from the environment as `--set x_stats_NAME=VALUE` does.
bool TakesSettings(const CLI::App& app) {
  const CLI::Option* set = app.get_option_no_throw("--set");
  return set != nullptr && set->get_type_name().starts_with("x_stats_");
}

std::string SynopsisLine(const Command& command, std::string_view rest) {
  return fmt::format(".B {}\n{}\n", Roff(command.Invocation()), rest);
}

std::string Synopsis(const Command& command) {
  const CLI::App& app = *command.app;
  std::string out = ".SH SYNOPSIS\n";
  std::vector<std::string> forms;
  if (app.get_require_subcommand_min() == 0) {
    std::string rest = "[\\fIOPTIONS\\fR]";
    for (const CLI::Option* argument : Listed(app, true)) {
      const std::string name = "\\fI" + Roff(OptionValueText(*argument)) + "\\fR";
      rest += " " + (argument->get_required() ? name : "[" + name + "]");
    }
    forms.push_back(SynopsisLine(command, rest));
  }
  if (!app.get_subcommands({}).empty()) {
    forms.push_back(SynopsisLine(command, "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR ...]"));
  }
  return out + fmt::format("{}", fmt::join(forms, ".br\n"));
}

std::string Description(const Command& command, bool top) {
  const CLI::App& app = *command.app;
  std::string out = ".SH DESCRIPTION\n" + Roff(Sentence(app.get_description())) + "\n";
  if (top) {
    out += ".PP\n" +
           Roff(
               "Each command has a page of its own, listed below; `runmon COMMAND --help` prints its options "
               "as they are here, and `runmon --version` the version.") +
           "\n.PP\n" +
           Roff(
               "Settings are layered: defaults, then W&B's environment variables, then `--set "
               "x_stats_NAME=VALUE`, then runmon's own flags.") +
           "\n";
  }
  const std::string footer = app.get_footer();
  if (!footer.empty() && !IsExitFooter(footer)) out += ".PP\n" + Roff(footer) + "\n";
  return out;
}

std::string Commands(const Command& command, const std::vector<Command>& all) {
  std::string out;
  for (const Command& child : all) {
    if (child.path.size() != command.path.size() + 1 ||
        !std::equal(command.path.begin(), command.path.end(), child.path.begin()))
      continue;
    out += fmt::format(".TP\n\\fB{}\\fR\n{} See \\fB{}\\fR(1).\n", Roff(child.path.back()),
                       Roff(Sentence(child.app->get_description())), Roff(child.PageName()));
  }
  return out.empty() ? out : ".SH COMMANDS\n" + out;
}

std::string Arguments(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* argument : Listed(app, true)) {
    out += fmt::format(".TP\n\\fI{}\\fR\n{}\n", Roff(OptionValueText(*argument)), OptionText(*argument));
  }
  return out.empty() ? out : ".SH ARGUMENTS\n" + out;
}

std::string Options(const CLI::App& app) {
  std::string out = ".SH OPTIONS\n";
  for (const CLI::Option* option : Listed(app, false)) {
    out += fmt::format(".TP\n{}\n{}\n", OptionTag(*option), OptionText(*option));
  }
  return out;
}

std::string Entry(std::string_view tag, std::string_view text) {
  return fmt::format(".TP\n\\fB{}\\fR\n{}\n", Roff(tag), Roff(text));
}

std::string Environment(const CLI::App& app, bool top) {
  std::string out;
  if (top || TakesSettings(app)) {
    out += Entry("WANDB_X_STATS_NAME, WANDB__STATS_NAME",
                 std::string("W&B's setting x_stats_NAME") + (top ? ", for the commands that sample" : "") +
                     "; `--set x_stats_NAME=VALUE` and the flags win over it.");
  }
  if (top) {
    out += Entry("WANDB_X_LABEL, WANDB__LABEL",
                 "W&B's x_label: the label of a run's system metrics (`--label`).");
    out += Entry("RUNMON_CONFIG_DIR, XDG_CONFIG_HOME, HOME",
                 "Where leet's settings file is: $RUNMON_CONFIG_DIR/leet.json, else "
                 "$XDG_CONFIG_HOME/runmon/leet.json, else ~/.config/runmon/leet.json.");
    out += Entry("RUNMON_NVML_LIBRARY", "The NVML library to load instead of libnvidia-ml.so.1.");
    out += Entry("RUNMON_RUN_SOCKET",
                 "Set by `runmon run` for the command: its metrics socket (the Python module's channel).");
    out += ".PP\n" + Roff("The rest (job identity, vendor tools' paths, TPU addresses): docs/cli.md.") + "\n";
  }
  return out.empty() ? out : ".SH ENVIRONMENT\n" + out;
}

std::string ExitStatus(const Command& command, bool top) {
  std::string out = ".SH EXIT STATUS\n";
  const std::string footer = command.app->get_footer();
  if (IsExitFooter(footer)) out += Roff(footer) + "\n.PP\n";
  if (top) out += Roff("0 once --help or --version has printed; otherwise the command's status.") + "\n.PP\n";
  out += Roff(
             "2 for a usage error: an unknown command or option, an option without its value or with an "
             "empty or invalid one, a value given to a flag, an option given twice, an argument nothing "
             "takes, options that cannot be combined, a bad setting or environment variable. The message is "
             "one line on standard error that starts with `runmon:`.") +
         "\n";
  return out;
}

std::string SeeAlso(const Command& command, const std::vector<Command>& all) {
  std::vector<std::string> pages;
  for (const Command& other : all) {
    if (other.app == command.app) continue;
    const bool ancestor = other.path.size() < command.path.size() &&
                          std::equal(other.path.begin(), other.path.end(), command.path.begin());
    const bool child = other.path.size() == command.path.size() + 1 &&
                       std::equal(command.path.begin(), command.path.end(), other.path.begin());
    if (ancestor || child) pages.push_back(".BR " + Roff(other.PageName()) + " (1)");
  }
  std::string out = ".SH SEE ALSO\n";
  for (size_t i = 0; i < pages.size(); ++i) out += pages[i] + (i + 1 < pages.size() ? ",\n" : "\n");
  out += ".PP\n" +
         Roff(
             "runmon's documentation, installed in share/doc/runmon: README.md, and docs/cli.md on "
             "every command, flag and setting.") +
         "\n";
  return out;
}

std::string RenderPage(const Command& command, const std::vector<Command>& all, std::string_view version) {
  const bool top = command.path.size() == 1;
  std::string out = fmt::format(
      ".\\\" {}(1), written by `runmon --generate-man-pages` from runmon's command-line definitions.\n",
      command.PageName());
  out += fmt::format(".TH {} 1 \"\" \"{}\" \"runmon manual\"\n", Roff(Uppercase(command.PageName())),
                     Roff(version));
  out +=
      ".nh\n.ad l\n";  // no hyphenation (a page name split across lines), lines not stretched to the margin
  out += fmt::format(".SH NAME\n{} \\- {}\n", Roff(command.PageName()), Roff(Summary(*command.app)));
  out += Synopsis(command);
  out += Description(command, top);
  out += Commands(command, all);
  out += Arguments(*command.app);
  out += Options(*command.app);
  out += Environment(*command.app, top);
  out += ExitStatus(command, top);
  out += SeeAlso(command, all);
  return out;
}

}  // namespace

std::vector<ManPage> RenderManPages(const CLI::App& app, std::string_view version) {
  std::vector<Command> commands;
  Collect(app, {app.get_name()}, commands);
  std::vector<ManPage> pages;
  for (const Command& command : commands) {
    pages.push_back({command.PageName() + ".1", RenderPage(command, commands, version)});
  }
  return pages;
}

int WriteManPages(const CLI::App& app, std::string_view version, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    Warn(fmt::format("{}: {}", directory, error.message()));
    return 1;
  }
  for (const ManPage& page : RenderManPages(app, version)) {
    const std::filesystem::path path = std::filesystem::path(directory) / page.file_name;
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << page.text;
    file.close();
    if (!file) {
      Warn(fmt::format("{}: cannot be written: {}", path.string(), std::strerror(errno)));
      return 1;
    }
  }
  return 0;
}

}  // namespace runmon
