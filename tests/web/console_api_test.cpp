// GET /api/runs/{dir}/console on fixture logdirs: the newest lines by default, paging forwards (after) and
// backwards (before) without gaps, the text filter (escape sequences dropped, case ignored) and the stream
// filter, the 200 KB answer with lines of 64 Ki characters (cut, and paged on), lines the server no longer
// holds, malformed parameters and unknown runs, the route and the console counts of the run's overview and
// its live events through the HTTP server, and readers while a writer appends.
#include "web/console_api.hpp"

#include <httplib.h>

#include <atomic>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"
#include "support/temp_dir.hpp"
#include "web/server.hpp"

namespace runmon::web {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr double kStart = 1'780'000'000;
constexpr int kLines = 1000;
constexpr std::string_view kRun = "run-20260101_000000-con";
constexpr std::string_view kWideRun = "run-20260102_000000-wide";
constexpr std::string_view kLongRun = "run-20260103_000000-long";
constexpr std::string_view kQuietRun = "run-20260104_000000-quiet";

// A run log of `output` (is_stderr, text) records, a tenth of a second apart.
class LogFile {
 public:
  LogFile(const fs::path& logdir, std::string_view dir) {
    const std::string id(dir.substr(dir.rfind('-') + 1));
    const fs::path path = logdir / dir / ("run-" + id + ".wandb");
    fs::create_directories(path.parent_path());
    auto created = runlog::LogWriter::Create(path);
    if (!created) throw std::runtime_error(created.error());
    writer_ = std::make_unique<runlog::LogWriter>(std::move(created.value()));
    runlog::RunInfo info;
    info.run_id = id;
    info.display_name = id;
    info.start_time = kStart;
    Append(runlog::MakeHeaderRecord("runmon 0.1.0"));
    Append(runlog::MakeRunRecord(info));
  }
  void Output(bool is_stderr, std::string_view text) {
    Append(runlog::MakeOutputRawRecord(is_stderr, text, kStart + 0.1 * outputs_++));
  }
  void Exit() { Append(runlog::MakeExitRecord(0, 1)); }

 private:
  void Append(const wandb::Record& record) {
    const auto status = writer_->Append(record.SerializeAsString());
    if (!status) throw std::runtime_error(status.error());
  }
  std::unique_ptr<runlog::LogWriter> writer_;
  int outputs_ = 0;
};

// Line i of the main run: every tenth (from 3) on stderr, every hundredth (from 42) with a red "ERROR".
bool IsStderr(int i) {
  return i % 10 == 3;
}
std::string LineText(int i) {
  return i % 100 == 42 ? fmt::format("\x1b[31mERROR\x1b[0m: step {}", i) : fmt::format("step {}", i);
}

class ConsoleApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      LogFile log(dir_.path(), kRun);
      for (int i = 0; i < kLines; ++i) log.Output(IsStderr(i), LineText(i) + "\n");
      log.Output(false, "\x1b]0;title\x07\x1b[1mDisk\x1b[22m FULL\n");
      log.Exit();
    }
    {
      // 1 MB lines (the emulator keeps a line's first 65,536 characters), control characters that JSON
      // escapes sixfold, and two-byte characters.
      LogFile log(dir_.path(), kWideRun);
      for (int i = 0; i < 20; ++i) log.Output(false, std::string(1 << 20, static_cast<char>('a' + i)) + "\n");
      log.Output(true, std::string(100000, '\x01') + "\n");
      std::string accents;
      for (int i = 0; i < 40000; ++i) accents += "\xc3\xa9";
      log.Output(false, accents + "\n");
      log.Output(false, "the end\n");
      log.Exit();
    }
    {
      LogFile log(dir_.path(), kLongRun);
      std::string chunk;
      for (int i = 0; i < 101000; ++i) {
        chunk += fmt::format("line {}\n", i);
        if (i % 100 == 99) {
          log.Output(false, chunk);
          chunk.clear();
        }
      }
      log.Exit();
    }
    {
      LogFile log(dir_.path(), kQuietRun);
      log.Exit();
    }
    store_.Start();
    for (const auto dir : {kRun, kWideRun, kLongRun, kQuietRun}) {
      auto run = store_.Acquire(dir);
      ASSERT_NE(run, nullptr) << dir;
      ASSERT_TRUE(store_.WaitUntilLoaded(*run, std::chrono::seconds(60))) << dir;
    }
  }
  void TearDown() override { store_.Stop(); }

  json Get(std::string_view dir, const QueryParams& params) {
    const auto response = ConsoleLines(store_, dir, params);
    EXPECT_EQ(response.status, 200) << response.body;
    EXPECT_LE(response.body.size(), kMaxConsoleBytes);
    return json::parse(response.body);
  }

  // Every line of the run, paged forwards from line 0 with `params`.
  std::vector<json> PageForwards(std::string_view dir, QueryParams params, int* pages = nullptr) {
    std::vector<json> lines;
    uint64_t after = 0;
    for (int page = 1;; ++page) {
      params.erase("after");
      params.emplace("after", std::to_string(after));
      const json body = Get(dir, params);
      for (const auto& line : body["lines"]) lines.push_back(line);
      EXPECT_GE(body["next"].get<uint64_t>(), after);
      if (pages) *pages = page;
      if (body["next"] == body["total"] || page > 1000) break;
      EXPECT_FALSE(body["lines"].empty()) << "a page before the end holds a line";
      after = body["next"];
    }
    return lines;
  }

  test::TempDir dir_{"web-console"};
  RunStore store_{dir_.path()};
};

