// schedule.h — the cpu backend's schedule space, declared as knobs (cpu.*), and its default
// point. Every choice the scheduler makes comes from one CpuSchedule (vector width, output
// tile, register block, parallel outer loops, inlining, packing, fusion, panels), read from the
// parsed knob values with "auto" filled in from the target and the host's cache sizes, so the
// autotuner can search exactly this space. apply_schedule turns it into Halide scheduling
// directives on a lowered pipeline; it never changes what is computed.
#pragma once

#include <array>
#include <string>

#include <Halide.h>

#include "backends/cpu/memory_levels.h"
#include "backends/cpu/lower.h"
#include "backends/knob.h"

namespace tc::backends::cpu {

struct CpuSchedule {
  int vector = 0;          // lanes of 32-bit elements; 0: the target's natural width
  int tile_x = 0;          // output tile along the contiguous dimension; 0: auto
  int tile_y = 0;          // ... and along the register-blocked dimension; 0: auto
  int unroll = 0;          // rows of the register block; 0: auto
  bool parallel = true;    // outer tile loops run on the thread pool
  int inline_mode = -1;    // -1 auto, 0 never inline producers, 1 inline single-use ones
  bool pack = true;        // copy a reduction's transposed operand with the needed dimension innermost
  bool fuse = true;        // compute a reduction tile by tile inside its pointwise consumer
  int rows = -1;           // rows per block of row-local stages; 0: none; -1: auto
  int kblock = -1;         // reduction blocks of register-blocked reductions; 0: none; -1: auto
  bool panel_streamed = false;   // copy the streamed operand of a register-blocked reduction into panels
  bool panel_broadcast = false;  // ... and the broadcast one, with the block dimension innermost
  bool panel_auto = true;        // cpu.panel=auto: the streamed operand's panels decided by the cache model
  bool blas = false;       // a plain matrix product goes to the system's CBLAS (gemm_route.h)
  bool fma = true;         // a float += reduction of one product accumulates with fused multiply-adds
  int flatten = -1;        // reductions over flattened rows (flatten_rows.h): 1 where possible, 0 none, -1 auto
  int transpose = -1;      // reductions computed transposed (transpose_result.h): 1 where possible, 0 none, -1 auto
  int contract = -1;       // a def that is one contraction runs on the contraction route (contraction.h): 1, 0, -1 auto
  std::array<int64_t, 3> blocks{};  // the contraction route's MC, KC, NC; 0: from the host's caches
  int threads = 0;         // 0: all cores
  int64_t l1_bytes = host_memory_levels().l1d;  // the cache model's sizes: the host's
  int64_t l2_bytes = host_memory_levels().l2;

  static CpuSchedule from_options(const KnobValues& o);
};

// The cpu.* knobs, with the values a tuner tries for a bound def.
const std::vector<Knob>& cpu_knobs();

// Applies the schedule; returns a description of what was decided per stage.
std::string apply_schedule(LoweredPipeline& p, const CpuSchedule& s, const Halide::Target& target);

}  // namespace tc::backends::cpu
