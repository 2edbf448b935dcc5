// The primitives of the Prometheus text exposition format 0.0.4 and OpenMetrics 1.0 that both directions
// need: the name grammar, the escapes of quoted strings and HELP text, and the float syntax. The OpenMetrics
// parser (collectors/openmetrics) reads with them and the exposition (export) writes with them, so what
// runmon writes is what it reads.
//
// Odd cases: floats are read in Go's strconv.ParseFloat syntax (Prometheus is written in Go): hex floats,
// Inf/Infinity/NaN in any case, an optional sign; overflow is an error, underflow a signed zero. They are
// written as the shortest text that reads back as the same double (std::to_chars), with NaN, +Inf and -Inf
// spelled as Prometheus spells them. Reading a HELP text is lenient (\" is accepted, an unknown escape is
// kept as written) because exporters in the wild write both; a quoted string is strict (only \\, \" and \n).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace runmon::prometheus_text {

// [a-zA-Z_:][a-zA-Z0-9_:]*: a metric name that needs no quotes.
bool IsMetricNameStart(char c);
bool IsMetricNameChar(char c);
bool IsValidMetricName(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]*: a label name that needs no quotes.
bool IsLabelNameStart(char c);
bool IsLabelNameChar(char c);
bool IsValidLabelName(std::string_view name);
// Names starting with "__" are reserved for Prometheus' own labels (__name__, ...): no exporter may use one.
bool IsReservedLabelName(std::string_view name);

// Appends `value` escaped for the inside of a quoted string (a label value or a quoted name): \ " newline.
void AppendEscapedQuoted(std::string& out, std::string_view value);
// Reads the quoted string that starts at text[*pos] == '"' into `out`, unescaped, and moves *pos past its
// closing quote. Returns the reason it is not one (unterminated, an escape other than \\ \" \n), or nullptr.
const char* ReadQuoted(std::string_view text, size_t* pos, std::string* out);

// Appends a HELP text escaped: \ and newline.
void AppendEscapedHelp(std::string& out, std::string_view text);
// A HELP text as written after the name, unescaped (\\, \n and \"; any other backslash kept).
std::string UnescapeHelp(std::string_view text);

// Appends the shortest text that parses back to `value`; NaN, +Inf, -Inf.
void AppendFloat(std::string& out, double value);
// A float in Go's syntax (see above); nullopt when `text` is not one, whole.
std::optional<double> ParseFloat(std::string_view text);

}  // namespace runmon::prometheus_text
