// leet's config file: the defaults as written, round trips, a file as W&B's LEET writes it (its defaults,
// from core/internal/leet/config.go), keys runmon does not model kept in place, hostile documents (huge,
// invalid UTF-8, deep nesting, wrong types, non-numbers, negative and huge grids), --set's assignments,
// the editor's steps, what the view gets, where the file is, and reading and writing it.
#include "tui/leet_config.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace runmon::tui {
namespace {

constexpr std::string_view kDefaults = R"({
  "startup_mode": "single_run_latest",
  "chart_guides": "off",
  "metrics_grid": {
    "rows": 4,
    "cols": 3
  },
  "system_grid": {
    "rows": 6,
    "cols": 2
  },
  "media_grid": {
    "rows": 1,
    "cols": 2
  },
  "workspace_metrics_grid": {
    "rows": 3,
    "cols": 3
  },
  "symon_grid": {
    "rows": 3,
    "cols": 3
  },
  "run_layout": {
    "left_sidebar": 0,
    "right_sidebar": 0,
    "media": 0,
    "logs": 0
  },
  "color_scheme": "wandb-vibe-10",
  "tag_color_scheme": "wandb-vibe-10",
  "per_plot_color_scheme": "sunset-glow",
  "system_color_scheme": "wandb-vibe-10",
  "french_fries_color_scheme": "viridis",
  "system_color_mode": "per_series",
  "system_tail_window_minutes": 10,
  "single_run_color_mode": "per_series",
  "heartbeat_interval_seconds": 15,
  "left_sidebar_visible": true,
  "right_sidebar_visible": true,
  "metrics_grid_visible": true,
  "console_logs_visible": false,
  "media_visible": false
}
)";

// wandb-leet.json as W&B's LEET writes it with its defaults (json.MarshalIndent of NewConfigManager's
// Config; run_layout and workspace_layout are omitted when zero).
constexpr std::string_view kWandbDefaults = R"({
  "startup_mode": "workspace_latest",
  "chart_guides": "off",
  "metrics_grid": {
    "rows": 4,
    "cols": 3
  },
  "system_grid": {
    "rows": 6,
    "cols": 2
  },
  "media_grid": {
    "rows": 1,
    "cols": 2
  },
  "workspace_metrics_grid": {
    "rows": 3,
    "cols": 3
  },
  "workspace_system_grid": {
    "rows": 3,
    "cols": 3
  },
  "workspace_media_grid": {
    "rows": 1,
    "cols": 2
  },
  "symon_grid": {
    "rows": 3,
    "cols": 3
  },
  "color_scheme": "wandb-vibe-10",
  "tag_color_scheme": "wandb-vibe-10",
  "per_plot_color_scheme": "sunset-glow",
  "system_color_scheme": "wandb-vibe-10",
  "french_fries_color_scheme": "viridis",
  "system_color_mode": "per_series",
  "system_tail_window_minutes": 10,
  "single_run_color_mode": "per_series",
  "heartbeat_interval_seconds": 15,
  "left_sidebar_visible": true,
  "right_sidebar_visible": true,
  "metrics_grid_visible": true,
  "console_logs_visible": false,
  "media_visible": false,
  "workspace_overview_visible": true,
  "workspace_metrics_grid_visible": true,
  "workspace_system_metrics_visible": false,
  "workspace_console_logs_visible": false,
  "workspace_media_visible": false
}
)";

ParsedLeetConfig ParseOk(std::string_view text) {
  auto parsed = ParseLeetConfig(text);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  return parsed.ok() ? *parsed : ParsedLeetConfig{};
}

// The one warning parsing `text` gives.
std::string OnlyWarning(std::string_view text) {
  const auto parsed = ParseOk(text);
  EXPECT_EQ(parsed.warnings.size(), 1u) << text;
  return parsed.warnings.empty() ? "" : parsed.warnings.front();
}

