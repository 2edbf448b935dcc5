// Help and usage errors of runmon's command line (see usage.hpp). A CLI11 error carries only a message, so
// the option it is about is found again by the name CLI11 starts that message with (it does for every
// error about one option), and the rest is worded from the option itself: a flag given a value, a value
// missing at the end of the line, an option given twice. Checks describe themselves in parentheses, which
// the help formatter shows after the value name; value names may hold a colon of their own (HOST:PORT).
#include "app/usage.hpp"

#include <charconv>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "app/cli_common.hpp"

namespace runmon {
namespace {

constexpr std::string_view kNoteStart = ":(";  // how CLI11 appends a check's "(...)" to the value name

// How a message names an option: its long name, or for an argument its value name.
std::string DisplayName(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return "--" + option.get_lnames().front();
  const std::string text = option.get_type_name();
  return text.substr(0, text.find(kNoteStart));
}

bool IsFlag(const CLI::Option& option) {
  return option.get_items_expected_max() == 0;
}

class UsageFormatter final : public CLI::Formatter {
 public:
  UsageFormatter() {
    label("Positionals", "Arguments");
    label("SUBCOMMAND", "COMMAND");
  }
  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> options) const override {
    if (group == kUnlistedOptions) return "";
    return CLI::Formatter::make_group(std::move(group), is_positional, std::move(options));
  }
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override {
    return is_positional ? OptionValueText(*option) : CLI::Formatter::make_option_name(option, false);
  }
  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_positional() || IsFlag(*option)) return "";
    return " " + OptionValueText(*option) + (option->get_expected_max() > 1 ? " ..." : "");
  }
  std::string make_option_usage(const CLI::Option* option) const override {
    const std::string text = OptionValueText(*option);
    return option->get_required() ? text : "[" + text + "]";
  }
};

// A flag takes no value (CLI11 alone reads `--once=maybe` as a value to convert, and fails in its own
// words). An empty value is never what was meant: `--dir ""` would otherwise silently be the default
// directory; a command's own arguments (the list after `--`) may be empty strings.
void RefuseFlagValuesAndEmptyValues(CLI::App& command) {
  for (CLI::Option* option : command.get_options()) {
    if (IsFlag(*option)) {
      option->disable_flag_override();
    } else if (!option->get_positional() || option->get_expected_max() <= 1) {
      option->check(CLI::Validator(
          [](const std::string& value) { return value.empty() ? std::string("must not be empty") : ""; },
          ""));
    }
  }
}

void Prepare(CLI::App& app, const std::shared_ptr<UsageFormatter>& formatter) {
  app.formatter(formatter);
  RefuseFlagValuesAndEmptyValues(app);
  for (CLI::App* command : app.get_subcommands({})) {
    command->group("Commands");
    Prepare(*command, formatter);
  }
}

std::string Quote(std::string_view text) {
  return fmt::format("'{}'", text);
}

// The command given (`sample`, `run`, ...), if any.
const CLI::App* GivenCommand(const CLI::App& app) {
  const auto given = app.get_subcommands();
  return given.empty() ? nullptr : given.front();
}

// The names CLI11 may call an option by: `--name`, `-n`, bare (`name was given ...`), an argument's.
std::vector<std::string> NamesOf(const CLI::Option& option) {
  std::vector<std::string> names;
  if (option.get_positional()) names.push_back(option.get_name(true));
  for (const auto& name : option.get_lnames()) names.insert(names.end(), {"--" + name, name});
  for (const auto& name : option.get_snames()) names.insert(names.end(), {"-" + name, name});
  return names;
}

// The option `message` starts with (a name, then the end, ':' or ' '), among runmon's and the command's.
const CLI::Option* OptionStarting(const CLI::App& app, const CLI::App* command, std::string_view message) {
  const CLI::Option* found = nullptr;
  size_t found_length = 0;
  for (const CLI::App* owner : {&app, command}) {
    if (owner == nullptr) continue;
    for (const CLI::Option* option : owner->get_options()) {
      for (const std::string& name : NamesOf(*option)) {
        if (name.empty() || !message.starts_with(name) || name.size() <= found_length) continue;
        if (message.size() > name.size() && message[name.size()] != ':' && message[name.size()] != ' ')
          continue;
        found = option;
        found_length = name.size();
      }
    }
  }
  return found;
}