TEST_F(ConsoleApiTest, TheNewestLinesByDefault) {
  const json body = Get(kRun, {});
  EXPECT_EQ(body["first"], 0);
  EXPECT_EQ(body["total"], kLines + 1);
  EXPECT_EQ(body["dropped"], 0);
  EXPECT_EQ(body["next"], kLines + 1);
  EXPECT_EQ(body["prev"], kLines + 1 - kDefaultConsoleLimit);
  EXPECT_EQ(body["settled"], kLines + 1 - 128);
  EXPECT_EQ(body["loading"], false);
  const auto& lines = body["lines"];
  ASSERT_EQ(lines.size(), static_cast<size_t>(kDefaultConsoleLimit));
  for (size_t k = 0; k + 1 < lines.size(); ++k) {
    const int i = static_cast<int>(kLines + 1 - kDefaultConsoleLimit) + static_cast<int>(k);
    ASSERT_EQ(lines[k]["n"], i);
    EXPECT_EQ(lines[k]["text"], LineText(i));
    EXPECT_EQ(lines[k]["stderr"], IsStderr(i));
    EXPECT_NEAR(lines[k]["t"].get<double>(), kStart + 0.1 * i, 1e-6);
    EXPECT_FALSE(lines[k].contains("cut"));
  }
  EXPECT_EQ(lines.back()["text"],
            "\x1b]0;title\x07\x1b[1mDisk\x1b[22m FULL");  // as written; the page renders it

  const json three = Get(kRun, {{"limit", "3"}});
  ASSERT_EQ(three["lines"].size(), 3u);
  EXPECT_EQ(three["lines"][0]["n"], kLines - 2);
  EXPECT_EQ(three["prev"], kLines - 2);
}

TEST_F(ConsoleApiTest, PagesForwardsAndBackwardsWithoutGaps) {
  const json page = Get(kRun, {{"after", "10"}, {"limit", "5"}});
  ASSERT_EQ(page["lines"].size(), 5u);
  EXPECT_EQ(page["lines"][0]["n"], 10);
  EXPECT_EQ(page["lines"][4]["n"], 14);
  EXPECT_EQ(page["prev"], 10);
  EXPECT_EQ(page["next"], 15);

  int pages = 0;
  const auto all = PageForwards(kRun, {{"limit", "77"}}, &pages);
  ASSERT_EQ(all.size(), static_cast<size_t>(kLines + 1));
  for (int i = 0; i < kLines; ++i) ASSERT_EQ(all[static_cast<size_t>(i)]["n"], i);
  EXPECT_EQ(pages, (kLines + 1 + 76) / 77);

  const json older = Get(kRun, {{"before", "100"}, {"limit", "30"}});
  ASSERT_EQ(older["lines"].size(), 30u);
  EXPECT_EQ(older["lines"][0]["n"], 70);
  EXPECT_EQ(older["lines"][29]["n"], 99);
  EXPECT_EQ(older["prev"], 70);
  EXPECT_EQ(older["next"], 100);
  const json oldest = Get(kRun, {{"before", "20"}, {"limit", "30"}});
  ASSERT_EQ(oldest["lines"].size(), 20u);
  EXPECT_EQ(oldest["prev"], 0);

  const json past_end = Get(kRun, {{"after", "5000"}});
  EXPECT_TRUE(past_end["lines"].empty());
  EXPECT_EQ(past_end["next"], 5000);
  EXPECT_EQ(Get(kRun, {{"limit", "5000"}})["lines"].size(), static_cast<size_t>(kLines + 1));
}