LeetConfig Changed() {
  LeetConfig config;
  config.startup_mode = StartupMode::kWorkspaceLatest;
  config.chart_guides = ChartGuides::kHorizontal;
  config.metrics_grid = {5, 4};
  config.system_grid = {2, 1};
  config.media_grid = {9, 9};
  config.workspace_metrics_grid = {1, 1};
  config.symon_grid = {2, 5};
  config.run_layout = {0.3, 0.25, 0.05, 0.9};
  config.color_scheme = FindColorScheme("dusk-shore");
  config.tag_color_scheme = FindColorScheme("bootstrap-vibe");
  config.per_plot_color_scheme = FindColorScheme("blush-tide");
  config.system_color_scheme = FindColorScheme("clear-signal");
  config.french_fries_color_scheme = FindColorScheme("cividis");
  config.system_color_mode = ColorMode::kPerPlot;
  config.single_run_color_mode = ColorMode::kPerPlot;
  config.system_tail_window_minutes = 60;
  config.heartbeat_interval_seconds = 1;
  config.left_sidebar_visible = false;
  config.right_sidebar_visible = false;
  config.metrics_grid_visible = false;
  config.console_logs_visible = true;
  config.media_visible = true;
  return config;
}

TEST(LeetConfigTest, DefaultsAreWrittenInWandbOrder) {
  EXPECT_EQ(SerializeLeetConfig(LeetConfig{}), kDefaults);
  const auto parsed = ParseOk(kDefaults);
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_EQ(parsed.config, LeetConfig{});
}

TEST(LeetConfigTest, EveryFieldRoundTrips) {
  const LeetConfig config = Changed();
  const std::string text = SerializeLeetConfig(config);
  const auto parsed = ParseOk(text);
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_EQ(parsed.config, config);
  EXPECT_EQ(SerializeLeetConfig(parsed.config), text);
  for (const LeetConfigField& field : LeetConfigFields()) {
    EXPECT_NE(field.get(config), field.get(LeetConfig{})) << field.key << " is not exercised";
  }
}

TEST(LeetConfigTest, WandbsOwnFileReadsAndIsWrittenBackWithItsKeysInPlace) {
  const auto parsed = ParseOk(kWandbDefaults);
  EXPECT_TRUE(parsed.warnings.empty());
  LeetConfig expected;
  expected.startup_mode = StartupMode::kWorkspaceLatest;
  expected.other_keys_json = parsed.config.other_keys_json;
  EXPECT_EQ(parsed.config, expected);
  // Written back: the same text, with runmon's run_layout after symon_grid (where W&B puts it when set).
  std::string wandb(kWandbDefaults);
  const std::string layout = R"(
  "run_layout": {
    "left_sidebar": 0,
    "right_sidebar": 0,
    "media": 0,
    "logs": 0
  },)";
  wandb.insert(wandb.find("\n  \"color_scheme\""), layout);
  EXPECT_EQ(SerializeLeetConfig(parsed.config), wandb);
}

TEST(LeetConfigTest, UnknownKeysAreKeptInPlaceAndInsideGroups) {
  const auto parsed = ParseOk(R"({"zeta": [1, {"a": null}], "metrics_grid": {"cols": 2, "rows": 7, "gap": 1},
    "color_scheme": "viridis", "run_layout": {"system": 0.3, "logs": 0.4}, "media_visible": true})");
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_EQ(parsed.config.metrics_grid, (GridSize{7, 2}));
  EXPECT_EQ(parsed.config.run_layout.logs, 0.4);
  EXPECT_TRUE(parsed.config.media_visible);
  const std::string text = SerializeLeetConfig(parsed.config);
  EXPECT_NE(text.find("\"metrics_grid\": {\n    \"rows\": 7,\n    \"cols\": 2,\n    \"gap\": 1\n  }"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"right_sidebar\": 0,\n    \"system\": 0.3,\n    \"media\": 0"), std::string::npos)
      << text;
  // W&B's keys in W&B's order, others at the end.
  EXPECT_LT(text.find("\"color_scheme\""), text.find("\"media_visible\""));
  EXPECT_GT(text.find("\"zeta\""), text.find("\"media_visible\""));
  const auto again = ParseOk(text);
  EXPECT_EQ(again.config, parsed.config);
  EXPECT_EQ(SerializeLeetConfig(again.config), text);
}

