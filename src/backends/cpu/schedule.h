// schedule.h — the cpu backend's schedule space and its default point. Every choice the
// scheduler makes comes from one CpuSchedule (vector width, output tile, register block,
// parallel outer loops, inlining), read from the options (cpu.*) with "auto" filled in from
// the target, so the autotuner can search exactly this space. apply_schedule turns it into
// Halide scheduling directives on a lowered pipeline; it never changes what is computed.
#pragma once

#include <string>

#include <Halide.h>

#include "backends/cpu/lower.h"
#include "support/options.h"

namespace tc::backends::cpu {

struct CpuSchedule {
  int vector = 0;          // lanes of 32-bit elements; 0: the target's natural width
  int tile_x = 0;          // output tile along the contiguous dimension; 0: auto
  int tile_y = 0;          // ... and along the register-blocked dimension; 0: auto
  int unroll = 0;          // rows of the register block; 0: auto
  bool parallel = true;    // outer tile loops run on the thread pool
  int inline_mode = -1;    // -1 auto, 0 never inline producers, 1 inline single-use ones
  int threads = 0;         // 0: all cores

  static CpuSchedule from_options(const Options& o);
};

// Applies the schedule; returns a description of what was decided per stage.
std::string apply_schedule(LoweredPipeline& p, const CpuSchedule& s, const Halide::Target& target);

}  // namespace tc::backends::cpu
