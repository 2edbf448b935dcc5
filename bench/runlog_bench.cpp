// runlog_bench: how fast runmon reads and writes W&B's run log (src/runlog), on a generated log of
// realistic stats records. bench/run_runlog_bench.py runs it and the peer (bench/wandb_datastore_reader.py,
// W&B's datastore.py algorithm with C++ protobuf decoding) on the same file and compares them.
//
// The file: a header and a run record, then stats records until the file reaches --size-mb (MB = 10^6
// bytes), then an exit record. Each stats record carries 100 keys named as W&B's system monitor names them
// (cpu, memory_percent, proc.memory.rssMB, disk./.usageGB, network.sent, cpu.N.cpu_percent, gpu.N.*), with
// values shaped like real ones (percentages computed by division, MiB and GiB figures that are page or block
// multiples, byte counters, integer clocks and temperatures, watts in milliwatt steps), moving as a random
// walk from record to record, timestamps 15 s apart. Records go through runmon's own path: a runmon::Sample,
// runlog::FillStatsRecord, SerializeToString, LogWriter::Append.
//
// Measured (wall clock, std::chrono::steady_clock; the file was just written, so the page cache is warm, and
// one untimed pass comes first):
//  - read: RecordReader(FileSource(fd)), framing and full protobuf decoding into its reused Record (stats
//    records into a kept StatsRecord), and LogReader(FileSource(fd)), framing only: MB/s and records/s, best
//    and median of --passes passes;
//  - breakdown (--breakdown, on by default): the same file loaded into memory once, then pread alone, zlib
//    CRC-32 alone, LogReader (framing) and RecordReader (framing + decoding) over MemorySource, and decoding
//    alone: RecordReader's own (its time from memory less framing's; it decodes stats records into a kept
//    StatsRecord), and for reference ParseFromArray of each payload into a fresh Record (as W&B's reader
//    does) and into a Record on an arena reset after each record;
//  - write: per record, what runmon's recorder does with a sample: EncodeStatsRecord and the record's num
//    appended, LogWriter::Append to a new file next to the read file (same disk), IndexWriter::Note (the
//    summary index the recorder writes beside it, from what the encoder knows of the record, its entries
//    appended as segments close); mean/median/p99
//    in microseconds over --write-records records (the first 100 are a warm-up), with each part's mean, and
//    for reference (outside the total) FillStatsRecord + SerializeToString of the same sample, the message
//    path; then --sync-records records with LogWriter::Sync after each, shown separately (fdatasync is what
//    a durable writer pays; the headline excludes it).
//
// Output: readable lines on stderr, one JSON object per measurement on stdout.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/arena.h>
#include <zlib.h>

#include "core/sample.hpp"
#include "runlog/index_writer.hpp"
#include "runlog/log_format.hpp"
#include "runlog/log_reader.hpp"
#include "runlog/log_writer.hpp"
#include "runlog/record_reader.hpp"
#include "runlog/records.hpp"

namespace {

namespace runlog = runmon::runlog;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string file;
  double size_mb = 256;
  int passes = 7;
  uint64_t write_records = 20000;
  uint64_t sync_records = 300;
  bool keep = false;
  bool existing = false;
  bool read = true;
  bool write = true;
  bool breakdown = true;
};

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr,
               "runlog_bench: %s\n"
               "usage: runlog_bench [--file PATH] [--size-mb MB] [--passes N] [--write-records N]\n"
               "                    [--sync-records N] [--keep] [--existing] [--no-read] [--no-write]\n"
               "                    [--no-breakdown]\n",
               message.c_str());
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    try {
      if (arg == "--file") {
        o.file = value();
      } else if (arg == "--size-mb") {
        o.size_mb = std::stod(value());
      } else if (arg == "--passes") {
        o.passes = std::stoi(value());
      } else if (arg == "--write-records") {
        o.write_records = std::stoull(value());
      } else if (arg == "--sync-records") {
        o.sync_records = std::stoull(value());
      } else if (arg == "--keep") {
        o.keep = true;
      } else if (arg == "--existing") {
        o.existing = true;
      } else if (arg == "--no-read") {
        o.read = false;
      } else if (arg == "--no-write") {
        o.write = false;
      } else if (arg == "--no-breakdown") {
        o.breakdown = false;
      } else {
        Usage(fmt::format("unknown argument '{}'", arg));
      }
    } catch (const std::exception&) {
      Usage(fmt::format("bad value for {}", arg));
    }
  }
  if (o.file.empty())
    o.file =
        (std::filesystem::temp_directory_path() / fmt::format("runlog_bench-{}.wandb", ::getpid())).string();
  if (o.size_mb <= 0) Usage("--size-mb must be positive");
  if (o.passes < 1) Usage("--passes must be at least 1");
  if (o.existing && !std::filesystem::exists(o.file)) Usage("--existing: the file does not exist");
  return o;
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// --- the generated records -------------------------------------------------------------------------------