TEST(LeetConfigTest, WrongTypesFallBackToTheDefaultNamingTheKey) {
  EXPECT_EQ(OnlyWarning(R"({"metrics_grid": {"rows": "5"}})"),
            "metrics_grid.rows: \"5\" is not a whole number; the default 4 is used");
  EXPECT_EQ(OnlyWarning(R"({"metrics_grid": {"rows": 4.5}})"),
            "metrics_grid.rows: 4.5 is not a whole number; the default 4 is used");
  EXPECT_EQ(OnlyWarning(R"({"left_sidebar_visible": 1})"),
            "left_sidebar_visible: 1 is not true or false; the default true is used");
  EXPECT_EQ(OnlyWarning(R"({"chart_guides": "lines"})"),
            "chart_guides: \"lines\" is not one of off, dots, horizontal; the default off is used");
  EXPECT_EQ(OnlyWarning(R"({"startup_mode": null})"),
            "startup_mode: null is not one of workspace_latest, single_run_latest; the default "
            "single_run_latest is used");
  EXPECT_EQ(OnlyWarning(R"({"run_layout": {"logs": "0.3"}})"),
            "run_layout.logs: \"0.3\" is not a number; the default default is used");
  EXPECT_EQ(OnlyWarning(R"({"symon_grid": [3, 3]})"),
            "symon_grid: [3,3] is not an object; the defaults are used");
  // The rest of the file still counts, and the bad value is not written back.
  const auto parsed = ParseOk(R"({"metrics_grid": {"rows": true, "cols": 5}, "system_grid": 7})");
  EXPECT_EQ(parsed.config.metrics_grid, (GridSize{4, 5}));
  EXPECT_EQ(parsed.config.system_grid, (GridSize{6, 2}));
  EXPECT_EQ(parsed.warnings.size(), 2u);
  EXPECT_TRUE(ParseOk(SerializeLeetConfig(parsed.config)).warnings.empty());
}

TEST(LeetConfigTest, NegativeZeroAndHugeGridsAreOutOfRange) {
  for (const std::string_view rows :
       {"-1", "0", "10", "1000", "-9223372036854775808", "18446744073709551615"}) {
    const std::string text = fmt::format(R"({{"media_grid": {{"rows": {}}}}})", rows);
    EXPECT_EQ(OnlyWarning(text),
              fmt::format("media_grid.rows: {} is out of range (1-9); the default 1 is used", rows));
  }
  // Past what an integer holds: a floating-point number, so not a whole number.
  EXPECT_EQ(OnlyWarning(R"({"media_grid": {"cols": 99999999999999999999999}})"),
            "media_grid.cols: 9.999999999999999e+22 is not a whole number; the default 2 is used");
  EXPECT_EQ(OnlyWarning(R"({"heartbeat_interval_seconds": 0})"),
            "heartbeat_interval_seconds: 0 is out of range (1-3600); the default 15 is used");
}

