// The vendor tools' JSON parsers on real and realistic outputs: rocm-smi across ROCm 5.x, 6.0, 6.1.2+ and
// MI300X (tests/fixtures/amd_rocm_smi, W&B's own samples copied from ../shared, checked against the
// originals when they are beside the checkout), amd-smi `metric --json` in the 6.0 plain and 6.1+
// {value, unit} shapes and `list --json` (tests/fixtures/amd_smi); then the odd cases one at a time:
// "N/A", values that cannot be true, cards that are not objects, malformed, huge and deeply nested input.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "collectors/amd/amd_smi_parse.hpp"
#include "collectors/amd/rocm_smi_parse.hpp"
#include "collectors/amd/tool_values.hpp"

namespace runmon::amd {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Fixture(const std::string& relative) {
  const fs::path path = fs::path(RUNMON_FIXTURES_DIR) / relative;
  EXPECT_TRUE(fs::exists(path)) << path;
  return ReadText(path);
}

std::vector<ToolCard> RocmSmi(const std::string& fixture) {
  auto cards = ParseRocmSmiJson(Fixture("amd_rocm_smi/" + fixture));
  EXPECT_TRUE(cards.ok()) << cards.error();
  return cards.ok() ? *cards : std::vector<ToolCard>{};
}

std::vector<ToolCard> AmdSmi(const std::string& fixture) {
  auto cards = ParseAmdSmiMetricJson(Fixture("amd_smi/" + fixture));
  EXPECT_TRUE(cards.ok()) << cards.error();
  return cards.ok() ? *cards : std::vector<ToolCard>{};
}

constexpr double kMiB = 1024.0 * 1024.0;

TEST(RocmSmiJson, Rocm5Mi250TwoCards) {
  const auto cards = RocmSmi("rocm5_mi250_2cards_full.json");
  ASSERT_EQ(cards.size(), 2u);
  const ToolCard& c = cards[0];
  EXPECT_EQ(c.tool_index, 0u);
  EXPECT_EQ(c.pci_bus, "0000:2f:00.0");
  const CardValues& v = c.values;
  EXPECT_EQ(v.busy_percent, 10.0);
  // ROCm 5's "GPU memory use (%)" is the memory controller's busy share, not allocation.
  EXPECT_EQ(v.memory_busy_percent, 0.0);
  EXPECT_FALSE(v.vram_used_percent);
  EXPECT_FALSE(v.vram_used_bytes);
  EXPECT_FALSE(v.vram_total_bytes);
  EXPECT_EQ(v.temp_edge_celsius, 32.0);
  EXPECT_EQ(v.temp_junction_celsius, 35.0);
  EXPECT_EQ(v.temp_memory_celsius, 43.0);
  EXPECT_EQ(v.power_watts, 89.0);
  EXPECT_EQ(v.power_cap_watts, 560.0);
  EXPECT_EQ(v.sclk_mhz, 800.0);
  EXPECT_EQ(v.mclk_mhz, 1600.0);
  EXPECT_EQ(v.energy_microjoules, 962825096297442.9);
  EXPECT_EQ(v.memory_overdrive_percent, 0.0);
  EXPECT_FALSE(v.fan_percent);
  EXPECT_FALSE(v.fan_rpm);
  EXPECT_FALSE(v.gtt_used_bytes);
  EXPECT_EQ(c.unique_id, "0x719d230578348e8c");
  EXPECT_EQ(c.vbios_version, "113-D65209-073");
  EXPECT_EQ(c.series, "AMD INSTINCT MI250 (MCM) OAM AC MBA");
  EXPECT_EQ(c.model, "0x0b0c");  // ROCm 5: the subsystem id
  EXPECT_EQ(c.vendor, "Advanced Micro Devices, Inc. [AMD/ATI]");
  EXPECT_EQ(c.sku, "D65209");
  EXPECT_EQ(c.performance_level, "auto");
  EXPECT_EQ(c.gpu_overdrive, "0");
  EXPECT_EQ(c.memory_overdrive, "0");
  EXPECT_EQ(c.max_power, "560.0");
  EXPECT_EQ(c.sclk_range, "500Mhz - 1700Mhz");
  EXPECT_EQ(c.mclk_range, "400Mhz - 1600Mhz");
  EXPECT_EQ(cards[1].tool_index, 1u);
  EXPECT_EQ(cards[1].values.busy_percent, 20.0);
  EXPECT_EQ(cards[1].values.power_watts, 89.0);
}

TEST(RocmSmiJson, Rocm5GenericCard) {
  const auto cards = RocmSmi("rocm5_generic_1card_driver5.18.13_full.json");
  ASSERT_EQ(cards.size(), 1u);
  const CardValues& v = cards[0].values;
  EXPECT_EQ(cards[0].pci_bus, "0000:63:00.0");
  EXPECT_EQ(v.busy_percent, 0.0);
  EXPECT_EQ(v.temp_memory_celsius, 46.0);
  EXPECT_EQ(v.power_watts, 41.0);
  EXPECT_EQ(v.power_cap_watts, 300.0);
  EXPECT_EQ(v.energy_microjoules, 93668579258681.1);
  EXPECT_EQ(cards[0].series, "GENERIC RM IMAGE");
  EXPECT_EQ(cards[0].model, "0x0c34");
}

TEST(RocmSmiJson, Rocm612Mi250ReadWriteActivityAndAllocatedShare) {
  const auto cards = RocmSmi("rocm6_mi250_1card_full.json");
  ASSERT_EQ(cards.size(), 1u);
  const ToolCard& c = cards[0];
  EXPECT_EQ(c.pci_bus, "0000:29:00.0");
  EXPECT_EQ(c.values.memory_busy_percent, 0.0);
  EXPECT_EQ(c.values.vram_used_percent, 0.0);
  EXPECT_EQ(c.values.power_watts, 91.0);
  EXPECT_EQ(c.values.temp_edge_celsius, 43.0);
  EXPECT_EQ(c.values.temp_junction_celsius, 44.0);
  EXPECT_EQ(c.values.temp_memory_celsius, 53.0);
  EXPECT_EQ(c.values.energy_microjoules, 4275228873299218.5);
  EXPECT_EQ(c.series, "AMD INSTINCT MI250 (MCM) OAM AC MBA");
  EXPECT_EQ(c.model, "0x740c");  // ROCm 6.1: the DRM device id
  EXPECT_EQ(c.vendor, "Advanced Micro Devices, Inc. [AMD/ATI]");
}

TEST(RocmSmiJson, TrimmedSamples) {
  const auto five = RocmSmi("rocm5_mi250_2cards_trimmed.json");
  ASSERT_EQ(five.size(), 2u);
  EXPECT_EQ(five[0].values.memory_busy_percent, 20.0);
  EXPECT_FALSE(five[0].values.vram_used_percent);
  EXPECT_EQ(five[1].values.busy_percent, 20.0);
  EXPECT_FALSE(five[1].pci_bus);
  EXPECT_EQ(five[1].sku, "");
  const auto six = RocmSmi("rocm6_mi250_1card_trimmed.json");
  ASSERT_EQ(six.size(), 1u);
  EXPECT_EQ(six[0].values.temp_memory_celsius, 53.0);
  EXPECT_FALSE(six[0].values.temp_edge_celsius);
}

TEST(RocmSmiJson, Mi300xCurrentSocketPowerAndMemoryInfo) {
  const auto cards = RocmSmi("rocm6_mi300x_1card_current_socket_power.json");
  ASSERT_EQ(cards.size(), 1u);
  const CardValues& v = cards[0].values;
  EXPECT_EQ(cards[0].pci_bus, "0000:0c:00.0");
  EXPECT_EQ(v.power_watts, 383.0);
  EXPECT_EQ(v.power_cap_watts, 750.0);
  EXPECT_EQ(v.busy_percent, 97.0);
  EXPECT_EQ(v.memory_busy_percent, 44.0);
  EXPECT_EQ(v.vram_used_percent, 81.0);
  EXPECT_EQ(v.vram_total_bytes, 205822885888u);
  EXPECT_EQ(v.vram_used_bytes, 167174946816u);
  EXPECT_EQ(v.gtt_total_bytes, 1082045743104u);
  EXPECT_EQ(v.gtt_used_bytes, 25116672u);
  EXPECT_FALSE(v.temp_edge_celsius);  // "N/A" on MI300X
  EXPECT_EQ(v.temp_junction_celsius, 51.0);
  EXPECT_EQ(v.temp_memory_celsius, 43.0);
  EXPECT_EQ(v.sclk_mhz, 2098.0);
  EXPECT_EQ(v.mclk_mhz, 1300.0);
  EXPECT_EQ(v.energy_microjoules, 482925702236.0);
  EXPECT_EQ(cards[0].series, "AMD Instinct MI300X");
}

TEST(RocmSmiJson, Rocm60ApuGttAndZeroCap) {
  const auto cards = RocmSmi("rocm6.0_apu_1card_meminfo.json");
  ASSERT_EQ(cards.size(), 1u);
  const ToolCard& c = cards[0];
  EXPECT_EQ(c.pci_bus, "0000:c3:00.0");
  EXPECT_EQ(c.values.power_watts, 12.059);
  EXPECT_FALSE(c.values.power_cap_watts);  // "0.0": no cap to take a share of
  EXPECT_EQ(c.values.memory_busy_percent, 7.0);
  EXPECT_EQ(c.values.vram_total_bytes, 536870912u);
  EXPECT_EQ(c.values.vram_used_bytes, 181927936u);
  EXPECT_EQ(c.values.gtt_total_bytes, 16425136128u);
  EXPECT_EQ(c.values.gtt_used_bytes, 1073741824u);
  EXPECT_EQ(c.values.temp_edge_celsius, 38.0);
  EXPECT_FALSE(c.values.temp_junction_celsius);
  EXPECT_FALSE(c.values.energy_microjoules);  // "N/A"
  EXPECT_EQ(c.unique_id, "");                 // "N/A"
  EXPECT_EQ(c.series, "Phoenix1");
  EXPECT_EQ(c.max_power, "0.0");
}

// The copies in tests/fixtures are W&B's samples unchanged, and the originals parse the same.
TEST(RocmSmiJson, SharedFixturesAgreeWhenPresent) {
  const fs::path shared = fs::path(RUNMON_SHARED_DIR) / "fixtures/amd_rocm_smi";
  if (!fs::exists(shared)) GTEST_SKIP() << "../shared is not beside the checkout";
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(shared)) {
    if (entry.path().extension() != ".json") continue;
    const std::string original = ReadText(entry.path());
    EXPECT_EQ(original, Fixture("amd_rocm_smi/" + entry.path().filename().string())) << entry.path();
    auto cards = ParseRocmSmiJson(original);
    ASSERT_TRUE(cards.ok()) << entry.path() << ": " << cards.error();
    EXPECT_FALSE(cards->empty()) << entry.path();
    for (const ToolCard& card : *cards) EXPECT_TRUE(card.values.busy_percent) << entry.path();
    ++compared;
  }
  EXPECT_EQ(compared, 5);
}

