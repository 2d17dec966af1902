// memory_levels.cpp — see memory_levels.h.
#include "backends/cpu/memory_levels.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace tc::backends::cpu {

namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

int64_t from_sysconf(int name) {
  long v = sysconf(name);
  return v > 0 ? static_cast<int64_t>(v) : 0;
}

constexpr int64_t kAssumedL1 = 32 * 1024;
constexpr int64_t kAssumedL2 = 1024 * 1024;

MemoryLevels read_host_memory_levels() {
  MemoryLevels c;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  c.l1d = from_sysconf(_SC_LEVEL1_DCACHE_SIZE);
  c.l2 = from_sysconf(_SC_LEVEL2_CACHE_SIZE);
  c.source = "sysconf";
#endif
#if defined(_SC_LEVEL2_CACHE_ASSOC)
  c.l2_ways = from_sysconf(_SC_LEVEL2_CACHE_ASSOC);
#endif
#if defined(_SC_LEVEL3_CACHE_SIZE)
  c.l3 = from_sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  const MemoryLevels listed = levels_from_sysfs("/sys/devices/system/cpu/cpu0/cache");
  // The OS lists the level 3 this core shares; glibc's sysconf gives an AMD package's total
  // (384 MiB on a 2-vCPU EPYC VM whose cores share 32 MiB), which made A blocks 4x too large.
  if (listed.l3 > 0) c.l3 = listed.l3;
  if (c.l1d <= 0 || c.l2 <= 0) c = listed;
  if (c.l1d <= 0 || c.l2 <= 0) c = MemoryLevels{kAssumedL1, kAssumedL2, 0, 0, "assumed"};
  return c;
}

}  // namespace

int64_t parse_size_text(const std::string& text) {
  size_t i = 0;
  int64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (v > (int64_t{1} << 40)) return -1;
    v = v * 10 + (text[i++] - '0');
  }
  if (i == 0) return -1;
  int64_t unit = 1;
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) unit = 1024, ++i;
  else if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) unit = 1024 * 1024, ++i;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return i == text.size() ? v * unit : -1;
}

MemoryLevels levels_from_sysfs(const std::string& dir) {
  MemoryLevels c;
  c.source = "sysfs";
  for (int index = 0; index < 16; ++index) {
    std::string d = dir + "/index" + std::to_string(index);
    std::string level = first_line(d + "/level"), type = first_line(d + "/type");
    int64_t size = parse_size_text(first_line(d + "/size"));
    if (level.empty() || size <= 0) continue;
    if (level == "1" && (type == "Data" || type == "Unified") && c.l1d == 0) c.l1d = size;
    if (level == "2" && (type == "Unified" || type == "Data") && c.l2 == 0) {
      c.l2 = size;
      c.l2_ways = std::max<int64_t>(parse_size_text(first_line(d + "/ways_of_associativity")), 0);
    }
    if (level == "3" && type == "Unified" && c.l3 == 0) c.l3 = size;
  }
  return c;
}

std::string MemoryLevels::describe() const {
  return "L1d " + std::to_string(l1d / 1024) + " KiB, L2 " + std::to_string(l2 / 1024) + " KiB" +
         (l3 > 0 ? ", L3 " + std::to_string(l3 >> 20) + " MiB" : "") + " (" + source + ")";
}

const MemoryLevels& host_memory_levels() {
  static const MemoryLevels kLevels = read_host_memory_levels();
  return kLevels;
}

}  // namespace tc::backends::cpu