TEST_F(ConsoleApiTest, FiltersByTextWithoutEscapesAndByStream) {
  const json errors = Get(kRun, {{"q", "error: STEP"}});
  ASSERT_EQ(errors["lines"].size(), 10u);
  for (size_t k = 0; k < 10; ++k) EXPECT_EQ(errors["lines"][k]["n"], 42 + 100 * static_cast<int>(k));
  EXPECT_EQ(errors["next"], kLines + 1);
  EXPECT_EQ(errors["prev"], 0);  // the scan reached the first line
  // Matched against what shows: the escape sequences' bytes are not text, a title is not either.
  EXPECT_TRUE(Get(kRun, {{"q", "31m"}})["lines"].empty());
  EXPECT_TRUE(Get(kRun, {{"q", "title"}})["lines"].empty());
  EXPECT_EQ(Get(kRun, {{"q", "disk full"}})["lines"].size(), 1u);

  // Paged with a filter: `next` skips the lines that do not match.
  const json two = Get(kRun, {{"q", "error"}, {"after", "0"}, {"limit", "2"}});
  ASSERT_EQ(two["lines"].size(), 2u);
  EXPECT_EQ(two["next"], 143);
  const json back = Get(kRun, {{"q", "error"}, {"before", "500"}, {"limit", "2"}});
  ASSERT_EQ(back["lines"].size(), 2u);
  EXPECT_EQ(back["lines"][0]["n"], 342);
  EXPECT_EQ(back["prev"], 342);

  const auto stderr_lines = PageForwards(kRun, {{"stream", "stderr"}, {"limit", "7"}});
  ASSERT_EQ(stderr_lines.size(), static_cast<size_t>(kLines / 10));
  for (const auto& line : stderr_lines) {
    EXPECT_EQ(line["stderr"], true);
    EXPECT_EQ(line["n"].get<int>() % 10, 3);
  }
  const json stdout_lines = Get(kRun, {{"stream", "stdout"}, {"limit", "5000"}});
  EXPECT_EQ(stdout_lines["lines"].size(), static_cast<size_t>(kLines + 1 - kLines / 10));
  EXPECT_EQ(Get(kRun, {{"stream", "stderr"}, {"q", "ERROR"}})["lines"].size(), 0u);
  EXPECT_EQ(Get(kRun, {{"stream", "all"}, {"q", "step 3"}, {"limit", "5000"}})["lines"].size(), 111u);
}

TEST_F(ConsoleApiTest, AnswersStayUnder200KBWithLinesOfAMegabyte) {
  const json tail = Get(kWideRun, {});
  ASSERT_FALSE(tail["lines"].empty());
  EXPECT_EQ(tail["lines"].back()["text"], "the end");
  EXPECT_EQ(tail["next"], 23);
  EXPECT_GT(tail["prev"], 0) << "twenty wide lines cannot all fit";

  int pages = 0;
  const auto all = PageForwards(kWideRun, {{"limit", "5000"}}, &pages);
  ASSERT_EQ(all.size(), 23u);
  EXPECT_GE(pages, 3);
  for (int i = 0; i < 20; ++i) {
    const auto& line = all[static_cast<size_t>(i)];
    EXPECT_EQ(line["n"], i);
    EXPECT_EQ(line["cut"], true);
    EXPECT_EQ(line["text"], std::string(kMaxConsoleLineBytes, static_cast<char>('a' + i)));
  }
  EXPECT_EQ(all[20]["stderr"], true);
  EXPECT_EQ(all[20]["text"], std::string(kMaxConsoleLineBytes, '\x01'));
  // Cut between characters: 8,192 two-byte characters.
  const std::string accents = all[21]["text"];
  EXPECT_EQ(accents.size(), kMaxConsoleLineBytes);
  EXPECT_EQ(ToValidUtf8(accents), accents);
  EXPECT_EQ(all[22]["text"], "the end");
  EXPECT_FALSE(all[22].contains("cut"));

  // The control characters' line alone takes half an answer (96 KiB of \u0001).
  const json controls = Get(kWideRun, {{"after", "20"}, {"limit", "1"}});
  ASSERT_EQ(controls["lines"].size(), 1u);
  EXPECT_EQ(controls["next"], 21);
}