TEST(RocmSmiJson, CardsInNumericOrderAndOtherKeysIgnored) {
  auto cards = ParseRocmSmiJson(R"json({"card10": {"GPU use (%)": "1"}, "card2": {"GPU use (%)": "2"},
      "system": {"Driver version": "6.2.4"}, "cardX": {}, "card03": {}, "card": {}, "card4": "not an object",
      "card5": ["GPU use (%)"]})json");
  ASSERT_TRUE(cards.ok()) << cards.error();
  ASSERT_EQ(cards->size(), 2u);
  EXPECT_EQ((*cards)[0].tool_index, 2u);
  EXPECT_EQ((*cards)[0].values.busy_percent, 2.0);
  EXPECT_EQ((*cards)[1].tool_index, 10u);
}

TEST(RocmSmiJson, ValuesThatCannotBeTrueAreLeftUnset) {
  auto cards = ParseRocmSmiJson(R"json({"card0": {
      "GPU use (%)": "101", "GPU Memory Read/Write Activity (%)": "-1", "GPU Memory Allocated (VRAM%)": "nan",
      "Average Graphics Package Power (W)": "N/A (Secondary die)",
      "Current Socket Graphics Package Power (W)": "-5.0", "Max Graphics Package Power (W)": "1e999",
      "Temperature (Sensor edge) (C)": "-300", "Temperature (Sensor junction) (C)": "511.0",
      "Temperature (Sensor memory) (C)": "inf", "sclk clock speed:": "(Mhz)", "mclk clock speed:": "0x10",
      "Fan speed (%)": "255", "Fan RPM": "-1", "Accumulated Energy (uJ)": "-1.5",
      "VRAM Total Memory (B)": "1024", "VRAM Total Used Memory (B)": "2048",
      "GTT Total Memory (B)": "-1", "GTT Total Used Memory (B)": "99999999999999999999999",
      "PCI Bus": "not a bus", "GPU Memory OverDrive value (%)": "N/A"}})json");
  ASSERT_TRUE(cards.ok()) << cards.error();
  ASSERT_EQ(cards->size(), 1u);
  const ToolCard& c = (*cards)[0];
  const CardValues& v = c.values;
  EXPECT_FALSE(v.busy_percent);
  EXPECT_FALSE(v.memory_busy_percent);
  EXPECT_FALSE(v.vram_used_percent);
  // The average says N/A: the current socket power is the fallback, and it is negative.
  EXPECT_FALSE(v.power_watts);
  EXPECT_FALSE(v.power_cap_watts);
  EXPECT_FALSE(v.temp_edge_celsius);
  EXPECT_FALSE(v.temp_junction_celsius);
  EXPECT_FALSE(v.temp_memory_celsius);
  EXPECT_FALSE(v.sclk_mhz);
  EXPECT_FALSE(v.mclk_mhz);
  EXPECT_FALSE(v.fan_percent);
  EXPECT_FALSE(v.fan_rpm);
  EXPECT_FALSE(v.energy_microjoules);
  EXPECT_EQ(v.vram_total_bytes, 1024u);
  EXPECT_FALSE(v.vram_used_bytes);  // more than the total
  EXPECT_FALSE(v.gtt_total_bytes);
  EXPECT_FALSE(v.gtt_used_bytes);
  EXPECT_FALSE(v.memory_overdrive_percent);
  EXPECT_FALSE(c.pci_bus);
  EXPECT_EQ(c.memory_overdrive, "");
}

