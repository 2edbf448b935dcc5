// One AMD card's values each tick, from its sysfs and hwmon files, kept open (KeptOpenFile: one pread per
// file and tick, no open, no subprocess). Units become runmon's: µW -> W, m°C -> °C, the current DPM level
// -> MHz. Only the files discovery found are read; a read that fails this tick (a GPU in reset answers
// EIO or EBUSY) leaves that value unset and is reported once per file, so a flaky file costs no log spam.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "collectors/amd/amd_card_reading.hpp"
#include "collectors/amd/amdgpu_discovery.hpp"
#include "host/file_reader.hpp"

namespace runmon::amd {

class CardSampler {
 public:
  explicit CardSampler(const AmdCard& card);

  // This tick's values; `problems` gets each file's first failure (as "PATH: why").
  CardValues Sample(std::vector<std::string>& problems);

 private:
  struct File {
    KeptOpenFile file;
    bool reported = false;
  };
  using FilePtr = std::unique_ptr<File>;

  FilePtr Open(const std::filesystem::path& path, Generated generated = Generated::kWhole);
  // The file's value through `parse` (a parser returning Result<T>), or nullopt after saying why once.
  template <typename Parse>
  auto ReadParsed(const FilePtr& file, Parse&& parse, std::vector<std::string>& problems)
      -> std::optional<std::remove_cvref_t<decltype(*parse(std::string_view()))>>;
  std::optional<uint64_t> ReadUnsigned(const FilePtr& file, std::vector<std::string>& problems);
  std::optional<double> ReadDpm(const FilePtr& file, std::vector<std::string>& problems);
  void Fail(File& file, const std::string& why, std::vector<std::string>& problems);

  std::optional<uint64_t> vram_total_bytes_, gtt_total_bytes_;
  std::optional<uint64_t> fan_max_rpm_, pwm_max_;
  FilePtr busy_, memory_busy_, vram_used_, gtt_used_, sclk_, mclk_, memory_overdrive_;
  std::vector<std::pair<TempSensor, FilePtr>> temperatures_;
  FilePtr power_, power_cap_, fan_rpm_, pwm_, pwm_enable_, energy_;
};

}  // namespace runmon::amd