TEST_F(ConsoleApiTest, LinesNoLongerHeldAreCounted) {
  const json tail = Get(kLongRun, {{"limit", "2"}});
  EXPECT_EQ(tail["total"], 101000);
  EXPECT_EQ(tail["dropped"], 1000);
  EXPECT_EQ(tail["first"], 1000);
  EXPECT_EQ(tail["lines"][1]["text"], "line 100999");
  const json from_start = Get(kLongRun, {{"after", "0"}, {"limit", "2"}});
  EXPECT_EQ(from_start["prev"], 1000);
  ASSERT_EQ(from_start["lines"].size(), 2u);
  EXPECT_EQ(from_start["lines"][0]["n"], 1000);
  EXPECT_EQ(from_start["lines"][0]["text"], "line 1000");
  const json before_first = Get(kLongRun, {{"before", "500"}});
  EXPECT_TRUE(before_first["lines"].empty());
  EXPECT_LE(before_first["prev"], before_first["first"]);
  // A search through every held line.
  const json found = Get(kLongRun, {{"q", "LINE 5000"}, {"limit", "5000"}});
  EXPECT_EQ(found["lines"].size(), 11u);  // 5000, 50000..50009

  const json quiet = Get(kQuietRun, {});
  EXPECT_EQ(quiet["total"], 0);
  EXPECT_EQ(quiet["next"], 0);
  EXPECT_TRUE(quiet["lines"].empty());
}

TEST_F(ConsoleApiTest, RefusesMalformedParameters) {
  const std::vector<QueryParams> bad = {
      {{"after", "-1"}},
      {{"after", "x"}},
      {{"after", "1.5"}},
      {{"after", ""}},
      {{"after", "9007199254740992"}},
      {{"before", "-3"}},
      {{"before", "0x10"}},
      {{"after", "1"}, {"before", "5"}},
      {{"limit", "0"}},
      {{"limit", "5001"}},
      {{"limit", "ten"}},
      {{"stream", "both"}},
      {{"stream", ""}},
      {{"q", std::string(kMaxConsoleQueryBytes + 1, 'a')}},
  };
  for (const auto& params : bad) {
    const auto response = ConsoleLines(store_, kRun, params);
    EXPECT_EQ(response.status, 400) << params.begin()->first << "=" << params.begin()->second;
    const json body = json::parse(response.body);
    EXPECT_TRUE(body["error"].is_string() && !body["error"].get<std::string>().empty());
  }
  EXPECT_EQ(ConsoleLines(store_, kRun, {{"q", std::string(kMaxConsoleQueryBytes, 'a')}}).status, 200);
  EXPECT_EQ(ConsoleLines(store_, kRun, {{"after", "9007199254740991"}}).status, 200);
}

TEST_F(ConsoleApiTest, UnknownRunsAre404) {
  for (const std::string_view dir : {"run-20990101_000000-nope", "..", "../../etc", ""}) {
    const auto response = ConsoleLines(store_, dir, {});
    EXPECT_EQ(response.status, 404) << dir;
    EXPECT_TRUE(json::parse(response.body).contains("error"));
  }
}