// How a key's value looks in a real stats record (run-log-format.md section 7).
enum class Shape {
  kRatio,    // a percentage computed by division: full double precision ("43.21098765432101")
  kTenth,    // a percentage with one decimal (psutil rounds memory and disk percent; per-core CPU)
  kInt,      // utilization %, temperature, clock, count, link width
  kMiB,      // bytes / 2^20 with page granularity (k / 256)
  kGiB,      // bytes / 2^30 with 4 KiB block granularity
  kMiBIO,    // bytes / 2^20 with byte granularity (disk.in / disk.out)
  kCounter,  // a byte counter since the run started (grows)
  kBytes,    // bytes, multiples of 2 MiB (GPU memory allocated)
  kWatts,    // milliwatts / 1000
};

struct KeySpec {
  std::string key;
  Shape shape;
  double low;
  double high;
  double step;  // random-walk step (per record, one standard deviation)
};

std::vector<KeySpec> StatsKeys() {
  std::vector<KeySpec> keys = {
      {"cpu", Shape::kRatio, 0, 100, 8},
      {"memory_percent", Shape::kTenth, 5, 95, 1},
      {"proc.memory.rssMB", Shape::kMiB, 300, 9000, 40},
      {"proc.memory.percent", Shape::kRatio, 1, 40, 0.3},
      {"proc.memory.availableMB", Shape::kMiB, 8000, 60000, 300},
      {"proc.cpu.threads", Shape::kInt, 20, 200, 2},
      {"disk./.usagePercent", Shape::kTenth, 30, 90, 0.01},
      {"disk./.usageGB", Shape::kGiB, 100, 900, 0.05},
      {"disk.in", Shape::kMiBIO, 0, 1e6, 50},
      {"disk.out", Shape::kMiBIO, 0, 1e6, 80},
      {"network.sent", Shape::kCounter, 0, 1e12, 3e6},
      {"network.recv", Shape::kCounter, 0, 1e12, 9e6},
  };
  // A 32-core machine with 4 GPUs: per-core CPU with one decimal, and the GPU keys W&B's NVIDIA sidecar
  // reports.
  for (int core = 0; core < 32; ++core)
    keys.push_back({fmt::format("cpu.{}.cpu_percent", core), Shape::kTenth, 0, 100, 10});
  for (int gpu = 0; gpu < 4; ++gpu) {
    auto k = [gpu](std::string_view name) { return fmt::format("gpu.{}.{}", gpu, name); };
    keys.insert(keys.end(), {
                                {k("gpu"), Shape::kInt, 0, 100, 10},
                                {k("memory"), Shape::kInt, 0, 100, 8},
                                {k("memoryAllocated"), Shape::kRatio, 5, 99, 1},
                                {k("memoryAllocatedBytes"), Shape::kBytes, 4e9, 79e9, 5e8},
                                {k("temp"), Shape::kInt, 30, 85, 1},
                                {k("powerWatts"), Shape::kWatts, 60, 700, 20},
                                {k("enforcedPowerLimitWatts"), Shape::kInt, 700, 700, 0},
                                {k("powerPercent"), Shape::kRatio, 8, 100, 3},
                                {k("smClock"), Shape::kInt, 210, 1980, 60},
                                {k("memoryClock"), Shape::kInt, 2619, 2619, 0},
                                {k("graphicsClock"), Shape::kInt, 210, 1980, 60},
                                {k("fanSpeed"), Shape::kInt, 0, 0, 0},
                                {k("pcieLinkGen"), Shape::kInt, 5, 5, 0},
                                {k("pcieLinkWidth"), Shape::kInt, 16, 16, 0},
                            });
  }
  return keys;
}