TEST(RocmSmiJson, AverageWinsOverCurrentSocketPowerAndNumbersAreTakenToo) {
  auto cards = ParseRocmSmiJson(R"json({"card0": {"Average Graphics Package Power (W)": "90.5",
      "Current Socket Graphics Package Power (W)": "200.0", "GPU use (%)": 42, "Fan speed (%)": " 30 ",
      "Fan RPM": "1650", "VRAM Total Memory (B)": 4096, "VRAM Total Used Memory (B)": "4096"}})json");
  ASSERT_TRUE(cards.ok()) << cards.error();
  const CardValues& v = (*cards)[0].values;
  EXPECT_EQ(v.power_watts, 90.5);
  EXPECT_EQ(v.busy_percent, 42.0);
  EXPECT_EQ(v.fan_percent, 30.0);
  EXPECT_EQ(v.fan_rpm, 1650.0);
  EXPECT_EQ(v.vram_total_bytes, 4096u);
  EXPECT_EQ(v.vram_used_bytes, 4096u);
}

TEST(RocmSmiJson, MalformedHugeAndDeepInput) {
  EXPECT_FALSE(ParseRocmSmiJson("").ok());  // rocm-smi without a GPU prints nothing and exits 0
  EXPECT_FALSE(ParseRocmSmiJson("{\"card0\": {").ok());
  EXPECT_FALSE(ParseRocmSmiJson("ERROR:root:Driver not initialized").ok());
  EXPECT_FALSE(ParseRocmSmiJson("[{\"card0\": {}}]").ok());
  auto huge = ParseRocmSmiJson(R"json({"card0": {"GPU use (%)": 1e400, "VRAM Total Memory (B)": 1e30,
      "Fan RPM": 123456789012345678901234567890}})json");
  // nlohmann reads 1e400 as infinity, or refuses it: either way no value comes out.
  if (huge.ok()) {
    ASSERT_EQ(huge->size(), 1u);
    EXPECT_FALSE((*huge)[0].values.busy_percent);
    EXPECT_FALSE((*huge)[0].values.vram_total_bytes);
    EXPECT_FALSE((*huge)[0].values.fan_rpm);
  }
  const std::string deep = "{\"card0\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto cards = ParseRocmSmiJson(deep);
  ASSERT_TRUE(cards.ok()) << cards.error();
  EXPECT_TRUE(cards->empty());
}

