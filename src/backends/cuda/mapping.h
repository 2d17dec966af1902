// mapping.h — the start of mapping a schedule to the GPU (issue 13, step 3): the outermost band
// of each kernel (each band with no band above it) is tiled (cuda.tile) and marked: a
// "kernel" mark above it (one launch); its tile loops' leading parallel (coincident)
// members, up to 3, each under a mark "block.<axis>:<stride>" (the grid's blocks; stride:
// the tile size, the spacing of the tile loop's values), and the innermost 3 of the point
// loops' leading parallel members, each under "thread.<axis>:1" (a block's threads),
// the innermost on x so that neighbouring threads touch neighbouring elements (coalescing).
// A loop that carries a dependence (a reduction's) is never marked: each thread runs it
// itself. With `shared`, a mark "shared" sits above each point band: where the printer
// promotes the tile's reused reads to shared memory (print_cuda.h). With `unroll` = U, the
// point loops no thread is mapped to whose tile size is at most U are unrolled by isl's AST
// generator (their ast loop type). With `lanes` (cuda.reduction=tree), a point band that has a
// reduction member (not coincident) leaves threadIdx.x to its reductions: its parallel members
// go to y and z (at most 2), under a mark "lanes" above the band, where the printer splits a
// reduction's loop across the threads along x. Also the loop nest isl's AST generator makes of a
// schedule, as C text. It does not fix grid and block sizes, reduce across threads, choose
// what to promote, or print CUDA C (print_cuda.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/poly_model.h"

struct isl_schedule;
struct isl_union_pw_aff;

namespace tc::backends::cuda {

// What a "block.*" or "thread.*" mark carries (its isl_id's user data): the marked member's
// value per statement instance (the printer guards a statement for which isl prints no loop of
// the member with the owner of its value), and the member's schedule depth, which names the
// loop isl prints for it (c<depth>). The depth is taken from the schedule tree: isl's AST build
// leaves a member of one value (a tile loop over a dimension smaller than its tile) out of the
// schedule space it reports, so the loops counted there fall behind the names.
struct MemberMark {
  isl_union_pw_aff* values;
  int depth;
};

constexpr int64_t kDefaultTile = 32;
struct MappingOptions {
  std::vector<int64_t> tile;  // per member of an outermost band, outermost first; past the list: kDefaultTile
  bool shared = false;        // a "shared" mark above each point band (cuda.shared)
  int64_t unroll = 0;         // unroll the unmapped point loops of at most this many iterations (cuda.unroll)
  bool lanes = false;         // cuda.reduction=tree: see below
};

// Takes `schedule`, returns the mapped one (the caller frees it).
isl_schedule* tile_and_mark(isl_schedule* schedule, const MappingOptions& options);

// The loop nest of a schedule as isl's AST generator prints it in C (marks as comments).
std::string loop_nest_text(const PolyModel& model, const isl_schedule* schedule);

}  // namespace tc::backends::cuda