// Produces one Sample per call: every key moves by a random walk and is shaped as its kind requires.
class SampleGenerator {
 public:
  explicit SampleGenerator(uint64_t seed) : keys_(StatsKeys()), rng_(seed) {
    for (const auto& k : keys_) {
      std::uniform_real_distribution<double> start(k.low, k.high);
      state_.push_back(k.shape == Shape::kCounter || k.shape == Shape::kMiBIO ? k.low : start(rng_));
    }
  }
  size_t keys() const { return keys_.size(); }

  void Next(runmon::Sample& sample) {
    sample.timestamp = 1735689600.25 + 15.0 * static_cast<double>(index_);
    sample.runtime = 15.0 * static_cast<double>(index_);
    ++index_;
    auto& items = sample.metrics.items();
    items.resize(keys_.size());
    std::normal_distribution<double> normal(0, 1);
    for (size_t i = 0; i < keys_.size(); ++i) {
      const KeySpec& k = keys_[i];
      double& v = state_[i];
      if (k.shape == Shape::kCounter || k.shape == Shape::kMiBIO) {
        v += std::abs(normal(rng_)) * k.step;
      } else {
        v = std::clamp(v + normal(rng_) * k.step, k.low, k.high);
      }
      items[i].key = k.key;
      items[i].value = Shaped(k.shape, v);
    }
  }

 private:
  double Shaped(Shape shape, double v) {
    switch (shape) {
      case Shape::kRatio: {
        // used / total * 100 with integer operands, as the monitor computes it.
        const double total = 16'000'000'000.0 + 4096.0 * static_cast<double>(rng_() % 1000);
        return std::floor(v / 100 * total) / total * 100;
      }
      case Shape::kTenth:
        return std::round(v * 10) / 10;
      case Shape::kInt:
        return std::round(v);
      case Shape::kMiB:
        return std::round(v * 256) / 256;
      case Shape::kGiB:
        return std::round(v * 262144) / 262144;
      case Shape::kMiBIO:
        return std::round(v * 1048576) / 1048576;
      case Shape::kCounter:
        return std::round(v);
      case Shape::kBytes:
        return std::round(v / 2097152) * 2097152;
      case Shape::kWatts:
        return std::round(v * 1000) / 1000;
    }
    return v;
  }

  std::vector<KeySpec> keys_;
  std::vector<double> state_;
  std::mt19937_64 rng_;
  uint64_t index_ = 0;
};

struct Generated {
  uint64_t bytes = 0;
  uint64_t records = 0;
  uint64_t stats_records = 0;
  uint64_t stats_payload_bytes = 0;
  double seconds = 0;
};

Generated Generate(const std::string& path, double size_mb) {
  std::filesystem::remove(path);
  auto writer = runlog::LogWriter::Create(path);
  if (!writer) {
    std::fprintf(stderr, "runlog_bench: %s\n", writer.error().c_str());
    std::exit(1);
  }
  Generated g;
  const auto t0 = Clock::now();
  std::string payload;
  auto append = [&](const runmon::wandb::Record& record) {
    payload.clear();
    record.SerializeToString(&payload);
    if (auto status = writer->Append(payload); !status) {
      std::fprintf(stderr, "runlog_bench: %s\n", status.error().c_str());
      std::exit(1);
    }
    ++g.records;
  };
  append(runlog::MakeHeaderRecord("runlog_bench"));
  runlog::RunInfo run{"bench0001", "runlog-bench", "runlog bench", "bench-host", 1735689600.0, {"bench"}};
  append(runlog::MakeRunRecord(run));
  const auto target = static_cast<uint64_t>(size_mb * 1e6);
  SampleGenerator generator(42);
  runmon::Sample sample;
  runmon::wandb::Record record;
  while (writer->size() < target) {
    generator.Next(sample);
    runlog::FillStatsRecord(sample, record);
    append(record);
    ++g.stats_records;
    g.stats_payload_bytes += payload.size();
  }
  append(runlog::MakeExitRecord(0, 15.0 * static_cast<double>(g.stats_records)));
  g.bytes = writer->size();
  g.seconds = Seconds(t0, Clock::now());
  return g;
}

