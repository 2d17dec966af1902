// gemm_tiles.cpp — the contraction route's block tiles (gemm.h): the ones cuda.gemm_tile names,
// and the one auto takes for a contraction.
#include <algorithm>

#include "backends/cuda/contraction/gemm.h"

namespace tc::backends::cuda {

std::string GemmTile::text() const { return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk); }

// Every tile 256 threads (8 warps): each thread's values along M and N in runs of 128 bits
// (4 floats, 2 doubles) where it has that many. float64 stops at 8 x 4 values a thread (64
// registers of sums). The last two are for products with few rows (a grouped convolution's 4
// filters a group: 8% of a 32 x 32 tile used, 100% of a 4 x 256 one).
const std::vector<GemmTile>& gemm_tiles(GemmMath math) {
  static const std::vector<GemmTile> kFloat = {{128, 128, 8, 8, 8}, {128, 64, 8, 8, 4}, {64, 128, 8, 4, 8},
                                               {64, 64, 8, 4, 4},    {32, 32, 8, 2, 2},  {8, 256, 8, 1, 8},
                                               {4, 256, 8, 1, 4}};
  static const std::vector<GemmTile> kDouble = {{128, 64, 8, 8, 4}, {64, 128, 8, 4, 8}, {64, 64, 8, 4, 4},
                                                {32, 32, 8, 2, 2},  {8, 256, 8, 1, 8},  {4, 256, 8, 1, 4}};
  // Tensor cores: warps of 64 x 32 outputs (tm x tn = 8 x 8 sums a thread: 4 x 4 mma tiles of
  // 16 x 8) in 128 x 128 tiles of 8 warps, or of 32 x 32 (4 x 8: 2 x 4 mma tiles) in 64 x 64
  // tiles of 4; 16 or 32 steps a stage for float16 and bfloat16 (m16n8k16), 8 or 16 for TF32
  // (m16n8k8).
  static const std::vector<GemmTile> kHalf = {{128, 128, 32, 8, 8}, {128, 128, 16, 8, 8}, {64, 64, 16, 4, 8}};
  static const std::vector<GemmTile> kTf32 = {{128, 128, 16, 8, 8}, {64, 64, 8, 4, 8}};
  if (math.tf32) return kTf32;
  if (is_float16_like(math.type)) return kHalf;
  return math.type == ScalarType::Float64 ? kDouble : kFloat;
}

std::optional<GemmTile> gemm_tile_named(const std::string& text, GemmMath math) {
  for (const GemmTile& t : gemm_tiles(math))
    if (t.text() == text) return t;
  return std::nullopt;
}


int64_t stages_that_fit(const GemmTile& t, GemmMath math, int64_t wanted) {
  int64_t bytes = math.type == ScalarType::Float64 ? 8 : is_float16_like(math.type) ? 2 : 4, pad = 16 / bytes;
  // A stage's rows padded by 16 bytes: [step][row], or on tensor cores [row][step] where an
  // operand's K is contiguous (the larger of the two: rows >= bk).
  int64_t stage = math.tensor_cores() ? (t.bm + t.bn) * (t.bk + pad) * bytes
                                      : (t.bk * (t.bm + pad) + t.bk * (t.bn + pad)) * bytes;
  return std::max<int64_t>(2, std::min(wanted, kGemmSharedBytes / stage));
}

namespace {

int64_t tile_blocks(const Contraction& c, const GemmTile& t) {
  return extent(c.batch) * ((extent(c.m) + t.bm - 1) / t.bm) * ((extent(c.n) + t.bn - 1) / t.bn);
}

// The parts that make up the blocks wanted: what the tile choice counts a tile's blocks with.
int64_t parts_to_fill(const Contraction& c, GemmMath math, const GemmTile& t) {
  const int64_t blocks = tile_blocks(c, t);
  if (blocks == 0 || blocks >= kBlocksWanted || math.tensor_cores()) return 1;
  int64_t wanted = (kBlocksWanted + blocks - 1) / blocks;
  return std::max<int64_t>(1, std::min({wanted, extent(c.k) / kSplitSteps, kMaxSplit}));
}

}  // namespace

bool alone_on_its_sm(const GemmTile& t, GemmMath math, int blocks_per_sm) {
  const int64_t words = t.tm * t.tn * (math.type == ScalarType::Float64 ? 2 : 1);
  return !math.tensor_cores() && words >= 64 && blocks_per_sm <= 1;
}

int64_t auto_split(const Contraction& c, GemmMath math, const GemmTile& t, int blocks_per_sm) {
  const int64_t blocks = tile_blocks(c, t);
  const int64_t parts = parts_to_fill(c, math, t);
  if (parts == 1 || !alone_on_its_sm(t, math, blocks_per_sm)) return parts;
  // One block an SM at a time: the sum takes its waves of blocks times a block's share of K, so
  // of the parts up to the most K allows, the fewest with the least waves / parts (sgemm 1024^3
  // at 128 x 128: 2 parts, 128 blocks in one wave of 512 steps, not 3 parts' 192 blocks in two
  // waves of 342: 683 steps' time, which the H200's 94 us a call matched).
  const int64_t most = std::max<int64_t>(1, std::min(extent(c.k) / kSplitSteps, kMaxSplit));
  auto waves = [&](int64_t s) { return (blocks * s + kBlocksWanted - 1) / kBlocksWanted; };
  int64_t best = 1;
  for (int64_t s = 2; s <= most; ++s)
    if (waves(s) * best < waves(best) * s) best = s;
  return best;
}

GemmShape auto_gemm_shape(const Contraction& c, GemmMath math, bool may_split, int blocks_per_sm) {
  int64_t m = extent(c.m), n = extent(c.n);
  const std::vector<GemmTile>& tiles = gemm_tiles(math);
  auto split = [&](const GemmTile& t) { return may_split ? parts_to_fill(c, math, t) : 1; };
  auto shape = [&](const GemmTile& t) {
    return GemmShape{t, may_split ? auto_split(c, math, t, blocks_per_sm) : 1};
  };
  auto blocks = [&](const GemmTile& t) { return tile_blocks(c, t) * split(t); };
  // The share of a tile's outputs inside O (tbmm's 26 x 26 fills 66% of 32 x 32, 4% of 128 x 128).
  auto used = [&](const GemmTile& t) {
    double covered = static_cast<double>((m + t.bm - 1) / t.bm * t.bm) * static_cast<double>((n + t.bn - 1) / t.bn * t.bn);
    return covered > 0 ? static_cast<double>(m) * static_cast<double>(n) / covered : 1.0;
  };
  double best = 0;
  for (const GemmTile& t : tiles)
    if (blocks(t) >= kBlocksWanted) best = std::max(best, used(t));
  for (const GemmTile& t : tiles)  // the largest within 5% of the best fill (conv2d's 64 x 128: 99.6%)
    if (blocks(t) >= kBlocksWanted && used(t) >= 0.95 * best) return shape(t);
  // Too few blocks for the GPU whatever the tile: the time is the waves of blocks times a
  // thread's outputs (every tile has 256 threads); the fewest, then the best filled.
  auto cost = [&](const GemmTile& t) {
    return static_cast<double>((blocks(t) + kBlocksWanted - 1) / kBlocksWanted * t.tm * t.tn) /
           static_cast<double>(split(t));
  };
  const GemmTile* pick = &tiles.front();
  for (const GemmTile& t : tiles)
    if (cost(t) < cost(*pick) || (cost(t) == cost(*pick) && used(t) > used(*pick))) pick = &t;
  return shape(*pick);
}

}  // namespace tc::backends::cuda