std::string CommandList(const CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  return names;
}

std::string HelpHint(const CLI::App* command) {
  return command == nullptr ? "see runmon --help" : fmt::format("see runmon {} --help", command->get_name());
}

// What was left over: an unknown option, an argument nothing takes, or an unknown command.
std::string DescribeLeftOver(const CLI::App& app, const CLI::App* command) {
  const std::vector<std::string> left = app.remaining(true);
  if (left.empty()) return fmt::format("a command is needed ({}); {}", CommandList(app), HelpHint(command));
  const std::string& first = left.front();
  if (first.size() > 1 && first.front() == '-') {
    return fmt::format("unknown option {}; {}", Quote(first), HelpHint(command));
  }
  if (command == nullptr)
    return fmt::format("unknown command {} (commands: {})", Quote(first), CommandList(app));
  return fmt::format("unexpected argument {}; {}", Quote(first), HelpHint(command));
}

// "A excludes B", "A requires B": CLI11 names both options, `joint` between them.
std::string DescribePair(const CLI::App& app, const CLI::App* command, std::string_view message,
                         std::string_view joint, std::string_view wording) {
  const size_t at = message.find(joint);
  const CLI::Option* first = OptionStarting(app, command, message);
  const CLI::Option* second = at == std::string_view::npos
                                  ? nullptr
                                  : OptionStarting(app, command, message.substr(at + joint.size()));
  if (first == nullptr || second == nullptr) return fmt::format("conflicting options; {}", HelpHint(command));
  return fmt::format(fmt::runtime(wording), DisplayName(*first), DisplayName(*second));
}

std::string Describe(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = GivenCommand(app);
  const std::string_view message = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) return DescribeLeftOver(app, command);
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    // What was left over (an unknown option) is likelier the mistake than what is missing.
    if (command == nullptr || !app.remaining(true).empty()) return DescribeLeftOver(app, command);
    for (const CLI::Option* option : command->get_options()) {
      if (option->get_required() && option->count() == 0) {
        return fmt::format("{} is required; {}", DisplayName(*option), HelpHint(command));
      }
    }
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr) {
    return DescribePair(app, command, message, " excludes ", "{} and {} cannot be used together");
  }
  if (dynamic_cast<const CLI::RequiresError*>(&error) != nullptr) {
    return DescribePair(app, command, message, " requires ", "{} needs {}");
  }
  const CLI::Option* option = OptionStarting(app, command, message);
  if (option == nullptr) return fmt::format("the command line is not valid; {}", HelpHint(command));
  const std::string name = DisplayName(*option);
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    // "NAME: what the check said"
    const size_t colon = message.find(": ");
    return fmt::format("{}: {}", name, colon == std::string_view::npos ? message : message.substr(colon + 2));
  }
  if (IsFlag(*option)) return fmt::format("{} takes no value (it is a flag)", name);
  if (option->count() > 1) return fmt::format("{} can be given once", name);
  return fmt::format("{} needs a value ({})", name, OptionValueText(*option));
}

}  // namespace

std::string OptionValueText(const CLI::Option& option) {
  std::string text = option.get_type_name();
  for (size_t at = text.find(kNoteStart); at != std::string::npos; at = text.find(kNoteStart, at)) {
    text[at] = ' ';
  }
  return text;
}

CLI::Validator IntegerIn(long long min, long long max) {
  const std::string range = max == std::numeric_limits<long long>::max() ? fmt::format("{} or more", min)
                                                                         : fmt::format("{}-{}", min, max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (status == std::errc::invalid_argument || end != text.data() + text.size()) {
          return fmt::format("{} is not a whole number", Quote(text));
        }
        if (status == std::errc::result_out_of_range || value < min || value > max) {
          return fmt::format("{} is out of range ({})", text, range);
        }
        text = std::to_string(value);
        return "";
      },
      fmt::format("({})", range));
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  Prepare(app, std::make_shared<UsageFormatter>());
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& done) {
    return app.exit(done);  // help or the version, on stdout
  } catch (const CLI::ParseError& error) {
    Warn(Describe(app, error));
    return 2;
  }
  return std::nullopt;
}

}  // namespace runmon