// --- reading ---------------------------------------------------------------------------------------------

struct Pass {
  double seconds = 0;
  uint64_t records = 0;
  uint64_t items = 0;
};

struct Stats {
  double best = 0;
  double median = 0;
};

Stats Summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

int OpenForRead(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  return fd;
}

uint64_t FileSize(const std::string& path) {
  return std::filesystem::file_size(path);
}

template <typename Reader>
void CheckClean(const Reader& reader, runlog::ReadOutcome outcome) {
  if (outcome != runlog::ReadOutcome::kEnd || !reader.damage().empty()) {
    std::fprintf(stderr, "runlog_bench: the log did not read cleanly (outcome %d, %zu damage ranges) %s\n",
                 static_cast<int>(outcome), reader.damage().size(), reader.error().c_str());
    std::exit(1);
  }
}

Pass ReadDecoded(std::unique_ptr<runlog::LogSource> source) {
  Pass p;
  const auto t0 = Clock::now();
  runlog::RecordReader reader(std::move(source));
  runlog::ReadOutcome outcome;
  while ((outcome = reader.Next()) == runlog::ReadOutcome::kRecord) {
    ++p.records;
    if (reader.record().has_stats()) p.items += static_cast<uint64_t>(reader.record().stats().item_size());
  }
  p.seconds = Seconds(t0, Clock::now());
  CheckClean(reader, outcome);
  return p;
}

Pass ReadFraming(std::unique_ptr<runlog::LogSource> source) {
  Pass p;
  const auto t0 = Clock::now();
  runlog::LogReader reader(std::move(source));
  runlog::RawRecord raw;
  runlog::ReadOutcome outcome;
  uint64_t bytes = 0;
  while ((outcome = reader.Next(raw)) == runlog::ReadOutcome::kRecord) {
    ++p.records;
    bytes += raw.payload.size();
  }
  p.seconds = Seconds(t0, Clock::now());
  p.items = bytes;  // keeps the loop honest
  CheckClean(reader, outcome);
  return p;
}

void PrintRate(const char* name, const char* what, uint64_t bytes, uint64_t records, const Stats& s,
               int passes) {
  const double mb = static_cast<double>(bytes) / 1e6;
  const double n = static_cast<double>(records);
  std::fprintf(stderr, "  %-34s best %8.1f MB/s %10.0f records/s   median %8.1f MB/s %10.0f records/s\n",
               what, mb / s.best, n / s.best, mb / s.median, n / s.median);
  std::printf(
      "{\"tool\":\"runmon\",\"bench\":\"%s\",\"bytes\":%llu,\"records\":%llu,\"passes\":%d,"
      "\"best_s\":%.6f,\"median_s\":%.6f,\"mb_per_s\":%.1f,\"records_per_s\":%.0f,"
      "\"median_mb_per_s\":%.1f,\"median_records_per_s\":%.0f}\n",
      name, static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(records), passes, s.best,
      s.median, mb / s.best, n / s.best, mb / s.median, n / s.median);
  std::fflush(stdout);
}

template <typename F>
Stats Repeat(int passes, F&& pass) {
  std::vector<double> seconds;
  for (int i = 0; i < passes; ++i) seconds.push_back(pass());
  return Summarize(std::move(seconds));
}