TEST(AmdSmiMetricJson, Rocm60PlainValues) {
  const auto cards = AmdSmi("amdsmi6.0_mi210_2gpus_metric_plain.json");
  ASSERT_EQ(cards.size(), 2u);
  const CardValues& v = cards[0].values;
  EXPECT_EQ(cards[0].tool_index, 0u);
  EXPECT_FALSE(cards[0].pci_bus);  // the metric output has none: `amd-smi list` pairs them
  EXPECT_EQ(v.busy_percent, 100.0);
  EXPECT_EQ(v.memory_busy_percent, 31.0);
  EXPECT_EQ(v.power_watts, 231.0);
  EXPECT_EQ(v.power_cap_watts, 300.0);  // power1_cap in µW
  EXPECT_EQ(v.temp_edge_celsius, 56.0);
  EXPECT_EQ(v.temp_junction_celsius, 67.0);
  EXPECT_EQ(v.temp_memory_celsius, 61.0);
  EXPECT_EQ(v.sclk_mhz, 1700.0);
  EXPECT_EQ(v.mclk_mhz, 1600.0);
  EXPECT_EQ(v.vram_total_bytes, static_cast<uint64_t>(65520 * kMiB));
  EXPECT_EQ(v.vram_used_bytes, static_cast<uint64_t>(48270 * kMiB));
  EXPECT_EQ(v.gtt_total_bytes, static_cast<uint64_t>(128805 * kMiB));
  EXPECT_EQ(v.gtt_used_bytes, static_cast<uint64_t>(11 * kMiB));
  EXPECT_EQ(v.energy_microjoules, 3874518.625 * 1e6);  // joules
  EXPECT_FALSE(v.fan_percent);
  EXPECT_FALSE(v.fan_rpm);
  EXPECT_FALSE(v.memory_overdrive_percent);
  EXPECT_EQ(cards[1].tool_index, 1u);
  EXPECT_EQ(cards[1].values.busy_percent, 0.0);
  EXPECT_EQ(cards[1].values.sclk_mhz, 800.0);
}

