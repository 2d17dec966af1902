// memory_levels.h — the sizes of this machine's memory levels (its level 1 data, level 2 and
// level 3 caches; "cache" in libtc's names is the compilation cache), as the OS reports them,
// for the default schedule's model (schedule/panels.cpp: how many rows a tile takes, whether a
// streamed operand is copied into panels) and the contraction route's blocks (gett.h). It
// reads; it decides nothing.
#pragma once

#include <cstdint>
#include <string>

namespace tc::backends::cpu {

struct MemoryLevels {
  int64_t l1d = 0;     // bytes of level 1 data cache, per core
  int64_t l2 = 0;      // bytes of level 2 cache, per core (or per cluster sharing it)
  int64_t l3 = 0;      // bytes of level 3 cache, shared (0: none reported; the contraction route assumes 8 MiB)
  int64_t l2_ways = 0; // level 2's associativity (0: not reported; the contraction route assumes 8)
  std::string source;  // where they came from: "sysconf", "sysfs" or "assumed"

  std::string describe() const;  // "L1d 48 KiB, L2 2048 KiB, L3 32 MiB (sysconf)"
};

// glibc's sysconf(_SC_LEVEL1_DCACHE_SIZE / _SC_LEVEL2_CACHE_SIZE / _ASSOC), else the OS's
// /sys/devices/system/cpu/cpu0/cache, else 32 KiB and 1 MiB (common to x86 cores since 2017)
// with source "assumed"; level 3 as the OS lists it for this core (the cache its cores share),
// else sysconf's. Read once per process.
const MemoryLevels& host_memory_levels();

// The level 1 data, level 2 and level 3 sizes listed under a sysfs cache directory (index*/level,
// type, size as "48K", ways_of_associativity); a size not found is 0.
MemoryLevels levels_from_sysfs(const std::string& dir);

// "48K" -> 49152, "2048K" -> 2097152, "1M" -> 1048576, "512" -> 512; -1 if not a size.
int64_t parse_size_text(const std::string& text);

}  // namespace tc::backends::cpu