void BenchRead(const Options& o) {
  const std::string& path = o.file;
  const uint64_t bytes = FileSize(path);
  const int fd = OpenForRead(path);
  const Pass warm = ReadDecoded(runlog::FileSource(fd));  // warms the page cache; counts the records
  std::fprintf(stderr, "read %s: %.1f MB, %llu records, %llu stats items (one untimed pass first)\n",
               path.c_str(), static_cast<double>(bytes) / 1e6, static_cast<unsigned long long>(warm.records),
               static_cast<unsigned long long>(warm.items));
  const Stats decoded = Repeat(o.passes, [&] { return ReadDecoded(runlog::FileSource(fd)).seconds; });
  PrintRate("read_decoded", "RecordReader (framing + decoding)", bytes, warm.records, decoded, o.passes);
  const Stats framing = Repeat(o.passes, [&] { return ReadFraming(runlog::FileSource(fd)).seconds; });
  PrintRate("read_framing", "LogReader (framing only)", bytes, warm.records, framing, o.passes);

  if (o.breakdown) {
    std::fprintf(stderr, "breakdown (the file in memory; each step alone):\n");
    std::string data(bytes, '\0');
    // pread alone, in the 256 KiB windows FileSource uses.
    const Stats pread_only = Repeat(o.passes, [&] {
      const auto t0 = Clock::now();
      constexpr size_t kWindow = 8 * runlog::kBlockSize;
      for (uint64_t at = 0; at < bytes; at += kWindow) {
        const size_t want = static_cast<size_t>(std::min<uint64_t>(kWindow, bytes - at));
        if (::pread(fd, data.data() + at, want, static_cast<off_t>(at)) != static_cast<ssize_t>(want)) {
          std::fprintf(stderr, "runlog_bench: short read\n");
          std::exit(1);
        }
      }
      return Seconds(t0, Clock::now());
    });
    PrintRate("pread_only", "pread, 256 KiB windows", bytes, warm.records, pread_only, o.passes);
    volatile uLong sink = 0;
    const Stats crc_only = Repeat(o.passes, [&] {
      const auto t0 = Clock::now();
      uLong crc = 0;
      for (uint64_t at = 0; at < bytes; at += runlog::kBlockSize) {
        const auto n = static_cast<uInt>(std::min<uint64_t>(runlog::kBlockSize, bytes - at));
        crc ^= crc32(0L, reinterpret_cast<const Bytef*>(data.data() + at), n);
      }
      sink = crc;
      return Seconds(t0, Clock::now());
    });
    PrintRate("crc_only", "zlib crc32 over every byte", bytes, warm.records, crc_only, o.passes);
    const Stats framing_mem =
        Repeat(o.passes, [&] { return ReadFraming(runlog::MemorySource(data)).seconds; });
    PrintRate("read_framing_memory", "LogReader from memory", bytes, warm.records, framing_mem, o.passes);
    const Stats decoded_mem =
        Repeat(o.passes, [&] { return ReadDecoded(runlog::MemorySource(data)).seconds; });
    PrintRate("read_decoded_memory", "RecordReader from memory", bytes, warm.records, decoded_mem, o.passes);

    std::fprintf(stderr, "decoding alone:\n");
    // RecordReader's decoding (StatsRecord kept): its time from memory less framing's.
    const Stats decode_library{decoded_mem.best - framing_mem.best, decoded_mem.median - framing_mem.median};
    PrintRate("decode_library", "RecordReader (StatsRecord kept)", bytes, warm.records, decode_library,
              o.passes);

    // The payloads, for decoding alone: FULL chunks point into `data`; joined records are copied.
    std::vector<std::string_view> payloads;
    std::deque<std::string> joined;
    {
      runlog::LogReader reader(runlog::MemorySource(data));
      runlog::RawRecord raw;
      while (reader.Next(raw) == runlog::ReadOutcome::kRecord) {
        const bool inside =
            raw.payload.data() >= data.data() && raw.payload.data() < data.data() + data.size();
        if (inside) {
          payloads.push_back(raw.payload);
        } else {
          joined.emplace_back(raw.payload);
          payloads.push_back(joined.back());
        }
      }
    }
    const Stats parse_fresh = Repeat(o.passes, [&] {
      const auto t0 = Clock::now();
      for (auto p : payloads) {
        runmon::wandb::Record fresh;
        if (!fresh.ParseFromArray(p.data(), static_cast<int>(p.size()))) std::exit(1);
      }
      return Seconds(t0, Clock::now());
    });
    PrintRate("parse_fresh", "ParseFromArray, fresh Record", bytes, warm.records, parse_fresh, o.passes);
    std::vector<char> block(64 * 1024);
    const Stats parse_arena = Repeat(o.passes, [&] {
      google::protobuf::ArenaOptions options;
      options.initial_block = block.data();
      options.initial_block_size = block.size();
      google::protobuf::Arena arena(options);
      const auto t0 = Clock::now();
      for (auto p : payloads) {
        auto* record = google::protobuf::Arena::CreateMessage<runmon::wandb::Record>(&arena);
        if (!record->ParseFromArray(p.data(), static_cast<int>(p.size()))) std::exit(1);
        arena.Reset();
      }
      return Seconds(t0, Clock::now());
    });
    PrintRate("parse_arena", "ParseFromArray, arena per record", bytes, warm.records, parse_arena, o.passes);
  }
  ::close(fd);
}