TEST(AmdSmiMetricJson, Rocm61ValueUnitObjects) {
  const auto cards = AmdSmi("amdsmi6.2_mi300x_2gpus_metric_value_unit.json");
  ASSERT_EQ(cards.size(), 2u);
  const CardValues& v = cards[0].values;
  EXPECT_EQ(v.busy_percent, 97.0);
  EXPECT_EQ(v.memory_busy_percent, 44.0);
  EXPECT_EQ(v.power_watts, 383.0);
  EXPECT_FALSE(v.power_cap_watts);
  EXPECT_FALSE(v.temp_edge_celsius);  // "N/A" on MI300X
  EXPECT_EQ(v.temp_junction_celsius, 51.0);
  EXPECT_EQ(v.temp_memory_celsius, 43.0);
  EXPECT_EQ(v.sclk_mhz, 2098.0);
  EXPECT_EQ(v.mclk_mhz, 1300.0);
  EXPECT_EQ(v.vram_total_bytes, static_cast<uint64_t>(196592 * kMiB));
  EXPECT_EQ(v.vram_used_bytes, static_cast<uint64_t>(159431 * kMiB));
  EXPECT_EQ(v.gtt_used_bytes, static_cast<uint64_t>(23 * kMiB));
  EXPECT_EQ(v.energy_microjoules, 482925.702 * 1e6);
  EXPECT_EQ(v.memory_overdrive_percent, 0.0);
  EXPECT_FALSE(v.fan_percent);
  EXPECT_EQ(cards[1].tool_index, 1u);
  EXPECT_EQ(cards[1].values.sclk_mhz, 132.0);
  EXPECT_EQ(cards[1].values.power_watts, 139.0);
}

