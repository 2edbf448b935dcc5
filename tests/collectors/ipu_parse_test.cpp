// The IPU family's parsers: W&B's parse_metric on W&B's own mock (the first sample W&B's test expects, key
// for key) and on the value formats of real hosts (units with and without a space, N/A, versions, dates,
// PCI ids); which values can be true; the helper's lines, including the hostile ones it never writes; and
// gc-info's device listing and device info as Graphcore documents them.
#include "collectors/ipu/ipu_parse.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace runmon::ipu {
namespace {

std::string Fixture(const std::string& relative) {
  std::ifstream in(std::filesystem::path(RUNMON_FIXTURES_DIR) / "ipu" / relative);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << relative;
  return text.str();
}

// The devices of a getDevices() fixture, through the helper's line format.
std::vector<IpuDevice> FixtureDevices(const std::string& name) {
  std::string line = R"({"request": "1", "devices": )" + Fixture(name) + "}";
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  auto message = ParseIpuHelperLine(line);
  EXPECT_TRUE(message.ok()) << message.error();
  return message.ok() ? message->devices : std::vector<IpuDevice>{};
}

// Every field of a device through parse_metric: what W&B writes on a device's first sight.
std::map<std::string, double> FirstSight(const IpuDevice& device) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : device.fields) {
    if (auto metric = ParseIpuMetric(key, value)) out[metric->key] = metric->value;
  }
  return out;
}

TEST(ParseIpuMetric, AppendsTheUnitItStrips) {
  const auto temp = ParseIpuMetric("average board temp", "30C");
  ASSERT_TRUE(temp);
  EXPECT_EQ(temp->key, "average board temp (C)");
  EXPECT_DOUBLE_EQ(temp->value, 30);
  EXPECT_EQ(ParseIpuMetric("clock", "1300MHz")->key, "clock (MHz)");
  EXPECT_EQ(ParseIpuMetric("ipu power", "120W")->key, "ipu power (W)");
  EXPECT_EQ(ParseIpuMetric("ipu utilisation", "21.25%")->key, "ipu utilisation (%)");
  EXPECT_EQ(ParseIpuMetric("ipu utilisation (session)", "15.65%")->key, "ipu utilisation (session) (%)");
  EXPECT_EQ(ParseIpuMetric("link speed", "8 GT/s")->key, "link speed (GT/s)");
  // A number without its unit keeps its key, as W&B's does; so does a field no rule names.
  EXPECT_EQ(ParseIpuMetric("clock", "1300")->key, "clock");
  EXPECT_EQ(ParseIpuMetric("board ipu index", "1")->key, "board ipu index");
  // The unit must be the one the key's word names.
  EXPECT_FALSE(ParseIpuMetric("clock", "30C"));
}

TEST(ParseIpuMetric, RealValuesPutASpaceBeforeSomeUnits) {
  EXPECT_DOUBLE_EQ(ParseIpuMetric("average board temp", "36.2 C")->value, 36.2);
  EXPECT_DOUBLE_EQ(ParseIpuMetric("total board power", "99.5 W")->value, 99.5);
  EXPECT_EQ(ParseIpuMetric("total board power", "99.5 W")->key, "total board power (W)");
  EXPECT_DOUBLE_EQ(ParseIpuMetric("link speed", "16.0 GT/s")->value, 16);
  EXPECT_DOUBLE_EQ(ParseIpuMetric("ipu utilisation", "99.96%")->value, 99.96);
  EXPECT_DOUBLE_EQ(ParseIpuMetric("link correctable error count", "0")->value, 0);
  EXPECT_DOUBLE_EQ(ParseIpuMetric("hexoatt total size (bytes)", "16911433728")->value, 16911433728.0);
}

TEST(ParseIpuMetric, WhatIsNotAPlainNumberIsDropped) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"ipu power", "N/A"},
           {"ipu power", "W"},
           {"clock", ""},
           {"average die temp", "nan C"},
           {"average die temp", "inf"},
           {"clock", "1_000MHz"},
           {"clock", "0x514MHz"},
           {"clock", "1300 MHz!"},
           {"board type", "C2"},
           {"firmware version", "1.4.14"},
           {"process start time", "20211122T224648Z"},
           {"pci id", "0000:1a:00.0"},
           {"parity error threshold interval", "7776000 seconds"},
           {"average board temp", "1e999C"},
           {"ipu utilisation", "12%%"},
       }) {
    EXPECT_FALSE(ParseIpuMetric(key, value)) << key << ": " << value;
  }
}