TEST(StripEscapeSequences, DropsWhatATerminalWouldNotShow) {
  EXPECT_EQ(StripEscapeSequences("\x1b[1;31mred\x1b[0m text"), "red text");
  EXPECT_EQ(StripEscapeSequences("\x1b]0;title\x07"
                                 "after"),
            "after");
  EXPECT_EQ(StripEscapeSequences("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
  EXPECT_EQ(StripEscapeSequences("\x1b[2J\x1b[H\x1b[10;20Hhere\x1b[K"), "here");
  EXPECT_EQ(StripEscapeSequences("a\x1b"
                                 "7b\x1b=c"),
            "abc");
  EXPECT_EQ(StripEscapeSequences("\x1b[12\x01x"), "\x01x");  // a broken CSI: up to what broke it
  EXPECT_EQ(StripEscapeSequences("\x1b]0;never ends"), "");
  EXPECT_EQ(StripEscapeSequences("end\x1b"), "end");
  EXPECT_EQ(StripEscapeSequences("tab\there\x07"), "tab\there\x07");
  EXPECT_EQ(StripEscapeSequences(""), "");
}

// Through the HTTP server: the route (beside /api/runs/{dir}), the overview's console_lines, and a run's
// events carrying its console's line count as it grows.
TEST(ConsoleRoute, ServesLinesOverviewsAndEvents) {
  test::TempDir dir("web-console-route");
  LogFile log(dir.path(), "run-20260105_000000-live");
  log.Output(false, "first\n");
  RunStore store(dir.path());
  store.Start();
  const Asset assets[] = {{"/index.html", "text/html; charset=utf-8", "<!doctype html>"}};
  DashboardServer server(store, ServeOptions{dir.path(), "127.0.0.1", 0, ""}, assets);
  ASSERT_TRUE(server.Bind().ok());
  std::thread serving([&] { server.Serve(); });
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(10, 0);

  auto lines = client.Get("/api/runs/run-20260105_000000-live/console?limit=10");
  ASSERT_TRUE(lines);
  EXPECT_EQ(lines->status, 200) << lines->body;
  EXPECT_EQ(json::parse(lines->body)["lines"][0]["text"], "first");
  auto bad = client.Get("/api/runs/run-20260105_000000-live/console?stream=err");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_TRUE(json::parse(bad->body).contains("error"));
  auto missing = client.Get("/api/runs/run-20990101_000000-x/console");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto overview = client.Get("/api/runs/run-20260105_000000-live");
  ASSERT_TRUE(overview);
  EXPECT_EQ(json::parse(overview->body)["console_lines"], 1);

  std::atomic<bool> saw{false};
  std::string received;
  std::thread listener([&] {
    httplib::Client events("127.0.0.1", server.port());
    events.set_read_timeout(20, 0);
    events.Get("/api/events?runs=run-20260105_000000-live", [&](const char* data, size_t length) {
      received.append(data, length);
      saw = received.find("\"console_lines\":2,") != std::string::npos;
      return !saw;
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  log.Output(true, "second\n");
  for (int i = 0; i < 100 && !saw; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!saw) log.Output(true, "third\n");  // unblocks the listener if the first change was missed
  listener.join();
  EXPECT_TRUE(saw) << received;
  server.Stop();
  serving.join();
}

// Pages read while a writer appends (the last lines change as they are read): every answer is whole and in
// order, and at the end every line is there.
TEST(ConsoleReaders, ReadWhileAWriterAppends) {
  test::TempDir dir("web-console-live");
  LogFile log(dir.path(), "run-20260106_000000-grow");
  RunStore store(dir.path());
  store.Start();
  constexpr int kWritten = 3000;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    // About a second in all, so the store follows the log while pages are read.
    for (int i = 0; i < kWritten; ++i) {
      log.Output(i % 2 == 1, fmt::format("\r{}%\rline {}\n", i, i));
      if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
    done = true;
  });
  std::vector<std::thread> readers;
  std::atomic<int> answers{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int reader = 0; reader < 3; ++reader) {
    readers.emplace_back([&, reader] {
      while ((!done || answers < 30) && std::chrono::steady_clock::now() < deadline) {
        const auto response =
            ConsoleLines(store, "run-20260106_000000-grow", {{"limit", std::to_string(50 + reader * 100)}});
        if (response.status == 404) continue;  // not listed yet
        ASSERT_EQ(response.status, 200) << response.body;
        const json body = json::parse(response.body);
        uint64_t previous = 0;
        for (const auto& line : body["lines"]) {
          ASSERT_TRUE(previous == 0 || line["n"].get<uint64_t>() == previous + 1);
          previous = line["n"];
        }
        ++answers;
      }
    });
  }
  writer.join();
  for (auto& reader : readers) reader.join();
  auto run = store.Acquire("run-20260106_000000-grow");
  ASSERT_NE(run, nullptr);
  json body;
  for (int i = 0; i < 200; ++i) {
    body = json::parse(
        ConsoleLines(store, "run-20260106_000000-grow", {{"after", "0"}, {"limit", "5000"}}).body);
    if (body["total"] == kWritten) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(body["lines"].size(), static_cast<size_t>(kWritten));
  std::set<std::string> texts;
  for (const auto& line : body["lines"]) texts.insert(line["text"].get<std::string>());
  EXPECT_EQ(texts.count("line 0"), 1u);
  EXPECT_EQ(texts.count(fmt::format("line {}", kWritten - 1)), 1u);
  store.Stop();
}

}  // namespace
}  // namespace runmon::web