TEST(AmdSmiListJson, PairsGpuNumbersWithPciAddresses) {
  auto list = ParseAmdSmiListJson(Fixture("amd_smi/amdsmi6.2_mi300x_2gpus_list.json"));
  ASSERT_TRUE(list.ok()) << list.error();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].gpu, 1u);
  EXPECT_EQ((*list)[1].pci_bus, "0000:22:00.0");
  EXPECT_EQ((*list)[1].uuid, "77ff74a1-0000-1000-80d3-e1a3c0d1f3b2");
  auto cards = AmdSmi("amdsmi6.2_mi300x_2gpus_metric_value_unit.json");
  AssignPciBuses(cards, *list);
  EXPECT_EQ(cards[0].pci_bus, "0000:0c:00.0");
  EXPECT_EQ(cards[1].pci_bus, "0000:22:00.0");

  auto odd = ParseAmdSmiListJson(R"json([{"gpu": 0, "bdf": "N/A"}, {"gpu": -1, "bdf": "0000:01:00.0"}, 7,
      {"bdf": "0000:02:00.0"}, {"gpu": 3, "bdf": "0000:03:00.0", "uuid": "N/A"}])json");
  ASSERT_TRUE(odd.ok()) << odd.error();
  ASSERT_EQ(odd->size(), 1u);
  EXPECT_EQ((*odd)[0].gpu, 3u);
  EXPECT_EQ((*odd)[0].uuid, "");
  EXPECT_FALSE(ParseAmdSmiListJson("garbage").ok());
}

TEST(AmdSmiMetricJson, ALoneObjectIsOneGpuAndEarlierSpellings) {
  // 6.0 with one GPU prints the object itself; 6.1.0 named the clocks gfx/MEM with a "clk" field.
  auto cards = ParseAmdSmiMetricJson(R"json({"gpu": 0, "usage": {"gfx_activity": {"value": 5, "unit": "%"}},
      "clock": {"gfx": {"clk": {"value": 1500, "unit": "MHz"}}, "MEM": {"clk": {"value": 1.2, "unit": "GHz"}}},
      "fan": {"usage": {"value": 41.5, "unit": "%"}, "rpm": 1830},
      "energy": {"total_energy_consumption": {"value": 12, "unit": "uJ"}},
      "power": {"socket_power": {"value": 65000, "unit": "mW"}}})json");
  ASSERT_TRUE(cards.ok()) << cards.error();
  ASSERT_EQ(cards->size(), 1u);
  const CardValues& v = (*cards)[0].values;
  EXPECT_EQ(v.busy_percent, 5.0);
  EXPECT_EQ(v.sclk_mhz, 1500.0);
  EXPECT_EQ(v.mclk_mhz, 1200.0);
  EXPECT_EQ(v.fan_percent, 41.5);
  EXPECT_EQ(v.fan_rpm, 1830.0);
  EXPECT_EQ(v.energy_microjoules, 12.0);
  EXPECT_EQ(v.power_watts, 65.0);
}