TEST(ParseIpuMetric, WandbsMockGivesWandbsExpectedFirstSample) {
  const std::vector<IpuDevice> devices = FixtureDevices("gcipuinfo_getDevices_mock.json");
  ASSERT_EQ(devices.size(), 3u);
  const IpuDevice& pid_123 = devices[1];
  EXPECT_EQ(pid_123.Field("user process id"), "123");
  // tests/unit_tests/test_system_metrics/test_ipu.py's expected sample (shared/fixtures/ipu_graphcore).
  const std::map<std::string, double> expected = {
      {"user process id", 123}, {"average board temp (C)", 30}, {"average die temp (C)", 39},
      {"board ipu index", 1},   {"clock (MHz)", 1300},          {"id", 1},
      {"ipu power (W)", 120},   {"ipu utilisation (%)", 21.25}, {"ipu utilisation (session) (%)", 15.65}};
  EXPECT_EQ(FirstSight(pid_123), expected);
}

TEST(ParseIpuMetric, RealFormatsFirstSample) {
  const std::vector<IpuDevice> devices = FixtureDevices("gcipuinfo_real_format.json");
  ASSERT_EQ(devices.size(), 3u);
  const std::map<std::string, double> expected = {{"id", 0},
                                                  {"average board temp (C)", 36.2},
                                                  {"average die temp (C)", 33.4},
                                                  {"board ipu index", 0},
                                                  {"clock (MHz)", 1300},
                                                  {"hexoatt total size (bytes)", 16911433728.0},
                                                  {"ipu utilisation (%)", 99.96},
                                                  {"ipu utilisation (session) (%)", 99.98},
                                                  {"link correctable error count", 0},
                                                  {"link speed (GT/s)", 16},
                                                  {"link width", 8},
                                                  {"numa node", 0},
                                                  {"total board power (W)", 99.5},
                                                  {"user process id", 123}};
  EXPECT_EQ(FirstSight(devices[0]), expected);
  EXPECT_FALSE(devices[1].Field("user process id"));
}

