// mapping.h — the start of mapping a schedule to the GPU: the outermost band
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
// generator (their ast loop type). With register tiles (`regtile`), a band with a reduction
// member gives its thread marks a number of copies: each thread runs that many of the loop's
// values at once. With `lanes` (cuda.reduction=tree), a point band that has a
// reduction member (not coincident) leaves threadIdx.x to its reductions: its parallel members
// go to y and z (at most 2), under a mark "lanes" above the band, where the printer splits a
// reduction's loop across the threads along x. Also the loop nest isl's AST generator makes of a
// schedule, as C text. It does not fix grid and block sizes, reduce across threads, choose
// what to promote, or print CUDA C (print_cuda.h).
#pragma once

#include <array>
#include <cstdint>
#include <set>
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
// A thread mark also carries its register tile: `copies` of the loop's iterations each thread
// runs at once, in lockstep (print_cuda.h), and `tile`, the point loop's size, from which the
// block's threads along the axis follow (ceil(tile / copies)).
struct MemberMark {
  isl_union_pw_aff* values;
  int depth;
  int64_t copies = 1;
  int64_t tile = 0;
};

constexpr int64_t kDefaultTile = 32;
// Blocks a launch should have at least to keep every SM of the GPU busy: an H100's or H200's
// SMs (the contraction route's tiles and split sums, the row route and the default tiles aim
// for it).
constexpr int64_t kBlocksWanted = 132;
// Register tiles chosen by cuda.regtile=auto: in a band with a reduction member and at least two
// thread axes, 8 elements per thread along x and y, 8 threads along each (tiles of 64), one
// value of each other parallel member per block (tile 1: more blocks, and their tiles of the
// operands fit shared memory), the reduction member tiled by kDefaultTile. A band with several
// reduction members (a convolution's channels and window) takes 4 per thread (tiles of 32) and
// reduction tiles of 4: its 64 copies' addresses spilled registers (group_conv at 8x8: 255
// registers, 24 bytes spilled), and its input's tile (channels x (32 + window)^2) fits shared
// memory only with few channels.
constexpr int64_t kAutoRegisterTile = 8;
constexpr int64_t kAutoRegisterTileSeveralReductions = 4;
constexpr int64_t kReductionTileSeveralReductions = 4;
constexpr int64_t kRegisterTileThreads = 8;
// A thread whose register tile along x is a multiple of kVectorValues owns runs of that many
// consecutive values (thread t: values v with floor(v / 4) mod blockDim.x = t) rather than every
// blockDim.x-th one: its elements of a row are adjacent, read and written with one 128-bit
// access of float32 (a float4) where the address allows (print_cuda.h), and a warp's 8 threads
// along x still read 8 different banks of a shared tile's row (4 apart).
constexpr int64_t kVectorValues = 4;
constexpr int64_t kLargestAutoTile = kAutoRegisterTile * kRegisterTileThreads;
// cuda.block=auto for a launch without register tiles.
constexpr std::array<int64_t, 3> kDefaultBlock{32, 8, 1};

struct MappingOptions {
  std::vector<int64_t> tile;  // per member of an outermost band, outermost first; past the list: kDefaultTile
  bool shared = false;        // a "shared" mark above each point band (cuda.shared)
  int64_t unroll = 0;         // unroll the unmapped point loops of at most this many iterations (cuda.unroll)
  bool lanes = false;         // cuda.reduction=tree: see below
  // Register tiles (cuda.regtile) of bands with a reduction member: elements per thread along
  // the block's x, y, z (1 past the list); where `regtile_auto`, kAutoRegisterTile along x and
  // y of bands with two thread axes or more (fewer along a member too short for them). A
  // register-tiled band's members not in `tile` get kRegisterTileThreads times their copies
  // (x, y), 1 (the other parallel members) or kDefaultTile (the reduction's).
  std::vector<int64_t> regtile;
  bool regtile_auto = false;
  // For regtile_auto: the model's reads (statement instance -> element; borrowed), and the
  // statements ("S<n>") with a read not proven in bounds (a gather's). auto register-tiles only
  // a band that reuses an operand across a thread axis (some read of a statement in it does
  // not depend on that axis's variables: matmul's A along j, B along i) and has no such
  // statement: a row-wise band (softmax) has nothing to share between copies, and a gather's
  // checks printed 64 times made NVRTC take 13 s on 2LUT.
  const isl_union_map* reads = nullptr;
  std::set<std::string> unproven_statements;
  // The block's threads along x, y, z (cuda.block, else kDefaultBlock): a parallel member on an
  // axis of one thread is not tiled by default (default_tile in mapping.cpp).
  std::array<int64_t, 3> block = kDefaultBlock;
};

// Takes `schedule`, returns the mapped one (the caller frees it).
isl_schedule* tile_and_mark(isl_schedule* schedule, const MappingOptions& options);

// The loop nest of a schedule as isl's AST generator prints it in C (marks as comments).
std::string loop_nest_text(const PolyModel& model, const isl_schedule* schedule);

}  // namespace tc::backends::cuda
