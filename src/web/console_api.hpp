// GET /api/runs/{dir}/console (docs/serve-api.md): a run's console output, the lines runview's ConsoleLog
// assembled from its OutputRawRecords, paged by line number (forwards with `after`, backwards with
// `before`, the newest lines by default), filtered by stream and by a case-insensitive substring of the text
// with its escape sequences dropped, as leet drops them (tui/ansi_text.hpp).
//
// Odd cases: a line's text is whatever the command wrote (escape sequences, control characters, a 64 Ki
// character line), so each line is cut to kMaxConsoleLineBytes and an answer stops adding lines at
// kMaxConsoleBytes; an answer always holds at least one line when one matches (a cut line fits many times),
// so paging with `next` and `prev` always moves. Lines the server no longer holds (it keeps the newest
// 100,000) are counted in `dropped`, never an error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "web/api.hpp"
#include "web/run_store.hpp"

namespace runmon::web {

inline constexpr size_t kMaxConsoleBytes = 200 * 1000;
inline constexpr size_t kMaxConsoleLineBytes = 16 * 1024;
inline constexpr long long kDefaultConsoleLimit = 500;
inline constexpr long long kMaxConsoleLimit = 5000;
inline constexpr size_t kMaxConsoleQueryBytes = 256;

ApiResponse ConsoleLines(RunStore& store, std::string_view dir, const QueryParams& params);

// `text` without its escape sequences: CSI (ESC [ ... final byte), OSC, DCS, APC and PM strings (to BEL or
// ESC \, or the end) and two-byte escapes; a broken CSI goes up to the byte that broke it. Control
// characters other than ESC stay.
std::string StripEscapeSequences(std::string_view text);

}  // namespace runmon::web