TEST(LeetConfigTest, FractionsOutsideTheirRangeAndNonNumbers) {
  for (const std::string_view value : {"-0.1", "0.04", "0.91", "1", "-1e300", "0.0000001"}) {
    const std::string text = fmt::format(R"({{"run_layout": {{"left_sidebar": {}}}}})", value);
    const std::string warning = OnlyWarning(text);
    EXPECT_TRUE(warning.starts_with("run_layout.left_sidebar: ")) << warning;
    EXPECT_TRUE(warning.ends_with("is out of range (0 or 0.05-0.9); the default default is used")) << warning;
  }
  EXPECT_EQ(ParseOk(R"({"run_layout": {"left_sidebar": 0.05, "logs": 0.9}})").config.run_layout,
            (PaneFractions{0.05, 0, 0.9, 0}));
  EXPECT_EQ(ParseOk(R"({"run_layout": {"media": -0, "logs": 0.0}})").config.run_layout, PaneFractions{});
  // Past a double's range: the whole document is refused (W&B's reader refuses it too).
  EXPECT_EQ(ParseLeetConfig(R"({"run_layout": {"logs": 1e400}})").error(),
            "not valid JSON (a number too large for a double)");
  EXPECT_EQ(ParseLeetConfig(R"({"unknown": -1e400})").error(),
            "not valid JSON (a number too large for a double)");
  // JSON has no NaN or infinities: such words make the document invalid.
  for (const std::string_view text :
       {R"({"run_layout": {"logs": NaN}})", R"({"run_layout": {"logs": Infinity}})", R"({"a": -nan})"}) {
    auto parsed = ParseLeetConfig(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(parsed.error().starts_with("not valid JSON (at byte ")) << parsed.error();
  }
}

TEST(LeetConfigTest, HostileDocumentsAreErrorsNotCrashes) {
  EXPECT_EQ(ParseLeetConfig(std::string(kMaxLeetConfigBytes + 1, ' ')).error(),
            "larger than 1 MiB (1048577 bytes)");
  EXPECT_EQ(ParseLeetConfig(std::string(1'000'000, '[')).error(), "nested deeper than 64 levels");
  EXPECT_EQ(ParseLeetConfig(std::string(500'000, '{')).error(), "nested deeper than 64 levels");
  // Brackets inside strings are not nesting; 64 levels are fine.
  EXPECT_TRUE(ParseOk(R"({"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})")
                  .warnings.empty());
  const std::string deep = "{\"k\": " + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_NE(ParseOk(deep).config.other_keys_json.find("[[["), std::string::npos);
  // Invalid UTF-8 in a string or outside one; the error names a byte, never echoes it.
  for (const std::string_view text :
       {"{\"color_scheme\": \"\xff\xfe\"}", "{\"a\xc0\xaf\": 1}", "\xef\xbb\xbf\xff"}) {
    auto parsed = ParseLeetConfig(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_TRUE(parsed.error().starts_with("not valid JSON (at byte ")) << parsed.error();
  }
  for (const std::string_view text : {"[]", "\"leet\"", "5", "null"}) {
    EXPECT_EQ(ParseLeetConfig(text).error(), "not a JSON object") << text;
  }
  for (const std::string_view text : {"{", "{\"a\": 1,}", "{} {}", "{\"a\" 1}", "\x01"}) {
    EXPECT_FALSE(ParseLeetConfig(text).ok()) << text;
  }
  // An empty file is the defaults, and so is only whitespace.
  EXPECT_EQ(ParseOk("").config, LeetConfig{});
  EXPECT_EQ(ParseOk(" \n\t\r\n").config, LeetConfig{});
  // The last of duplicate keys counts; control characters and non-ASCII in warnings are escaped.
  EXPECT_EQ(ParseOk(R"({"symon_grid": {"rows": 2, "rows": 5}})").config.symon_grid.rows, 5);
  EXPECT_EQ(
      OnlyWarning(R"({"chart_guides": "\u001b[31m\u202e"})"),
      "chart_guides: \"\\u001b[31m\\u202e\" is not one of off, dots, horizontal; the default off is used");
  EXPECT_EQ(OnlyWarning(R"({"chart_guides": ")" + std::string(100, 'x') + "\"}"),
            "chart_guides: \"" + std::string(36, 'x') +
                "... is not one of off, dots, horizontal; the default off is used");
}

TEST(LeetConfigTest, AssignmentsSetOneKeyOrSayWhatItTakes) {
  LeetConfig config;
  for (const std::string_view assignment :
       {"metrics_grid.rows=5", "chart_guides=dots", "left_sidebar_visible=no", "run_layout.logs=0.3",
        "startup_mode=workspace_latest", "media_visible = on", "heartbeat_interval_seconds=3600"}) {
    EXPECT_TRUE(ApplyLeetConfigAssignment(assignment, config).ok()) << assignment;
  }
  EXPECT_EQ(config.metrics_grid.rows, 5);
  EXPECT_EQ(config.chart_guides, ChartGuides::kDots);
  EXPECT_FALSE(config.left_sidebar_visible);
  EXPECT_EQ(config.run_layout.logs, 0.3);
  EXPECT_EQ(config.startup_mode, StartupMode::kWorkspaceLatest);
  EXPECT_TRUE(config.media_visible);
  EXPECT_TRUE(ApplyLeetConfigAssignment("run_layout.logs=default", config).ok());
  EXPECT_EQ(config.run_layout.logs, 0);

  const LeetConfig before = config;
  const auto error = [&](std::string_view assignment) {
    auto status = ApplyLeetConfigAssignment(assignment, config);
    EXPECT_EQ(config, before) << assignment;
    return status.ok() ? std::string("(accepted)") : status.error();
  };
  EXPECT_EQ(error("metrics_grid.rows=10"), "metrics_grid.rows: '10' is out of range (1-9)");
  EXPECT_EQ(error("metrics_grid.rows=-1"), "metrics_grid.rows: '-1' is out of range (1-9)");
  EXPECT_EQ(error("metrics_grid.rows=99999999999999999999"),
            "metrics_grid.rows: '99999999999999999999' is out of range (1-9)");
  EXPECT_EQ(error("metrics_grid.rows=4.0"), "metrics_grid.rows: '4.0' is not a whole number");
  EXPECT_EQ(error("metrics_grid.rows="), "metrics_grid.rows: '' is not a whole number");
  EXPECT_EQ(error("chart_guides=Dots"), "chart_guides: 'Dots' is not one of off, dots, horizontal");
  EXPECT_EQ(error("media_visible=maybe"), "media_visible: 'maybe' is not true or false");
  EXPECT_EQ(error("run_layout.media=0.95"), "run_layout.media: '0.95' is out of range (0 or 0.05-0.9)");
  EXPECT_EQ(error("run_layout.media=nan"), "run_layout.media: 'nan' is not a number");
  EXPECT_EQ(error("run_layout.media=inf"), "run_layout.media: 'inf' is not a number");
  EXPECT_EQ(error("metrics_grid=5"), "metrics_grid is a group: set metrics_grid.rows or metrics_grid.cols");
  EXPECT_EQ(error("workspace_media_visible=true"),
            "'workspace_media_visible' is not a setting (runmon leet config --print shows them)");
  EXPECT_EQ(error("metrics_grid.rows"), "'metrics_grid.rows' is not KEY=VALUE");
  EXPECT_EQ(error("\xff=1"), "'\xef\xbf\xbd' is not a setting (runmon leet config --print shows them)");
}

TEST(LeetConfigTest, StepsStayInRange) {
  LeetConfig config;
  const LeetConfigField& rows = *FindLeetConfigField("metrics_grid.rows");
  for (int i = 0; i < 20; ++i) AdjustLeetConfigValue(rows, 1, config);
  EXPECT_EQ(config.metrics_grid.rows, 9);
  for (int i = 0; i < 20; ++i) AdjustLeetConfigValue(rows, -1, config);
  EXPECT_EQ(config.metrics_grid.rows, 1);

  const LeetConfigField& guides = *FindLeetConfigField("chart_guides");
  AdjustLeetConfigValue(guides, -1, config);
  EXPECT_EQ(config.chart_guides, ChartGuides::kHorizontal);
  AdjustLeetConfigValue(guides, 1, config);
  EXPECT_EQ(config.chart_guides, ChartGuides::kOff);

  const LeetConfigField& shown = *FindLeetConfigField("media_visible");
  AdjustLeetConfigValue(shown, -1, config);
  EXPECT_TRUE(config.media_visible);

  const LeetConfigField& logs = *FindLeetConfigField("run_layout.logs");
  AdjustLeetConfigValue(logs, -1, config);
  EXPECT_EQ(config.run_layout.logs, 0);
  AdjustLeetConfigValue(logs, 1, config);
  EXPECT_EQ(config.run_layout.logs, 0.05);
  for (int i = 0; i < 3; ++i) AdjustLeetConfigValue(logs, 1, config);
  EXPECT_EQ(config.run_layout.logs, 0.2);  // rounded to hundredths: no 0.20000000000000004
  EXPECT_EQ(FormatLeetConfigValue(logs, config), "0.2");
  for (int i = 0; i < 30; ++i) AdjustLeetConfigValue(logs, 1, config);
  EXPECT_EQ(config.run_layout.logs, 0.9);
  for (int i = 0; i < 30; ++i) AdjustLeetConfigValue(logs, -1, config);
  EXPECT_EQ(config.run_layout.logs, 0);
  EXPECT_EQ(FormatLeetConfigValue(logs, config), "default");

  config = Changed();
  for (const LeetConfigField& field : LeetConfigFields()) ResetLeetConfigValue(field, config);
  EXPECT_EQ(config, LeetConfig{});
}

TEST(LeetConfigTest, TheViewGetsTheGridsPanesAndGuides) {
  const LeetViewSettings settings = ToViewSettings(Changed());
  EXPECT_EQ(settings.metrics_grid.rows, 5);
  EXPECT_EQ(settings.metrics_grid.columns, 4);
  EXPECT_EQ(settings.system_grid.rows, 2);
  EXPECT_EQ(settings.media_grid.columns, 9);
  EXPECT_EQ(settings.workspace_metrics_grid.rows, 1);
  EXPECT_EQ(settings.symon_grid.columns, 5);
  EXPECT_FALSE(settings.left_sidebar_visible);
  EXPECT_FALSE(settings.right_sidebar_visible);
  EXPECT_FALSE(settings.metrics_grid_visible);
  EXPECT_TRUE(settings.console_logs_visible);
  EXPECT_TRUE(settings.media_visible);
  EXPECT_EQ(settings.chart_guides, 2);
  EXPECT_EQ(settings.left_sidebar_fraction, 0.3);
  EXPECT_EQ(settings.right_sidebar_fraction, 0.25);
  EXPECT_EQ(settings.console_logs_fraction, 0.05);
  EXPECT_EQ(settings.media_fraction, 0.9);
  // The defaults are the view's own.
  const LeetViewSettings defaults = ToViewSettings(LeetConfig{});
  const LeetViewSettings view_defaults;
  EXPECT_EQ(defaults.metrics_grid.rows, view_defaults.metrics_grid.rows);
  EXPECT_EQ(defaults.system_grid.columns, view_defaults.system_grid.columns);
  EXPECT_EQ(defaults.symon_grid.rows, view_defaults.symon_grid.rows);
  EXPECT_EQ(defaults.console_logs_visible, view_defaults.console_logs_visible);
  EXPECT_EQ(defaults.chart_guides, view_defaults.chart_guides);
}

TEST(LeetConfigTest, TheViewGetsTheColoursAndUnknownSchemesFallBack) {
  const LeetViewSettings settings = ToViewSettings(Changed());
  EXPECT_EQ(settings.color_scheme, FindColorScheme("dusk-shore"));
  EXPECT_EQ(settings.tag_color_scheme, FindColorScheme("bootstrap-vibe"));
  EXPECT_EQ(settings.per_plot_color_scheme, FindColorScheme("blush-tide"));
  EXPECT_EQ(settings.system_color_scheme, FindColorScheme("clear-signal"));
  EXPECT_EQ(settings.french_fries_color_scheme, FindColorScheme("cividis"));
  EXPECT_EQ(settings.system_color_mode, ColorMode::kPerPlot);
  EXPECT_EQ(settings.single_run_color_mode, ColorMode::kPerPlot);
  EXPECT_EQ(ToViewSettings(LeetConfig{}), LeetViewSettings{});
  // A scheme W&B does not have, a name in the wrong case, a mode that is not one: the default, and why.
  EXPECT_EQ(
      OnlyWarning(R"({"color_scheme": "rainbow"})"),
      "color_scheme: \"rainbow\" is not one of sunset-glow, blush-tide, gilded-lagoon, bootstrap-vibe, "
      "wandb-vibe-10, wandb-vibe-20, dusk-shore, clear-signal, traffic-light, viridis, plasma, inferno, "
      "magma, cividis; the default wandb-vibe-10 is used");
  EXPECT_NE(OnlyWarning(R"({"french_fries_color_scheme": "Viridis"})").find("the default viridis is used"),
            std::string::npos);
  EXPECT_NE(OnlyWarning(R"({"system_color_mode": 1})").find("is not one of per_series, per_plot"),
            std::string::npos);
  LeetConfig config;
  ASSERT_TRUE(ApplyLeetConfigAssignment("system_color_scheme=magma", config).ok());
  EXPECT_EQ(config.system_color_scheme, FindColorScheme("magma"));
  EXPECT_FALSE(ApplyLeetConfigAssignment("color_scheme=nope", config).ok());
}

TEST(LeetConfigTest, WhatTheViewsUserChangedIsWrittenBackAndNothingElse) {
  LeetConfig config = Changed();
  LeetViewSettings settings;  // the defaults, as a user who put everything back would leave them
  settings.metrics_grid = {2, 7};
  settings.symon_grid = {12, 0};  // out of range: kept in range
  settings.chart_guides = 1;
  settings.left_sidebar_fraction = 0.01;  // below the smallest share: the smallest
  settings.media_fraction = 0.5;
  settings.color_scheme = FindColorScheme("magma");  // not the view's to change
  ApplyViewSettings(settings, config);
  EXPECT_EQ(config.metrics_grid, (GridSize{2, 7}));
  EXPECT_EQ(config.symon_grid, (GridSize{9, 1}));
  EXPECT_EQ(config.system_grid, (GridSize{6, 2}));
  EXPECT_EQ(config.chart_guides, ChartGuides::kDots);
  EXPECT_TRUE(config.left_sidebar_visible);
  EXPECT_FALSE(config.console_logs_visible);
  EXPECT_EQ(config.run_layout, (PaneFractions{0.05, 0, 0, 0.5}));
  // Untouched: the colours, the startup mode, the timings.
  EXPECT_EQ(config.color_scheme, FindColorScheme("dusk-shore"));
  EXPECT_EQ(config.startup_mode, StartupMode::kWorkspaceLatest);
  EXPECT_EQ(config.heartbeat_interval_seconds, 1);
  // A view that started from a config and changed nothing gives the config back.
  LeetConfig same = Changed();
  ApplyViewSettings(ToViewSettings(same), same);
  EXPECT_EQ(same, Changed());
}

TEST(LeetConfigTest, TheFileIsTheFlagThenRunmonsDirThenXdgThenHome) {
  LeetConfigLocation location{"/flag.json", "/runmon", "/xdg", "/home/u"};
  EXPECT_EQ(*LeetConfigPath(location), "/flag.json");
  location.flag = "";
  EXPECT_EQ(*LeetConfigPath(location), "/runmon/leet.json");
  location.runmon_config_dir.reset();
  EXPECT_EQ(*LeetConfigPath(location), "/xdg/runmon/leet.json");
  location.xdg_config_home = "relative";  // ignored, as the XDG spec says
  EXPECT_EQ(*LeetConfigPath(location), "/home/u/.config/runmon/leet.json");
  location.home.reset();
  EXPECT_FALSE(LeetConfigPath(location).ok());
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

TEST(LeetConfigFileTest, AMissingFileIsTheDefaults) {
  test::TempDir dir("leet-config");
  const auto loaded = LoadLeetConfigFile(dir.path() / "nothing.json");
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->exists);
  EXPECT_EQ(loaded->parsed.config, LeetConfig{});
}

TEST(LeetConfigFileTest, SavingMakesPrivateDirectoriesAndFileAtomically) {
  test::TempDir dir("leet-config");
  const auto path = dir.path() / "a" / "b" / "leet.json";
  ASSERT_TRUE(SaveLeetConfigFile(path, Changed()).ok());
  EXPECT_EQ(ReadFile(path), SerializeLeetConfig(Changed()));
  EXPECT_EQ(ModeOf(dir.path() / "a"), 0700u);
  EXPECT_EQ(ModeOf(dir.path() / "a" / "b"), 0700u);
  EXPECT_EQ(ModeOf(path), 0600u);
  // Saved again over a file another program made readable to all: 0600 again, no temporary file left.
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(SaveLeetConfigFile(path, LeetConfig{}).ok());
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(path.parent_path()), {}), 1);
  const auto loaded = LoadLeetConfigFile(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->exists);
  EXPECT_EQ(loaded->parsed.config, LeetConfig{});
}

TEST(LeetConfigFileTest, ASymbolicLinkIsFollowedAndKept) {
  test::TempDir dir("leet-config");
  const auto real = dir.path() / "dotfiles" / "leet.json";
  std::filesystem::create_directories(real.parent_path());
  std::ofstream(real) << "{}";
  const auto link = dir.path() / "leet.json";
  std::filesystem::create_symlink(real, link);
  ASSERT_TRUE(SaveLeetConfigFile(link, Changed()).ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(ReadFile(real), SerializeLeetConfig(Changed()));
}

TEST(LeetConfigFileTest, WhatIsNotASmallRegularFileIsRefusedUnread) {
  test::TempDir dir("leet-config");
  const auto fifo = dir.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(LoadLeetConfigFile(fifo).error(), fifo.string() + ": not a regular file");  // and no hang
  EXPECT_EQ(LoadLeetConfigFile(dir.path()).error(), dir.path().string() + ": not a regular file");
  const auto big = dir.path() / "big.json";
  std::ofstream(big).put('{');
  std::filesystem::resize_file(big, kMaxLeetConfigBytes + 1);
  EXPECT_EQ(LoadLeetConfigFile(big).error(), big.string() + ": larger than 1 MiB (1048577 bytes)");
  const auto bad = dir.path() / "bad.json";
  std::ofstream(bad) << "{\"metrics_grid\": ";
  EXPECT_EQ(LoadLeetConfigFile(bad).error(), bad.string() + ": not valid JSON (at byte 17)");
}

}  // namespace
}  // namespace runmon::tui