TEST(AmdSmiMetricJson, UnknownUnitsImpossibleValuesAndOddEntries) {
  auto cards = ParseAmdSmiMetricJson(R"json([5, "gpu", null, {"gpu": 1,
      "usage": {"gfx_activity": {"value": 250, "unit": "%"}, "umc_activity": {"value": 3, "unit": "ratio"}},
      "power": {"socket_power": {"value": "N/A", "unit": "W"}},
      "temperature": {"edge": {"value": 40, "unit": "F"}, "hotspot": {"unit": "C"}, "mem": {"value": 50}},
      "mem_usage": {"total_vram": {"value": 10, "unit": "MB"}, "used_vram": {"value": 11, "unit": "MB"},
                    "total_gtt": {"value": -3, "unit": "MB"}},
      "energy": {"total_energy_consumption": {"value": 1, "unit": 7}},
      "clock": "N/A", "fan": [1, 2]},
      {"gpu": 70000, "usage": "N/A"}, {"gpu": "0"}])json");
  ASSERT_TRUE(cards.ok()) << cards.error();
  ASSERT_EQ(cards->size(), 3u);
  const CardValues& v = (*cards)[0].values;
  EXPECT_EQ((*cards)[0].tool_index, 1u);
  EXPECT_FALSE(v.busy_percent);
  EXPECT_FALSE(v.memory_busy_percent);
  EXPECT_FALSE(v.power_watts);
  EXPECT_FALSE(v.temp_edge_celsius);
  EXPECT_FALSE(v.temp_junction_celsius);
  EXPECT_EQ(v.temp_memory_celsius, 50.0);
  EXPECT_EQ(v.vram_total_bytes, static_cast<uint64_t>(10 * kMiB));
  EXPECT_FALSE(v.vram_used_bytes);
  EXPECT_FALSE(v.gtt_total_bytes);
  EXPECT_FALSE(v.energy_microjoules);
  EXPECT_FALSE(v.sclk_mhz);
  EXPECT_FALSE(v.fan_rpm);
  EXPECT_FALSE((*cards)[1].tool_index);
  EXPECT_FALSE((*cards)[2].tool_index);
}

TEST(AmdSmiMetricJson, MalformedInputIsAnError) {
  EXPECT_FALSE(ParseAmdSmiMetricJson("").ok());
  EXPECT_FALSE(ParseAmdSmiMetricJson("[{\"gpu\": 0,").ok());
  EXPECT_FALSE(ParseAmdSmiMetricJson("\"N/A\"").ok());
  EXPECT_FALSE(ParseAmdSmiMetricJson("42").ok());
  auto empty = ParseAmdSmiMetricJson("[]");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ToolValues, NumbersBusesAndBytes) {
  EXPECT_EQ(ParseToolNumber("(800Mhz)", {"Mhz"}), 800.0);
  EXPECT_EQ(ParseToolNumber(" 12.5 "), 12.5);
  EXPECT_FALSE(ParseToolNumber("800Mhz"));  // a unit the caller did not allow
  EXPECT_FALSE(ParseToolNumber("N/A"));
  EXPECT_FALSE(ParseToolNumber("0x1f"));
  EXPECT_FALSE(ParseToolNumber("nan"));
  EXPECT_FALSE(ParseToolNumber("()"));
  EXPECT_FALSE(ParseToolNumber("1e999"));
  EXPECT_EQ(ParseToolBytes("205822885888"), 205822885888u);
  EXPECT_FALSE(ParseToolBytes("-1"));
  EXPECT_EQ(BytesFromDouble(4096.0), 4096u);
  EXPECT_FALSE(BytesFromDouble(1.5));
  EXPECT_FALSE(BytesFromDouble(1e19));
  EXPECT_EQ(NormalizePciBus("0000:2F:00.0"), "0000:2f:00.0");
  EXPECT_EQ(NormalizePciBus("c3:00.0"), "0000:c3:00.0");
  EXPECT_EQ(NormalizePciBus("10000:E1:00.0"), "10000:e1:00.0");
  EXPECT_FALSE(NormalizePciBus("0000:2f:00.8"));
  EXPECT_FALSE(NormalizePciBus("00:2f:00.0"));
  EXPECT_FALSE(NormalizePciBus("0000:2f:00"));
  EXPECT_FALSE(NormalizePciBus(""));
}

}  // namespace
}  // namespace runmon::amd
