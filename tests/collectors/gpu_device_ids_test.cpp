// x_stats_gpu_device_ids (collectors/gpu/gpu_device_ids.hpp): every form W&B accepts, and what it refuses.
#include "collectors/gpu/gpu_device_ids.hpp"

#include <gtest/gtest.h>

namespace runmon {
namespace {

TEST(ParseGpuDeviceIds, Forms) {
  auto parse = [](std::optional<std::string> text) { return ParseGpuDeviceIds(text); };
  ASSERT_TRUE(parse(std::nullopt).ok());
  EXPECT_FALSE(parse(std::nullopt)->has_value());
  ASSERT_TRUE(parse("").ok());
  EXPECT_FALSE(parse("")->has_value());
  ASSERT_TRUE(parse("[0,2]").ok());
  EXPECT_EQ(**parse("[0,2]"), (std::vector<unsigned>{0, 2}));
  ASSERT_TRUE(parse(" [ 3 ] ").ok());
  EXPECT_EQ(**parse(" [ 3 ] "), (std::vector<unsigned>{3}));
  ASSERT_TRUE(parse("1").ok());
  EXPECT_EQ(**parse("1"), (std::vector<unsigned>{1}));
  ASSERT_TRUE(parse("[]").ok());
  ASSERT_TRUE(parse("[]")->has_value());
  EXPECT_TRUE((*parse("[]"))->empty());
  for (const char* bad : {"[-1]", "-1", "[1.5]", "[\"0\"]", "abc", "[0,", "{}", "[70000]", "true", "[[0]]"}) {
    const auto result = parse(bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_NE(result.error().find("x_stats_gpu_device_ids"), std::string::npos) << result.error();
  }
}

}  // namespace
}  // namespace runmon
