// `runmon dump --format openmetrics` over a log written with runmon's own writer: the same text whatever the
// backfill's memory budget (the log is read once more per pass), the run's labels from the run record and
// the environment records' job identity (a later record's field merged in), keys without a Prometheus name
// and stats records without a valid time left out, and `# EOF` last.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "app/dump_command.hpp"
#include "core/sample.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/records.hpp"

namespace runmon {
namespace {

constexpr int kRecords = 40;
constexpr double kStart = 1780000000.125;

class DumpOpenMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("dump_openmetrics_test." + std::to_string(::getpid()) + "." +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    log_ = directory_ / "run-unit01.wandb";
    auto writer = runlog::LogWriter::Create(log_);
    ASSERT_TRUE(writer) << writer.error();
    std::vector<std::string> payloads;
    payloads.push_back(runlog::MakeHeaderRecord("runmon 0.1.0").SerializeAsString());
    payloads.push_back(runlog::MakeRunRecord({.run_id = "unit01",
                                              .project = "",
                                              .display_name = "",
                                              .host = "node-7",
                                              .start_time = kStart,
                                              .tags = {}})
                           .SerializeAsString());
    wandb::Record job;
    job.mutable_environment()->mutable_job()->set_job_id("4242");
    payloads.push_back(job.SerializeAsString());
    for (int i = 0; i < kRecords; ++i) {
      Sample sample;
      sample.timestamp = kStart + i * 0.5;
      sample.metrics.Add("cpu", i);
      sample.metrics.Add("cpu_percent", 50);
      sample.metrics.Add("gpu.0.gpu", 90 + i % 10);
      sample.metrics.Add("gpu.1.gpu", 10);
      sample.metrics.Add("disk.in", i * 0.25);
      sample.metrics.Add("memory_percent", 40);
      sample.metrics.Add("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL", 97);
      wandb::Record stats;
      ASSERT_TRUE(runlog::FillStatsRecord(sample, stats));
      payloads.push_back(stats.SerializeAsString());
      if (i == 3) {  // the job's node rank comes with a later environment record, as collectors' facts do
        wandb::Record rank;
        rank.mutable_environment()->mutable_job()->set_node_rank("3");
        payloads.push_back(rank.SerializeAsString());
      }
    }
    wandb::Record untimed;
    untimed.mutable_stats()->add_item()->set_key("cpu");
    untimed.mutable_stats()->mutable_item(0)->set_value_json("1");
    payloads.push_back(untimed.SerializeAsString());
    payloads.push_back(runlog::MakeExitRecord(0, kRecords * 0.5).SerializeAsString());
    ASSERT_TRUE(writer->Append(payloads));
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  // The dump's exit status and stdout.
  std::pair<int, std::string> Dump(size_t points_per_pass) const {
    std::fflush(stdout);
    const std::filesystem::path captured = directory_ / "stdout";
    const int capture = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int saved = ::dup(STDOUT_FILENO);
    ::dup2(capture, STDOUT_FILENO);
    ::close(capture);
    const int status = RunDumpCommand({.path = log_.string(),
                                       .follow = false,
                                       .format = "openmetrics",
                                       .openmetrics_points_per_pass = points_per_pass});
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    std::FILE* in = std::fopen(captured.c_str(), "rb");
    std::string text;
    char buffer[4096];
    for (size_t n; in != nullptr && (n = std::fread(buffer, 1, sizeof(buffer), in)) > 0;)
      text.append(buffer, n);
    if (in != nullptr) std::fclose(in);
    return {status, text};
  }

  std::filesystem::path directory_;
  std::filesystem::path log_;
};

std::vector<std::string> SampleLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#")) out.push_back(line);
  }
  return out;
}

TEST_F(DumpOpenMetricsTest, TheRunsValuesWithItsLabels) {
  const auto [status, text] = Dump(kDefaultBackfillPointsPerPass);
  EXPECT_EQ(status, 0);
  const std::vector<std::string> samples = SampleLines(text);
  EXPECT_EQ(samples.size(),
            static_cast<size_t>(kRecords) * 6);  // the DCGM key and the untimed record left out
  EXPECT_NE(text.find("runmon_process_cpu_ratio{host=\"node-7\",run_id=\"unit01\",job_id=\"4242\","
                      "node_rank=\"3\"} 0.01 1780000000.625\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("runmon_disk_read_bytes_total{host=\"node-7\",run_id=\"unit01\",job_id=\"4242\","
                      "node_rank=\"3\"} 262144 1780000000.625\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE runmon_disk_read_bytes counter\n"), std::string::npos);
  EXPECT_TRUE(text.ends_with("\n# EOF\n"));
}

TEST_F(DumpOpenMetricsTest, TheSameTextWhateverTheMemoryBudget) {
  const auto [status, text] = Dump(kDefaultBackfillPointsPerPass);
  ASSERT_EQ(status, 0);
  for (const size_t budget : {1, 39, 40, 41, 100}) {
    const auto [small_status, small_text] = Dump(budget);
    EXPECT_EQ(small_status, 0) << budget;
    EXPECT_EQ(small_text, text) << budget;
  }
}

}  // namespace
}  // namespace runmon