TEST(IsPossible, ValuesThatCannotBeTrueAreNot) {
  EXPECT_TRUE(IsPossible({"ipu utilisation (%)", 100}));
  EXPECT_FALSE(IsPossible({"ipu utilisation (%)", 100.5}));
  EXPECT_FALSE(IsPossible({"ipu utilisation (session) (%)", -1}));
  EXPECT_TRUE(IsPossible({"average die temp (C)", -5}));
  EXPECT_FALSE(IsPossible({"average die temp (C)", -273.15}));
  EXPECT_FALSE(IsPossible({"average board temp (C)", 250}));
  EXPECT_FALSE(IsPossible({"ipu power (W)", -3}));
  EXPECT_FALSE(IsPossible({"total board power (W)", 50'000}));
  EXPECT_FALSE(IsPossible({"clock (MHz)", -1}));
  EXPECT_FALSE(IsPossible({"link speed (GT/s)", 5000}));
  EXPECT_FALSE(IsPossible({"link correctable error count", -1}));
  EXPECT_TRUE(IsPossible({"link correctable error count", 12}));
  EXPECT_TRUE(IsPossible({"numa node", 1}));
}

TEST(ParseIpuHelperLine, ReadyDevicesAndErrors) {
  auto ready = ParseIpuHelperLine(R"({"ready": true})");
  ASSERT_TRUE(ready.ok()) << ready.error();
  EXPECT_EQ(ready->kind, HelperMessage::Kind::kReady);

  auto devices = ParseIpuHelperLine(R"({"request": "7", "devices": [{"id": "0", "clock": "1300MHz"}, {}]})");
  ASSERT_TRUE(devices.ok()) << devices.error();
  EXPECT_EQ(devices->kind, HelperMessage::Kind::kDevices);
  EXPECT_EQ(devices->request, 7u);
  ASSERT_EQ(devices->devices.size(), 2u);
  // The fields in the helper's order, not sorted.
  EXPECT_EQ(devices->devices[0].fields,
            (std::vector<std::pair<std::string, std::string>>{{"id", "0"}, {"clock", "1300MHz"}}));
  EXPECT_TRUE(devices->devices[1].fields.empty());

  auto missing = ParseIpuHelperLine(R"({"error": "No module named 'gcipuinfo'", "missing_module": true})");
  ASSERT_TRUE(missing.ok()) << missing.error();
  EXPECT_EQ(missing->kind, HelperMessage::Kind::kError);
  EXPECT_TRUE(missing->missing_module);
  EXPECT_EQ(missing->error, "No module named 'gcipuinfo'");
  EXPECT_FALSE(missing->request);

  auto raised = ParseIpuHelperLine(R"({"request": "8", "error": "getDevices: RuntimeError: lost"})");
  ASSERT_TRUE(raised.ok()) << raised.error();
  EXPECT_FALSE(raised->missing_module);
  EXPECT_EQ(raised->request, 8u);
  EXPECT_EQ(raised->error, "getDevices: RuntimeError: lost");
}

TEST(ParseIpuHelperLine, RefusesWhatTheHelperNeverWrites) {
  const std::map<std::string, std::string> refused = {
      {"Traceback (most recent call last):", "not JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"devices": {"id": "0"}})", "\"devices\" is not a list"},
      {R"({"devices": ["0"]})", "device 0 is not an object"},
      {R"({"devices": [{"id": 0}]})", "device 0: the value of \"id\" is not a string"},
      {R"({"devices": [{"id": {"x": "1"}}]})", "device 0: the value of \"id\" is not a string"},
      {R"({"request": 3, "devices": []})", "\"request\" is not a string"},
      {R"({"request": "-3", "devices": []})", "\"request\" is not a request number"},
      {R"({"error": 5})", "\"error\" is not a string"},
      {R"({"ready": false})", "neither devices, an error nor ready"},
      {R"({})", "neither devices, an error nor ready"},
  };
  for (const auto& [line, why] : refused) {
    auto message = ParseIpuHelperLine(line);
    ASSERT_FALSE(message.ok()) << line;
    EXPECT_EQ(message.error(), why) << line;
  }
}

TEST(ParseIpuHelperLine, RefusesHugeAndHostileLines) {
  std::string many = R"({"devices": [)";
  for (size_t i = 0; i <= kMaxDevices; ++i) many += std::string(i ? "," : "") + "{}";
  many += "]}";
  auto too_many = ParseIpuHelperLine(many);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error(), "1025 devices (at most 1024)");

  std::string fields = R"({"devices": [{)";
  for (size_t i = 0; i <= kMaxFieldsPerDevice; ++i)
    fields += (i ? ",\"" : "\"") + std::to_string(i) + "\": \"1\"";
  fields += "}]}";
  EXPECT_FALSE(ParseIpuHelperLine(fields).ok());

  const std::string long_value = R"({"devices": [{"id": ")" + std::string(kMaxFieldBytes + 1, '7') + "\"}]}";
  auto too_long = ParseIpuHelperLine(long_value);
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error(), "device 0: a field over 4096 bytes");

  EXPECT_FALSE(ParseIpuHelperLine(std::string(kMaxHelperLineBytes + 1, ' ')).ok());
  EXPECT_FALSE(ParseIpuHelperLine(std::string(100'000, '[') + std::string(100'000, ']')).ok());
}

TEST(ParseGcInfoDeviceList, SingleIpusWithoutMultiIpuDevices) {
  auto devices = ParseGcInfoDeviceList(Fixture("gc_info/list_devices.txt"));
  ASSERT_TRUE(devices.ok()) << devices.error();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].id, 0u);
  EXPECT_EQ((*devices)[0].target, "PCIe");
  EXPECT_EQ((*devices)[1].id, 1u);
}

