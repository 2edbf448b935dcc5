// Unit tests of CUDA_VISIBLE_DEVICES parsing and of the CUDA ordinals it gives NVML's devices
// (collectors/nvidia/cuda_devices.hpp): every form NVIDIA documents (indices, full and abbreviated GPU
// UUIDs, MIG UUIDs, legacy MIG names), whitespace, and each way the list ends early (an invalid entry, an
// unknown or ambiguous device, a device listed twice).
#include "collectors/nvidia/cuda_devices.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace runmon {
namespace {

using Kind = CudaDeviceSelector::Kind;
using Ordinals = std::vector<std::optional<unsigned>>;

constexpr std::string_view kGpu0 = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
constexpr std::string_view kGpu1 = "GPU-8932f938-0a1b-4c2d-8e3f-000000000001";  // shares "GPU-8932f93"
constexpr std::string_view kGpu2 = "GPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";  // MIG mode
constexpr std::string_view kMigA = "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f";  // GPU 2, GI 1, CI 0
constexpr std::string_view kMigB = "MIG-d9a47cfb-d1f2-d08c-b40e-0812b597ae69";  // GPU 2, GI 2, CI 0

NvmlDeviceIdentity Gpu(unsigned index, std::string_view uuid) {
  NvmlDeviceIdentity d;
  d.nvml_index = index;
  d.uuid = std::string(uuid);
  return d;
}

NvmlDeviceIdentity Mig(unsigned parent_index, std::string_view parent_uuid, std::string_view uuid,
                       unsigned gi, unsigned ci) {
  NvmlDeviceIdentity d;
  d.nvml_index = parent_index;
  d.uuid = std::string(uuid);
  d.is_mig = true;
  d.parent_uuid = std::string(parent_uuid);
  d.gpu_instance = gi;
  d.compute_instance = ci;
  return d;
}

// Three GPUs, the last in MIG mode with two instances: entries 0..4 of every ordinal vector below.
std::vector<NvmlDeviceIdentity> Machine() {
  return {Gpu(0, kGpu0), Gpu(1, kGpu1), Gpu(2, kGpu2), Mig(2, kGpu2, kMigA, 1, 0),
          Mig(2, kGpu2, kMigB, 2, 0)};
}

std::vector<CudaDeviceSelector> Parse(std::string_view value) {
  auto selectors = ParseCudaVisibleDevices(value);
  EXPECT_TRUE(selectors.has_value());
  return selectors.value_or(std::vector<CudaDeviceSelector>{});
}

// The indices of a list that must hold only index selectors.
std::vector<unsigned> Indices(std::string_view value) {
  std::vector<unsigned> indices;
  for (const auto& s : Parse(value)) {
    EXPECT_EQ(s.kind, Kind::kIndex);
    indices.push_back(s.index);
  }
  return indices;
}

Ordinals Map(std::string_view value) {
  return MapCudaOrdinals(ParseCudaVisibleDevices(value), Machine());
}

constexpr std::nullopt_t kNo = std::nullopt;

std::string Join(const std::vector<std::string>& entries) {
  std::string out;
  for (const auto& e : entries) {
    if (!out.empty()) out += ',';
    out += e;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// ParseCudaVisibleDevices

TEST(CudaVisibleDevicesParse, UnsetMeansEveryDevice) {
  EXPECT_EQ(ParseCudaVisibleDevices(std::nullopt), std::nullopt);
  EXPECT_EQ(MapCudaOrdinals(std::nullopt, Machine()), (Ordinals{0, 1, 2, 3, 4}));
}

TEST(CudaVisibleDevicesParse, EmptyHidesEveryDevice) {
  EXPECT_TRUE(Parse("").empty());
  EXPECT_EQ(Map(""), (Ordinals{kNo, kNo, kNo, kNo, kNo}));
}

TEST(CudaVisibleDevicesParse, WhitespaceOnlyHidesEveryDevice) {
  EXPECT_TRUE(Parse(" ").empty());
  EXPECT_TRUE(Parse(" \t\n ").empty());
  EXPECT_EQ(Map("  "), (Ordinals{kNo, kNo, kNo, kNo, kNo}));
}

TEST(CudaVisibleDevicesParse, Indices) {
  EXPECT_EQ(Indices("0"), (std::vector<unsigned>{0}));
  EXPECT_EQ(Indices("0,2"), (std::vector<unsigned>{0, 2}));
  EXPECT_EQ(Indices("2,1"), (std::vector<unsigned>{2, 1}));
  EXPECT_EQ(Indices("4294967295"), (std::vector<unsigned>{4294967295u}));
  EXPECT_EQ(Indices("007"), (std::vector<unsigned>{7}));  // still a plain decimal integer
}

TEST(CudaVisibleDevicesParse, WhitespaceAroundEntriesIsIgnored) {
  EXPECT_EQ(Indices(" 1 , 0 "), (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(Indices("\t2,\n0 "), (std::vector<unsigned>{2, 0}));
  EXPECT_EQ(Indices("1 2"), (std::vector<unsigned>{}));  // inside an entry it is not
}

TEST(CudaVisibleDevicesParse, InvalidEntryEndsTheList) {
  EXPECT_EQ(Indices("0,abc,1"), (std::vector<unsigned>{0}));
  EXPECT_EQ(Indices("-1"), (std::vector<unsigned>{}));
  EXPECT_EQ(Indices("0,,1"), (std::vector<unsigned>{0}));
  EXPECT_EQ(Indices("0,2,-1,1"), (std::vector<unsigned>{0, 2}));  // NVIDIA's own example
  EXPECT_EQ(Indices(",0"), (std::vector<unsigned>{}));
  EXPECT_EQ(Indices("0,1,"), (std::vector<unsigned>{0, 1}));
}

TEST(CudaVisibleDevicesParse, IndicesAreStrictDecimal) {
  for (const char* bad : {"1.5", "0x1", "+1", "4294967296", "99999999999999999999", "1e3", "1a", "1_000"}) {
    EXPECT_TRUE(Parse(bad).empty()) << bad;
    EXPECT_EQ(Indices(std::string(bad) + ",0"), (std::vector<unsigned>{})) << bad;
  }
}

TEST(CudaVisibleDevicesParse, GpuUuidFullAndPrefix) {
  auto selectors = Parse(std::string(kGpu0) + ",GPU-8932f937, GPU-1a2b");
  ASSERT_EQ(selectors.size(), 3u);
  EXPECT_EQ(selectors[0].kind, Kind::kUuid);
  EXPECT_EQ(selectors[0].uuid, kGpu0);
  EXPECT_EQ(selectors[1].kind, Kind::kUuid);
  EXPECT_EQ(selectors[1].uuid, "GPU-8932f937");
  EXPECT_EQ(selectors[2].uuid, "GPU-1a2b");
}

TEST(CudaVisibleDevicesParse, MalformedUuidsEndTheList) {
  for (const char* bad : {
           "GPU-xyz",                                       // not hex
           "GPU-8932f937d72c",                              // dash missing
           "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6f",     // too long
           "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0",  // GPU UUID with instance ids
           "gpu-8932f937",                                  // the prefix is case-sensitive
           "Gpu-8932f937", "GPU8932f937", "GPU", "MIG-", "mig-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f",
           "MIG-c6d4f1ef",                              // MIG UUIDs are not abbreviated
           "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3g",  // not hex
       }) {
    EXPECT_TRUE(Parse(std::string(bad) + ",0").empty()) << bad;
  }
}

TEST(CudaVisibleDevicesParse, UuidHexMayBeUpperCase) {
  auto selectors = Parse("GPU-8932F937-D72C-4106-C12F-20BD9FAED9F6");
  ASSERT_EQ(selectors.size(), 1u);
  EXPECT_EQ(selectors[0].kind, Kind::kUuid);
  EXPECT_EQ(selectors[0].uuid, "GPU-8932F937-D72C-4106-C12F-20BD9FAED9F6");  // kept as written
}

TEST(CudaVisibleDevicesParse, MigUuid) {
  auto selectors = Parse(std::string(kMigA));
  ASSERT_EQ(selectors.size(), 1u);
  EXPECT_EQ(selectors[0].kind, Kind::kMigUuid);
  EXPECT_EQ(selectors[0].uuid, kMigA);
}

TEST(CudaVisibleDevicesParse, LegacyMig) {
  auto selectors = Parse("MIG-GPU-" + std::string(kGpu2.substr(4)) + "/2/0");
  ASSERT_EQ(selectors.size(), 1u);
  EXPECT_EQ(selectors[0].kind, Kind::kLegacyMig);
  EXPECT_EQ(selectors[0].uuid, kGpu2);
  EXPECT_EQ(selectors[0].gpu_instance, 2u);
  EXPECT_EQ(selectors[0].compute_instance, 0u);
}

TEST(CudaVisibleDevicesParse, MalformedLegacyMigEndsTheList) {
  const std::string base = "MIG-" + std::string(kGpu2);
  for (const std::string& bad : {base, base + "/1", base + "/1/", base + "//0", base + "/1/x", base + "/-1/0",
                                 base + "/1/0/3", base + "/+1/0", base + "/1/0x0", base + "/1/ 0",
                                 std::string("MIG-GPU-8932f937/1/0"), std::string("MIG-GPU-/1/0")}) {
    EXPECT_TRUE(Parse(bad + ",0").empty()) << bad;
  }
}

TEST(CudaVisibleDevicesParse, MixedForms) {
  auto selectors = Parse(" GPU-1a2b , 1," + std::string(kMigB) + ",MIG-" + std::string(kGpu2) + "/1/0 ");
  ASSERT_EQ(selectors.size(), 4u);
  EXPECT_EQ(selectors[0].kind, Kind::kUuid);
  EXPECT_EQ(selectors[1].kind, Kind::kIndex);
  EXPECT_EQ(selectors[1].index, 1u);
  EXPECT_EQ(selectors[2].kind, Kind::kMigUuid);
  EXPECT_EQ(selectors[3].kind, Kind::kLegacyMig);
  EXPECT_EQ(selectors[3].gpu_instance, 1u);
}

TEST(CudaVisibleDevicesParse, TenThousandEntriesParseQuickly) {
  std::vector<std::string> entries;
  for (unsigned i = 0; i < 10000; ++i) {
    entries.push_back(i % 2 == 0 ? " " + std::to_string(i) + " " : std::string(kGpu0));
  }
  const std::string value = Join(entries);
  const auto start = std::chrono::steady_clock::now();
  const auto selectors = Parse(value);
  const auto parse_time = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(selectors.size(), 10000u);
  EXPECT_EQ(selectors[9998].index, 9998u);
  EXPECT_EQ(selectors[9999].uuid, kGpu0);
  // Linear work is well under a millisecond; a generous bound that a quadratic pass would still break.
  EXPECT_LT(parse_time, std::chrono::seconds(2));

  // Mapping stops at the first duplicate: 0, GPU0 again.
  EXPECT_EQ(MapCudaOrdinals(selectors, Machine()), (Ordinals{0, kNo, kNo, kNo, kNo}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

// ---------------------------------------------------------------------------------------------------------
// MapCudaOrdinals

TEST(CudaVisibleDevicesMap, UnsetFollowsNvmlOrderWhateverTheListOrder) {
  auto devices = Machine();
  std::swap(devices[0], devices[4]);  // MigB, Gpu1, Gpu2, MigA, Gpu0
  std::swap(devices[1], devices[2]);  // MigB, Gpu2, Gpu1, MigA, Gpu0
  // NVML order: Gpu0, Gpu1, Gpu2, then Gpu2's instances in the order given (MigB before MigA).
  EXPECT_EQ(MapCudaOrdinals(std::nullopt, devices), (Ordinals{3, 2, 1, 4, 0}));
}

TEST(CudaVisibleDevicesMap, IndicesNameGpusInNvmlOrder) {
  EXPECT_EQ(Map("0,2"), (Ordinals{0, kNo, 1, kNo, kNo}));
  EXPECT_EQ(Map(" 1 , 0 "), (Ordinals{1, 0, kNo, kNo, kNo}));
  EXPECT_EQ(Map("2,1,0"), (Ordinals{2, 1, 0, kNo, kNo}));
  EXPECT_EQ(Map("0,abc,1"), (Ordinals{0, kNo, kNo, kNo, kNo}));
  EXPECT_EQ(Map("-1,0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));
  EXPECT_EQ(Map("0,,1"), (Ordinals{0, kNo, kNo, kNo, kNo}));
}

TEST(CudaVisibleDevicesMap, OutOfRangeIndexEndsTheList) {
  EXPECT_EQ(Indices("0,7,1"), (std::vector<unsigned>{0, 7, 1}));  // valid syntax...
  EXPECT_EQ(Map("0,7,1"), (Ordinals{0, kNo, kNo, kNo, kNo}));     // ...but no GPU 7
  EXPECT_EQ(Map("4294967295,0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));
}

TEST(CudaVisibleDevicesMap, GpuUuidFullAndPrefix) {
  EXPECT_EQ(Map(std::string(kGpu1) + "," + std::string(kGpu0)), (Ordinals{1, 0, kNo, kNo, kNo}));
  EXPECT_EQ(Map("GPU-8932f937,GPU-8932f938"), (Ordinals{0, 1, kNo, kNo, kNo}));
  EXPECT_EQ(Map("GPU-1a2b,GPU-8932f937"), (Ordinals{1, kNo, 0, kNo, kNo}));
  EXPECT_EQ(Map("GPU-1,0"), (Ordinals{1, kNo, 0, kNo, kNo}));
}

TEST(CudaVisibleDevicesMap, AmbiguousOrUnknownPrefixEndsTheList) {
  EXPECT_EQ(Map("GPU-8932f93,1"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));  // GPU 0 and GPU 1
  EXPECT_EQ(Map("2,GPU-8932,0"), (Ordinals{kNo, kNo, 0, kNo, kNo}));
  EXPECT_EQ(Map("GPU-,0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));  // every GPU
  EXPECT_EQ(Map("1,GPU-ffff,0"), (Ordinals{kNo, 0, kNo, kNo, kNo}));
  // With a single GPU, even "GPU-" is a unique prefix.
  EXPECT_EQ(MapCudaOrdinals(ParseCudaVisibleDevices("GPU-"), {Gpu(0, kGpu0)}), (Ordinals{0}));
}

TEST(CudaVisibleDevicesMap, UuidHexComparesCaseInsensitively) {
  EXPECT_EQ(Map("GPU-8932F937-D72C-4106-C12F-20BD9FAED9F6,GPU-1A2B"), (Ordinals{0, kNo, 1, kNo, kNo}));
  EXPECT_EQ(Map("MIG-C6D4F1EF-42E4-5DE3-91C7-45D71C87EB3F"), (Ordinals{kNo, kNo, kNo, 0, kNo}));
  // NVML reporting upper case works the same way.
  const std::vector<NvmlDeviceIdentity> upper = {Gpu(0, "GPU-8932F937-D72C-4106-C12F-20BD9FAED9F6")};
  EXPECT_EQ(MapCudaOrdinals(ParseCudaVisibleDevices(kGpu0), upper), (Ordinals{0}));
  EXPECT_EQ(MapCudaOrdinals(ParseCudaVisibleDevices("GPU-8932f9"), upper), (Ordinals{0}));
}

TEST(CudaVisibleDevicesMap, MigUuidNamesItsInstance) {
  EXPECT_EQ(Map(std::string(kMigB) + "," + std::string(kMigA)), (Ordinals{kNo, kNo, kNo, 1, 0}));
  // A MIG-shaped UUID that NVML does not know ends the list.
  EXPECT_EQ(Map("MIG-00000000-0000-0000-0000-000000000000," + std::string(kMigA)),
            (Ordinals{kNo, kNo, kNo, kNo, kNo}));
}

TEST(CudaVisibleDevicesMap, LegacyMigNamesItsInstance) {
  const std::string gpu2 = "MIG-" + std::string(kGpu2);
  EXPECT_EQ(Map(gpu2 + "/2/0," + gpu2 + "/1/0"), (Ordinals{kNo, kNo, kNo, 1, 0}));
  EXPECT_EQ(Map(gpu2 + "/1/1,0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));  // no such compute instance
  EXPECT_EQ(Map("MIG-" + std::string(kGpu0) + "/1/0,0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));  // no MIG
}

TEST(CudaVisibleDevicesMap, GpuSelectorsNeverMatchMigInstancesAndViceVersa) {
  // A MIG UUID's hex behind "GPU-" is not a GPU; a GPU's hex behind "MIG-" is not an instance.
  EXPECT_EQ(Map("GPU-" + std::string(kMigA.substr(4)) + ",0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));
  EXPECT_EQ(Map("MIG-" + std::string(kGpu2.substr(4)) + ",0"), (Ordinals{kNo, kNo, kNo, kNo, kNo}));
  // Index 2 is the MIG-mode GPU itself, not one of its instances.
  EXPECT_EQ(Map("2"), (Ordinals{kNo, kNo, 0, kNo, kNo}));
}

TEST(CudaVisibleDevicesMap, DeviceListedTwiceEndsTheList) {
  EXPECT_EQ(Map("0,1,0,2"), (Ordinals{0, 1, kNo, kNo, kNo}));
  EXPECT_EQ(Map("0,GPU-8932f937,2"), (Ordinals{0, kNo, kNo, kNo, kNo}));  // same GPU, other form
  EXPECT_EQ(Map(std::string(kMigA) + ",MIG-" + std::string(kGpu2) + "/1/0,1"),
            (Ordinals{kNo, kNo, kNo, 0, kNo}));
}

TEST(CudaVisibleDevicesMap, MixedForms) {
  const std::string value =
      " GPU-1a2b , 1," + std::string(kMigB) + ",MIG-" + std::string(kGpu2) + "/1/0 , GPU-8932F937";
  EXPECT_EQ(Map(value), (Ordinals{4, 1, 0, 3, 2}));
}

TEST(CudaVisibleDevicesMap, EmptyInputs) {
  EXPECT_TRUE(MapCudaOrdinals(std::nullopt, {}).empty());
  EXPECT_TRUE(MapCudaOrdinals(ParseCudaVisibleDevices("0,1"), {}).empty());
  EXPECT_EQ(MapCudaOrdinals(std::vector<CudaDeviceSelector>{}, Machine()),
            (Ordinals{kNo, kNo, kNo, kNo, kNo}));
}

TEST(CudaVisibleDevicesMap, HandMadeSelectorsWithoutPrefixMatchNothing) {
  CudaDeviceSelector bare;
  bare.kind = Kind::kUuid;
  bare.uuid = "8932f937";
  EXPECT_EQ(MapCudaOrdinals(std::vector<CudaDeviceSelector>{bare}, Machine()),
            (Ordinals{kNo, kNo, kNo, kNo, kNo}));
}

}  // namespace
}  // namespace runmon
