// Parses the command line with CLI11 and runs the chosen command. Settings are layered: defaults, then
// W&B's environment variables (WANDB_X_STATS_*), then --set x_stats_NAME=VALUE, then runmon's own flags.
// Signals: SIGINT, SIGTERM and SIGHUP are blocked in every thread and taken by one waiter thread, which
// stops the sampler so that the final sample is still taken and written.
#include "app/commands.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli_common.hpp"
#include "app/dump_command.hpp"
#include "app/exporter_command.hpp"
#include "app/leet_command.hpp"
#include "app/leet_config_command.hpp"
#include "app/man_pages.hpp"
#include "app/output.hpp"
#include "app/remote_write_session.hpp"
#include "app/run_command.hpp"
#include "app/serve_command.hpp"
#include "app/usage.hpp"
#include "collectors/builtin.hpp"
#include "config/settings.hpp"
#include "core/catalog.hpp"
#include "export/prometheus_names.hpp"
#include "host/file_reader.hpp"
#include "host/process_environment.hpp"
#include "sampler/sampler.hpp"

namespace runmon {
namespace {

int RunSample(const SamplerFlags& flags, bool once, std::optional<long long> count, bool json) {
  auto settings = flags.Resolve();
  if (!settings) {
    Warn(settings.error());
    return 2;
  }
  const HostPaths paths = flags.Paths();
  CollectorContext ctx = MakeContext(*settings, paths);
  if (ctx.pid && !std::filesystem::exists(paths.proc / std::to_string(*ctx.pid))) {
    Warn(fmt::format("process {} does not exist; process metrics are off, host metrics continue", *ctx.pid));
  }

  SamplerOptions options;
  options.interval_seconds = settings->interval_seconds;
  if (once) count = 1;
  if (count) options.max_samples = static_cast<uint64_t>(*count);
  ::signal(SIGPIPE, SIG_IGN);
  std::atomic<bool> output_failed{false};
  std::atomic<int> output_errno{0};  // the sink runs on the sampler's thread; errno is per thread
  uint64_t number = 0;
  std::atomic<Sampler*> running{nullptr};
  Sampler sampler(
      BuiltinCollectors(ctx), options,
      [&](const Sample& sample) {
        if (output_failed) return;
        const std::string text = json ? FormatSampleJson(sample) : FormatSampleTable(sample, ++number);
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
          output_errno = errno;
          output_failed = true;
          running.load()->Stop();
        }
      },
      Warn);
  running = &sampler;
  // After the sampler, so it is destroyed (its waiter joined) before the sampler is; before Run(), so
  // the sampler's threads start with the stop signals blocked.
  StopSignals signals([&](const siginfo_t&) { sampler.Stop(); });
  sampler.Run();
  if (output_failed && output_errno != EPIPE) {
    Warn(fmt::format("writing samples failed: {}", std::strerror(output_errno)));
    return 1;
  }
  return 0;
}

// A family's probe, given 10 s: a driver that hangs must not hang `runmon info`.
Result<nlohmann::json> ProbeWithDeadline(const CollectorFamily& family, const CollectorContext& ctx,
                                         bool& timed_out) {
  auto promise = std::make_shared<std::promise<Result<nlohmann::json>>>();
  auto future = promise->get_future();
  std::thread probe([promise, &family, ctx] { promise->set_value(family.probe(ctx)); });
  if (future.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    probe.detach();  // still inside the driver: left behind (RunInfo exits without destructors)
    timed_out = true;
    return Error{fmt::format("{} did not answer within 10 s", family.name)};
  }
  probe.join();  // it has answered: let it end, so nothing of it (dlerror's buffer) outlives the command
  return future.get();
}

// Every family's part of the metadata (an unavailable family's reason under runmon.<name>), and under
// "collectors" whether each is available and, when not, why (with whether it runs by default and the
// settings it reads): a family with a probe is available when its
// probe answers, one without when it starts at least one collector.
nlohmann::json ProbeFamilies(const CollectorContext& ctx, bool& timed_out) {
  nlohmann::json metadata = nlohmann::json::object();
  nlohmann::json collectors = nlohmann::json::object();
  for (const CollectorFamily* family : CollectorFamilies()) {
    nlohmann::json& entry = collectors[std::string(family->name)];
    std::string reason;
    if (family->probe != nullptr) {
      auto probed = ProbeWithDeadline(*family, ctx, timed_out);
      if (probed) {
        metadata.merge_patch(*probed);
      } else {
        reason = probed.error();
        metadata["runmon"][std::string(family->name)] = {{"available", false}, {"reason", reason}};
      }
    } else {
      FamilyStart started = family->start(ctx);
      if (started.collectors.empty()) reason = started.absent_reason;
    }
    entry["available"] = reason.empty();
    if (!reason.empty()) entry["reason"] = reason;
    entry["enabledByDefault"] = family->enabled_by_default;
    entry["settings"] = nlohmann::json::array();
    for (const std::string_view setting : family->settings) entry["settings"].push_back(setting);
  }
  metadata["collectors"] = std::move(collectors);
  return metadata;
}

int RunInfo(const SamplerFlags& flags) {
  auto settings = flags.Resolve();
  if (!settings) {
    Warn(settings.error());
    return 2;
  }
  const CollectorContext ctx = MakeContext(*settings, flags.Paths());
  nlohmann::json metadata = ProbeHostMetadata(ctx, ProcessEnvironmentStrings());
  bool timed_out = false;
  metadata.merge_patch(ProbeFamilies(ctx, timed_out));
  fmt::print("{}\n", metadata.dump(2));
  if (timed_out) {
    // The probe's thread is still inside the driver: leave without running exit-time destructors under it.
    std::fflush(stdout);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  // A process tree of thousands keeps thousands of files open (within a budget, see file_reader.hpp).
  const unsigned long original_open_files_limit = RaiseOpenFileLimit();
  CLI::App app{"runmon: system metrics for machine-learning runs, with W&B's metric names.", "runmon"};
  const std::string version = std::string("runmon ") + RUNMON_VERSION;
  app.set_version_flag("--version", version);
  app.require_subcommand(1);

  SamplerFlags sample_flags;
  bool once = false, json = false;
  std::optional<long long> count;
  auto* sample = app.add_subcommand("sample", "Sample the host and a process tree; print each sample");
  sample_flags.AddTo(
      *sample,
      "Process to monitor with its descendants (default: runmon's parent; 0 turns process metrics off)");
  auto* count_option = sample->add_option("--count", count, "Take N samples and exit")
                           ->type_name("N")
                           ->check(IntegerIn(1, std::numeric_limits<long long>::max()));
  sample->add_flag("--once", once, "Take one sample and exit")->excludes(count_option);
  sample->add_flag("--json", json, "One JSON object per sample (_timestamp, _runtime and every key)");

  SamplerFlags info_flags;
  auto* info = app.add_subcommand("info", "Print the machine's static metadata (wandb-metadata.json layout)");
  info_flags.AddTo(*info, "Process whose cgroup limits apply (default: runmon's parent)");

  RunCommandOptions run_options;
  auto* run = app.add_subcommand(
      "run",
      "Record a run: start CMD (or attach with --pid, or watch the host with --host-only) and write its "
      "metrics to a run log");
  run_options.sampler.AddTo(*run, "Attach to this running process (and its descendants) until it exits");
  run->add_flag("--host-only", run_options.host_only,
                "Record the host alone (no process metrics) until SIGINT, SIGTERM or SIGHUP");
  run->add_option("--dir", run_options.dir, "Directory of runs (default ./wandb)")->type_name("DIR");
  run->add_option("--id", run_options.id, "Run id (default: 8 random characters [a-z0-9])")->type_name("ID");
  run->add_option("--name", run_options.name, "Display name of the run (default: the command line)")
      ->type_name("NAME");
  run->add_option("--project", run_options.project, "Project of the run")->type_name("PROJECT");
  run->add_option("--metrics-listen", run_options.metrics_listen,
                  "Also serve the run's latest sample for Prometheus at http://HOST:PORT/metrics while "
                  "recording (a loopback address unless --metrics-token is given)")
      ->type_name("HOST:PORT");
  run->add_option("--metrics-token", run_options.metrics_token,
                  "Require `Authorization: Bearer TOKEN` (16+ characters) from every scrape of "
                  "--metrics-listen")
      ->type_name("TOKEN");
  run->add_option("--job-id", run_options.job_id,
                  "The distributed job this node belongs to, over what Slurm, TorchElastic or MPI say "
                  "(docs/clusters.md); the job_id label of --metrics-listen and --remote-write")
      ->type_name("ID");
  run->add_option("--node-rank", run_options.node_rank,
                  "This node's rank in the job (a non-negative integer), over SLURM_NODEID, GROUP_RANK and "
                  "torchrun's --node-rank; the node_rank label of --metrics-listen and --remote-write")
      ->type_name("N");
  run->add_option("--label", run_options.label,
                  "W&B's x_label: every metric key of the run log ends with /l:LABEL (default: "
                  "WANDB_X_LABEL, else none)")
      ->type_name("LABEL");
  run->add_option("--console", run_options.console,
                  "auto: record the command's stdout and stderr (the run log's console output and "
                  "files/output.log), passed on unchanged, through a pseudo-terminal where runmon's own "
                  "stream is a terminal; off: the command writes to runmon's streams directly, unrecorded")
      ->check(CLI::IsMember({"auto", "off"}))
      ->type_name("auto|off");
  run_options.remote_write.AddTo(*run, RemoteWriteFlags::DrainFlag::kAdd);
  run->add_option("command", run_options.command, "The command and its arguments (after --)")
      ->type_name("-- CMD [ARGS...]");
  run->footer("Exits with CMD's status (128 + the signal when it was killed); 127 when CMD does not exist.");

  PushOptions push_options;
  auto* push = app.add_subcommand(
      "push",
      "Send a run's samples to a Prometheus remote-write receiver: what its queue holds, else its run log");
  push->add_option("run_dir", push_options.run_directory, "A run directory (run-YYYYMMDD_HHMMSS-<id>/)")
      ->required()
      ->type_name("RUNDIR");
  push_options.remote_write.AddTo(*push, RemoteWriteFlags::DrainFlag::kLeaveOut);
  push->add_option("--timeout", push_options.timeout_seconds,
                   "Give up after this many seconds; what is left stays queued (default 600)")
      ->type_name("SECONDS");
  push->footer("Exits 0 when everything was delivered, 1 when samples were dropped or are left.");

  DumpOptions dump_options;
  auto* dump = app.add_subcommand(
      "dump",
      "Print a run log's records as JSON lines, or its metrics as CSV or as OpenMetrics for backfill");
  dump->add_option("path", dump_options.path, "A .wandb file, a run directory or a directory of runs")
      ->required()
      ->type_name("FILE|RUNDIR");
  dump->add_flag("--follow,-f", dump_options.follow,
                 "Keep printing as the log grows, until the run's exit record");
  dump->add_option("--format", dump_options.format,
                   "jsonl (every record), csv (the metrics, a column per key) or openmetrics (the metrics "
                   "under their Prometheus names, with timestamps, for promtool tsdb create-blocks-from "
                   "openmetrics)")
      ->type_name("jsonl|csv|openmetrics");

  LeetOptions leet_options;
  auto* leet = app.add_subcommand("leet", "Browse runs in the terminal: live charts of a run's metrics");
  leet->add_option("path", leet_options.path,
                   "A wandb directory (its runs), a run directory or a .wandb file (default: ./wandb, its "
                   "latest run)")
      ->type_name("PATH");
  leet->add_option("--print-frame", leet_options.print_frame,
                   "Print one frame of the loaded run as text at this size and exit (no terminal needed)")
      ->type_name("WIDTHxHEIGHT");
  leet->add_flag("--print-keys", leet_options.print_keys,
                 "Print leet's keys as a Markdown table (docs/leet-keys.md) and exit");
  auto* symon = leet->add_subcommand("symon",
                                     "A live monitor of this machine, with no run: runmon's own "
                                     "sampler in-process, its charts updating at the interval");
  symon
      ->add_option("--interval", leet_options.symon_interval,
                   "Sampling interval: seconds (0.5) or with a unit (500ms, 2s); default 1s, at least 0.1s")
      ->type_name("DURATION");
  symon
      ->add_option("--print-frame", leet_options.print_frame,
                   "Print one frame after two samples as text at this size and exit (no terminal needed)")
      ->type_name("WIDTHxHEIGHT");
  symon->parse_complete_callback([&leet_options] { leet_options.symon = true; });
  // leet's settings file, for leet, leet symon and leet config alike.
  const std::string config_help =
      "leet's settings file (default: $RUNMON_CONFIG_DIR/leet.json, else $XDG_CONFIG_HOME/runmon/leet.json, "
      "else ~/.config/runmon/leet.json)";
  for (CLI::App* command : {leet, symon}) {
    command->add_option("--config", leet_options.config_path, config_help)->type_name("PATH");
  }
  LeetConfigOptions leet_config_options;
  auto* leet_config = leet->add_subcommand(
      "config",
      "Edit leet's settings (grid sizes, panes shown, chart guides, the startup view) in the terminal, or "
      "print or change them with the flags below");
  leet_config->add_option("--config", leet_config_options.config_path, config_help)->type_name("PATH");
  leet_config->add_flag("--print", leet_config_options.print,
                        "Print the settings in effect as JSON (after --reset and --set)");
  leet_config->add_flag("--path", leet_config_options.path, "Print where the settings file is");
  AddRepeatableOption(*leet_config, "--set", leet_config_options.assignments,
                      "Set one setting and save the file, e.g. metrics_grid.rows=5 or chart_guides=dots "
                      "(repeatable)")
      ->type_name("KEY=VALUE");
  leet_config->add_flag("--reset", leet_config_options.reset,
                        "Put every setting back to its default and save the file (keys runmon does not know "
                        "are kept)");
  leet_config->footer("Keys, values and the editor's keys: docs/cli.md (runmon leet config).");

  ServeCommandOptions serve_options;
  auto* serve = app.add_subcommand(
      "serve", "Serve the web dashboard of a directory of runs (127.0.0.1 only by default)");
  serve->add_option("--logdir", serve_options.logdir, "Directory of runs (default ./wandb)")
      ->type_name("DIR");
  serve
      ->add_option("--host", serve_options.host,
                   "Address to listen on (default 127.0.0.1; others need --token)")
      ->type_name("HOST");
  serve->add_option("--port", serve_options.port, "Port (default 8765; 0 picks a free one)")
      ->type_name("PORT")
      ->check(IntegerIn(0, 65535));
  serve
      ->add_option(
          "--token", serve_options.token,
          "Require this secret (16+ characters) from every request: a bearer header, or ?token= once")
      ->type_name("TOKEN");

  ExporterCommandOptions exporter_options;
  auto* exporter = app.add_subcommand(
      "exporter",
      "Serve the host's metrics (and a process tree's) for Prometheus at http://HOST:PORT/metrics");
  exporter_options.sampler.AddTo(*exporter,
                                 "Also monitor this process and its descendants (default: none, host only)");
  exporter
      ->add_option("--listen", exporter_options.listen,
                   "Address to serve /metrics on: 127.0.0.1:PORT, [::1]:PORT (PORT 0 picks a free one); "
                   "another address needs --token")
      ->type_name("HOST:PORT");
  exporter
      ->add_option("--token", exporter_options.token,
                   "Require `Authorization: Bearer TOKEN` (16+ characters) from every scrape")
      ->type_name("TOKEN");

  bool markdown = false, prometheus = false;
  auto* catalog = app.add_subcommand("catalog", "List every metric key with its unit and meaning");
  auto* markdown_flag = catalog->add_flag("--markdown", markdown, "As the Markdown table of docs/metrics.md");
  catalog
      ->add_flag("--prometheus", prometheus,
                 "The Prometheus name of every key, as the Markdown of docs/prometheus.md")
      ->excludes(markdown_flag);

  // `runmon --generate-man-pages DIR`: the build writes the man pages from this very tree (man_pages.hpp).
  // It is no option of the tree, so help does not list it and no command takes it.
  if (argc == 3 && argv[1] == kGenerateManPagesFlag) return WriteManPages(app, version, argv[2]);
  if (auto status = ParseCommandLine(app, argc, argv)) return *status;

  if (sample->parsed()) return RunSample(sample_flags, once, count, json);
  if (info->parsed()) return RunInfo(info_flags);
  if (run->parsed()) return RunRunCommand(run_options, original_open_files_limit);
  if (push->parsed()) return RunPushCommand(push_options);
  if (dump->parsed()) return RunDumpCommand(dump_options);
  if (leet_config->parsed()) {
    // `runmon leet --config PATH config` names the file too.
    if (!leet_config_options.config_path) leet_config_options.config_path = leet_options.config_path;
    return RunLeetConfigCommand(leet_config_options);
  }
  if (leet->parsed()) return RunLeetCommand(leet_options);
  if (serve->parsed()) return RunServeCommand(serve_options);
  if (exporter->parsed()) return RunExporterCommand(exporter_options);
  if (catalog->parsed()) {
    if (prometheus) {
      fmt::print("{}", RenderPrometheusMarkdown());
    } else if (markdown) {
      fmt::print("{}", RenderCatalogMarkdown());
    } else {
      for (const auto& d : MetricCatalog()) fmt::print("{:<28} {:<8} {}\n", d.pattern, d.unit, d.title);
    }
    return 0;
  }
  return 2;
}

}  // namespace runmon
