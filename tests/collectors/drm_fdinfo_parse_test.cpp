// The amdgpu DRM fdinfo parser (src/collectors/amd/drm_fdinfo_parse.hpp) on the samples in
// tests/fixtures/amd_fdinfo (the three kernel key sets, size units, files that are no DRM client, another
// driver's client, a broken value), and the KFD sysfs parsers (kfd_parse.hpp).
#include "collectors/amd/drm_fdinfo_parse.hpp"

#include <gtest/gtest.h>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "collectors/amd/kfd_parse.hpp"
#include "fixture_tree.hpp"

namespace runmon::amd {
namespace {

DrmFdinfo ParseSample(const std::string& name) {
  const auto parsed = ParseDrmFdinfo(test::ReadFile(test::FixturesDir() / "amd_fdinfo" / name));
  EXPECT_TRUE(parsed.ok()) << name << ": " << (parsed.ok() ? "" : parsed.error());
  return parsed.ok() ? *parsed : DrmFdinfo{};
}

const DrmEngineBusy* Engine(const DrmFdinfo& info, std::string_view name) {
  for (const auto& engine : info.engines) {
    if (engine.name == name) return &engine;
  }
  return nullptr;
}

TEST(DrmFdinfoParse, ReadsTheKeysOfLinux519To611) {
  const DrmFdinfo info = ParseSample("linux_6_5.txt");
  EXPECT_TRUE(info.IsDrmClient());
  EXPECT_EQ(info.driver, "amdgpu");
  EXPECT_EQ(info.pci_address, "0000:08:00.0");
  EXPECT_EQ(info.client_id, 217u);
  EXPECT_EQ(info.pasid, 32784u);
  EXPECT_EQ(info.vram_bytes, 2068u * 1024);
  EXPECT_EQ(info.gtt_bytes, 8192u * 1024);  // "drm-memory-gtt: \t": a space before the tab
  ASSERT_EQ(info.engines.size(), 1u);
  EXPECT_EQ(info.engines[0].name, "gfx");
  EXPECT_FALSE(info.engines[0].percent);
  EXPECT_EQ(info.engines[0].busy_ns, 107322799u);
}

TEST(DrmFdinfoParse, PrefersTheResidentKeysOfLinux612AndLowersTheAddress) {
  const DrmFdinfo info = ParseSample("linux_6_12.txt");
  EXPECT_EQ(info.pci_address, "0000:0c:00.0");
  EXPECT_EQ(info.client_id, 61u);
  // drm-resident-vram (1027 MiB), not drm-total-vram (1030 MiB); drm-memory-vram says the same in KiB.
  EXPECT_EQ(info.vram_bytes, 1027ull * 1024 * 1024);
  EXPECT_EQ(info.gtt_bytes, 6ull * 1024 * 1024);
  ASSERT_EQ(info.engines.size(), 4u);
  ASSERT_NE(Engine(info, "gfx"), nullptr);
  EXPECT_EQ(Engine(info, "gfx")->busy_ns, 5230001234u);
  ASSERT_NE(Engine(info, "compute"), nullptr);
  EXPECT_EQ(Engine(info, "compute")->busy_ns, 811000000u);
  ASSERT_NE(Engine(info, "dma"), nullptr);
  ASSERT_NE(Engine(info, "dec"), nullptr);
}

TEST(DrmFdinfoParse, ReadsTheOldKeysOfLinux514To518AsPercentages) {
  const DrmFdinfo info = ParseSample("linux_5_15.txt");
  EXPECT_TRUE(info.IsDrmClient());
  EXPECT_EQ(info.driver, "");
  EXPECT_EQ(info.pci_address, "0000:03:00.0");
  EXPECT_FALSE(info.client_id);
  EXPECT_EQ(info.pasid, 32770u);
  EXPECT_EQ(info.vram_bytes, 524288u * 1024);
  EXPECT_EQ(info.gtt_bytes, 2048u * 1024);
  ASSERT_EQ(info.engines.size(), 4u);
  const DrmEngineBusy* gfx = Engine(info, "gfx");
  ASSERT_NE(gfx, nullptr);
  EXPECT_TRUE(gfx->percent);
  EXPECT_DOUBLE_EQ(gfx->busy_percent, 12.5);
  ASSERT_NE(Engine(info, "compute"), nullptr);
  EXPECT_DOUBLE_EQ(Engine(info, "compute")->busy_percent, 40.25);
  ASSERT_NE(Engine(info, "enc_1"), nullptr);  // ring 0 of enc_1, not ring 10 of enc
  EXPECT_EQ(Engine(info, "enc"), nullptr);
}

TEST(DrmFdinfoParse, SizesInMebibytesAndBytes) {
  const DrmFdinfo info = ParseSample("units_mib_bytes.txt");
  EXPECT_EQ(info.vram_bytes, 3u * 1024 * 1024);
  EXPECT_EQ(info.gtt_bytes, 524288u);
  EXPECT_TRUE(info.engines.empty());  // never busy: the driver writes no engine line
}

TEST(DrmFdinfoParse, AFileThatIsNoDrmClientIsAnEmptyReading) {
  for (const char* name : {"not_drm.txt", "not_drm_inotify.txt"}) {
    const DrmFdinfo info = ParseSample(name);
    EXPECT_FALSE(info.IsDrmClient()) << name;
    EXPECT_FALSE(info.vram_bytes) << name;
    EXPECT_TRUE(info.engines.empty()) << name;
  }
  // Values that would be errors in a DRM client's file do not matter in another file's.
  const auto other = ParseDrmFdinfo("pos:\t0\nvram mem:\tmany\ngfx0:\tbusy\n");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->IsDrmClient());
  EXPECT_FALSE(other->vram_bytes);
  const auto empty = ParseDrmFdinfo("");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->IsDrmClient());
}