// --- writing ---------------------------------------------------------------------------------------------

struct Percentiles {
  double mean = 0;
  double median = 0;
  double p99 = 0;
  double max = 0;
};

Percentiles Describe(std::vector<double> us) {
  Percentiles p;
  if (us.empty()) return p;
  double sum = 0;
  for (double v : us) sum += v;
  p.mean = sum / static_cast<double>(us.size());
  std::sort(us.begin(), us.end());
  p.median = us[us.size() / 2];
  p.p99 = us[std::min(us.size() - 1, static_cast<size_t>(static_cast<double>(us.size()) * 0.99))];
  p.max = us.back();
  return p;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

void BenchWrite(const Options& o, bool sync, uint64_t records) {
  const std::string path = o.file + (sync ? ".write-sync" : ".write");
  std::filesystem::remove(path);
  auto writer = runlog::LogWriter::Create(path);
  if (!writer) {
    std::fprintf(stderr, "runlog_bench: %s\n", writer.error().c_str());
    std::exit(1);
  }
  auto index = runlog::IndexWriter::Create(runlog::IndexPathFor(path), path);
  if (!index) {
    std::fprintf(stderr, "runlog_bench: %s\n", index.error().c_str());
    std::exit(1);
  }
  SampleGenerator generator(7);
  runmon::Sample sample;
  runmon::wandb::Record record;
  runmon::wandb::Record num;
  runlog::EncodedStatsItems encoded;
  std::string payload;
  constexpr uint64_t kWarmup = 100;
  std::vector<double> total, encode, message, append, indexing, fsync;
  std::string reference;
  uint64_t payload_bytes = 0;
  for (uint64_t i = 0; i < records + kWarmup; ++i) {
    generator.Next(sample);  // the sampler's work, not timed
    // For reference, not in the total: the same record built as a message and serialised.
    const auto r0 = Clock::now();
    runlog::FillStatsRecord(sample, record);
    reference.clear();
    record.SerializeToString(&reference);
    const auto r1 = Clock::now();
    // The recorder's path: the stats record encoded directly, then its num appended (RunRecorder::Seal).
    const auto t0 = Clock::now();
    payload = runlog::EncodeStatsRecord(sample, {}, &encoded);
    num.set_num(static_cast<int64_t>(i));
    num.AppendToString(&payload);
    const auto t2 = Clock::now();
    const uint64_t before = writer->size();
    auto status = writer->Append(payload);
    const auto t3 = Clock::now();
    if (status)
      status = index->NoteStats(runlog::FramedRecordStart(before), writer->size(), payload, encoded);
    const auto t3i = Clock::now();
    if (status && sync) status = writer->Sync();
    const auto t4 = Clock::now();
    if (!status) {
      std::fprintf(stderr, "runlog_bench: %s\n", status.error().c_str());
      std::exit(1);
    }
    if (i < kWarmup) continue;
    payload_bytes += payload.size();
    message.push_back(Seconds(r0, r1) * 1e6);
    encode.push_back(Seconds(t0, t2) * 1e6);
    append.push_back(Seconds(t2, t3) * 1e6);
    indexing.push_back(Seconds(t3, t3i) * 1e6);
    fsync.push_back(Seconds(t3i, t4) * 1e6);
    total.push_back(Seconds(t0, t4) * 1e6);
  }
  const Percentiles p = Describe(total);
  const char* name = sync ? "write_sync" : "write";
  const char* label = sync ? "with Sync" : "no Sync";
  std::fprintf(stderr,
               "  %-10s %6llu records of %6.0f B: mean %7.2f us  median %7.2f us  p99 %8.2f us  max %9.1f us"
               "   (encode %.2f, append %.2f, index %.2f%s; for reference FillStatsRecord + "
               "SerializeToString %.2f)\n",
               label, static_cast<unsigned long long>(records),
               static_cast<double>(payload_bytes) / static_cast<double>(records), p.mean, p.median, p.p99,
               p.max, Mean(encode), Mean(append), Mean(indexing),
               sync ? fmt::format(", fdatasync {:.1f}", Mean(fsync)).c_str() : "", Mean(message));
  std::printf(
      "{\"tool\":\"runmon\",\"bench\":\"%s\",\"records\":%llu,\"payload_bytes_mean\":%.1f,\"us_mean\":%.3f,"
      "\"us_median\":%.3f,\"us_p99\":%.3f,\"us_max\":%.1f,\"encode_us_mean\":%.3f,\"append_us_mean\":%.3f,"
      "\"index_us_mean\":%.3f,\"sync_us_mean\":%.1f,\"message_us_mean\":%.3f}\n",
      name, static_cast<unsigned long long>(records),
      static_cast<double>(payload_bytes) / static_cast<double>(records), p.mean, p.median, p.p99, p.max,
      Mean(encode), Mean(append), Mean(indexing), Mean(fsync), Mean(message));
  std::fflush(stdout);
  std::filesystem::remove(path);
  std::filesystem::remove(runlog::IndexPathFor(path));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  if (!o.existing) {
    const Generated g = Generate(o.file, o.size_mb);
    const double per_record =
        static_cast<double>(g.stats_payload_bytes) / static_cast<double>(g.stats_records);
    std::fprintf(stderr,
                 "generated %s: %.1f MB, %llu records (%llu stats records of %zu keys, %.0f B serialized on "
                 "average, %.0f B framed) in %.1f s\n",
                 o.file.c_str(), static_cast<double>(g.bytes) / 1e6,
                 static_cast<unsigned long long>(g.records), static_cast<unsigned long long>(g.stats_records),
                 SampleGenerator(0).keys(), per_record,
                 static_cast<double>(g.bytes) / static_cast<double>(g.records), g.seconds);
    std::printf(
        "{\"tool\":\"runmon\",\"bench\":\"generate\",\"file\":\"%s\",\"bytes\":%llu,\"records\":%llu,"
        "\"stats_records\":%llu,\"keys\":%zu,\"stats_payload_bytes_mean\":%.1f,\"seconds\":%.3f}\n",
        o.file.c_str(), static_cast<unsigned long long>(g.bytes), static_cast<unsigned long long>(g.records),
        static_cast<unsigned long long>(g.stats_records), SampleGenerator(0).keys(), per_record, g.seconds);
    std::fflush(stdout);
  }
  if (o.read) BenchRead(o);
  if (o.write) {
    std::fprintf(
        stderr,
        "write (EncodeStatsRecord + its num + LogWriter::Append + IndexWriter::NoteStats, per record):\n");
    BenchWrite(o, false, o.write_records);
    if (o.sync_records > 0) BenchWrite(o, true, o.sync_records);
  }
  if (!o.keep && !o.existing) std::filesystem::remove(o.file);
  return 0;
}