TEST(ParseGcInfoDeviceList, AnIpuPodListing) {
  // Graphcore's documented IPU-POD listing: four IPUs, then multi-IPU devices over them.
  const std::string listing =
      "Graphcore device listing:\n"
      "Partition: p1 [active]\n"
      "-+- Id: [0], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [3]\n"
      "-+- Id: [1], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [2]\n"
      "-+- Id: [2], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [1]\n"
      "-+- Id: [3], target: [Fabric], IPU-M host: [10.1.5.10], IPU#: [0]\n"
      "-+- Id: [4], target: [Multi IPU]\n"
      " |--- Id: [0], DNC Id: [0], IPU-M host: [10.1.5.10], IPU#: [3]\n"
      " |--- Id: [1], DNC Id: [1], IPU-M host: [10.1.5.10], IPU#: [2]\n";
  auto devices = ParseGcInfoDeviceList(listing);
  ASSERT_TRUE(devices.ok()) << devices.error();
  ASSERT_EQ(devices->size(), 4u);
  EXPECT_EQ((*devices)[3].id, 3u);
  EXPECT_EQ((*devices)[3].target, "Fabric");
  // A device line without a target that has member lines is a multi-IPU device all the same.
  auto untyped = ParseGcInfoDeviceList("-+- Id: [0]\n-+- Id: [5]\n |--- Id: [0], DNC Id: [0]\n");
  ASSERT_TRUE(untyped.ok()) << untyped.error();
  ASSERT_EQ(untyped->size(), 1u);
  EXPECT_EQ((*untyped)[0].id, 0u);
}

TEST(ParseGcInfoDeviceList, EmptyListingsAndOtherText) {
  auto none = ParseGcInfoDeviceList("Graphcore device listing:\nPartition: p1 [active]\n");
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(ParseGcInfoDeviceList("").ok());
  EXPECT_FALSE(ParseGcInfoDeviceList("usage: gc-info [options]\n").ok());
  auto no_id = ParseGcInfoDeviceList("-+- Id: [x], target: [PCIe]\n");
  ASSERT_FALSE(no_id.ok());
  EXPECT_EQ(no_id.error(), "a device line without an Id: -+- Id: [x], target: [PCIe]");
}

TEST(ParseGcInfoDeviceInfo, FieldsInOrderSplitAtTheFirstColon) {
  auto device = ParseGcInfoDeviceInfo(Fixture("gc_info/device_0.txt"));
  ASSERT_TRUE(device.ok()) << device.error();
  ASSERT_GE(device->fields.size(), 3u);
  EXPECT_EQ(device->fields[0], (std::pair<std::string, std::string>{"id", "0"}));
  EXPECT_EQ(device->fields[2], (std::pair<std::string, std::string>{"average board temp", "17.8 C"}));
  EXPECT_EQ(device->Field("hexoatt total size (bytes)"), "16911433728");
  EXPECT_EQ(device->Field("link correctable error count (session)"), "0");
  EXPECT_EQ(device->Field("ipu power"), "N/A");
  EXPECT_EQ(device->Field("user process id"), "123");

  auto colons =
      ParseGcInfoDeviceInfo("-+- Id: [0], target: [PCIe]\nDevice Info:\n  user executable: a: b\n  empty:\n");
  ASSERT_TRUE(colons.ok()) << colons.error();
  EXPECT_EQ(colons->fields,
            (std::vector<std::pair<std::string, std::string>>{{"user executable", "a: b"}, {"empty", ""}}));
}

TEST(ParseGcInfoDeviceInfo, RefusesOtherText) {
  auto no_heading = ParseGcInfoDeviceInfo("  id: 0\n");
  ASSERT_FALSE(no_heading.ok());
  EXPECT_EQ(no_heading.error(), "no \"Device Info:\" heading");
  auto nothing = ParseGcInfoDeviceInfo("Device Info:\n\n");
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error(), "no field after \"Device Info:\"");
  auto garbage = ParseGcInfoDeviceInfo("Device Info:\n  id: 0\n  Segmentation fault\n");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error(), "a device info line that is not \"key: value\": Segmentation fault");
  auto twice = ParseGcInfoDeviceInfo("Device Info:\n  id: 0\n  id: 1\n");
  ASSERT_TRUE(twice.ok()) << twice.error();
  EXPECT_EQ(twice->Field("id"), "0");
}

}  // namespace
}  // namespace runmon::ipu
