// test_memory_levels.cpp — the cache sizes the cpu backend's default schedule models
// (src/backends/cpu/memory_levels.h): size texts as sysfs writes them, a sysfs cache directory,
// and this host's sizes; white-box.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/cpu/memory_levels.h"

namespace {

using tc::backends::cpu::levels_from_sysfs;
using tc::backends::cpu::host_memory_levels;
using tc::backends::cpu::parse_size_text;

TEST(MemoryLevels, SizeTextsAsSysfsWritesThem) {
  EXPECT_EQ(parse_size_text("48K"), 48 * 1024);
  EXPECT_EQ(parse_size_text("2048K"), 2048 * 1024);
  EXPECT_EQ(parse_size_text("1M"), 1024 * 1024);
  EXPECT_EQ(parse_size_text("512"), 512);
  EXPECT_EQ(parse_size_text("32K\n"), 32 * 1024);
  EXPECT_EQ(parse_size_text(""), -1);
  EXPECT_EQ(parse_size_text("K"), -1);
  EXPECT_EQ(parse_size_text("48KB"), -1);
  EXPECT_EQ(parse_size_text("-4K"), -1);
  EXPECT_EQ(parse_size_text("99999999999999999999K"), -1);
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text << "\n";
}

// A directory laid out as /sys/devices/system/cpu/cpu0/cache: the level 1 instruction cache is
// not what the model asks for.
TEST(MemoryLevels, ReadFromASysfsCacheDirectory) {
  char tmpl[] = "/tmp/tc-caches-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::filesystem::path dir(tmpl);
  struct Level {
    const char *level, *type, *size, *ways;
  } levels[] = {{"1", "Instruction", "32K", "8"}, {"1", "Data", "48K", "12"}, {"2", "Unified", "2048K", "16"}, {"3", "Unified", "260M", "15"}};
  for (int i = 0; i < 4; ++i) {
    auto d = dir / ("index" + std::to_string(i));
    std::filesystem::create_directories(d);
    write(d / "level", levels[i].level);
    write(d / "type", levels[i].type);
    write(d / "size", levels[i].size);
    write(d / "ways_of_associativity", levels[i].ways);
  }
  auto c = levels_from_sysfs(dir.string());
  EXPECT_EQ(c.l1d, 48 * 1024);
  EXPECT_EQ(c.l2, 2048 * 1024);
  EXPECT_EQ(c.l2_ways, 16);
  EXPECT_EQ(c.l3, int64_t{260} << 20);
  EXPECT_EQ(c.describe(), "L1d 48 KiB, L2 2048 KiB, L3 260 MiB (sysfs)");
  auto none = levels_from_sysfs((dir / "missing").string());
  EXPECT_EQ(none.l1d, 0);
  EXPECT_EQ(none.l2, 0);
  EXPECT_EQ(none.l2_ways, 0);
  EXPECT_EQ(none.l3, 0);
  std::filesystem::remove_all(dir);
}

// Whatever the host, the model gets sizes a cache can have, from one of the named sources.
TEST(MemoryLevels, ThisHostsSizesArePlausible) {
  const auto& c = host_memory_levels();
  EXPECT_GE(c.l1d, 4 * 1024);
  EXPECT_LE(c.l1d, 4 * 1024 * 1024);
  EXPECT_GE(c.l2, c.l1d);
  EXPECT_GE(c.l2_ways, 0);  // 0: not reported
  EXPECT_LE(c.l2_ways, 64);
  EXPECT_TRUE(c.source == "sysconf" || c.source == "sysfs" || c.source == "assumed") << c.source;
  EXPECT_EQ(&host_memory_levels(), &c);  // read once
}

}  // namespace