TEST(DrmFdinfoParse, AnotherDriversClientSaysItsDriver) {
  const DrmFdinfo info = ParseSample("i915.txt");
  EXPECT_TRUE(info.IsDrmClient());
  EXPECT_EQ(info.driver, "i915");
  ASSERT_EQ(info.engines.size(), 2u);  // drm-engine-capacity-video is no engine of its own
  EXPECT_EQ(info.engines[0].name, "render");
}

TEST(DrmFdinfoParse, ADrmClientsBrokenValueIsAnError) {
  const auto parsed = ParseDrmFdinfo(test::ReadFile(test::FixturesDir() / "amd_fdinfo" / "bad_vram.txt"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().find("drm-memory-vram"), std::string::npos) << parsed.error();
  for (const char* text : {
           "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-engine-gfx:\t12\n",            // no unit
           "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-engine-gfx:\t-5 ns\n",         // negative
           "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\tx\n",              // not a number
           "drm-driver:\tamdgpu\ndrm-pdev:\tnot/an/address\n",                               // not an address
           "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t3 GiB\n",        // no such unit
           "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t1 KiB extra\n",  // trailing field
           "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t18014398509481984 KiB\n",  // >
                                                                                                       // 2^64
           "pdev:\t0000:03:00.0\ngfx0:\tnan%\n",                                                       // NaN
           "pdev:\t0000:03:00.0\ngfx0:\t-1.0%\n",  // negative
       }) {
    EXPECT_FALSE(ParseDrmFdinfo(text).ok()) << text;
  }
}

TEST(KfdParse, NumbersAndNodeProperties) {
  EXPECT_EQ(*ParseSysfsUnsigned("43690\n"), 43690u);
  EXPECT_EQ(*ParseSysfsUnsigned("0"), 0u);
  EXPECT_FALSE(ParseSysfsUnsigned("").ok());
  EXPECT_FALSE(ParseSysfsUnsigned("12 kB\n").ok());

  const auto properties = ParseKfdNodeProperties(
      "cpu_cores_count 0\nsimd_count 256\nmem_banks_count 1\nlocation_id 768\ndrm_render_minor 128\n"
      "hive_id 0\nnum_sdma_engines 2\ndomain 0\nunique_id 1645927491830734336\n");
  ASSERT_TRUE(properties.ok());
  EXPECT_EQ(properties->location_id, 768u);
  EXPECT_EQ(properties->domain, 0u);
  EXPECT_EQ(KfdNodePciAddress(*properties), "0000:03:00.0");

  // bus 0xc1, device 0x1f, function 5 in domain 1; a partition number in bits 28-31 is not part of it.
  KfdNodeProperties partitioned{(3ull << 28) | (0xc1 << 8) | (0x1f << 3) | 5, 1};
  EXPECT_EQ(KfdNodePciAddress(partitioned), "0001:c1:1f.5");

  const auto cpu = ParseKfdNodeProperties("cpu_cores_count 16\nsimd_count 0\n");
  ASSERT_TRUE(cpu.ok());
  EXPECT_FALSE(KfdNodePciAddress(*cpu));
  EXPECT_FALSE(ParseKfdNodeProperties("location_id\n").ok());
  EXPECT_FALSE(ParseKfdNodeProperties("domain minus-one\n").ok());
}

}  // namespace
}  // namespace runmon::amd
